// ParseHttpUrl and ReadHttpResponse: the pure halves of the kubelet
// transport (RFC 9112 message framing: status line, header fields,
// Content-Length or chunked transfer coding, else until the connection
// closes).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "kubelet/kubelet_http.h"

namespace lens::kubelet {
namespace {

constexpr size_t kMaxHeaderBytes = 64 * 1024;
constexpr size_t kReadBytes = 16 * 1024;

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view TrimHeaderValue(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Buffers what `read` gives: lines for the header and chunk sizes, bytes
// for bodies.
class Stream {
 public:
  explicit Stream(const ReadFn& read) : read_(read) {}

  // One line without its CRLF (or LF); InvalidArgument when the stream ends
  // first, ResourceExhausted past `limit` bytes.
  StatusOr<std::string> Line(size_t limit) {
    for (;;) {
      size_t eol = buf_.find('\n', pos_);
      if (eol != std::string::npos) {
        std::string line = buf_.substr(pos_, eol - pos_);
        pos_ = eol + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return line;
      }
      if (buf_.size() - pos_ > limit) {
        return ResourceExhaustedError("response header line longer than " +
                                      std::to_string(limit) + " bytes");
      }
      LENS_ASSIGN_OR_RETURN(size_t n, Fill());
      if (n == 0) return InvalidArgumentError("response ends mid-line");
    }
  }
  // Appends `count` bytes to `out` (count 0 with until_eof: everything up to
  // the end of the stream, refused past `limit` in total in `out`).
  Status Body(uint64_t count, bool until_eof, uint64_t limit,
              std::string* out) {
    for (;;) {
      const size_t have = buf_.size() - pos_;
      const uint64_t want = until_eof ? have : std::min<uint64_t>(count, have);
      if (out->size() + want > limit) return TooLarge(limit);
      out->append(buf_, pos_, static_cast<size_t>(want));
      pos_ += static_cast<size_t>(want);
      if (!until_eof) count -= want;
      if (!until_eof && count == 0) return OkStatus();
      LENS_ASSIGN_OR_RETURN(size_t n, Fill());
      if (n == 0) {
        if (until_eof) return OkStatus();
        return InvalidArgumentError("response body ends early");
      }
    }
  }
  static Status TooLarge(uint64_t limit) {
    return ResourceExhaustedError("response larger than " +
                                  std::to_string(limit) + " bytes");
  }

 private:
  StatusOr<size_t> Fill() {
    if (pos_ > 0) {
      buf_.erase(0, pos_);
      pos_ = 0;
    }
    const size_t old = buf_.size();
    buf_.resize(old + kReadBytes);
    StatusOr<size_t> n = read_(buf_.data() + old, kReadBytes);
    buf_.resize(old + (n.ok() ? *n : 0));
    return n;
  }

  const ReadFn& read_;
  std::string buf_;
  size_t pos_ = 0;
};

StatusOr<uint64_t> ParseNumber(std::string_view text, int base,
                               std::string_view what) {
  uint64_t value = 0;
  auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) {
    return InvalidArgumentError("bad " + std::string(what) + " \"" +
                                std::string(text.substr(0, 32)) + "\"");
  }
  return value;
}

Status ReadChunked(Stream& in, uint64_t limit, std::string* body) {
  for (;;) {
    LENS_ASSIGN_OR_RETURN(std::string line, in.Line(1024));
    std::string_view size =
        TrimHeaderValue(std::string_view(line).substr(0, line.find(';')));
    LENS_ASSIGN_OR_RETURN(uint64_t n, ParseNumber(size, 16, "chunk size"));
    if (n == 0) break;
    if (body->size() + n > limit) return Stream::TooLarge(limit);
    LENS_RETURN_IF_ERROR(in.Body(n, false, limit, body));
    LENS_ASSIGN_OR_RETURN(std::string crlf, in.Line(2));
    if (!crlf.empty())
      return InvalidArgumentError("chunk not followed by CRLF");
  }
  // Trailer fields, up to the empty line.
  for (size_t total = 0;;) {
    LENS_ASSIGN_OR_RETURN(std::string line, in.Line(kMaxHeaderBytes));
    total += line.size();
    if (line.empty()) return OkStatus();
    if (total > kMaxHeaderBytes) return Stream::TooLarge(kMaxHeaderBytes);
  }
}

}  // namespace

StatusOr<HttpUrl> ParseHttpUrl(std::string_view url) {
  const auto bad = [&](const char* why) {
    return InvalidArgumentError("URL \"" + std::string(url) + "\": " + why);
  };
  HttpUrl out;
  std::string_view rest = url;
  if (rest.rfind("https://", 0) == 0) {
    out.tls = true;
    rest.remove_prefix(8);
  } else if (rest.rfind("http://", 0) == 0) {
    rest.remove_prefix(7);
  } else {
    return bad("scheme must be http or https");
  }
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  out.path =
      slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (authority.find('@') != std::string_view::npos) {
    return bad("user info in the URL is not supported");
  }
  out.host_header = std::string(authority);
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unclosed [");
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("junk after ]");
      port_text = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos)
      port_text = authority.substr(colon + 1);
  }
  if (out.host.empty()) return bad("no host");
  out.port = out.tls ? 443 : 80;
  if (!port_text.empty()) {
    StatusOr<uint64_t> port = ParseNumber(port_text, 10, "port");
    if (!port.ok() || *port == 0 || *port > 65535) return bad("bad port");
    out.port = static_cast<uint16_t>(*port);
  }
  return out;
}

