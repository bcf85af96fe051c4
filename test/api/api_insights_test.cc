// The insight routes over api_test_env.h's seeded store and sample history,
// on SQLite and PostgreSQL, with the answers worked out by hand from Seed
// and SeedSeries.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <string>

#include "api_test_env.h"

namespace lens::test {
namespace {

class ApiInsightsTest : public ApiFixture {};

TEST_P(ApiInsightsTest, IdleGpusNamesTheHolderAndTheWaste) {
  // node-a GPU 0 reads 0.1 + k/100 at kS0 + 60k (k = -1..4); ctr-0 of
  // pod-1 (w-1, train-llama) holds it since kT0 = kS0 - 40. Under 12%:
  // k = 0 and 1 (k = -1 is before the holding, in any case outside the
  // range). The stretch runs from kS0 to the next sample, kS0 + 120: 2
  // minutes, the window asked for, so one episode of 120 s = 1/30 GPU-hour.
  // GPU 1 (0.2 and up) is busy; node-b's GPUs are held by no container.
  rapidjson::Document d =
      Data("/api/v1/insights/idle-gpus?from=" + std::to_string(kS0) + "&to=" +
           std::to_string(kS0 + 240) + "&thresholdPercent=12&windowMinutes=2");
  EXPECT_DOUBLE_EQ(d["thresholdRatio"].GetDouble(), 0.12);
  EXPECT_EQ(d["windowSeconds"].GetInt64(), 120);
  ASSERT_EQ(d["episodes"].Size(), 1u);
  const auto& e = d["episodes"][0];
  EXPECT_STREQ(e["node"].GetString(), "node-a");
  EXPECT_STREQ(e["gpu"].GetString(), "0");
  EXPECT_STREQ(e["serial"].GetString(), "SN-A0");
  EXPECT_STREQ(e["podName"].GetString(), "llama-worker-0");
  EXPECT_STREQ(e["workloadUid"].GetString(), "w-1");
  EXPECT_STREQ(e["workloadName"].GetString(), "train-llama");
  EXPECT_EQ(e["since"].GetInt64(), kS0);
  EXPECT_EQ(e["until"].GetInt64(), kS0 + 120);
  EXPECT_FALSE(e["ongoing"].GetBool());
  EXPECT_NEAR(e["meanUtilization"].GetDouble(), 0.105, 1e-9);
  EXPECT_NEAR(e["gpuHours"].GetDouble(), 120.0 / 3600, 1e-12);
  ASSERT_EQ(d["workloads"].Size(), 1u);
  EXPECT_EQ(d["workloads"][0]["idleGpusNow"].GetInt64(), 0);
  EXPECT_EQ(d["workloads"][0]["episodes"].GetInt64(), 1);
  // The default 5% finds nothing; a 3-minute window neither.
  d = Data("/api/v1/insights/idle-gpus?from=" + std::to_string(kS0) +
           "&to=" + std::to_string(kS0 + 240));
  EXPECT_EQ(d["episodes"].Size(), 0u);
  d = Data("/api/v1/insights/idle-gpus?from=" + std::to_string(kS0) + "&to=" +
           std::to_string(kS0 + 240) + "&thresholdPercent=12&windowMinutes=3");
  EXPECT_EQ(d["episodes"].Size(), 0u);
  // Bad parameters are named.
  for (const char* q : {"?thresholdPercent=0", "?windowMinutes=x",
                        "?from=100&to=50", "?from=0&to=900000"}) {
    auto [status, body] = Get(std::string("/api/v1/insights/idle-gpus") + q);
    EXPECT_EQ(status, 400) << q << " " << body;
  }
  // Every insight route reads its window the same way.
  for (const char* path :
       {"/api/v1/workloads/w-1/stragglers", "/api/v1/insights/device-health",
        "/api/v1/insights/placement"}) {
    for (const char* q : {"?from=100&to=50", "?from=0&to=900000"}) {
      auto [status, body] = Get(std::string(path) + q);
      EXPECT_EQ(status, 400) << path << q << " " << body;
      EXPECT_NE(body.find("from: "), std::string::npos) << body;
    }
  }
}

TEST_P(ApiInsightsTest, GoodputOfASeededWorkload) {
  // w-1: created at kT0, no pod seen running; iterations 1..3 at kT0..kT0+2
  // (run 1, no TFLOP/s logged), still running. Running from the first
  // iteration: no scheduling or start-up, 2 s productive, the rest idle.
  const double now = std::chrono::duration<double>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  rapidjson::Document d = Data("/api/v1/workloads/w-1/goodput");
  const auto& t = d["total"];
  EXPECT_DOUBLE_EQ(t["schedulingSeconds"].GetDouble(), 0);
  EXPECT_DOUBLE_EQ(t["startupSeconds"].GetDouble(), 0);
  EXPECT_DOUBLE_EQ(t["productiveSeconds"].GetDouble(), 2);
  EXPECT_NEAR(t["wallSeconds"].GetDouble(), now - kT0, 30);
  EXPECT_NEAR(t["idleSeconds"].GetDouble(), now - kT0 - 2, 30);
  EXPECT_STREQ(d["gpuModel"].GetString(), "MI300X");
  EXPECT_DOUBLE_EQ(d["peakTflops"].GetDouble(), 1307.4);
  EXPECT_TRUE(d["tflopsPerGpu"].IsNull());
  EXPECT_TRUE(d["mfu"].IsNull());
  EXPECT_EQ(d["iterationsUsed"].GetInt64(), 3);
  ASSERT_EQ(d["runs"].Size(), 1u);
  EXPECT_EQ(d["runs"][0]["lastIteration"].GetInt64(), 3);
  auto [status, body] = Get("/api/v1/workloads/no-such/goodput");
  EXPECT_EQ(status, 404) << body;
}

TEST_P(ApiInsightsTest, StragglersRankTheSlowGpusWithTheirEvidence) {
  // Beside Seed's node-a GPU 0 (held by w-1's ctr-0, 0.1 + k/100), w-1's pod
  // also holds the four GPUs of node-s through ctr-s. Utilisation at kS0 +
  // 60k, k = -1..4: node-s GPUs 0..2 at 0.90, 0.91, 0.92, GPU 3 at 0.30
  // with thermal throttling. Over [kS0, kS0 + 240] (k = 0..4) the GPU means
  // are 0.12, 0.90, 0.91, 0.92, 0.30: median 0.90, deviations 0.78, 0, 0.01,
  // 0.02, 0.60, MAD 0.02. Modified z-scores: 0.6745 x 0.78 / 0.02 = 26.3
  // (node-a GPU 0) and 0.6745 x 0.60 / 0.02 = 20.2 (node-s GPU 3), both
  // over 3.5; two nodes are too few for the node test.
  NodeRecord n;
  n.name = "node-s";
  n.created_at = n.updated_at = AtSeconds(kT0);
  ASSERT_TRUE(store_->nodes().UpsertNodes({&n, 1}, NodeColumns::kAll).ok());
  std::vector<GpuDeviceRecord> gpus(4);
  ContainerRecord c;
  c.container_id = "ctr-s";
  c.node = "node-s";
  c.pod_uid = "pod-1";
  c.state = ContainerState::kRunning;
  c.created_at = c.updated_at = AtSeconds(kT0);
  for (int i = 0; i < 4; ++i) {
    gpus[i].node = "node-s";
    gpus[i].gpu_index = i;
    gpus[i].serial = "SN-S" + std::to_string(i);
    c.devices.push_back({DeviceKind::kGpu, gpus[i].serial, "", "oci-spec"});
  }
  ASSERT_TRUE(
      store_->nodes().SyncGpuDevices("node-s", gpus, AtSeconds(kT0)).ok());
  ASSERT_TRUE(store_->containers().UpsertContainers({&c, 1}).ok());
  std::vector<MetricSample> samples;
  for (int k = -1; k <= 4; ++k) {
    for (int g = 0; g < 4; ++g) {
      samples.push_back({"lens_gpu_utilization_ratio",
                         {{"node", "node-s"}, {"gpu", std::to_string(g)}},
                         (kS0 + 60 * k) * 1000,
                         g == 3 ? 0.30 : 0.90 + g / 100.0});
    }
    samples.push_back(
        {"lens_gpu_throttled",
         {{"node", "node-s"}, {"gpu", "3"}, {"reason", "thermal"}},
         (kS0 + 60 * k) * 1000,
         1});
  }
  ASSERT_TRUE(store_->samples().AppendSamples(samples).ok());

  rapidjson::Document d =
      Data("/api/v1/workloads/w-1/stragglers?from=" + std::to_string(kS0) +
           "&to=" + std::to_string(kS0 + 240));
  EXPECT_EQ(d["gpus"].GetInt64(), 5);
  ASSERT_TRUE(d["utilization"].IsObject());
  EXPECT_NEAR(d["utilization"]["median"].GetDouble(), 0.90, 1e-9);
  EXPECT_NEAR(d["utilization"]["mad"].GetDouble(), 0.02, 1e-9);
  ASSERT_EQ(d["suspects"].Size(), 2u);
  const auto& first = d["suspects"][0];
  EXPECT_STREQ(first["node"].GetString(), "node-a");
  EXPECT_STREQ(first["gpu"].GetString(), "0");
  EXPECT_NEAR(first["score"].GetDouble(), 0.6745 * 0.78 / 0.02, 0.01);
  const auto& second = d["suspects"][1];
  EXPECT_STREQ(second["node"].GetString(), "node-s");
  EXPECT_STREQ(second["gpu"].GetString(), "3");
  EXPECT_NEAR(second["score"].GetDouble(), 0.6745 * 0.60 / 0.02, 0.01);
  bool throttled = false;
  for (const auto& e : second["evidence"].GetArray()) {
    throttled |= std::string(e["kind"].GetString()) == "gpu_throttle" &&
                 std::string(e["name"].GetString()) == "thermal";
  }
  EXPECT_TRUE(throttled);
  auto [status, body] = Get("/api/v1/workloads/no-such/stragglers");
  EXPECT_EQ(status, 404) << body;
}

TEST_P(ApiInsightsTest, DeviceHealthFromTheAgentsSeries) {
  // node-a's GPU 0 reads healthy (0) at kS0 + 60k for k = -1..2 and
  // unhealthy (2) at k = 3 from its agent (instance a); the agent restarts
  // and the new one (instance b) reads it healthy at k = 4. Its mlx5_0 port
  // 1 is degraded (1) throughout. Over [kS0, kS0 + 240] (k = 0..4) the two
  // series are one device: unhealthy at kS0 + 180, healthy again since
  // kS0 + 240 (two changes); the port degraded since kS0, first (worse).
  std::vector<MetricSample> samples;
  for (int k = -1; k <= 4; ++k) {
    if (k <= 3) {
      samples.push_back({"lens_gpu_health",
                         {{"node", "node-a"},
                          {"gpu", "0"},
                          {"id", "SN-A0"},
                          {"instance", "a"}},
                         (kS0 + 60 * k) * 1000,
                         k == 3 ? 2.0 : 0.0});
    }
    samples.push_back({"lens_rdma_port_health",
                       {{"node", "node-a"},
                        {"device", "mlx5_0"},
                        {"port", "1"},
                        {"id", "0xabcd/1"}},
                       (kS0 + 60 * k) * 1000,
                       1.0});
  }
  samples.push_back(
      {"lens_gpu_health",
       {{"node", "node-a"}, {"gpu", "0"}, {"id", "SN-A0"}, {"instance", "b"}},
       (kS0 + 240) * 1000,
       0.0});
  ASSERT_TRUE(store_->samples().AppendSamples(samples).ok());
  rapidjson::Document d =
      Data("/api/v1/insights/device-health?from=" + std::to_string(kS0) +
           "&to=" + std::to_string(kS0 + 240));
  ASSERT_EQ(d["devices"].Size(), 2u);
  const auto& port = d["devices"][0];
  EXPECT_STREQ(port["kind"].GetString(), "rdma_port");
  EXPECT_STREQ(port["device"].GetString(), "mlx5_0");
  EXPECT_EQ(port["port"].GetInt64(), 1);
  EXPECT_STREQ(port["state"].GetString(), "degraded");
  EXPECT_EQ(port["since"].GetInt64(), kS0);
  EXPECT_EQ(port["changes"].GetInt64(), 0);
  const auto& gpu = d["devices"][1];
  EXPECT_STREQ(gpu["kind"].GetString(), "gpu");
  EXPECT_STREQ(gpu["id"].GetString(), "SN-A0");
  EXPECT_STREQ(gpu["state"].GetString(), "healthy");
  EXPECT_EQ(gpu["since"].GetInt64(), kS0 + 240);
  EXPECT_EQ(gpu["changes"].GetInt64(), 2);
  ASSERT_EQ(d["changes"].Size(), 2u);
  EXPECT_EQ(d["changes"][0]["at"].GetInt64(), kS0 + 180);
  EXPECT_STREQ(d["changes"][0]["from"].GetString(), "healthy");
  EXPECT_STREQ(d["changes"][0]["to"].GetString(), "unhealthy");
  EXPECT_EQ(d["changes"][1]["at"].GetInt64(), kS0 + 240);
  EXPECT_STREQ(d["changes"][1]["to"].GetString(), "healthy");
}

TEST_P(ApiInsightsTest, PlacementIssuesFromTheAgentsSeries) {
  // At kS0 + 60k, k = -1..4: ml/llama-worker-0 on node-a has one
  // cpus-off-gpu-numa-nodes flag throughout, and two
  // nic-on-other-numa-node flags until k = 2 (that series then ends: the
  // flags cleared); research/bert-0 on node-b was flagged until k = 0 (the
  // pod ended). At kS0 + 240 both are fresh (bert's last point is 4
  // minutes old, within 5): llama with its CPU flag only (older than its
  // last point, the NIC flags are gone), bert with its flag. At kS0 + 840
  // neither is.
  std::vector<MetricSample> samples;
  for (int k = -1; k <= 4; ++k) {
    samples.push_back({"lens_pod_placement_issues",
                       {{"node", "node-a"},
                        {"namespace", "ml"},
                        {"pod", "llama-worker-0"},
                        {"issue", "cpus-off-gpu-numa-nodes"}},
                       (kS0 + 60 * k) * 1000,
                       1});
    if (k <= 2) {
      samples.push_back({"lens_pod_placement_issues",
                         {{"node", "node-a"},
                          {"namespace", "ml"},
                          {"pod", "llama-worker-0"},
                          {"issue", "nic-on-other-numa-node"}},
                         (kS0 + 60 * k) * 1000,
                         2});
    }
    if (k <= 0) {
      samples.push_back({"lens_pod_placement_issues",
                         {{"node", "node-b"},
                          {"namespace", "research"},
                          {"pod", "bert-0"},
                          {"issue", "cpus-off-gpu-numa-nodes"}},
                         (kS0 + 60 * k) * 1000,
                         1});
    }
  }
  // llama's GPU on NUMA node 1 under pci0000:80 with its NIC on another
  // node; an earlier scrape (k = 3) still named a GPU it no longer holds.
  for (int k = -1; k <= 4; ++k) {
    samples.push_back({"lens_pod_placement_device_info",
                       {{"bdf", "0000:9f:00.0"},
                        {"device", "SN-9F"},
                        {"kind", "gpu"},
                        {"namespace", "ml"},
                        {"nic", "mlx5_0"},
                        {"nic_distance", "other-numa-node"},
                        {"node", "node-a"},
                        {"numa_node", "1"},
                        {"pod", "llama-worker-0"},
                        {"root_complex", "pci0000:80"}},
                       (kS0 + 60 * k) * 1000,
                       1});
  }
  samples.push_back({"lens_pod_placement_device_info",
                     {{"bdf", "0000:0c:00.0"},
                      {"device", "SN-0C"},
                      {"kind", "gpu"},
                      {"namespace", "ml"},
                      {"node", "node-a"},
                      {"numa_node", "0"},
                      {"pod", "llama-worker-0"},
                      {"root_complex", "pci0000:00"}},
                     (kS0 + 180) * 1000,
                     1});
  ASSERT_TRUE(store_->samples().AppendSamples(samples).ok());
  rapidjson::Document d =
      Data("/api/v1/insights/placement?from=" + std::to_string(kS0) +
           "&to=" + std::to_string(kS0 + 240));
  ASSERT_EQ(d["pods"].Size(), 2u);
  const auto& llama = d["pods"][0];
  EXPECT_STREQ(llama["node"].GetString(), "node-a");
  EXPECT_STREQ(llama["pod"].GetString(), "llama-worker-0");
  EXPECT_EQ(llama["lastSeen"].GetInt64(), kS0 + 240);
  ASSERT_EQ(llama["issues"].Size(), 1u);
  EXPECT_STREQ(llama["issues"][0]["issue"].GetString(),
               "cpus-off-gpu-numa-nodes");
  EXPECT_EQ(llama["issues"][0]["flags"].GetInt64(), 1);
  ASSERT_EQ(llama["devices"].Size(), 1u);
  const auto& gpu = llama["devices"][0];
  EXPECT_STREQ(gpu["bdf"].GetString(), "0000:9f:00.0");
  EXPECT_STREQ(gpu["numaNode"].GetString(), "1");
  EXPECT_STREQ(gpu["rootComplex"].GetString(), "pci0000:80");
  EXPECT_STREQ(gpu["nic"].GetString(), "mlx5_0");
  EXPECT_STREQ(gpu["nicDistance"].GetString(), "other-numa-node");
  EXPECT_EQ(d["pods"][1]["devices"].Size(), 0u);
  EXPECT_STREQ(d["pods"][1]["pod"].GetString(), "bert-0");
  // Ten minutes later nothing is fresh: no pod is flagged now.
  d = Data("/api/v1/insights/placement?from=" + std::to_string(kS0) +
           "&to=" + std::to_string(kS0 + 840));
  EXPECT_EQ(d["pods"].Size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, ApiInsightsTest,
                         testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace lens::test
