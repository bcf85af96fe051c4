// The node agent as deployed on a Docker Engine node: a real dockerd
// (test/support), nodeExporter.containerRuntime docker, the MI300X fixture
// host, /pods over HTTP with a bearer token, and the same event stream into
// a ContainerEventServer on SQLite as with containerd. A secret in the
// container's environment reaches neither.
#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "container_events/container_events.h"
#include "containerd_harness.h"  // MakeCharDevice
#include "docker_env.h"
#include "lens/store.h"
#include "service/node_service.h"

namespace lens {
namespace {

using std::chrono::milliseconds;

const std::string kFixtures = LENS_FIXTURES_DIR;
constexpr char kSecretValue[] = "do-not-leak-91c2";

class DockerNodeAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test::g_docker == nullptr) {
      GTEST_SKIP() << "no private dockerd: " << test::g_docker_skip;
    }
    dir_ = test::g_docker->dir() + "/agent";
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
    ne.container_runtime = "docker";
    ne.docker_socket = test::g_docker->socket_path();
    ne.containerd_socket = dir_ + "/no-containerd.sock";
    ne.pod_resources_socket = "";
    ne.jobs_address = "127.0.0.1:" + std::to_string(server_->port());
    std::ofstream(dir_ + "/token") << "pods-token\n";
    ne.bearer_token_file = dir_ + "/token";
    auto options =
        NodeServiceOptionsFromConfig(config, kNodeAgent | kNodeContainers);
    ASSERT_TRUE(options.ok()) << options.status();
    ASSERT_TRUE(options->containers.has_value());
    ASSERT_TRUE(options->events.has_value());
    options->node_name = "docker-node";
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

TEST_F(DockerNodeAgentTest, ServesPodsAndStreamsThemToTheStore) {
  const std::string dev = dir_ + "/dev";
  ASSERT_TRUE(test::MakeCharDevice(dev + "/dri/renderD128", 226, 128).ok());
  test::DockerContainerSpec spec;
  spec.name = "agent-bert";
  spec.image = test::kDockerBusyboxImage;
  spec.devices = {dev + "/dri/renderD128"};
  spec.env = {std::string("HF_TOKEN=") + kSecretValue};
  spec.labels = {{"io.kubernetes.pod.name", "bert-0"},
                 {"io.kubernetes.pod.namespace", "nlp"},
                 {"io.kubernetes.pod.uid", "uid-bert-0"},
                 {"io.kubernetes.container.name", "main"}};
  auto id = test::g_docker->CreateContainer(spec);
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_TRUE(test::g_docker->Docker({"start", *id}).ok());
  StartAgent();

  httplib::Client client("127.0.0.1", port_);
  httplib::Headers auth = {{"Authorization", "Bearer pods-token"}};
  auto res = client.Get("/pods", auth);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  rapidjson::Document doc;
  doc.Parse(res->body.c_str());
  ASSERT_FALSE(doc.HasParseError()) << res->body;
  const rapidjson::Value* found = nullptr;
  for (const auto& c : doc["data"]["containers"].GetArray()) {
    if (std::string(c["containerId"].GetString()) == *id) found = &c;
  }
  ASSERT_NE(found, nullptr) << res->body;
  EXPECT_STREQ((*found)["runtimeNamespace"].GetString(), "moby");
  EXPECT_STREQ((*found)["podName"].GetString(), "bert-0");
  EXPECT_STREQ((*found)["state"].GetString(), "running");
  ASSERT_EQ((*found)["devices"].Size(), 1u);
  EXPECT_STREQ((*found)["devices"][0]["bdf"].GetString(), "0000:0c:00.0");
  EXPECT_EQ(res->body.find(kSecretValue), std::string::npos)
      << "no environment variables in /pods";

  // The same container reaches the store through the stream.
  StatusOr<ContainerRecord> stored = NotFoundError("not yet");
  for (int i = 0; i < 200 && !stored.ok(); ++i) {
    std::this_thread::sleep_for(milliseconds(25));
    stored = store_->containers().GetContainer(*id);
  }
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->node, "docker-node");
  EXPECT_EQ(stored->runtime_namespace, "moby");
  EXPECT_EQ(stored->pod_uid, "uid-bert-0");
  ASSERT_EQ(stored->devices.size(), 1u);
  EXPECT_EQ(stored->devices[0].source, "oci-spec");
  EXPECT_EQ(ContainerJson(*stored).find(kSecretValue), std::string::npos);

  ASSERT_TRUE(test::g_docker->Docker({"rm", "-f", *id}).ok());
  for (int i = 0; i < 200; ++i) {
    stored = store_->containers().GetContainer(*id);
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
  ::testing::AddGlobalTestEnvironment(new lens::test::DockerEnv);
  return RUN_ALL_TESTS();
}
