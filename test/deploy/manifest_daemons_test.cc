// The rendered base run as processes (manifest_cluster.h): every daemon takes
// the arguments, environment and lens.yaml the manifests give it, serves its
// probes on the ports they name, guards its routes with the token from its
// Secret, and stops cleanly; the node daemons serve only HTTPS, with the
// certificate scripts/make-node-certs.sh makes, and lens-jobs reads the node
// agent over it, verifying the CA and the agents' fixed name; the jobs and
// the controller make exactly the Kubernetes requests their RBAC rules
// allow, and every rule is used.
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
#include "lens/kube.h"
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
    for (const DeployedProbe& probe : c.probes) {
      const std::string& path = probe.path;
      const std::string& port = probe.port;
      ASSERT_TRUE(c.ports.count(port)) << c.workload << ": " << port;
      std::string why;
      EXPECT_TRUE(WaitUntil([&] {
        return !cluster_->Running(c, &why) ||
               HttpGet(c.ports[port], path, "", nullptr, probe.https) == 200;
      })) << c.workload
          << " " << path << " on " << port << ": "
          << HttpGet(c.ports[port], path, "", nullptr, probe.https) << "\n"
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
    const int port = c.ports.at(c.http_port);
    std::string body;
    ASSERT_TRUE(WaitUntil([&] {
      return HttpGet(port, "/metrics", c.token, &body, c.https) == 200;
    })) << c.workload
        << ": " << ReadFile(c.log);
    EXPECT_NE(body.find("# TYPE"), std::string::npos) << c.workload;
    EXPECT_EQ(HttpGet(port, "/metrics", "", nullptr, c.https), 401)
        << c.workload;
    EXPECT_EQ(HttpGet(port, "/metrics", c.token + "x", nullptr, c.https), 401)
        << c.workload;
  }
}

// Every surface that the node token guards (node agent, netflow, tuner) is
// served over TLS only: a plain HTTP request gets no answer, and a client
// that verifies the chain with the CA of lens-node-ca and the certificate
// against the daemon's Service name, as lens-jobs and the scrapers do, gets
// through; one that trusts the system's CAs, or expects another name, does
// not.
TEST_F(DeployedBaseTest, NodeDaemonsServeOnlyVerifiableTls) {
  int checked = 0;
  for (DeployedContainer& c : cluster_->containers()) {
    if (c.namespace_name != "lens-node") continue;
    EXPECT_TRUE(c.https) << c.workload << ": its probes are not HTTPS";
    EXPECT_EQ(c.http_port, "https") << c.workload;
    const int port = c.ports.at(c.http_port);
    ASSERT_TRUE(WaitUntil([&] {
      return HttpGet(port, "/healthz", "", nullptr, true) == 200;
    })) << c.workload
        << ": " << ReadFile(c.log);
    EXPECT_EQ(HttpGet(port, "/healthz", ""), 0)
        << c.workload << " answers plain HTTP";
    auto get = [&](const std::string& ca, const std::string& name) {
      KubeConnection k;
      k.server = "https://127.0.0.1:" + std::to_string(port);
      k.token = c.token;
      k.ca_file = ca;
      k.tls_server_name = name;
      k.origin = c.workload;
      auto client = KubeClient::Create(k);
      if (!client.ok()) return client.status().ToString();
      auto r = (*client)->Request("GET", "/metrics");
      return r.ok() ? std::to_string(r->status) : r.status().ToString();
    };
    const std::string ca = cluster_->node_certs() + "/ca.crt";
    const std::string name = c.workload + ".lens-node.svc";
    EXPECT_EQ(get(ca, name), "200") << c.workload;
    EXPECT_NE(get(ca, "lens-api.lens.svc"), "200") << c.workload;
    EXPECT_NE(get(ca, ""), "200") << c.workload << ": 127.0.0.1 is no name";
    EXPECT_NE(get("", name), "200") << c.workload << ": trusted without CA";
    ++checked;
  }
  EXPECT_GE(checked, skip_netflow_.empty() ? 3 : 2);
}

// lens-jobs finds the agent's pod and reads it with the manifests' settings:
// https at the pod IP, the CA of lens-node-ca, the agents' fixed name and the
// node token; the agent's /report then shows up as lens_node_agent_up 1.
TEST_F(DeployedBaseTest, JobsReadTheAgentOverVerifiedTls) {
  DeployedContainer* jobs = cluster_->Get("lens-jobs");
  ASSERT_NE(jobs, nullptr);
  EXPECT_NE(jobs->config.find("agentScheme: https"), std::string::npos);
  EXPECT_EQ(jobs->config.find("agentInsecureSkipTlsVerify: true"),
            std::string::npos);
  std::string body;
  EXPECT_TRUE(WaitUntil(
      [&] {
        return HttpGet(jobs->ports.at("http"), "/metrics", jobs->token,
                       &body) == 200 &&
               body.find("lens_node_agent_up{node=\"gpu-node-1\"} 1") !=
                   std::string::npos;
      },
      std::chrono::seconds(40)))
      << body.substr(0, 2000) << "\n"
      << ReadFile(jobs->log);
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