StatusOr<KubeletHttpResponse> ReadHttpResponse(const ReadFn& read,
                                               uint64_t max_body_bytes) {
  Stream in(read);
  KubeletHttpResponse out;
  for (;;) {  // 1xx interim responses (100 Continue) come before the final
    LENS_ASSIGN_OR_RETURN(std::string status, in.Line(kMaxHeaderBytes));
    if (status.rfind("HTTP/1.", 0) != 0 || status.size() < 12 ||
        status[8] != ' ') {
      return InvalidArgumentError("not an HTTP/1.x response: \"" +
                                  status.substr(0, 32) + "\"");
    }
    LENS_ASSIGN_OR_RETURN(
        uint64_t code,
        ParseNumber(std::string_view(status).substr(9, 3), 10, "status code"));
    out.status = static_cast<int>(code);
    std::optional<uint64_t> length;
    bool chunked = false;
    for (size_t total = 0;;) {
      LENS_ASSIGN_OR_RETURN(std::string line, in.Line(kMaxHeaderBytes));
      total += line.size() + 2;
      if (total > kMaxHeaderBytes) return Stream::TooLarge(kMaxHeaderBytes);
      if (line.empty()) break;
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string_view name =
          TrimHeaderValue(std::string_view(line).substr(0, colon));
      std::string_view value =
          TrimHeaderValue(std::string_view(line).substr(colon + 1));
      if (IEquals(name, "Content-Length")) {
        LENS_ASSIGN_OR_RETURN(length, ParseNumber(value, 10, "Content-Length"));
      } else if (IEquals(name, "Transfer-Encoding")) {
        chunked = value.size() >= 7 &&
                  IEquals(value.substr(value.size() - 7), "chunked");
      }
    }
    if (out.status >= 100 && out.status < 200) continue;
    if (out.status == 204 || out.status == 304) return out;
    if (chunked) {
      LENS_RETURN_IF_ERROR(ReadChunked(in, max_body_bytes, &out.body));
    } else if (length) {
      if (*length > max_body_bytes) return Stream::TooLarge(max_body_bytes);
      LENS_RETURN_IF_ERROR(in.Body(*length, false, max_body_bytes, &out.body));
    } else {
      LENS_RETURN_IF_ERROR(in.Body(0, true, max_body_bytes, &out.body));
    }
    return out;
  }
}

}  // namespace lens::kubelet
