// The text exposition format as the local scrape reads it: what Lens's own
// MetricWriter writes (escaped label values, NaN and infinities, histogram
// parts), timestamps, prefix selection, and malformed lines named.
#include "telemetry/exposition.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lens::telemetry {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

TEST(ExpositionTest, ReadsSamplesWithEscapedLabelsAndSpecialValues) {
  const std::string text =
      "# HELP lens_gpu_utilization_ratio Fraction of time the GPU was busy.\n"
      "# TYPE lens_gpu_utilization_ratio gauge\n"
      "lens_gpu_utilization_ratio{gpu=\"0\",bdf=\"0000:3b:00.0\"} 0.75\n"
      "lens_gpu_power_watts{gpu=\"1\",serial=\"a\\\"b\\\\c\\nd\"} NaN\n"
      "lens_tcp_flow_rtt_microseconds_bucket{class=\"external\",le=\"+Inf\"} "
      "+Inf 1700000000123\r\n"
      "up -Inf\n"
      "\n";
  std::vector<MetricSample> out;
  ASSERT_TRUE(ParseExposition(text, 42, {}, &out).ok());
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].metric, "lens_gpu_utilization_ratio");
  EXPECT_EQ(out[0].labels, (Labels{{"gpu", "0"}, {"bdf", "0000:3b:00.0"}}));
  EXPECT_EQ(out[0].value, 0.75);
  EXPECT_EQ(out[0].timestamp_ms, 42);
  EXPECT_EQ(out[1].labels, (Labels{{"gpu", "1"}, {"serial", "a\"b\\c\nd"}}));
  EXPECT_TRUE(std::isnan(out[1].value));
  EXPECT_EQ(out[2].labels, (Labels{{"class", "external"}, {"le", "+Inf"}}));
  EXPECT_EQ(out[2].value, INFINITY);
  EXPECT_EQ(out[2].timestamp_ms, 1700000000123);
  EXPECT_EQ(out[3].metric, "up");
  EXPECT_TRUE(out[3].labels.empty());
  EXPECT_EQ(out[3].value, -INFINITY);
}

TEST(ExpositionTest, KeepsOnlyTheSelectedFamiliesAndDropsEmptyLabels) {
  const std::string text =
      "lens_gpu_utilization_ratio{gpu=\"0\",pod=\"\"} 1\n"
      "lens_node_cpu_seconds_total 5\n"
      "lens_tcp_flow_bytes_sent_total{workload=\"ml/train\"} 1e9\n";
  std::vector<MetricSample> out;
  const std::vector<std::string> prefixes = {"lens_gpu_", "lens_tcp_flow_"};
  ASSERT_TRUE(ParseExposition(text, 0, prefixes, &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].labels, (Labels{{"gpu", "0"}}));  // pod="" is no label
  EXPECT_EQ(out[1].metric, "lens_tcp_flow_bytes_sent_total");
  EXPECT_EQ(out[1].value, 1e9);
}

TEST(ExpositionTest, NamesTheMalformedLineAndKeepsNothingFromIt) {
  struct Case {
    std::string line;
    std::string error;
  };
  const Case cases[] = {
      {"lens_gpu_x{gpu=\"0\" 1", "line 2: expected ',' or '}' after label gpu"},
      {"lens_gpu_x{gpu=\"0} 1", "line 2: unterminated value of label gpu"},
      {"lens_gpu_x{gpu=0} 1", "line 2: bad label at column 12"},
      {"lens_gpu_x 12abc", "line 2: bad value \"12abc\""},
      {"lens_gpu_x 1 soon", "line 2: bad timestamp \"soon\""},
      {"{gpu=\"0\"} 1", "line 2: expected a metric name"},
  };
  for (const Case& c : cases) {
    std::vector<MetricSample> out(1);  // what was there stays
    Status st = ParseExposition("ok 1\n" + c.line + "\n", 0, {}, &out);
    ASSERT_FALSE(st.ok()) << c.line;
    EXPECT_NE(st.message().find(c.error), std::string::npos)
        << c.line << ": " << st.message();
    EXPECT_EQ(out.size(), 1u) << c.line;
  }
}

}  // namespace
}  // namespace lens::telemetry
