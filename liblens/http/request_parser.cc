// HTTP/1.1 request heads (RFC 9112), strict where leniency enables request
// smuggling (obsolete folding, Content-Length with Transfer-Encoding,
// conflicting lengths), lenient where clients differ harmlessly (bare LF line
// ends, blank lines before the request line).
#include "http/request_parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

namespace lens::http {
namespace {

bool IsTchar(unsigned char c) {
  return std::isalnum(c) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

bool IsToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return IsTchar(static_cast<unsigned char>(c));
  });
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// True when the comma-separated header value holds `token` (any case).
bool HasToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    const std::string_view item = TrimOws(value.substr(0, comma));
    if (item.size() == token.size() && Lower(item) == token) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

// The first bytes of client text for a message, with controls replaced.
std::string Excerpt(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 64)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u >= 0x7f) ? '?' : c;
  }
  if (s.size() > 64) out += "...";
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void ParseQuery(std::string_view q,
                std::multimap<std::string, std::string>* out) {
  while (!q.empty()) {
    const size_t amp = q.find('&');
    const std::string_view pair = q.substr(0, amp);
    if (!pair.empty()) {
      const size_t eq = pair.find('=');
      out->emplace(PercentDecode(pair.substr(0, eq), true),
                   eq == std::string_view::npos
                       ? std::string()
                       : PercentDecode(pair.substr(eq + 1), true));
    }
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
}

ParseError Error(int status, std::string message) {
  return ParseError{status, std::move(message)};
}

// The request line into `out`; version_10 set for HTTP/1.0.
std::optional<ParseError> ParseRequestLine(std::string_view line,
                                           RequestHead* out, bool* version_10) {
  const size_t sp1 = line.find(' ');
  const size_t sp2 =
      sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos ||
      line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Error(400, "malformed request line: " + Excerpt(line));
  }
  const std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method))
    return Error(400, "malformed method: " + Excerpt(method));
  if (version == "HTTP/1.0") {
    *version_10 = true;
  } else if (version != "HTTP/1.1") {
    if (version.substr(0, 5) == "HTTP/")
      return Error(505, "HTTP version not supported: " + Excerpt(version));
    return Error(400, "malformed request line: " + Excerpt(line));
  }
  for (char c : target) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f)
      return Error(400, "malformed request target: " + Excerpt(target));
  }
  // Absolute form (proxies): keep the path of http://host/path.
  if (target.substr(0, 7) == "http://" || target.substr(0, 8) == "https://") {
    const size_t slash = target.find('/', target.find("//") + 2);
    target = slash == std::string_view::npos ? std::string_view("/")
                                             : target.substr(slash);
  }
  if (target.empty() || (target[0] != '/' && target != "*"))
    return Error(400, "malformed request target: " + Excerpt(target));
  const size_t q = target.find('?');
  out->raw_path = target.substr(0, q);
  out->path = PercentDecode(out->raw_path, false);
  if (out->path.find('\0') != std::string::npos)
    return Error(400, "request path contains a NUL byte");
  if (q != std::string_view::npos)
    ParseQuery(target.substr(q + 1), &out->query);
  out->method = std::string(method);
  return std::nullopt;
}

}  // namespace

std::string PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      const int hi = HexValue(text[i + 1]), lo = HexValue(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += (plus_is_space && c == '+') ? ' ' : c;
  }
  return out;
}

std::variant<size_t, ParseError> HeadScanner::Scan(
    std::string* buf, const RequestLimits& limits) {
  if (scanned_ == 0) {
    const size_t start = buf->find_first_not_of("\r\n");
    buf->erase(0, start == std::string::npos ? buf->size() : start);
  }
  const std::string_view b(*buf);
  for (size_t i = scanned_; i < b.size(); ++i) {
    if (b[i] != '\n') continue;
    if (first_line_end_ == std::string_view::npos) {
      first_line_end_ = i;
      if (i > limits.request_line) break;
      // A bad request line is refused now, not at the end of the head.
      std::string_view line = b.substr(0, i);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      RequestHead ignored;
      bool version_10 = false;
      if (auto error = ParseRequestLine(line, &ignored, &version_10)) {
        scanned_ = i + 1;
        return *error;
      }
      continue;
    }
    const bool blank =
        b[i - 1] == '\n' || (b[i - 1] == '\r' && b[i - 2] == '\n');
    if (blank) {
      scanned_ = i + 1;
      if (i + 1 - first_line_end_ > limits.header_bytes + 2) break;
      return i + 1;
    }
  }
  scanned_ = b.size();
  if (first_line_end_ == std::string_view::npos
          ? b.size() > limits.request_line
          : first_line_end_ > limits.request_line) {
    return Error(414, "request line longer than " +
                          std::to_string(limits.request_line) + " bytes");
  }
  if (first_line_end_ != std::string_view::npos &&
      b.size() - first_line_end_ > limits.header_bytes + 2) {
    return Error(431, "request headers larger than " +
                          std::to_string(limits.header_bytes) + " bytes");
  }
  return size_t{0};
}

std::variant<RequestHead, ParseError> ParseHead(std::string_view head,
                                                const RequestLimits& limits) {
  RequestHead out;
  size_t line_no = 0;
  bool version_10 = false;
  std::optional<size_t> content_length;
  bool transfer_encoding = false;
  std::string connection;
  while (!head.empty()) {
    const size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    head.remove_prefix(nl == std::string_view::npos ? head.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_no;
    if (line_no == 1) {
      if (auto error = ParseRequestLine(line, &out, &version_10)) return *error;
      continue;
    }
    if (line.empty()) break;  // the blank line that ends the head
    if (line[0] == ' ' || line[0] == '\t')
      return Error(400, "obsolete header line folding (line " +
                            std::to_string(line_no) + ")");
    if (out.headers.size() >= limits.header_count) {
      return Error(431, "more than " + std::to_string(limits.header_count) +
                            " request headers");
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) {
      return Error(400, "malformed header line " + std::to_string(line_no) +
                            ": " + Excerpt(line));
    }
    const std::string name = Lower(line.substr(0, colon));
    const std::string_view value = TrimOws(line.substr(colon + 1));
    for (char c : value) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && u != '\t') || u == 0x7f)
        return Error(400, "control character in header " + name);
    }
    if (name == "content-length") {
      size_t n = 0;
      const auto [end, ec] =
          std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || ec != std::errc() ||
          end != value.data() + value.size())
        return Error(400, "malformed Content-Length: " + Excerpt(value));
      if (content_length && *content_length != n)
        return Error(400, "conflicting Content-Length headers");
      content_length = n;
    } else if (name == "transfer-encoding") {
      transfer_encoding = true;
    } else if (name == "connection") {
      connection += std::string(value) + ",";
    } else if (name == "expect") {
      out.expect_continue = HasToken(value, "100-continue");
    }
    out.headers.emplace(name, std::string(value));
  }
  if (out.method.empty()) return Error(400, "empty request");
  if (transfer_encoding) {
    if (content_length)
      return Error(400, "both Content-Length and Transfer-Encoding");
    return Error(411,
                 "chunked request bodies are not supported: send "
                 "Content-Length");
  }
  out.content_length = content_length.value_or(0);
  if (out.content_length > limits.body) {
    return Error(413, "request body of " + std::to_string(out.content_length) +
                          " bytes is over the limit of " +
                          std::to_string(limits.body) + " bytes");
  }
  out.keep_alive = version_10 ? HasToken(connection, "keep-alive")
                              : !HasToken(connection, "close");
  return out;
}

}  // namespace lens::http
