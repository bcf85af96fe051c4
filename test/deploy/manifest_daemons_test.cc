// The rendered base run as processes (manifest_cluster.h): every daemon takes
// the arguments, environment and lens.yaml the manifests give it, serves its
// probes on the ports they name, guards its routes with the token from its
// Secret, and stops cleanly; the jobs and the controller make exactly the
// Kubernetes requests their RBAC rules allow, and every rule is used.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <thread>
#include <tuple>

#include "ebpf_env.h"
#include "manifest_rbac.h"

namespace lens::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Objects(const std::string& file) {
  rapidjson::Document doc;
  doc.Parse(ReadFile(std::string(LENS_FIXTURES_DIR) + "/kube/" + file).c_str());
  std::vector<std::string> out;
  for (const auto& o : doc.GetArray()) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    o.Accept(w);
    out.emplace_back(buffer.GetString(), buffer.GetSize());
  }
  return out;
}

// A StatefulSet's GPU pod (the controller follows GPU pods only), the one
// owner kind the fixtures lack.
constexpr char kStatefulSet[] =
    R"({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"etcd",)"
    R"("namespace":"db","uid":"0d1b2c3d-0000-4000-8000-000000000001"},)"
    R"("spec":{"serviceName":"etcd","selector":{"matchLabels":{"app":"etcd"}},)"
    R"("template":{"metadata":{"labels":{"app":"etcd"}},"spec":{"containers":)"
    R"([{"name":"etcd","image":"etcd"}]}}}})";
constexpr char kStatefulSetPod[] =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"etcd-0",)"
    R"("namespace":"db","uid":"0d1b2c3d-0000-4000-8000-000000000002",)"
    R"("labels":{"app":"etcd"},"ownerReferences":[{"apiVersion":"apps/v1",)"
    R"("kind":"StatefulSet","name":"etcd","controller":true,)"
    R"("uid":"0d1b2c3d-0000-4000-8000-000000000001"}]},"spec":{"nodeName":)"
    R"("gpu-node-1","containers":[{"name":"etcd","image":"etcd","resources":)"
    R"({"requests":{"amd.com/gpu":"1"},"limits":{"amd.com/gpu":"1"}}}]},)"
    R"("status":{"phase":"Running"}})";
// A node agent's pod, which lens-jobs finds by label in lens-node.
constexpr char kAgentPod[] =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"lens-node-agent-x",)"
    R"("namespace":"lens-node","labels":{"app.kubernetes.io/name":)"
    R"("lens-node-agent"}},"spec":{"nodeName":"gpu-node-1","containers":)"
    R"([{"name":"node-agent","image":"lens"}]},"status":{"phase":"Running",)"
    R"("podIP":"127.0.0.1"}})";

class DeployedBaseTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    rendered_ = new Rendered(Render("base"));
    ASSERT_EQ(rendered_->error, "");
    std::set<std::string> skip;
    skip_netflow_ = EbpfSkipReason();
    if (!skip_netflow_.empty()) skip.insert("lens-netflow");
    dir_ = ::testing::TempDir() + "lens-deploy-" + std::to_string(::getpid());
    cluster_ = new DeployedCluster(*rendered_, dir_, skip);
    ASSERT_EQ(cluster_->error(), "");
    // What the controller reads: nodes, and pods of every owner kind its
    // ClusterRole names.
    DeployedContainer* controller = cluster_->Get("lens-controller");
    ASSERT_NE(controller, nullptr);
    for (const char* file :
         {"nodes.json", "deployment.json", "cronjob.json", "pytorchjob.json",
          "mpijob.json", "jobset.json", "rayjob.json", "trainjob.json"}) {
      for (const std::string& o : Objects(file)) {
        ASSERT_NE(controller->api->Create(o), "") << file;
      }
    }
    ASSERT_NE(controller->api->Create(kStatefulSet), "");
    ASSERT_NE(controller->api->Create(kStatefulSetPod), "");
    // What the jobs list: an agent's pod, volumes and CSI drivers.
    DeployedContainer* jobs = cluster_->Get("lens-jobs");
    ASSERT_NE(jobs, nullptr);
    ASSERT_NE(jobs->api->Create(kAgentPod), "");
    for (const char* file :
         {"storage/persistentvolumes.json", "storage/csidrivers.json"}) {
      for (const std::string& o : Objects(file)) {
        ASSERT_NE(jobs->api->Create(o), "") << file;
      }
    }
    cluster_->Start();
  }
  // Every daemon stops cleanly on SIGTERM, in every test's process.
  static void TearDownTestSuite() {
    if (cluster_) {
      for (const auto& [workload, status] : cluster_->Stop()) {
        EXPECT_EQ(status, "exit status 0") << workload;
      }
    }
    delete cluster_;
    delete rendered_;
    cluster_ = nullptr;
    rendered_ = nullptr;
    fs::remove_all(dir_);
  }
  void SetUp() override {
    ASSERT_NE(cluster_, nullptr);
    ASSERT_EQ(cluster_->error(), "");
  }

  static Rendered* rendered_;
  static DeployedCluster* cluster_;
  static std::string dir_;
  static std::string skip_netflow_;
};

