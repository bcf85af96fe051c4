#include "store/pg/pg_url.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>

#include "core/redact.h"
#include "core/text.h"

namespace lens::store {
namespace {

constexpr std::array<std::string_view, 2> kSchemes = {"postgresql://",
                                                      "postgres://"};

// Allowed query keys and, where the set is closed, their values ("" ends a
// list). connect_timeout is checked separately (a positive integer).
struct QueryKey {
  std::string_view key;
  std::array<std::string_view, 7> values;
};
constexpr std::array<QueryKey, 7> kQueryKeys = {{
    {"sslmode",
     {"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}},
    {"sslrootcert", {}},
    {"sslcert", {}},
    {"sslkey", {}},
    {"connect_timeout", {}},
    {"application_name", {}},
    {"target_session_attrs",
     {"any", "read-write", "read-only", "primary", "standby",
      "prefer-standby"}},
}};

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes `in`; false on a malformed escape or an encoded NUL byte
// (libpq strings cannot hold one).
bool Decode(std::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out->push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size()) return false;
    const int hi = HexValue(in[i + 1]);
    const int lo = HexValue(in[i + 2]);
    if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

// The URL as it may appear in a message when its user:password@ part could
// not be found: everything from the first ':' after the scheme to the last
// '@' is cut. Conservative on purpose: it removes any password however badly
// it is encoded (and sometimes a little more).
std::string RedactRaw(std::string_view url, size_t start) {
  const size_t at = url.rfind('@');
  const size_t colon = url.find(':', start);
  if (at == std::string_view::npos || at < start || colon > at) {
    return std::string(url);
  }
  return std::string(url.substr(0, colon)) + std::string(url.substr(at));
}

void ReplaceAll(std::string* s, std::string_view needle) {
  if (needle.empty()) return;
  for (size_t pos = s->find(needle); pos != std::string::npos;
       pos = s->find(needle, pos)) {
    s->replace(pos, needle.size(), "****");
    pos += 4;
  }
}

bool ValidDnsName(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  size_t label = 0;
  for (char c : host) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    // '_' is not valid DNS but common in container service names.
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') {
      return false;
    }
    if (++label > 63) return false;
  }
  return label > 0;
}

bool ValidIpv6(const std::string& host) {
  const std::string addr = host.substr(0, host.find('%'));  // zone id
  in6_addr out;
  return inet_pton(AF_INET6, addr.c_str(), &out) == 1;
}

// Parses one URL; errors carry only the detail, the caller adds the prefix.
class Parser {
 public:
  explicit Parser(std::string_view url) : url_(url) {}

  StatusOr<PgUrl> Run() {
    size_t start = std::string_view::npos;
    for (std::string_view scheme : kSchemes) {
      if (url_.substr(0, scheme.size()) == scheme) start = scheme.size();
    }
    if (start == std::string_view::npos) {
      // Without a recognisable scheme nothing of the input is echoed.
      return InvalidArgumentError(
          "postgresql URL: must start with postgresql:// or postgres://");
    }
    const std::string_view rest = url_.substr(start);
    const size_t authority_end = rest.find_first_of("/?#");
    const std::string_view authority = rest.substr(0, authority_end);
    const size_t at = authority.rfind('@');
    if (at == std::string_view::npos) {
      shown_ = RedactCredentials(url_);
    } else {
      const std::string_view info = authority.substr(0, at);
      shown_ = RedactCredentials(std::string(url_.substr(0, start)) +
                                 std::string(info.substr(0, info.find(':'))) +
                                 std::string(rest.substr(at)));
    }
    // An '@' followed by "host/..." past the authority: a password with
    // unencoded reserved characters ('/', '?', '#'). Echo nothing of it.
    const size_t last_at = url_.rfind('@');
    const size_t colon = url_.find(':', start);
    if (last_at != std::string_view::npos &&
        (at == std::string_view::npos || last_at > start + at) &&
        colon < last_at && url_.find('/', last_at) != std::string_view::npos) {
      shown_ = RedactCredentials(RedactRaw(url_, start));
      raw_password_ = url_.substr(colon + 1, last_at - colon - 1);
      return Error(
          "cannot find user:password@host (percent-encode '/', '?', '#' and "
          "'@' in the user name and password)");
    }
    if (at != std::string_view::npos) {
      LENS_RETURN_IF_ERROR(ParseUserInfo(authority.substr(0, at)));
    }
    LENS_RETURN_IF_ERROR(ParseHostPort(
        at == std::string_view::npos ? authority : authority.substr(at + 1)));
    if (authority_end == std::string_view::npos || rest[authority_end] != '/') {
      return Error("missing /database after the host");
    }
    std::string_view path = rest.substr(authority_end + 1);
    std::string_view query;
    if (const size_t q = path.find('?'); q != std::string_view::npos) {
      query = path.substr(q + 1);
      path = path.substr(0, q);
    }
    if (path.find('#') != std::string_view::npos ||
        query.find('#') != std::string_view::npos) {
      return Error("unexpected '#' (fragments are not supported)");
    }
    LENS_RETURN_IF_ERROR(ParseDatabase(path));
    LENS_RETURN_IF_ERROR(ParseQuery(query));
    return std::move(out_);
  }

