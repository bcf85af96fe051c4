#include "core/text.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>

namespace lens {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 if invalid (overlongs,
// surrogates and code points above U+10FFFF are invalid).
size_t Utf8Length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;  // NUL too: SanitizeUtf8 replaces it itself
  size_t n;
  uint32_t min;
  if ((c & 0xE0) == 0xC0) {
    n = 2, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, min = 0x10000;
  } else {
    return 0;  // a continuation byte, or 0xF8..0xFF
  }
  if (i + n > s.size()) return 0;
  uint32_t cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

size_t FirstInvalidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8Length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

bool SanitizeUtf8(std::string* s) {
  size_t i = 0;
  while (i < s->size()) {
    const size_t n = (*s)[i] == '\0' ? 0 : Utf8Length(*s, i);
    if (n == 0) break;
    i += n;
  }
  if (i == s->size()) return false;  // the common case: no copy
  std::string out(s->data(), i);
  while (i < s->size()) {
    const size_t n = (*s)[i] == '\0' ? 0 : Utf8Length(*s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(*s, i, n);
      i += n;
    }
  }
  *s = std::move(out);
  return true;
}

std::string ValidUtf8(std::string_view s) {
  std::string out(s);
  SanitizeUtf8(&out);
  return out;
}

void AppendDouble(double v, NonFinite spelling, std::string* out) {
  if (std::isnan(v)) {
    out->append(spelling == NonFinite::kJsonString ? "\"nan\"" : "NaN");
  } else if (std::isinf(v)) {
    switch (spelling) {
      case NonFinite::kPrometheus:
        out->append(v > 0 ? "+Inf" : "-Inf");
        break;
      case NonFinite::kPostgres:
        out->append(v > 0 ? "Infinity" : "-Infinity");
        break;
      case NonFinite::kJsonString:
        out->append(v > 0 ? "\"inf\"" : "\"-inf\"");
        break;
    }
  } else {
    char buf[32];
    const auto res = std::to_chars(buf, buf + sizeof(buf), v);
    out->append(buf, res.ptr);
  }
}

std::string PrintableExcerpt(std::string_view text, size_t max_bytes) {
  std::string out;
  for (char c : text.substr(0, max_bytes)) {
    out.push_back(c >= 0x20 && c < 0x7f ? c : ' ');
  }
  return out;
}

std::string Base64Encode(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const uint32_t v = (static_cast<uint8_t>(in[i]) << 16) |
                       (static_cast<uint8_t>(in[i + 1]) << 8) |
                       static_cast<uint8_t>(in[i + 2]);
    out += {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63],
            kAlphabet[(v >> 6) & 63], kAlphabet[v & 63]};
  }
  if (in.size() - i == 1) {
    const uint32_t v = static_cast<uint8_t>(in[i]) << 16;
    out += {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], '=', '='};
  } else if (in.size() - i == 2) {
    const uint32_t v = (static_cast<uint8_t>(in[i]) << 16) |
                       (static_cast<uint8_t>(in[i + 1]) << 8);
    out += {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63],
            kAlphabet[(v >> 6) & 63], '='};
  }
  return out;
}

bool Base64Decode(std::string_view in, std::string* out) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  out->clear();
  uint32_t bits = 0;
  int count = 0;
  for (char c : in) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
    const int v = value(c);
    if (v < 0) return false;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    if (++count == 4) {
      out->push_back(static_cast<char>(bits >> 16));
      out->push_back(static_cast<char>((bits >> 8) & 0xff));
      out->push_back(static_cast<char>(bits & 0xff));
      bits = 0;
      count = 0;
    }
  }
  if (count == 1) return false;
  if (count == 2) out->push_back(static_cast<char>(bits >> 4));
  if (count == 3) {
    out->push_back(static_cast<char>(bits >> 10));
    out->push_back(static_cast<char>((bits >> 2) & 0xff));
  }
  return true;
}

std::string PercentEncode(std::string_view in) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(in.size());
  for (unsigned char c : in) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace lens
