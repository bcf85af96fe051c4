// The kubelet collector against a real HTTP server speaking the kubelet's
// /stats/summary and /pods: ephemeral storage and GPU allocation reach the
// snapshot and both metric schemas; a failing kubelet is a collector error
// that leaves the GPU collector alone.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "agent/node_agent.h"
#include "core/kernel_file.h"

namespace lens {
namespace {

const std::string kFixtures = std::string(LENS_FIXTURES_DIR);

// A pod list with 8 AMD GPUs held by two running pods and one finished pod.
constexpr std::string_view kPods =
    R"({"kind":"PodList","apiVersion":"v1","items":[
 {"metadata":{"name":"train-0","namespace":"ml","uid":"u0"},
  "spec":{"containers":[{"name":"t","resources":{"limits":{"amd.com/gpu":"6"}}}]},
  "status":{"phase":"Running"}},
 {"metadata":{"name":"eval-0","namespace":"ml","uid":"u1"},
  "spec":{"containers":[{"name":"e","resources":{"limits":{"amd.com/gpu":"2"}}}]},
  "status":{"phase":"Running"}},
 {"metadata":{"name":"old","namespace":"ml","uid":"u2"},
  "spec":{"containers":[{"name":"o","resources":{"limits":{"amd.com/gpu":"8"}}}]},
  "status":{"phase":"Succeeded"}}]})";

class FakeKubelet {
 public:
  explicit FakeKubelet(std::string summary) : summary_(std::move(summary)) {
    server_.Get("/stats/summary", [this](const httplib::Request& req,
                                         httplib::Response& res) {
      if (req.get_header_value("Authorization") != "Bearer kubelet-token") {
        res.status = 401;
        return;
      }
      if (fail_) {
        res.status = 500;
        res.set_content("boom", "text/plain");
        return;
      }
      res.set_content(summary_, "application/json");
    });
    server_.Get("/pods", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(kPods), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeKubelet() {
    server_.stop();
    thread_.join();
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_);
  }
  void set_fail(bool fail) { fail_ = fail; }

 private:
  std::string summary_;
  std::atomic<bool> fail_{false};
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST(KubeletCollectorTest, StorageAndAllocationReachTheSnapshotAndBothSchemas) {
  StatusOr<std::string> summary =
      ReadKernelFile(kFixtures + "/node/stats_summary_gpu_node.json");
  ASSERT_TRUE(summary.ok()) << summary.status();
  FakeKubelet kubelet(*summary);
  const std::string token = ::testing::TempDir() + "kubelet-token";
  std::ofstream(token) << "kubelet-token\n";

  NodeAgentOptions o;
  o.roots = HostRoots::Under(kFixtures + "/hosts/mi300x-8x-mlx5");
  o.node_name = "mi300x-gpu-node-017";
  o.nvidia_gpus = false;
  o.compat_names = true;
  o.kubelet.url = kubelet.url();
  o.kubelet.token_file = token;
  NodeAgent agent(o, DefaultNodeCollectors(o));
  ASSERT_TRUE(agent.RunOnce().ok());
  auto snap = agent.snapshot();
  ASSERT_TRUE(snap->gpu_allocation.has_value());
  EXPECT_EQ(snap->gpu_allocation->allocated, 8);
  EXPECT_EQ(snap->gpu_allocation->pods, 2);
  ASSERT_TRUE(snap->ephemeral_storage.has_value());
  EXPECT_FALSE(snap->ephemeral_storage->pods.empty());
  ASSERT_TRUE(snap->ephemeral_storage->capacity_bytes.has_value());

  const std::string m = agent.RenderMetrics();
  EXPECT_NE(m.find("lens_node_gpus_allocated 8\n"), std::string::npos);
  EXPECT_NE(m.find("lens_node_gpu_allocation_ratio 1\n"), std::string::npos);
  EXPECT_NE(m.find("node_k8s_gpu_allocation_rate 100\n"), std::string::npos);
  EXPECT_NE(m.find("# TYPE pod_ephemeral_storage_usage_bytes gauge"),
            std::string::npos);
  EXPECT_NE(
      m.find("node_ephemeral_storage_capacity_bytes{node=\"mi300x-gpu-node-"
             "017\"} " +
             std::to_string(*snap->ephemeral_storage->capacity_bytes) + "\n"),
      std::string::npos);

  // A failing kubelet is the kubelet collector's error; the GPUs keep coming.
  kubelet.set_fail(true);
  NodeAgentOptions again = o;
  again.kubelet_interval = std::chrono::milliseconds(0);
  NodeAgent agent2(again, DefaultNodeCollectors(again));
  Status st = agent2.RunOnce();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("kubelet"), std::string::npos) << st;
  EXPECT_EQ(st.message().find("kubelet-token"), std::string::npos)
      << "token leaked: " << st;
  auto snap2 = agent2.snapshot();
  EXPECT_EQ(snap2->gpus.size(), 8u);
  for (const CollectorState& c : snap2->collectors) {
    EXPECT_EQ(c.last_ok, c.name != "kubelet") << c.name;
  }
}

}  // namespace
}  // namespace lens
