// Reading query_range answers: real VictoriaMetrics answers and a
// Prometheus-shaped one (test/fixtures/timeseries/README.md).
#include "timeseries/promql_response.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

namespace lens::timeseries {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(LENS_FIXTURES_DIR) + "/timeseries/" + name);
  EXPECT_TRUE(in) << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr char kServer[] = "http://vm:8428/api/v1/query_range";

TEST(PromQlResponseTest, ReadsVictoriaMetricsMatrix) {
  auto got = ParseQueryRangeResponse(Fixture("vm_matrix.json"), "inf_test", 100,
                                     kServer);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  // Ordered by labels; __name__ dropped, names sorted.
  const SeriesSamples& a = (*got)[0];
  EXPECT_EQ(a.metric, "inf_test");
  EXPECT_EQ(a.labels, (std::vector<std::pair<std::string, std::string>>{
                          {"gpu", "1"}, {"node", "n2"}}));
  ASSERT_EQ(a.points.size(), 2u);
  EXPECT_EQ(a.points[0].timestamp_ms, 1700000040000);
  EXPECT_EQ(a.points[0].value, 0.001);
  const SeriesSamples& b = (*got)[1];
  EXPECT_EQ(b.labels,
            (std::vector<std::pair<std::string, std::string>>{{"node", "n1"}}));
  ASSERT_EQ(b.points.size(), 3u);
  EXPECT_EQ(b.points[0].value, INFINITY);
  EXPECT_EQ(b.points[1].value, -INFINITY);
  EXPECT_EQ(b.points[1].timestamp_ms, 1700000070000);
  EXPECT_EQ(b.points[2].value, 0.25);
}

TEST(PromQlResponseTest, ReadsPrometheusMatrix) {
  auto got =
      ParseQueryRangeResponse(Fixture("prometheus_matrix.json"),
                              "lens_gpu_temperature_celsius", 100, kServer);
  ASSERT_TRUE(got.ok()) << got.status();
  // The series without values is left out.
  ASSERT_EQ(got->size(), 1u);
  const SeriesSamples& s = (*got)[0];
  EXPECT_EQ(s.labels.size(), 4u);
  EXPECT_EQ(s.labels[0].first, "gpu");
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_EQ(s.points[1].timestamp_ms, 1700000055500);
  EXPECT_TRUE(std::isnan(s.points[1].value));
  EXPECT_EQ(s.points[2].value, 41.5);
}

TEST(PromQlResponseTest, TooManySeriesIsResourceExhausted) {
  auto got = ParseQueryRangeResponse(Fixture("vm_matrix.json"), "inf_test", 1,
                                     kServer);
  EXPECT_EQ(got.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(got.status().message().find("max_series 1"), std::string::npos)
      << got.status();
}

TEST(PromQlResponseTest, ErrorAnswerIsUnavailableWithItsText) {
  const std::string body = Fixture("vm_error.json");
  auto got = ParseQueryRangeResponse(body, "inf_test", 100, kServer);
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable);
  const std::string& m = got.status().message();
  EXPECT_NE(m.find(kServer), std::string::npos) << m;
  EXPECT_NE(m.find("422: error when executing query"), std::string::npos) << m;
  EXPECT_EQ(PromQlErrorText("plain text\nanswer"), "plain text answer");
  EXPECT_EQ(PromQlErrorText(std::string(1000, 'x')).size(), 303u);
}

TEST(PromQlResponseTest, MalformedAnswersAreUnavailable) {
  const char* bodies[] = {
      "",
      "[]",
      R"({"status":"success"})",
      R"({"status":"ok","data":{"resultType":"matrix","result":[]}})",
      R"({"status":"success","data":{"resultType":"matrix","result":{}}})",
      R"({"status":"success","data":{"resultType":"matrix","result":[1]}})",
      R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":1},"values":[]}]}})",
      R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"x"]]}]}})",
      R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[["1","2"]]}]}})",
      R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1]]}]}})",
      R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{}}]}})",
  };
  for (const char* body : bodies) {
    auto got = ParseQueryRangeResponse(body, "m", 100, kServer);
    EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << body;
  }
  // The instant-query shape is not a range answer.
  EXPECT_EQ(
      ParseQueryRangeResponse(Fixture("vm_vector.json"), "m", 100, kServer)
          .status()
          .code(),
      StatusCode::kUnavailable);
}

}  // namespace
}  // namespace lens::timeseries