Rendered* DeployedBaseTest::rendered_ = nullptr;
DeployedCluster* DeployedBaseTest::cluster_ = nullptr;
std::string DeployedBaseTest::dir_;
std::string DeployedBaseTest::skip_netflow_;

TEST_F(DeployedBaseTest, EveryDaemonAnswersItsProbesOnTheNamedPorts) {
  ASSERT_GE(cluster_->containers().size(), skip_netflow_.empty() ? 7u : 6u);
  for (DeployedContainer& c : cluster_->containers()) {
    ASSERT_FALSE(c.probes.empty()) << c.workload;
    for (const auto& probe : c.probes) {
      // Copies: clang 14 cannot capture structured bindings in a lambda.
      const std::string path = probe.first, port = probe.second;
      ASSERT_TRUE(c.ports.count(port)) << c.workload << ": " << port;
      std::string why;
      EXPECT_TRUE(WaitUntil([&] {
        return !cluster_->Running(c, &why) ||
               HttpGet(c.ports[port], path, "") == 200;
      })) << c.workload
          << " " << path << " on " << port << ": "
          << HttpGet(c.ports[port], path, "") << "\n"
          << ReadFile(c.log);
      EXPECT_TRUE(why.empty()) << c.workload << " exited: " << why;
    }
  }
  if (!skip_netflow_.empty()) {
    GTEST_SKIP() << "lens-netflow not started: " << skip_netflow_;
  }
}

TEST_F(DeployedBaseTest, MetricsNeedTheTokenOfTheirSecret) {
  for (DeployedContainer& c : cluster_->containers()) {
    ASSERT_FALSE(c.token.empty()) << c.workload;
    const int port = c.ports.at("http");
    std::string body;
    ASSERT_TRUE(WaitUntil([&] {
      return HttpGet(port, "/metrics", c.token, &body) == 200;
    })) << c.workload
        << ": " << ReadFile(c.log);
    EXPECT_NE(body.find("# TYPE"), std::string::npos) << c.workload;
    EXPECT_EQ(HttpGet(port, "/metrics", ""), 401) << c.workload;
    EXPECT_EQ(HttpGet(port, "/metrics", c.token + "x"), 401) << c.workload;
  }
}

// lens-tuner, on the node's /proc/sys and /etc (copies of a fixture host),
// makes them what lens.yaml's `tuner:` says.
TEST_F(DeployedBaseTest, TheTunerAppliesTheDeclaredSettings) {
  DeployedContainer* tuner = cluster_->Get("lens-tuner");
  ASSERT_NE(tuner, nullptr);
  const std::string sysctl =
      tuner->host_paths.at("/proc/sys") + "/vm/max_map_count";
  const std::string limits =
      tuner->host_paths.at("/etc/security/limits.d") + "/90-lens.conf";
  EXPECT_TRUE(WaitUntil([&] { return ReadFile(sysctl) == "262144\n"; }))
      << ReadFile(sysctl) << ReadFile(tuner->log);
  EXPECT_TRUE(WaitUntil([&] {
    return ReadFile(limits).find("nofile") != std::string::npos;
  })) << ReadFile(tuner->log);
  EXPECT_NE(ReadFile(limits).find("131072"), std::string::npos);
  EXPECT_TRUE(
      fs::exists(tuner->host_paths.at("/etc/sysctl.d") + "/90-lens.conf"));
}

// The rules of each component that calls the API cover what it asks, and
// each rule item is asked for (nothing granted in excess).
TEST_F(DeployedBaseTest, RbacCoversExactlyTheRequestsEachComponentMakes) {
  int checked = 0;
  for (DeployedContainer& c : cluster_->containers()) {
    if (!c.api) {
      EXPECT_EQ(c.config.find("kubeconfig:"), std::string::npos);
      continue;
    }
    ExpectRbacIsExact(*rendered_, c, std::chrono::seconds(40));
    ++checked;
  }
  EXPECT_EQ(checked, 2);  // lens-jobs and lens-controller
}
}  // namespace
}  // namespace lens::test
