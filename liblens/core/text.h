// Text every area writes out: valid UTF-8, and doubles in their shortest
// round-trip form with the non-finite values spelled as the target format
// wants. One implementation for the store, JSON, metrics and logs.
#ifndef LENS_CORE_TEXT_H_
#define LENS_CORE_TEXT_H_

#include <string>
#include <string_view>

namespace lens {

// Replaces invalid UTF-8 sequences (overlongs, surrogates, above U+10FFFF)
// and NUL bytes with U+FFFD, in place. Returns whether anything changed.
bool SanitizeUtf8(std::string* s);
// Byte offset of the first invalid UTF-8 sequence in `s` (NUL is valid
// here), or npos.
size_t FirstInvalidUtf8(std::string_view s);
// `s` as valid UTF-8 (a copy, sanitised).
std::string ValidUtf8(std::string_view s);

// How NaN and the infinities are written.
enum class NonFinite {
  kPrometheus,  // NaN, +Inf, -Inf (text exposition, log fields)
  kPostgres,    // NaN, Infinity, -Infinity (float8 input)
  kJsonString,  // "nan", "inf", "-inf" (quoted: JSON has no such numbers)
};

// Appends `v`: finite values in the shortest text that reads back as the
// same double ("0.8995", not "0.8995000000000001").
void AppendDouble(double v, NonFinite spelling, std::string* out);

// Percent-encodes every byte but RFC 3986's unreserved characters
// (letters, digits, "-._~"): for URL query values, paths and userinfo.
std::string PercentEncode(std::string_view in);

// The first `max_bytes` of a server's answer for a message or log line:
// anything but printable ASCII becomes a space.
std::string PrintableExcerpt(std::string_view text, size_t max_bytes = 256);

// Base64 (RFC 4648) as Kubernetes carries Secret `data` and kubeconfig
// *-data fields: encoded with padding; decoded with or without it,
// whitespace ignored, false on any other character.
std::string Base64Encode(std::string_view in);
bool Base64Decode(std::string_view in, std::string* out);

}  // namespace lens

#endif  // LENS_CORE_TEXT_H_
