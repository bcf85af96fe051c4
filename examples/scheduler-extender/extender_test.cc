// The extender on recorded kube-scheduler requests (testdata/), against a
// store seeded with the rows and series Lens's daemons write:
//   gpu-a  GPUs 0-3 (NUMA 0) held, 4-7 (NUMA 1) free, a healthy NIC on each
//   gpu-b  all free, GPU 2 unhealthy
//   gpu-c  all free, its only RDMA port down
//   gpu-d  GPUs 0-1 held by a job whose other nodes (e1-e3) run at ~95%
//          utilisation while gpu-d's GPUs run at 40%: straggler evidence
//   cpu-1  not known to Lens
// With EXTENDER_TEST_STORE=/path.db the seeded store is kept there (the
// install test serves it with the real binary).
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cluster_view.h"
#include "policy.h"
#include "protocol.h"

namespace {

using namespace std::chrono_literals;

lens::Timestamp Now() {
  return std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
}

int64_t Ms(lens::Timestamp t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             t.time_since_epoch())
      .count();
}

void Check(const lens::Status& s) { ASSERT_TRUE(s.ok()) << s.ToString(); }

// A node with `gpus` GPUs, half on each NUMA node, and one NIC per NUMA node.
void AddNode(lens::Store& store, const std::string& name, int gpus, int nics) {
  Check(store.nodes().UpsertNode({.name = name,
                                  .status = "Ready",
                                  .gpu_count = gpus,
                                  .updated_at = Now()}));
  lens::NodeInventory inv{.node = name};
  for (int i = 0; i < gpus; ++i) {
    char bdf[32];
    std::snprintf(bdf, sizeof bdf, "0000:%02x:00.0", 0x10 + i);
    inv.gpus.push_back({.node = name,
                        .gpu_index = i,
                        .vendor = "amd",
                        .model = "AMD Instinct MI300X",
                        .serial = name + "-gpu" + std::to_string(i),
                        .bdf = bdf,
                        .numa_node = i < gpus / 2 ? 0 : 1});
  }
  for (int i = 0; i < nics; ++i) {
    inv.rdma.push_back(
        {.node = name, .name = "mlx5_" + std::to_string(i), .numa_node = i});
  }
  Check(store.nodes().SyncNodeDevices({&inv, 1}, Now()).status());
}

// A running pod of `workload` on `node` whose container holds GPUs [from, to).
void Hold(lens::Store& store, const std::string& workload,
          const std::string& node, int from, int to) {
  const std::string pod_uid = workload + "-" + node;
  lens::PodRecord pod{.uid = pod_uid,
                      .name = pod_uid,
                      .namespace_name = "ml",
                      .node = node,
                      .phase = "Running",
                      .owner_uid = workload,
                      .running = true,
                      .started_at = Now() - 1h,
                      .created_at = Now() - 1h,
                      .updated_at = Now()};
  lens::ContainerRecord c{.container_id = "c-" + pod_uid,
                          .node = node,
                          .pod_uid = pod_uid,
                          .pod_name = pod_uid,
                          .pod_namespace = "ml",
                          .container_name = "main",
                          .state = lens::ContainerState::kRunning,
                          .created_at = Now() - 1h,
                          .started_at = Now() - 1h,
                          .updated_at = Now()};
  for (int i = from; i < to; ++i) {
    c.devices.push_back({.kind = lens::DeviceKind::kGpu,
                         .device_key = node + "-gpu" + std::to_string(i)});
  }
  const std::pair<std::string, std::string> link{workload, pod_uid};
  Check(store.pods().UpsertPods({&pod, 1}));
  Check(store.pods().LinkPods({&link, 1}));
  Check(store.containers().UpsertContainers({&c, 1}));
}

// `metric`{labels} = value every minute of the last 20.
void Series(std::vector<lens::MetricSample>* out, const std::string& metric,
            std::vector<std::pair<std::string, std::string>> labels,
            double value) {
  for (int m = 20; m >= 0; --m) {
    out->push_back({.metric = metric,
                    .labels = labels,
                    .timestamp_ms = Ms(Now() - std::chrono::minutes(m)),
                    .value = value});
  }
}