 private:
  Status Error(std::string_view what) const {
    std::string msg = "postgresql URL " + shown_ + ": " + std::string(what);
    ReplaceAll(&msg, raw_password_);
    ReplaceAll(&msg, out_.password);
    return InvalidArgumentError(std::move(msg));
  }

  Status ParseUserInfo(std::string_view info) {
    const size_t colon = info.find(':');
    if (colon != std::string_view::npos) {
      raw_password_ = info.substr(colon + 1);
      if (!Decode(raw_password_, &out_.password)) {
        out_.password.clear();
        return Error("bad percent-escape in the password");
      }
    }
    if (!Decode(info.substr(0, colon), &out_.user)) {
      return Error("bad percent-escape in the user name");
    }
    if (colon != std::string_view::npos && out_.user.empty()) {
      return Error("password given without a user name");
    }
    return OkStatus();
  }

  Status ParseHostPort(std::string_view hp) {
    std::string_view port;
    if (!hp.empty() && hp.front() == '[') {
      const size_t close = hp.find(']');
      if (close == std::string_view::npos) return Error("missing ']' in host");
      if (!Decode(hp.substr(1, close - 1), &out_.host) ||
          !ValidIpv6(out_.host)) {
        return Error("invalid IPv6 address '" +
                     std::string(hp.substr(1, close - 1)) + "'");
      }
      std::string_view after = hp.substr(close + 1);
      if (!after.empty() && after.front() != ':') {
        return Error("unexpected text after ']'");
      }
      port = after.empty() ? after : after.substr(1);
      if (after == ":") return Error("empty port");
    } else {
      const size_t colon = hp.find(':');
      if (hp.find(':',
                  colon == std::string_view::npos ? hp.size() : colon + 1) !=
          std::string_view::npos) {
        return Error("IPv6 addresses must be written in brackets ([::1])");
      }
      const std::string_view host = hp.substr(0, colon);
      if (host.empty()) return Error("missing host");
      if (!Decode(host, &out_.host) || !ValidDnsName(out_.host)) {
        return Error("invalid host name '" + std::string(host) + "'");
      }
      if (colon != std::string_view::npos) {
        port = hp.substr(colon + 1);
        if (port.empty()) return Error("empty port");
      }
    }
    if (port.empty()) return OkStatus();
    const std::string shown(port);
    if (!std::all_of(port.begin(), port.end(),
                     [](char c) { return c >= '0' && c <= '9'; })) {
      return Error("port '" + shown + "' is not a number");
    }
    int64_t value = 0;
    auto [p, ec] =
        std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || value < 1 || value > 65535) {
      return Error("port " + shown + " out of range 1..65535");
    }
    out_.port = static_cast<int>(value);
    return OkStatus();
  }

  Status ParseDatabase(std::string_view path) {
    if (path.find('/') != std::string_view::npos) {
      return Error("database name must not contain '/' (percent-encode it)");
    }
    if (!Decode(path, &out_.database)) {
      return Error("bad percent-escape in the database name");
    }
    if (out_.database.empty()) return Error("missing database name");
    return OkStatus();
  }

  Status ParseQuery(std::string_view query) {
    while (!query.empty()) {
      const size_t amp = query.find('&');
      const std::string_view kv = query.substr(0, amp);
      query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
      if (kv.empty()) continue;  // "?a=b&&c=d", trailing '&'
      const size_t eq = kv.find('=');
      std::string key, value;
      if (!Decode(kv.substr(0, eq), &key) ||
          (eq != std::string_view::npos &&
           !Decode(kv.substr(eq + 1), &value))) {
        return Error("bad percent-escape in option '" +
                     std::string(kv.substr(0, eq)) + "'");
      }
      LENS_RETURN_IF_ERROR(
          CheckOption(key, value, eq != std::string_view::npos));
      out_.query.emplace_back(std::move(key), std::move(value));
    }
    return OkStatus();
  }

