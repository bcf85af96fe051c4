#include "core/json.h"

#include <gtest/gtest.h>

namespace lens {
namespace {

TEST(AppendJsonStringTest, EscapesQuotesBackslashesAndControlBytes) {
  std::string out = "x";
  AppendJsonString("a\"b\\c\nd\te\x01\x1f\xc3\xa9", &out);
  EXPECT_EQ(out, "x\"a\\\"b\\\\c\\nd\\te\\u0001\\u001f\xc3\xa9\"");
}

TEST(AppendJsonStringTest, EmptyStringIsTwoQuotes) {
  std::string out;
  AppendJsonString("", &out);
  EXPECT_EQ(out, "\"\"");
}

}  // namespace
}  // namespace lens
