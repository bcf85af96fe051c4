// The local scrape (`lens up`): this process's own metrics, read on an
// interval, go through the remote-write path: a GPU's series gains the
// workload holding it and lands in the sample history with the scrape's
// `node` label; unselected families stay out; a broken target is counted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "lens/store.h"
#include "telemetry/telemetry.h"

namespace lens::telemetry {
namespace {

using std::chrono::milliseconds;

Timestamp Ago(int64_t ms) {
  return std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now() - milliseconds(ms));
}

int64_t NowMs() {
  return std::chrono::duration_cast<milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class LocalScrapeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "local-scrape-" + std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto store = Store::Open("sqlite://" + dir_ + "/lens.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    SeedGpuHeldByAWorkload();
    TelemetryOptions o;
    o.queue_dir = dir_ + "/queues";
    o.sample_history = true;
    o.sample_resolution = milliseconds(1000);
    o.logs = false;
    o.series.metric_prefixes = {"lens_gpu_", "lens_tcp_flow_"};
    auto processor = TelemetryProcessor::Create(o, store_.get());
    ASSERT_TRUE(processor.ok()) << processor.status();
    processor_ = std::move(*processor);
    ASSERT_TRUE(processor_->Start().ok());
  }
  void TearDown() override {
    if (processor_) processor_->Stop();
    processor_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  void SeedGpuHeldByAWorkload() {
    NodeRecord node;
    node.name = "node-a";
    node.updated_at = Ago(0);
    ASSERT_TRUE(store_->nodes().UpsertNode(node).ok());
    GpuDeviceRecord gpu;
    gpu.gpu_index = 0;
    gpu.serial = "692353001198";
    gpu.bdf = "0000:0c:00.0";
    ASSERT_TRUE(
        store_->nodes().SyncGpuDevices("node-a", {&gpu, 1}, Ago(60000)).ok());
    WorkloadRecord w;
    w.uid = "w-train";
    w.kind = "PyTorchJob";
    w.name = "train";
    w.namespace_name = "ml";
    w.created_at = w.updated_at = Ago(60000);
    ASSERT_TRUE(store_->pods().UpsertWorkloads({&w, 1}).ok());
    PodRecord p;
    p.uid = "p-1";
    p.name = "train-worker-0";
    p.namespace_name = "ml";
    p.node = "node-a";
    p.owner_uid = "w-train";
    p.phase = "Running";
    p.running = true;
    p.gpu_allocated = 1;
    p.created_at = p.updated_at = Ago(60000);
    p.started_at = Ago(60000);
    ASSERT_TRUE(store_->pods().UpsertPods({&p, 1}).ok());
    ContainerRecord c;
    c.container_id = "c-1";
    c.node = "node-a";
    c.pod_uid = "p-1";
    c.state = ContainerState::kRunning;
    c.created_at = c.updated_at = Ago(60000);
    c.started_at = Ago(60000);
    c.devices.push_back({DeviceKind::kGpu, gpu.serial, "", "pod-resources"});
    ASSERT_TRUE(store_->containers().UpsertContainers({&c, 1}).ok());
  }

  // The series of `metric` in the history (waits up to 10 s for one).
  std::vector<SeriesSamples> History(const std::string& metric) {
    std::vector<SeriesSamples> series;
    for (int i = 0; i < 200 && series.empty(); ++i) {
      auto got = store_->samples().QuerySamples(
          {metric, {}, NowMs() - 600000, NowMs() + 1000});
      EXPECT_TRUE(got.ok()) << got.status();
      if (got.ok()) series = std::move(*got);
      if (series.empty()) std::this_thread::sleep_for(milliseconds(50));
    }
    return series;
  }

  std::string dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<TelemetryProcessor> processor_;
};

std::string LabelOf(const SeriesSamples& s, const std::string& name) {
  for (const auto& [k, v] : s.labels) {
    if (k == name) return v;
  }
  return "";
}

TEST_F(LocalScrapeTest, OwnSeriesReachTheHistoryWithNodeAndWorkload) {
  std::atomic<int> renders{0};
  ASSERT_TRUE(
      processor_
          ->AddLocalScrape(
              {"node-agent",
               [&renders] {
                 ++renders;
                 return std::string(
                     "# TYPE lens_gpu_utilization_ratio gauge\n"
                     "lens_gpu_utilization_ratio{gpu=\"0\","
                     "bdf=\"0000:0c:00.0\",serial=\"692353001198\"} "
                     "0.5\n"
                     "lens_tcp_flow_bytes_sent_total{class=\"external\","
                     "direction=\"egress\",workload=\"ml/train\"} 4096\n"
                     "lens_node_load1 3\n");
               },
               {{"node", "node-a"}},
               {"lens_gpu_", "lens_tcp_flow_", "lens_node_"},
               milliseconds(100)})
          .ok());
  const std::vector<SeriesSamples> gpu = History("lens_gpu_utilization_ratio");
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_EQ(LabelOf(gpu[0], "node"), "node-a");
  EXPECT_EQ(LabelOf(gpu[0], "workload_uid"), "w-train");
  EXPECT_EQ(LabelOf(gpu[0], "workload_name"), "train");
  EXPECT_EQ(LabelOf(gpu[0], "pod_uid"), "p-1");
  ASSERT_FALSE(gpu[0].points.empty());
  EXPECT_EQ(gpu[0].points.back().value, 0.5);
  const std::vector<SeriesSamples> flows =
      History("lens_tcp_flow_bytes_sent_total");
  ASSERT_EQ(flows.size(), 1u);
  EXPECT_EQ(LabelOf(flows[0], "workload"), "ml/train");
  EXPECT_EQ(LabelOf(flows[0], "node"), "node-a");
  // Scraped but not a selected series of the telemetry: not kept.
  auto node = store_->samples().QuerySamples(
      {"lens_node_load1", {}, 0, NowMs() + 1000});
  ASSERT_TRUE(node.ok());
  EXPECT_TRUE(node->empty());
  // Scraped again on its interval.
  for (int i = 0; i < 100 && renders < 3; ++i) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_GE(renders, 3);
}

TEST_F(LocalScrapeTest, RefusesBadTargetsAndCountsFailedScrapes) {
  Status st = processor_->AddLocalScrape({"", [] { return ""; }, {}, {}});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  st = processor_->AddLocalScrape({"x", nullptr, {}, {}});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  st = processor_->AddLocalScrape(
      {"x", [] { return ""; }, {}, {}, milliseconds(10)});
  EXPECT_NE(st.message().find("interval"), std::string::npos) << st;
  ASSERT_TRUE(processor_
                  ->AddLocalScrape({"broken",
                                    [] { return std::string("lens_gpu_x{\n"); },
                                    {},
                                    {},
                                    milliseconds(100)})
                  .ok());
  const std::string want =
      "lens_telemetry_local_scrapes_total{job=\"broken\",result=\"failed\"}";
  std::string metrics;
  for (int i = 0; i < 100 && metrics.find(want) == std::string::npos; ++i) {
    std::this_thread::sleep_for(milliseconds(50));
    metrics = processor_->RenderMetrics();
  }
  EXPECT_NE(metrics.find(want), std::string::npos) << metrics;
}

}  // namespace
}  // namespace lens::telemetry
