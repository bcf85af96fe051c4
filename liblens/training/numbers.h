// Number and value parsing for training-log fields.
#ifndef LENS_TRAINING_NUMBERS_H_
#define LENS_TRAINING_NUMBERS_H_

#include <cstddef>
#include <string_view>

namespace lens::training {

// Parses a number at the start of `s`: optional sign, digits, fraction,
// exponent ("1.0E-05"), "nan"/"inf"/"infinity" in any case, and with
// `allow_grouping` thousands separators
// ("6,785", "1,234,567.5"). Returns the number of bytes consumed, 0 when `s`
// does not start with a number.
size_t ParseNumber(std::string_view s, double* out,
                   bool allow_grouping = false);

// A field value: up to four numbers separated by '/' ("16601.3/17219.3",
// "253.38GB/2.60GB/255.98GB/98.98%"), each with an optional unit ("GB", "GiB",
// "%", "s"), or one number followed by a parenthesised second
// ("68.57GiB(86.69%)").
struct Value {
  static constexpr int kMax = 4;
  double num[kMax] = {};
  std::string_view text[kMax];  // each number as printed
  std::string_view unit[kMax];
  int count = 0;
};

// Parses a whole value (leading/trailing blanks allowed). Returns false when
// `s` is not a value (text, a list, trailing garbage).
bool ParseValue(std::string_view s, Value* v, bool allow_grouping = false);

// value x 10^pow10, computed from the number as printed (`text`) where it is a
// plain decimal, so the result is the double nearest the shifted decimal:
// 89.95% is 0.8995, not 89.95 * 0.01 = 0.8995000000000001. Falls back to
// arithmetic on `value` (grouped digits, more than 15 significant digits).
double ShiftDecimal(std::string_view text, double value, int pow10);

// Parses a non-negative decimal integer at the start of s; returns bytes
// consumed (0: none).
size_t ParseInt(std::string_view s, long long* out);

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// `s` without its leading blanks.
inline std::string_view SkipBlanks(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  return s;
}
std::string_view TrimBlanks(std::string_view s);

// Position of the first `a` or `b` in s, or npos.
// (std::string_view::find_first_of calls memchr once per byte of s: far too
// slow on the hot path.)
inline size_t FindEither(std::string_view s, char a, char b) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == a || s[i] == b) return i;
  }
  return std::string_view::npos;
}

}  // namespace lens::training

#endif  // LENS_TRAINING_NUMBERS_H_
