// RangeQuery::Validate and PromQlSourceOptions::Validate: each error names
// its field.
#include <gtest/gtest.h>

#include "lens/timeseries.h"

namespace lens {
namespace {

RangeQuery Valid() {
  RangeQuery q;
  q.metric = "lens_gpu_utilization_ratio";
  q.matchers = {{"node", "gpu-1"}, {"pod", "a\"b\nc"}};
  q.from_ms = 1700000000000;
  q.to_ms = 1700003600000;
  q.step = std::chrono::seconds(60);
  return q;
}

void ExpectInvalid(const Status& st, const std::string& field) {
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st;
  EXPECT_NE(st.message().find(field), std::string::npos)
      << st.message() << " should name " << field;
}

TEST(RangeQueryTest, AcceptsAValidQuery) {
  EXPECT_TRUE(Valid().Validate().ok()) << Valid().Validate();
  RangeQuery q = Valid();
  q.from_ms = q.to_ms;  // one step
  EXPECT_TRUE(q.Validate().ok());
  q.matchers = {{"node", ""}};  // "no such label"
  EXPECT_TRUE(q.Validate().ok());
}

TEST(RangeQueryTest, ErrorsNameTheField) {
  RangeQuery q = Valid();
  q.metric = "";
  ExpectInvalid(q.Validate(), "metric");
  q.metric = "lens gpu";
  ExpectInvalid(q.Validate(), "metric");
  q.metric = "up{x=\"1\"}";
  ExpectInvalid(q.Validate(), "metric");

  q = Valid();
  q.matchers.push_back({"bad-name", "x"});
  ExpectInvalid(q.Validate(), "matchers[2]");
  q.matchers.back() = {"__name__", "x"};  // reserved
  ExpectInvalid(q.Validate(), "matchers[2]");
  q.matchers.back() = {"", "x"};
  ExpectInvalid(q.Validate(), "matchers[2]");
  q.matchers.back() = {"ok", "\xff\xfe"};  // not UTF-8
  ExpectInvalid(q.Validate(), "matchers[2]");

  q = Valid();
  q.from_ms = q.to_ms + 1;
  ExpectInvalid(q.Validate(), "from_ms");

  q = Valid();
  q.step = std::chrono::milliseconds(0);
  ExpectInvalid(q.Validate(), "step");
  q.step = std::chrono::milliseconds(-1000);
  ExpectInvalid(q.Validate(), "step");

  q = Valid();
  q.max_series = 0;
  ExpectInvalid(q.Validate(), "max_series");
}

TEST(RangeQueryTest, AtMost11000Steps) {
  RangeQuery q = Valid();
  q.step = std::chrono::seconds(1);
  q.from_ms = 1700000040000;
  q.to_ms = q.from_ms + 10999 * 1000;  // 11,000 points
  EXPECT_TRUE(q.Validate().ok());
  q.to_ms += 1000;
  ExpectInvalid(q.Validate(), "step");
  // Counted from the grid's aligned start: 500 ms earlier adds a point.
  q.to_ms -= 1000;
  q.from_ms -= 500;
  ExpectInvalid(q.Validate(), "step");
}

TEST(RangeQueryTest, TimesAndStepInRange) {
  RangeQuery q = Valid();
  q.from_ms = -1;
  ExpectInvalid(q.Validate(), "from_ms");
  q.from_ms = 0;
  q.to_ms = INT64_MAX;
  q.step = std::chrono::hours(24 * 366);
  ExpectInvalid(q.Validate(), "to_ms");
  q.to_ms = 253402300799999;  // the end of 9999
  EXPECT_TRUE(q.Validate().ok()) << q.Validate();
  q.step += std::chrono::milliseconds(1);
  ExpectInvalid(q.Validate(), "step");
  q.step = std::chrono::milliseconds(INT64_MAX);
  ExpectInvalid(q.Validate(), "step");
}

TEST(PromQlSourceOptionsTest, ErrorsNameTheField) {
  PromQlSourceOptions o;
  o.url = "http://vm:8428";
  EXPECT_TRUE(o.Validate().ok());
  o.url = "https://user:pw@vm:8428/select/0/prometheus";
  EXPECT_TRUE(o.Validate().ok());

  o.url = "";
  ExpectInvalid(o.Validate(), "url");
  o.url = "vm:8428";
  ExpectInvalid(o.Validate(), "url");
  o.url = "ftp://user:s3cret@vm";
  ExpectInvalid(o.Validate(), "url");
  EXPECT_EQ(o.Validate().message().find("s3cret"), std::string::npos);

  o.url = "http://vm:8428";
  o.bearer_token = "abc\r\nX-Evil: 1";
  ExpectInvalid(o.Validate(), "bearer_token");
  EXPECT_EQ(o.Validate().message().find("abc"), std::string::npos);

  o.bearer_token = "";
  o.timeout = std::chrono::milliseconds(0);
  ExpectInvalid(o.Validate(), "timeout");

  o.timeout = std::chrono::seconds(1);
  o.max_response_bytes = 10;
  ExpectInvalid(o.Validate(), "max_response_bytes");
}

}  // namespace
}  // namespace lens
