// The node agent as deployed, with container tracking on: a real containerd
// (test/support), the MI300X fixture host, /pods over HTTP with a bearer
// token, and the event stream into a ContainerEventServer on SQLite.
#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "agent/node_agent.h"
#include "container_events/container_events.h"
#include "containerd_env.h"
#include "lens/store.h"
#include "service/node_service.h"

namespace lens {
namespace {

using std::chrono::milliseconds;

const std::string kFixtures = LENS_FIXTURES_DIR;

class NodeAgentPodsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test::g_containerd == nullptr) {
      GTEST_SKIP() << "no private containerd: " << test::g_skip;
    }
    dir_ = test::g_containerd->dir() + "/agent-pods";
    std::filesystem::create_directories(dir_);
    auto store = Store::Open("sqlite://" + dir_ + "/lens.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    ContainerEventServerOptions so;
    so.listen = "127.0.0.1:0";
    server_ = std::make_unique<ContainerEventServer>(so, store_.get());
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (agent_) agent_->Stop();
    if (server_) server_->Stop();
  }

  void StartAgent() {
    Config config;
    NodeExporterOptions& ne = config.node_exporter;
    const std::string host = kFixtures + "/hosts/mi300x-8x-mlx5";
    ne.sysfs_root = host + "/sys";
    ne.procfs_root = host + "/proc";
    ne.dev_root = host + "/dev";
    ne.listen_address = "127.0.0.1:0";
    ne.nvidia_gpus = false;
    ne.containerd_socket = test::g_containerd->socket_path();
    ne.pod_resources_socket = "";
    ne.jobs_address = "127.0.0.1:" + std::to_string(server_->port());
    std::ofstream(dir_ + "/token") << "pods-token\n";
    ne.bearer_token_file = dir_ + "/token";
    auto options =
        NodeServiceOptionsFromConfig(config, kNodeAgent | kNodeContainers);
    ASSERT_TRUE(options.ok()) << options.status();
    ASSERT_TRUE(options->containers.has_value());
    ASSERT_TRUE(options->events.has_value());
    options->node_name = "agent-node";
    auto agent = NodeService::Start(*options);
    ASSERT_TRUE(agent.ok()) << agent.status();
    agent_ = std::move(*agent);
    const std::string url = agent_->url();
    port_ = std::stoi(url.substr(url.rfind(':') + 1));
  }

  std::string dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<ContainerEventServer> server_;
  std::unique_ptr<NodeService> agent_;
  int port_ = 0;
};

TEST_F(NodeAgentPodsTest, ServesPodsWithDevicesAndStreamsThemToTheStore) {
  const std::string dev = dir_ + "/dev";
  ASSERT_TRUE(test::MakeCharDevice(dev + "/dri/renderD128", 226, 128).ok());
  test::ContainerSpec spec;
  spec.id = "agent-pod-gpu";
  spec.image = test::kBusyboxImage;
  spec.devices = {dev + "/dri/renderD128"};
  spec.labels = {{"io.kubernetes.pod.name", "bert-0"},
                 {"io.kubernetes.pod.namespace", "nlp"},
                 {"io.kubernetes.pod.uid", "uid-bert-0"},
                 {"io.kubernetes.container.name", "main"}};
  ASSERT_TRUE(test::g_containerd->RunDetached(spec).ok());
  StartAgent();

  httplib::Client client("127.0.0.1", port_);
  auto denied = client.Get("/pods");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 401) << "the node routes need the token";

  httplib::Headers auth = {{"Authorization", "Bearer pods-token"}};
  auto res = client.Get("/pods", auth);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  rapidjson::Document doc;
  doc.Parse(res->body.c_str());
  ASSERT_FALSE(doc.HasParseError()) << res->body;
  const auto& list = doc["data"]["containers"];
  const rapidjson::Value* found = nullptr;
  for (const auto& c : list.GetArray()) {
    if (std::string(c["containerId"].GetString()) == "agent-pod-gpu")
      found = &c;
  }
  ASSERT_NE(found, nullptr) << res->body;
  EXPECT_STREQ((*found)["podName"].GetString(), "bert-0");
  EXPECT_STREQ((*found)["state"].GetString(), "running");
  ASSERT_EQ((*found)["devices"].Size(), 1u)
      << "resolved against the first cycle's inventory";
  EXPECT_STREQ((*found)["devices"][0]["bdf"].GetString(), "0000:0c:00.0");
  EXPECT_EQ(res->body.find("\"env\""), std::string::npos);
  EXPECT_EQ(res->body.find("PATH="), std::string::npos)
      << "no environment variables in /pods";

  // Its placement: the GPU's place from the fixture's sysfs (NUMA node 0,
  // under root complex pci0000:00), no RDMA device to pair it with, and
  // the cpuset unknown (the fixture's /proc does not have this pid).
  auto placement = client.Get("/placement", auth);
  ASSERT_TRUE(placement);
  ASSERT_EQ(placement->status, 200) << placement->body;
  rapidjson::Document pd;
  pd.Parse(placement->body.c_str());
  ASSERT_FALSE(pd.HasParseError()) << placement->body;
  const rapidjson::Value* pod = nullptr;
  for (const auto& p : pd["data"]["pods"].GetArray()) {
    if (std::string(p["podUid"].GetString()) == "uid-bert-0") pod = &p;
  }
  ASSERT_NE(pod, nullptr) << placement->body;
  ASSERT_EQ((*pod)["gpus"].Size(), 1u);
  const auto& gpu = (*pod)["gpus"][0];
  EXPECT_STREQ(gpu["bdf"].GetString(), "0000:0c:00.0");
  EXPECT_TRUE(gpu["topologyKnown"].GetBool());
  EXPECT_EQ(gpu["numaNode"].GetInt(), 0);
  EXPECT_STREQ(gpu["rootComplex"].GetString(), "pci0000:00");
  EXPECT_TRUE(gpu["nic"].IsNull());
  EXPECT_EQ((*pod)["flags"].Size(), 0u);
  EXPECT_GE((*pod)["unknowns"].Size(), 1u) << "the cpuset is not known";

  // The same container reaches the store through the stream.
  ASSERT_TRUE(agent_->events() != nullptr);
  StatusOr<ContainerRecord> stored = NotFoundError("not yet");
  for (int i = 0; i < 200 && !stored.ok(); ++i) {
    std::this_thread::sleep_for(milliseconds(25));
    stored = store_->containers().GetContainer("agent-pod-gpu");
  }
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->node, "agent-node");
  EXPECT_EQ(stored->pod_uid, "uid-bert-0");
  ASSERT_EQ(stored->devices.size(), 1u);
  EXPECT_EQ(stored->devices[0].source, "oci-spec");

  ASSERT_TRUE(test::g_containerd->KillTask("agent-pod-gpu", SIGKILL).ok());
  ASSERT_TRUE(test::g_containerd->DeleteTask("agent-pod-gpu").ok());
  ASSERT_TRUE(test::g_containerd->DeleteContainer("agent-pod-gpu").ok());
  for (int i = 0; i < 200; ++i) {
    stored = store_->containers().GetContainer("agent-pod-gpu");
    if (stored.ok() && stored->state == ContainerState::kDeleted) break;
    std::this_thread::sleep_for(milliseconds(25));
  }
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->state, ContainerState::kDeleted);
}

}  // namespace
}  // namespace lens

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new lens::test::ContainerdEnv);
  return RUN_ALL_TESTS();
}
