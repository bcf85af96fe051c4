// The time-series routes of the REST API (GPU heatmap, node and workload GPU
// metrics, flows) over the store's sample history as the series source
// (NewSampleHistorySource), and the sampled training series, on SQLite and
// PostgreSQL: shapes, values worked out by hand from api_test_env.h's
// SeedSeries and SeedTraining, filters, bad parameters, unknown ids, 503
// without a source, and no secret in any answer.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "api_test_env.h"

namespace lens::test {
namespace {

class ApiSeriesTest : public ApiFixture {
 protected:
  // "?from=kS0&to=kS0+240" (five 60 s steps) and `more`.
  static std::string Range(const std::string& more = "") {
    return "?from=" + std::to_string(kS0) + "&to=" + std::to_string(kS0 + 240) +
           more;
  }
};

// (gpu + 1) / 10 + k / 100: SeedSeries' utilisation.
double Util(int gpu, int k) { return (gpu + 1) / 10.0 + k / 100.0; }

TEST_P(ApiSeriesTest, GpuHeatmapIsNodeByGpuByTime) {
  rapidjson::Document d = Data("/api/v1/gpu-heatmap" + Range("&step=60"));
  ASSERT_EQ(d["times"].Size(), 5u);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(d["times"][k].GetInt64(), kS0 + 60 * k);
  const auto& nodes = d["nodes"];
  ASSERT_EQ(nodes.Size(), 2u);
  EXPECT_STREQ(nodes[0]["node"].GetString(), "node-a");
  EXPECT_STREQ(nodes[1]["node"].GetString(), "node-b");
  ASSERT_EQ(nodes[1]["gpus"].Size(), 2u);
  EXPECT_STREQ(nodes[1]["gpus"][0]["gpu"].GetString(), "2");  // numerically
  EXPECT_STREQ(nodes[1]["gpus"][1]["gpu"].GetString(), "10");
  const auto& a0 = nodes[0]["gpus"][0]["values"];
  ASSERT_EQ(a0.Size(), 5u);
  for (int k = 0; k < 5; ++k) EXPECT_NEAR(a0[k].GetDouble(), Util(0, k), 1e-9);
  // node-a GPU 1's two series merged: the larger value where both have one.
  const auto& a1 = nodes[0]["gpus"][1]["values"];
  EXPECT_NEAR(a1[3].GetDouble(), Util(1, 3), 1e-9);
  EXPECT_NEAR(a1[4].GetDouble(), 0.99, 1e-9);
  const auto& b10 = nodes[1]["gpus"][1]["values"];
  EXPECT_TRUE(b10[2].IsNull());  // no sample at k = 2
  EXPECT_NEAR(b10[3].GetDouble(), Util(10, 3), 1e-9);

  d = Data("/api/v1/gpu-heatmap" + Range("&node=node-b"));  // step 60
  ASSERT_EQ(d["nodes"].Size(), 1u);
  EXPECT_STREQ(d["nodes"][0]["node"].GetString(), "node-b");
  EXPECT_EQ(d["times"].Size(), 5u);
  // The last hour by default: nothing seeded there, at most 121 columns.
  d = Data("/api/v1/gpu-heatmap");
  EXPECT_EQ(d["nodes"].Size(), 0u);
  EXPECT_GE(d["times"].Size(), 60u);
  EXPECT_LE(d["times"].Size(), 121u);

  ExpectError("/api/v1/gpu-heatmap" + Range("&step=0"), 400, "step");
  ExpectError("/api/v1/gpu-heatmap" + Range("&step=soon"), 400, "step");
  ExpectError("/api/v1/gpu-heatmap?from=yesterday", 400, "from");
  ExpectError("/api/v1/gpu-heatmap?from=2000&to=1000", 400, "to");
  ExpectError("/api/v1/gpu-heatmap?from=0&to=86400&step=1", 400,
              "step: 1 s gives 86401 points");
}

TEST_P(ApiSeriesTest, NodeGpuMetricsHaveEveryMetricPerGpu) {
  rapidjson::Document d =
      Data("/api/v1/nodes/node-a/gpu-metrics" + Range("&step=60"));
  const auto& metrics = d["metrics"];
  ASSERT_EQ(metrics.Size(), 4u);
  const char* names[] = {"lens_gpu_utilization_ratio",
                         "lens_gpu_memory_used_bytes", "lens_gpu_power_watts",
                         "lens_gpu_temperature_celsius"};
  for (int i = 0; i < 4; ++i)
    EXPECT_STREQ(metrics[i]["metric"].GetString(), names[i]);
  const auto& util = metrics[0]["series"];
  ASSERT_EQ(util.Size(), 2u);
  EXPECT_STREQ(util[1]["gpu"].GetString(), "1");
  EXPECT_FALSE(util[1].HasMember("node"));
  const auto& points = util[0]["points"];
  ASSERT_EQ(points.Size(), 5u);
  EXPECT_EQ(points[2][0].GetInt64(), kS0 + 120);
  EXPECT_NEAR(points[2][1].GetDouble(), Util(0, 2), 1e-9);
  ASSERT_EQ(metrics[1]["series"].Size(), 1u);  // memory of GPU 0 only
  EXPECT_DOUBLE_EQ(metrics[1]["series"][0]["points"][4][1].GetDouble(),
                   1e9 + 4);
  EXPECT_DOUBLE_EQ(metrics[3]["series"][0]["points"][0][1].GetDouble(), 50);

  d = Data("/api/v1/nodes/node-b/gpu-metrics" + Range());
  ASSERT_EQ(d["metrics"][0]["series"].Size(), 2u);
  EXPECT_EQ(d["metrics"][0]["series"][1]["points"].Size(), 4u);  // a gap
  EXPECT_EQ(d["metrics"][1]["series"].Size(), 0u);
  ExpectError("/api/v1/nodes/node-zz/gpu-metrics", 404, "node-zz");
  ExpectError("/api/v1/nodes/node-a/gpu-metrics?step=-5", 400, "step");
}

TEST_P(ApiSeriesTest, WorkloadGpuMetricsMatchItsWorkloadUidLabel) {
  rapidjson::Document d =
      Data("/api/v1/workloads/w-1/gpu-metrics" + Range("&step=60"));
  const auto& util = d["metrics"][0]["series"];
  ASSERT_EQ(util.Size(), 2u);
  EXPECT_STREQ(util[0]["node"].GetString(), "node-a");
  EXPECT_STREQ(util[1]["gpu"].GetString(), "1");
  // The other instance's series carries no workload_uid: not merged here.
  EXPECT_NEAR(util[1]["points"][4][1].GetDouble(), Util(1, 4), 1e-9);
  EXPECT_EQ(d["metrics"][2]["series"].Size(), 1u);
  d = Data("/api/v1/workloads/w-2/gpu-metrics" + Range());
  EXPECT_EQ(d["metrics"][0]["series"].Size(), 0u);
  ExpectError("/api/v1/workloads/nope/gpu-metrics", 404, "nope");
  ExpectError("/api/v1/workloads/w-1/gpu-metrics?to=-1", 400, "to");
}

TEST_P(ApiSeriesTest, FlowsAreMeanRatesBusiestFirst) {
  rapidjson::Document d = Data("/api/v1/flows" + Range());
  const auto& items = d["items"];
  ASSERT_EQ(items.Size(), 3u);
  EXPECT_STREQ(items[0]["node"].GetString(), "node-a");
  EXPECT_STREQ(items[0]["workload"].GetString(), "ml/llama-worker-0");
  EXPECT_STREQ(items[0]["class"].GetString(), "external");
  EXPECT_STREQ(items[0]["direction"].GetString(), "egress");
  // (6000 sent + 3000 received) bytes and 6 retransmits per 60 s.
  EXPECT_NEAR(items[0]["bytesPerSecond"].GetDouble(), 150, 1e-9);
  EXPECT_NEAR(items[0]["retransmitsPerSecond"].GetDouble(), 0.1, 1e-9);
  EXPECT_STREQ(items[1]["workload"].GetString(), "");  // "host": no pod
  EXPECT_NEAR(items[1]["bytesPerSecond"].GetDouble(), 20, 1e-9);
  EXPECT_EQ(items[1]["retransmitsPerSecond"].GetDouble(), 0);
  EXPECT_STREQ(items[2]["workload"].GetString(), "research/bert-worker-0");
  EXPECT_NEAR(items[2]["bytesPerSecond"].GetDouble(), 10, 1e-9);
  const auto& remotes = d["remotes"];
  ASSERT_EQ(remotes.Size(), 2u);
  EXPECT_STREQ(remotes[0]["remote"].GetString(), "10.0.0.1");
  EXPECT_STREQ(remotes[0]["node"].GetString(), "node-a");
  EXPECT_NEAR(remotes[0]["bytesPerSecond"].GetDouble(), 150, 1e-9);
  EXPECT_NEAR(remotes[1]["bytesPerSecond"].GetDouble(), 1, 1e-9);

  d = Data("/api/v1/flows" + Range("&node=node-b"));
  EXPECT_EQ(d["items"].Size(), 2u);
  ASSERT_EQ(d["remotes"].Size(), 1u);
  EXPECT_STREQ(d["remotes"][0]["remote"].GetString(), "other");
  d = Data("/api/v1/flows" + Range("&workload=ml/llama-worker-0"));
  ASSERT_EQ(d["items"].Size(), 1u);
  EXPECT_EQ(d["remotes"].Size(), 0u);  // counted per node, not per pod
  d = Data("/api/v1/flows" + Range("&workload=host"));
  ASSERT_EQ(d["items"].Size(), 1u);
  EXPECT_NEAR(d["items"][0]["bytesPerSecond"].GetDouble(), 20, 1e-9);
  d = Data("/api/v1/flows");  // the last hour: nothing
  EXPECT_EQ(d["items"].Size(), 0u);
  ExpectError("/api/v1/flows?from=1.5", 400, "from");
}

TEST_P(ApiSeriesTest, WorkloadFlowsAreThoseOfItsPods) {
  rapidjson::Document d = Data("/api/v1/workloads/w-1/flows" + Range());
  ASSERT_EQ(d["items"].Size(), 1u);
  EXPECT_STREQ(d["items"][0]["workload"].GetString(), "ml/llama-worker-0");
  EXPECT_NEAR(d["items"][0]["bytesPerSecond"].GetDouble(), 150, 1e-9);
  EXPECT_EQ(d["remotes"].Size(), 0u);
  d = Data("/api/v1/workloads/w-2/flows" + Range());
  ASSERT_EQ(d["items"].Size(), 1u);
  EXPECT_STREQ(d["items"][0]["node"].GetString(), "node-b");
  EXPECT_NEAR(d["items"][0]["bytesPerSecond"].GetDouble(), 10, 1e-9);
  ExpectError("/api/v1/workloads/nope/flows", 404, "nope");
  ExpectError("/api/v1/workloads/w-1/flows?to=x", 400, "to");
}

TEST_P(ApiSeriesTest, TrainingSeriesIsSampledPerRunWithMarkers) {
  rapidjson::Document d =
      Data("/api/v1/workloads/w-3/training-series?points=10");
  const auto& runs = d["runs"];
  ASSERT_EQ(runs.Size(), 2u);
  EXPECT_EQ(runs[0]["run"].GetInt(), 1);
  ASSERT_EQ(runs[0]["points"].Size(), 10u);
  // Run 1: its first and last and the last at or before 1 + 11k.
  const auto& p = runs[0]["points"][1];
  EXPECT_EQ(runs[0]["points"][0]["iteration"].GetInt64(), 1);
  EXPECT_EQ(p["iteration"].GetInt64(), 12);
  EXPECT_DOUBLE_EQ(p["timestamp"].GetDouble(), double(kT0 + 12));
  EXPECT_DOUBLE_EQ(p["loss"].GetDouble(), 12);
  EXPECT_DOUBLE_EQ(p["stepSeconds"].GetDouble(), 0.5);
  EXPECT_TRUE(p["tflopsPerGpu"].IsNull());
  EXPECT_TRUE(p["tokensPerSecondPerGpu"].IsNull());
  EXPECT_EQ(runs[0]["points"][9]["iteration"].GetInt64(), 100);
  ASSERT_EQ(runs[1]["points"].Size(), 10u);  // iterations 50..149
  EXPECT_EQ(runs[1]["points"][1]["iteration"].GetInt64(), 61);
  EXPECT_DOUBLE_EQ(runs[1]["points"][1]["loss"].GetDouble(), 61);
  const auto& events = d["events"];
  ASSERT_EQ(events.Size(), 3u);
  EXPECT_STREQ(events[0]["type"].GetString(), "run_start");
  EXPECT_EQ(events[0]["iteration"].GetInt64(), 1);
  EXPECT_DOUBLE_EQ(events[0]["timestamp"].GetDouble(), double(kT0 + 1));
  EXPECT_STREQ(events[1]["type"].GetString(), "checkpoint_save_end");
  EXPECT_EQ(events[1]["iteration"].GetInt64(), 100);
  EXPECT_STREQ(events[2]["type"].GetString(), "run_start");
  EXPECT_EQ(events[2]["run"].GetInt(), 2);
  EXPECT_EQ(events[2]["iteration"].GetInt64(), 50);

  d = Data("/api/v1/workloads/w-3/training-series?run=2");
  ASSERT_EQ(d["runs"].Size(), 1u);
  EXPECT_EQ(d["runs"][0]["points"].Size(), 100u);  // 400 allowed: all
  ASSERT_EQ(d["events"].Size(), 1u);
  d = Data("/api/v1/workloads/w-1/training-series");
  ASSERT_EQ(d["runs"][0]["points"].Size(), 3u);
  EXPECT_DOUBLE_EQ(d["runs"][0]["points"][2]["loss"].GetDouble(), 1.5);
  EXPECT_EQ(d["events"].Size(), 2u);  // run 1's start, the checkpoint
  d = Data("/api/v1/workloads/w-2/training-series");  // no training
  EXPECT_EQ(d["runs"].Size(), 0u);
  EXPECT_EQ(d["events"].Size(), 0u);
  ExpectError("/api/v1/workloads/w-3/training-series?points=5", 400,
              "points: 5 is not in 10..5000");
  ExpectError("/api/v1/workloads/w-3/training-series?points=9000", 400,
              "points");
  ExpectError("/api/v1/workloads/w-3/training-series?run=0", 400, "run");
  ExpectError("/api/v1/workloads/nope/training-series", 404, "nope");
}

TEST_P(ApiSeriesTest, SeriesRoutesAnswer503WithoutASource) {
  Start("", /*with_series=*/false);
  for (const char* path :
       {"/api/v1/gpu-heatmap", "/api/v1/nodes/node-a/gpu-metrics",
        "/api/v1/workloads/w-1/gpu-metrics", "/api/v1/flows",
        "/api/v1/workloads/w-1/flows"}) {
    ExpectError(path, 503, "no time series backend configured");
  }
  // The training series is the store's.
  EXPECT_EQ(Get("/api/v1/workloads/w-3/training-series").first, 200);
}

TEST_P(ApiSeriesTest, NoSeriesResponseCarriesASecret) {
  for (const std::string path :
       {"/api/v1/gpu-heatmap", "/api/v1/nodes/node-a/gpu-metrics",
        "/api/v1/nodes/node-b/gpu-metrics", "/api/v1/workloads/w-1/gpu-metrics",
        "/api/v1/flows", "/api/v1/workloads/w-1/flows",
        "/api/v1/workloads/w-2/flows"}) {
    EXPECT_EQ(Get(path + Range()).first, 200) << path;
  }
  ExpectNoSecrets();
}

INSTANTIATE_TEST_SUITE_P(Backends, ApiSeriesTest,
                         testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace lens::test
