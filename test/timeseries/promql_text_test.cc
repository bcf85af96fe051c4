// The PromQL text of a RangeQuery: string literals, selectors, durations
// and the seconds of a query_range request.
#include "timeseries/promql_text.h"

#include <gtest/gtest.h>

namespace lens::timeseries {
namespace {

std::string Literal(std::string_view value) {
  std::string out;
  AppendPromQlString(value, &out);
  return out;
}

TEST(PromQlTextTest, StringLiteralsEscapeWhatPromQlReads) {
  EXPECT_EQ(Literal("gpu-1"), R"("gpu-1")");
  EXPECT_EQ(Literal(""), R"("")");
  EXPECT_EQ(Literal(R"(a"b\c)"), R"("a\"b\\c")");
  EXPECT_EQ(Literal("a\nb\tc\rd"), R"("a\nb\tc\rd")");
  EXPECT_EQ(Literal(std::string("\x01\x1f\x7f\0z", 5)),
            R"("\x01\x1f\x7f\x00z")");
  EXPECT_EQ(Literal("\a\b\f\v"), R"("\a\b\f\v")");
  // UTF-8 as it is; no injection of a second matcher.
  EXPECT_EQ(Literal("pl\xc3\xa4in"), "\"pl\xc3\xa4in\"");
  EXPECT_EQ(Literal(R"(x",evil=~".*)"), R"("x\",evil=~\".*")");
}

TEST(PromQlTextTest, ExpressionPerFunction) {
  RangeQuery q;
  q.metric = "lens_gpu_utilization_ratio";
  EXPECT_EQ(PromQlExpression(q), "lens_gpu_utilization_ratio");
  q.matchers = {{"node", "gpu-1"}, {"pod", "a\"b"}};
  EXPECT_EQ(PromQlExpression(q),
            R"(lens_gpu_utilization_ratio{node="gpu-1",pod="a\"b"})");
  q.function = RangeFunction::kRate;
  q.metric = "lens_rx_bytes_total";
  q.step = std::chrono::seconds(60);
  EXPECT_EQ(PromQlExpression(q),
            R"(rate(lens_rx_bytes_total{node="gpu-1",pod="a\"b"}[60s]))");
  q.step = std::chrono::milliseconds(1500);
  q.matchers.clear();
  EXPECT_EQ(PromQlExpression(q), "rate(lens_rx_bytes_total[1500ms])");
}

TEST(PromQlTextTest, DurationsAndSeconds) {
  EXPECT_EQ(PromQlDuration(std::chrono::seconds(60)), "60s");
  EXPECT_EQ(PromQlDuration(std::chrono::milliseconds(250)), "250ms");
  EXPECT_EQ(PromQlSeconds(1700000040000), "1700000040");
  EXPECT_EQ(PromQlSeconds(1700000040500), "1700000040.5");
  EXPECT_EQ(PromQlSeconds(1700000040005), "1700000040.005");
  EXPECT_EQ(PromQlSeconds(1500), "1.5");
  EXPECT_EQ(PromQlSeconds(0), "0");
  EXPECT_EQ(PromQlSeconds(-250), "-0.25");
  EXPECT_EQ(PromQlSeconds(INT64_MIN), "-9223372036854775.808");
}

}  // namespace
}  // namespace lens::timeseries
