#include "training/numbers.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

namespace lens::training {
namespace {

bool IEquals(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

// Length of a "1,234,567" group run starting at s (digits then ",ddd" groups),
// or 0.
size_t GroupedLength(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && i < 3 && IsDigit(s[i])) ++i;
  if (i == 0 || (i < s.size() && IsDigit(s[i]))) return 0;
  size_t groups = 0;
  while (i + 3 < s.size() + 0 && s[i] == ',' && IsDigit(s[i + 1]) &&
         IsDigit(s[i + 2]) && IsDigit(s[i + 3]) &&
         (i + 4 >= s.size() || !IsDigit(s[i + 4]))) {
    i += 4;
    ++groups;
  }
  return groups > 0 ? i : 0;
}

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) ||
         c == '_';
}

// Clinger's fast path: a decimal with at most 15 significant digits and a
// power of ten within 1e22 converts exactly with one IEEE multiply or divide
// (both operands are exact doubles), so the result is the correctly rounded
// value from_chars would give. Accepts from_chars' syntax ("1.", ".5",
// "2.5E-05"; an 'e' without digits ends the number). Returns the length, or 0
// to leave the string to from_chars.
size_t ParseSimpleDecimal(std::string_view s, double* out, int shift = 0) {
  static constexpr double kPow10[] = {
      1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  uint64_t mantissa = 0;
  int digits = 0, exp10 = shift;
  size_t i = 0;
  bool any = false;
  while (i < s.size() && IsDigit(s[i])) {
    mantissa = mantissa * 10 + static_cast<uint64_t>(s[i] - '0');
    digits += mantissa != 0;
    ++i;
    any = true;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) {
      mantissa = mantissa * 10 + static_cast<uint64_t>(s[i] - '0');
      digits += mantissa != 0;
      --exp10;
      ++i;
      any = true;
    }
  }
  if (!any || digits > 15) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    bool negative = false;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) negative = s[j++] == '-';
    if (j < s.size() && IsDigit(s[j])) {
      int e = 0;
      while (j < s.size() && IsDigit(s[j])) {
        if (e > 1000) return 0;
        e = e * 10 + (s[j++] - '0');
      }
      exp10 += negative ? -e : e;
      i = j;
    }
  }
  const double m = static_cast<double>(mantissa);
  if (mantissa == 0) {
    *out = 0;
  } else if (exp10 >= 0 && exp10 <= 22) {
    *out = m * kPow10[exp10];
  } else if (exp10 < 0 && exp10 >= -22) {
    *out = m / kPow10[-exp10];
  } else {
    return 0;
  }
  return i;
}

}  // namespace

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (IsBlank(s.front()) || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (IsBlank(s.back()) || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

size_t ParseInt(std::string_view s, long long* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (ec != std::errc() || *out < 0) return 0;
  return static_cast<size_t>(ptr - s.data());
}

size_t ParseNumber(std::string_view s, double* out, bool allow_grouping) {
  if (s.empty()) return 0;
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-' || s[0] == '+') {
    negative = s[0] == '-';
    i = 1;
  }
  std::string_view rest = s.substr(i);
  if (rest.empty()) return 0;
  if (!IsDigit(rest[0]) && rest[0] != '.') {
    // nan / inf / infinity, not followed by a word character ("info",
    // "nanoseconds").
    for (std::string_view word : {"infinity", "inf", "nan"}) {
      if (rest.size() >= word.size() &&
          IEquals(rest.substr(0, word.size()), word) &&
          (rest.size() == word.size() || !IsWordChar(rest[word.size()]))) {
        double v = word == "nan" ? std::numeric_limits<double>::quiet_NaN()
                                 : std::numeric_limits<double>::infinity();
        *out = negative ? -v : v;
        return i + word.size();
      }
    }
    return 0;
  }
  if (allow_grouping) {
    const size_t g = GroupedLength(rest);
    if (g > 0) {
      // Copy the digits without separators, then the fraction/exponent that may
      // follow.
      char buf[64];
      size_t n = 0, j = 0, commas = 0;
      for (; j < g; ++j) {
        if (rest[j] == ',') {
          ++commas;
        } else {
          buf[n++] = rest[j];
        }
      }
      while (j < rest.size() && n < sizeof(buf) && !IsBlank(rest[j]) &&
             rest[j] != ',') {
        buf[n++] = rest[j++];
      }
      double v = 0;
      auto [ptr, ec] = std::from_chars(buf, buf + n, v);
      if (ec == std::errc()) {
        *out = negative ? -v : v;
        return i + static_cast<size_t>(ptr - buf) + commas;
      }
    }
  }
  double v = 0;
  if (size_t n = ParseSimpleDecimal(rest, &v); n > 0) {
    *out = negative ? -v : v;
    return i + n;
  }
  auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v,
                                   std::chars_format::general);
  if (ptr == rest.data()) return 0;
  if (ec == std::errc::result_out_of_range) {
    // Too large or too small for a double: from_chars leaves v alone; strtod
    // saturates (HUGE_VAL or 0), which keeps the magnitude class.
    std::string copy(rest.data(), static_cast<size_t>(ptr - rest.data()));
    v = std::strtod(copy.c_str(), nullptr);
  } else if (ec != std::errc()) {
    return 0;
  }
  *out = negative ? -v : v;
  return i + static_cast<size_t>(ptr - rest.data());
}

double ShiftDecimal(std::string_view text, double value, int pow10) {
  if (pow10 == 0) return value;
  const bool negative = !text.empty() && text[0] == '-';
  if (!text.empty() && (text[0] == '-' || text[0] == '+'))
    text.remove_prefix(1);
  double shifted = 0;
  if (const size_t n = ParseSimpleDecimal(text, &shifted, pow10);
      n > 0 && n == text.size()) {
    return negative ? -shifted : shifted;
  }
  return pow10 > 0 ? value * std::pow(10.0, pow10)
                   : value / std::pow(10.0, -pow10);
}

bool ParseValue(std::string_view s, Value* v, bool allow_grouping) {
  s = TrimBlanks(s);
  v->count = 0;
  size_t i = 0;
  while (true) {
    if (v->count == Value::kMax) return false;
    double num = 0;
    size_t n = ParseNumber(s.substr(i), &num, allow_grouping);
    if (n == 0) return false;
    i += n;
    size_t unit_start = i;
    while (i < s.size() && ((s[i] >= 'a' && s[i] <= 'z') ||
                            (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '%')) {
      ++i;
    }
    v->num[v->count] = num;
    v->text[v->count] = s.substr(unit_start - n, n);
    v->unit[v->count] = s.substr(unit_start, i - unit_start);
    ++v->count;
    if (i == s.size()) return true;
    while (i + 1 < s.size() && IsBlank(s[i]) && s[i + 1] == '(') ++i;
    if (s[i] == '/') {
      ++i;
      while (i < s.size() && IsBlank(s[i]))
        ++i;  // Primus prints "227.35GB/ 28.63GB/ ..."
    } else if (s[i] == '(' && s.back() == ')') {
      s.remove_suffix(1);
      ++i;
      // Primus 2026: "1255.4 (avg 1255.4)".
      if (s.substr(i, 3) == "avg") {
        i += 3;
        while (i < s.size() && IsBlank(s[i])) ++i;
      }
    } else {
      return false;
    }
  }
}

}  // namespace lens::training
