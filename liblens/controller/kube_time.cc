#include "controller/kube_time.h"

#include <chrono>
#include <string>

namespace lens::controller {
namespace {

// Reads exactly `n` digits at `*pos`; false if any is not a digit.
bool Digits(std::string_view s, size_t* pos, size_t n, int* out) {
  if (*pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = s[*pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool Expect(std::string_view s, size_t* pos, char a, char b = 0) {
  if (*pos >= s.size() || (s[*pos] != a && (b == 0 || s[*pos] != b))) {
    return false;
  }
  ++*pos;
  return true;
}

Status Bad(std::string_view text, std::string_view why) {
  return InvalidArgumentError("invalid RFC 3339 time \"" +
                              std::string(text.substr(0, 64)) +
                              "\": " + std::string(why));
}

}  // namespace

StatusOr<Timestamp> ParseKubeTime(std::string_view text) {
  using std::chrono::microseconds;
  size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(text, &pos, 4, &year) || !Expect(text, &pos, '-') ||
      !Digits(text, &pos, 2, &month) || !Expect(text, &pos, '-') ||
      !Digits(text, &pos, 2, &day)) {
    return Bad(text, "expected a date YYYY-MM-DD");
  }
  if (!Expect(text, &pos, 'T', 't') || !Digits(text, &pos, 2, &hour) ||
      !Expect(text, &pos, ':') || !Digits(text, &pos, 2, &minute) ||
      !Expect(text, &pos, ':') || !Digits(text, &pos, 2, &second)) {
    return Bad(text, "expected a time THH:MM:SS");
  }
  int64_t micros = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const size_t start = pos;
    int64_t scale = 100000;
    for (; pos < text.size() && text[pos] >= '0' && text[pos] <= '9'; ++pos) {
      micros += (text[pos] - '0') * scale;
      scale /= 10;
    }
    if (pos == start) return Bad(text, "no digits after '.'");
  }
  int offset_minutes = 0;
  if (Expect(text, &pos, 'Z', 'z')) {
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int oh = 0, om = 0;
    if (!Digits(text, &pos, 2, &oh) || !Expect(text, &pos, ':') ||
        !Digits(text, &pos, 2, &om) || oh > 23 || om > 59) {
      return Bad(text, "expected an offset +hh:mm");
    }
    offset_minutes = sign * (oh * 60 + om);
  } else {
    return Bad(text, "expected 'Z' or an offset");
  }
  if (pos != text.size()) return Bad(text, "trailing text");

  const std::chrono::year_month_day date{
      std::chrono::year(year), std::chrono::month(static_cast<unsigned>(month)),
      std::chrono::day(static_cast<unsigned>(day))};
  if (!date.ok()) return Bad(text, "no such date");
  // What the system clock (nanoseconds since 1970 in 64 bits) can hold, so
  // the time converts anywhere without overflow.
  if (year < 1678 || year > 2261) return Bad(text, "year outside 1678..2261");
  if (hour > 23 || minute > 59 || second > 59) {
    return Bad(text, "time of day out of range");
  }
  const auto local = std::chrono::sys_days(date) + std::chrono::hours(hour) +
                     std::chrono::minutes(minute) +
                     std::chrono::seconds(second);
  return Timestamp(std::chrono::time_point_cast<microseconds>(local) +
                   microseconds(micros) - std::chrono::minutes(offset_minutes));
}

}  // namespace lens::controller
