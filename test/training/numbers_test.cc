#include "training/numbers.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

namespace lens::training {
namespace {

double Num(std::string_view s, bool grouping = false, size_t* used = nullptr) {
  double v = -12345;
  size_t n = ParseNumber(s, &v, grouping);
  if (used) *used = n;
  EXPECT_GT(n, 0u) << s;
  return v;
}

TEST(ParseNumberTest, ParsesIntegersDecimalsAndExponents) {
  EXPECT_EQ(Num("27136"), 27136);
  EXPECT_DOUBLE_EQ(Num("16601.3"), 16601.3);
  EXPECT_DOUBLE_EQ(Num("9.997254E-06"), 9.997254e-06);
  EXPECT_DOUBLE_EQ(Num("4.447942E+00"), 4.447942);
  EXPECT_DOUBLE_EQ(Num("1e3"), 1000);
  EXPECT_DOUBLE_EQ(Num("-0.5"), -0.5);
  EXPECT_DOUBLE_EQ(Num("+2"), 2);
  EXPECT_DOUBLE_EQ(Num(".25"), 0.25);
}

// The fast path for short decimals must give exactly what from_chars gives,
// and stop where it stops ("1e" ends before the 'e').
TEST(ParseNumberTest, FastPathMatchesFromCharsBitForBit) {
  std::mt19937_64 rng(7);
  const char* const kTails[] = {"",   "e5",   "E-07", "e+22", "e-22", "e",
                                "E+", "e300", "|",    " ms",  "%",    "GB"};
  for (int i = 0; i < 200000; ++i) {
    std::string s = std::to_string(rng() % 100000000000ull);
    const int dot = static_cast<int>(rng() % (s.size() + 2)) - 1;
    if (dot >= 0) s.insert(static_cast<size_t>(dot), ".");
    if (rng() % 4 == 0) s.insert(0, std::string(rng() % 4, '0'));
    s += kTails[rng() % std::size(kTails)];
    double want = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), want);
    if (ec != std::errc()) continue;
    double got = -1;
    const size_t n = ParseNumber(s, &got, false);
    ASSERT_EQ(n, static_cast<size_t>(ptr - s.data())) << s;
    ASSERT_EQ(std::memcmp(&got, &want, sizeof(double)), 0) << s;
  }
}

// Percent and seconds shift the printed decimal, so JSON shows what the log
// printed: 89.95% is 0.8995 (89.95 * 0.01 would be 0.8995000000000001).
TEST(ShiftDecimalTest, GivesTheDoubleNearestTheShiftedDecimal) {
  EXPECT_NE(89.95 * 0.01, 0.8995);  // why the shift exists
  EXPECT_EQ(ShiftDecimal("89.95", 89.95, -2), 0.8995);
  EXPECT_EQ(ShiftDecimal("98.98", 98.98, -2), 0.9898);
  volatile double seconds = 1.005;  // no constant folding
  EXPECT_NE(seconds * 1000, 1005.0);
  EXPECT_EQ(ShiftDecimal("1.005", 1.005, 3), 1005.0);
  EXPECT_EQ(ShiftDecimal("-2.5E-01", -0.25, 2), -25.0);
  EXPECT_EQ(ShiftDecimal("+7", 7, -3), 0.007);
  EXPECT_EQ(ShiftDecimal("3.3", 3.3, 0), 3.3);
  // Not a plain decimal (grouping, too many digits): arithmetic on the value.
  EXPECT_DOUBLE_EQ(ShiftDecimal("1,234.5", 1234.5, -2), 12.345);
  EXPECT_DOUBLE_EQ(ShiftDecimal("0.12345678901234567", 0.12345678901234567, 2),
                   12.345678901234567);
}

TEST(ParseNumberTest, ParsesNanAndInfinityInAnyCase) {
  EXPECT_TRUE(std::isnan(Num("nan")));
  EXPECT_TRUE(std::isnan(Num("NaN")));
  EXPECT_TRUE(std::isnan(Num("-nan")));
  EXPECT_EQ(Num("inf"), INFINITY);
  EXPECT_EQ(Num("-inf"), -INFINITY);
  EXPECT_EQ(Num("Infinity"), INFINITY);
}

TEST(ParseNumberTest, RejectsWordsThatStartLikeNumbers) {
  double v = 0;
  EXPECT_EQ(ParseNumber("info", &v), 0u);
  EXPECT_EQ(ParseNumber("nanoseconds", &v), 0u);
  EXPECT_EQ(ParseNumber("abc", &v), 0u);
  EXPECT_EQ(ParseNumber("-", &v), 0u);
  EXPECT_EQ(ParseNumber("", &v), 0u);
}

TEST(ParseNumberTest, ThousandsSeparatorsOnlyWhenAllowed) {
  size_t used = 0;
  EXPECT_EQ(Num("6,785", true, &used), 6785);
  EXPECT_EQ(used, 5u);
  EXPECT_EQ(Num("1,234,567.5 tps", true, &used), 1234567.5);
  EXPECT_EQ(used, 11u);
  EXPECT_EQ(Num("6,785", false, &used), 6);
  EXPECT_EQ(used, 1u);
  // "12, 13" is a list, not a grouped number.
  EXPECT_EQ(Num("12, 13", true, &used), 12);
  EXPECT_EQ(used, 2u);
}

TEST(ParseNumberTest, OutOfRangeKeepsMagnitudeClass) {
  EXPECT_EQ(Num("1e999"), INFINITY);
  EXPECT_EQ(Num("1e-999"), 0.0);
}

TEST(ParseValueTest, ParsesPairsQuadsAndParenthesised) {
  Value v;
  ASSERT_TRUE(ParseValue(" 16601.3/17219.3 ", &v));
  EXPECT_EQ(v.count, 2);
  EXPECT_DOUBLE_EQ(v.num[1], 17219.3);
  ASSERT_TRUE(ParseValue("253.38GB/2.60GB/255.98GB/98.98%", &v));
  EXPECT_EQ(v.count, 4);
  EXPECT_EQ(v.unit[0], "GB");
  EXPECT_EQ(v.unit[3], "%");
  EXPECT_DOUBLE_EQ(v.num[3], 98.98);
  ASSERT_TRUE(ParseValue("68.57GiB(86.69%)", &v));
  EXPECT_EQ(v.count, 2);
  EXPECT_EQ(v.unit[0], "GiB");
  EXPECT_DOUBLE_EQ(v.num[1], 86.69);
}

TEST(ParseValueTest, RejectsTextAndTrailingGarbage) {
  Value v;
  EXPECT_FALSE(ParseValue("True", &v));
  EXPECT_FALSE(ParseValue("1.5 2.5", &v));
  EXPECT_FALSE(ParseValue("1/2/3/4/5", &v));
  EXPECT_FALSE(ParseValue("", &v));
}

}  // namespace
}  // namespace lens::training