std::unique_ptr<lens::Store> Seed(const std::string& path) {
  std::filesystem::remove(path);
  auto store = lens::Store::Open("sqlite://" + path);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  lens::Store& s = **store;
  for (const char* n : {"gpu-a", "gpu-b", "gpu-c", "gpu-d"})
    AddNode(s, n, 8, n == std::string("gpu-c") ? 1 : 2);
  for (const char* n : {"e1", "e2", "e3"}) AddNode(s, n, 8, 2);
  const lens::WorkloadRecord busy{.uid = "busy",
                                  .kind = "Job",
                                  .name = "busy",
                                  .namespace_name = "ml",
                                  .status = "Running",
                                  .gpu_request = 4,
                                  .created_at = Now() - 1h,
                                  .updated_at = Now()};
  const lens::WorkloadRecord llm{.uid = "llm",
                                 .kind = "PyTorchJob",
                                 .name = "llm",
                                 .namespace_name = "ml",
                                 .status = "Running",
                                 .gpu_request = 8,
                                 .created_at = Now() - 1h,
                                 .updated_at = Now()};
  Check(s.pods().UpsertWorkloads(std::vector{busy, llm}));
  Hold(s, "busy", "gpu-a", 0, 4);
  std::vector<lens::MetricSample> samples;
  for (const char* n : {"e1", "e2", "e3", "gpu-d"}) {
    Hold(s, "llm", n, 0, 2);
    for (int g = 0; g < 2; ++g) {
      const double busy_ratio =
          n == std::string("gpu-d") ? 0.40 : 0.93 + 0.02 * g;
      Series(&samples, "lens_gpu_utilization_ratio",
             {{"node", n}, {"gpu", std::to_string(g)}}, busy_ratio);
    }
  }
  for (int g = 0; g < 8; ++g) {
    Series(&samples, "lens_gpu_health",
           {{"node", "gpu-b"},
            {"gpu", std::to_string(g)},
            {"id", "gpu-b-gpu" + std::to_string(g)}},
           g == 2 ? 2 : 0);
  }
  Series(
      &samples, "lens_rdma_port_health",
      {{"node", "gpu-c"}, {"device", "mlx5_0"}, {"port", "1"}, {"id", "c0/1"}},
      2);
  Check(s.samples().AppendSamples(samples));
  return std::move(*store);
}

std::string Read(const std::string& name) {
  std::ifstream in(std::string(EXTENDER_TESTDATA) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ExtenderTest : public testing::Test {
 protected:
  void SetUp() override {
    const char* keep = std::getenv("EXTENDER_TEST_STORE");
    path_ = keep ? keep : (testing::TempDir() + "extender_test.db");
    store_ = Seed(path_);
    series_ = lens::NewSampleHistorySource(store_.get());
    auto view = extender::ReadClusterView(*store_, *series_, Now());
    ASSERT_TRUE(view.ok()) << view.status().ToString();
    view_ = std::move(*view);
    judge_.filter = [this](const extender::PodRequest& p,
                           const std::string& n) {
      return extender::Filter(p, Find(n));
    };
    judge_.score = [this](const extender::PodRequest& p, const std::string& n) {
      return extender::Score(p, Find(n));
    };
  }
  const extender::NodeView* Find(const std::string& n) const {
    auto it = view_.find(n);
    return it == view_.end() ? nullptr : &it->second;
  }
  void ExpectJsonEq(const std::string& got, const std::string& want_file) {
    rapidjson::Document a, b;
    a.Parse(got.c_str());
    b.Parse(Read(want_file).c_str());
    ASSERT_FALSE(b.HasParseError()) << want_file;
    EXPECT_TRUE(a == b) << "got " << got << "\nwant " << Read(want_file);
  }

  std::string path_;
  std::unique_ptr<lens::Store> store_;
  std::unique_ptr<lens::TimeSeriesSource> series_;
  std::map<std::string, extender::NodeView> view_;
  extender::NodeJudge judge_;
};

TEST_F(ExtenderTest, ViewHasHoldersHealthAndStragglers) {
  EXPECT_TRUE(view_.at("gpu-a").gpus[0].held);
  EXPECT_FALSE(view_.at("gpu-a").gpus[4].held);
  EXPECT_EQ(view_.at("gpu-b").gpus[2].health, lens::DeviceHealth::kUnhealthy);
  EXPECT_EQ(view_.at("gpu-c").ports.at(0).health,
            lens::DeviceHealth::kUnhealthy);
  EXPECT_NE(view_.at("gpu-d").straggler.find("llm"), std::string::npos);
  EXPECT_EQ(view_.at("e1").straggler, "");
}

TEST_F(ExtenderTest, FiltersARecordedNodeListRequest) {
  auto got = extender::AnswerFilter(Read("filter_args.json"), judge_);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ExpectJsonEq(*got, "filter_result.json");
}

TEST_F(ExtenderTest, PrioritizesARecordedNodeNamesRequest) {
  auto got = extender::AnswerPrioritize(Read("prioritize_args.json"), judge_);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ExpectJsonEq(*got, "prioritize_result.json");
}

TEST_F(ExtenderTest, RefusesWhatIsNotExtenderArgs) {
  for (const char* body :
       {"", "[]", "{\"nodenames\":[\"a\"]}", "{\"pod\":{\"spec\":{}}}",
        R"({"pod":{"spec":{"containers":[{"resources":{"limits":
                              {"amd.com/gpu":"two"}}}]}},"nodenames":["a"]})"}) {
    auto got = extender::AnswerFilter(body, judge_);
    EXPECT_FALSE(got.ok()) << body;
    EXPECT_EQ(got.status().code(), lens::StatusCode::kInvalidArgument) << body;
  }
}

}  // namespace