  Status CheckOption(const std::string& key, const std::string& value,
                     bool has_value) {
    const auto known =
        std::find_if(kQueryKeys.begin(), kQueryKeys.end(),
                     [&](const QueryKey& k) { return k.key == key; });
    if (known == kQueryKeys.end()) {
      std::string names;
      for (const QueryKey& k : kQueryKeys) {
        names += (names.empty() ? "" : ", ") + std::string(k.key);
      }
      return Error("unknown option '" + key + "' (known: " + names + ")");
    }
    for (const auto& [k, v] : out_.query) {
      if (k == key) return Error("option '" + key + "' given twice");
    }
    if (!has_value || value.empty()) {
      return Error("option '" + key + "' needs a value");
    }
    if (!known->values[0].empty() &&
        std::find(known->values.begin(), known->values.end(), value) ==
            known->values.end()) {
      std::string allowed;
      for (std::string_view v : known->values) {
        if (!v.empty())
          allowed += (allowed.empty() ? "" : "|") + std::string(v);
      }
      return Error(key + " '" + value + "' is not one of " + allowed);
    }
    if (key == "connect_timeout") {
      int64_t seconds = 0;
      auto [p, ec] =
          std::from_chars(value.data(), value.data() + value.size(), seconds);
      if (ec != std::errc() || p != value.data() + value.size() ||
          seconds <= 0 || seconds > 86400) {
        return Error("connect_timeout '" + value +
                     "' must be a positive number of seconds");
      }
    }
    return OkStatus();
  }

  const std::string_view url_;
  std::string shown_;
  std::string_view raw_password_;
  PgUrl out_;
};

// libpq conninfo value: always single-quoted, '\' and '\'' escaped.
void AppendKeyword(std::string* out, std::string_view key,
                   std::string_view value) {
  if (!out->empty()) out->push_back(' ');
  out->append(key).append("='");
  for (char c : value) {
    if (c == '\\' || c == '\'') out->push_back('\\');
    out->push_back(c);
  }
  out->push_back('\'');
}

std::string HostPort(const PgUrl& url) {
  const bool v6 = url.host.find(':') != std::string::npos;
  return (v6 ? "[" + url.host + "]" : url.host) + ":" +
         std::to_string(url.port);
}

}  // namespace

std::string PgUrl::conninfo() const {
  std::string out;
  AppendKeyword(&out, "host", host);
  AppendKeyword(&out, "port", std::to_string(port));
  AppendKeyword(&out, "dbname", database);
  if (!user.empty()) AppendKeyword(&out, "user", user);
  if (!password.empty()) AppendKeyword(&out, "password", password);
  bool has_timeout = false;
  for (const auto& [key, value] : query) {
    AppendKeyword(&out, key, value);
    has_timeout = has_timeout || key == "connect_timeout";
  }
  if (!has_timeout) AppendKeyword(&out, "connect_timeout", "5");
  AppendKeyword(&out, "client_encoding", "UTF8");
  return out;
}

std::string PgUrl::Redacted() const {
  std::string out = "postgresql://";
  if (!user.empty()) out += PercentEncode(user) + "@";
  std::string shown_host = host;
  if (host.find(':') != std::string::npos) {
    // IPv6: brackets, and the zone's '%' encoded.
    const size_t zone = host.find('%');
    shown_host =
        "[" + host.substr(0, zone) +
        (zone == std::string::npos ? "" : "%25" + host.substr(zone + 1)) + "]";
  } else {
    shown_host = PercentEncode(host);
  }
  out +=
      shown_host + ":" + std::to_string(port) + "/" + PercentEncode(database);
  for (size_t i = 0; i < query.size(); ++i) {
    out += (i == 0 ? "?" : "&") + PercentEncode(query[i].first) + "=" +
           PercentEncode(query[i].second);
  }
  return RedactCredentials(out);  // ?password=, ?sslpassword=
}

std::string PgUrl::target() const {
  return "postgresql " + HostPort(*this) + "/" + database;
}

StatusOr<PgUrl> ParsePgUrl(std::string_view url) { return Parser(url).Run(); }

}  // namespace lens::store
