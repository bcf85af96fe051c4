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

#include "core/text.h"
#include "ebpf_env.h"
#include "lens/cluster_directory.h"
#include "lens/store.h"
#include "manifest_cluster.h"

namespace lens::test {
namespace {

namespace fs = std::filesystem;
using rapidjson::Value;
using Clock = std::chrono::steady_clock;

bool WaitUntil(const std::function<bool()>& done,
               std::chrono::seconds timeout = std::chrono::seconds(30)) {
  const auto end = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

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

// One rule item: (namespace or "" for cluster-wide, group, resource, verb,
// resource name or "" for any).
using Grant =
    std::tuple<std::string, std::string, std::string, std::string, std::string>;

// What the manifests let a service account do: its Roles in their
// namespaces, its ClusterRoles everywhere, each item with where it came from.
std::map<Grant, std::string> Grants(const Rendered& r, const std::string& ns,
                                    const std::string& account) {
  std::map<Grant, std::string> out;
  for (const char* kind : {"RoleBinding", "ClusterRoleBinding"}) {
    for (const Value* b : OfKind(r, kind)) {
      bool bound = false;
      for (const auto& s : (*b)["subjects"].GetArray()) {
        bound |= Str(s, "/kind") == "ServiceAccount" &&
                 Str(s, "/name") == account && Str(s, "/namespace") == ns;
      }
      if (!bound) continue;
      const std::string role_kind = Str(*b, "/roleRef/kind");
      const std::string scope =
          role_kind == "Role" ? Str(*b, "/metadata/namespace") : "";
      const Value* role = Find(r, role_kind, scope, Str(*b, "/roleRef/name"));
      EXPECT_NE(role, nullptr) << Describe(*b) << ": no role";
      if (!role) continue;
      for (const auto& rule : (*role)["rules"].GetArray()) {
        std::vector<std::string> names = {""};
        if (rule.HasMember("resourceNames")) {
          names.clear();
          for (const auto& n : rule["resourceNames"].GetArray()) {
            names.push_back(n.GetString());
          }
        }
        for (const auto& g : rule["apiGroups"].GetArray()) {
          for (const auto& res : rule["resources"].GetArray()) {
            for (const auto& v : rule["verbs"].GetArray()) {
              for (const std::string& n : names) {
                out[{scope, g.GetString(), res.GetString(), v.GetString(), n}] =
                    Describe(*role);
              }
            }
          }
        }
      }
    }
  }
  return out;
}

// The object a request is about: its name, or for a list or watch the
// `metadata.name=` of its field selector (which resourceNames then honour).
std::string RequestName(const KubeRequest& r) {
  if (!r.name.empty()) return r.name;
  const std::string key = "fieldSelector=metadata.name%3D";
  const size_t at = r.query.find(key);
  if (at == std::string::npos) return "";
  const size_t start = at + key.size();
  return r.query.substr(start, r.query.find('&', start) - start);
}

// The grant that allows `r`, or null.
const Grant* Allowing(const std::map<Grant, std::string>& grants,
                      const KubeRequest& r) {
  for (const auto& [g, from] : grants) {
    const auto& [scope, group, resource, verb, name] = g;
    if (group == r.group && resource == r.resource && verb == r.verb &&
        (scope.empty() || scope == r.namespace_name) &&
        (name.empty() || name == RequestName(r))) {
      return &g;
    }
  }
  return nullptr;
}

// Every request of `c` is allowed by its grants and every grant is used
// (waiting up to `wait` for the last of them).
void ExpectRbacIsExact(const Rendered& rendered, DeployedContainer& c,
                       std::chrono::seconds wait) {
  const auto grants = Grants(rendered, c.namespace_name, c.service_account);
  ASSERT_FALSE(grants.empty()) << c.workload;
  std::set<Grant> used;
  const bool all_used = WaitUntil(
      [&] {
        for (const KubeRequest& r : c.api->Requests()) {
          if (const Grant* g = Allowing(grants, r)) used.insert(*g);
        }
        return used.size() == grants.size();
      },
      wait);
  for (const auto& [g, from] : grants) {
    const auto& [scope, group, resource, verb, name] = g;
    EXPECT_TRUE(used.count(g))
        << c.workload << ": " << from << " grants " << verb << " on " << group
        << "/" << resource << (name.empty() ? "" : " " + name) << " (" << scope
        << ") which it never asked for";
  }
  EXPECT_TRUE(all_used) << c.workload;
  for (const KubeRequest& r : c.api->Requests()) {
    if (r.verb == "discovery") continue;  // system:discovery, every account
    EXPECT_NE(Allowing(grants, r), nullptr)
        << c.workload << " asked " << r.verb << " " << r.group << "/"
        << r.resource << " " << RequestName(r) << " in \"" << r.namespace_name
        << "\" (" << r.method << " " << r.path << "?" << r.query
        << "), which its RBAC does not allow";
    EXPECT_NE(r.status, 401) << c.workload << ": " << r.path;
  }
}

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
    for (const auto& [path, port] : c.probes) {
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

std::string Base64(const std::string& in) { return Base64Encode(in); }
std::string Unbase64(const std::string& in) {
  std::string out;
  return Base64Decode(in, &out) ? out : "";
}

// The hub overlay run as processes: lens-multicluster (against a test API
// server as its cluster, with one member cluster behind another) publishes
// the directory, lens-api serves the member from it, and lens-multicluster's
// RBAC (names included) is exactly what it uses.
class DeployedHubTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    rendered_ = new Rendered(Render("overlays/multicluster"));
    ASSERT_EQ(rendered_->error, "");
    std::set<std::string> skip;
    for (const auto& o : rendered_->objects) {
      const std::string name = Str(o, "/metadata/name");
      if (PodSpec(o) && name != "lens-multicluster" && name != "lens-api") {
        skip.insert(name);
      }
    }
    dir_ = ::testing::TempDir() + "lens-hub-" + std::to_string(::getpid());
    cluster_ = new DeployedCluster(*rendered_, dir_, skip);
    ASSERT_EQ(cluster_->error(), "");
    // The member: its store holds one node with 16 GPUs.
    const std::string member_db = "sqlite://" + dir_ + "/member.db";
    {
      auto store = Store::Open(member_db);
      ASSERT_TRUE(store.ok()) << store.status();
      NodeRecord node;
      node.name = "member-node";
      node.status = "Ready";
      node.gpu_count = 16;
      node.updated_at = Timestamp(std::chrono::seconds(1795624473));
      ASSERT_TRUE((*store)->nodes().UpsertNode(node).ok());
    }
    KubeApiServerOptions options;
    options.tls = true;
    options.token = "member-reader-token";
    member_ = new KubeApiServer(options);
    member_->AddResource({"", "v1", "secrets", "Secret", true});
    ASSERT_NE(member_->Create(StorageSecret(member_db)), "");
    const std::string kubeconfig =
        "apiVersion: v1\nkind: Config\ncurrent-context: east\n"
        "clusters: [{name: east, cluster: {server: '" +
        member_->url() + "', certificate-authority-data: '" +
        Base64(ReadFile(KubeApiServer::CaFile())) +
        "'}}]\n"
        "users: [{name: lens, user: {token: member-reader-token}}]\n"
        "contexts: [{name: east, context: {cluster: east, user: lens}}]\n";
    DeployedContainer* hub = cluster_->Get("lens-multicluster");
    ASSERT_NE(hub, nullptr);
    ASSERT_NE(
        hub->api->Create(R"({"apiVersion":"v1","kind":"Secret","metadata":)"
                         R"({"name":"lens-clusters","namespace":"lens"},)"
                         R"("type":"Opaque","data":{"east":")" +
                         Base64(kubeconfig) + R"("}})"),
        "");
    cluster_->Start();
  }
  static void TearDownTestSuite() {
    if (cluster_) {
      for (const auto& [workload, status] : cluster_->Stop()) {
        EXPECT_EQ(status, "exit status 0") << workload;
      }
    }
    delete cluster_;
    delete member_;
    delete rendered_;
    cluster_ = nullptr;
    fs::remove_all(dir_);
  }
  void SetUp() override {
    ASSERT_NE(cluster_, nullptr);
    ASSERT_EQ(cluster_->error(), "");
  }

  static std::string StorageSecret(const std::string& database_url,
                                   const std::string& prometheus = "") {
    std::string data = R"("databaseUrl":")" + Base64(database_url) + "\"";
    if (!prometheus.empty()) {
      data += R"(,"prometheusUrl":")" + Base64(prometheus) + "\"";
    }
    return R"({"apiVersion":"v1","kind":"Secret","metadata":)"
           R"({"name":"lens-storage","namespace":"lens"},"type":"Opaque",)"
           R"("data":{)" +
           data + "}}";
  }
  // The directory lens-multicluster published, or "".
  static std::string Published() {
    const std::string secret =
        cluster_->Get("lens-multicluster")
            ->api->Get("v1", "Secret", "lens", "lens-clusters-config");
    if (secret.empty()) return "";
    rapidjson::Document doc;
    doc.Parse(secret.c_str());
    const Value* data = rapidjson::Pointer("/data/clusters.yaml").Get(doc);
    return data && data->IsString() ? Unbase64(data->GetString()) : "";
  }

  static Rendered* rendered_;
  static DeployedCluster* cluster_;
  static KubeApiServer* member_;
  static std::string dir_;
};

Rendered* DeployedHubTest::rendered_ = nullptr;
DeployedCluster* DeployedHubTest::cluster_ = nullptr;
KubeApiServer* DeployedHubTest::member_ = nullptr;
std::string DeployedHubTest::dir_;

TEST_F(DeployedHubTest, TheMemberIsPublishedAndServedByLensApi) {
  std::string text;
  ASSERT_TRUE(WaitUntil([&] {
    text = Published();
    return text.find("east") != std::string::npos;
  })) << ReadFile(cluster_->Get("lens-multicluster")->log);
  auto directory = ParseClusterDirectory(text);
  ASSERT_TRUE(directory.ok()) << directory.status();
  ASSERT_EQ(directory->size(), 1u);
  EXPECT_FALSE(directory->front().stale);
  // The kubelet's part: the Secret's key into lens-api's volume.
  DeployedContainer* api = cluster_->Get("lens-api");
  ASSERT_NE(api, nullptr);
  const std::string file =
      api->secret_files.at("lens-clusters-config/clusters.yaml");
  ASSERT_TRUE(WriteFile(file + ".new", text).ok());
  fs::rename(file + ".new", file);
  std::string body;
  EXPECT_TRUE(WaitUntil([&] {
    return HttpGet(api->ports.at("http"), "/api/v1/clusters?cluster=east",
                   api->token, &body) == 200;
  })) << body
      << ReadFile(api->log);
  EXPECT_NE(body.find("\"total\":16"), std::string::npos) << body;
  // No credential of the member in lens-multicluster's log.
  const std::string log = ReadFile(cluster_->Get("lens-multicluster")->log);
  EXPECT_EQ(log.find("member-reader-token"), std::string::npos);
  EXPECT_EQ(log.find(dir_ + "/member.db"), std::string::npos);
}

TEST_F(DeployedHubTest, RbacCoversExactlyWhatLensMulticlusterAsks) {
  ASSERT_TRUE(WaitUntil([&] { return !Published().empty(); }));
  // A change the hub must publish again (an update of its Secret).
  ASSERT_NE(member_->Update(StorageSecret("sqlite://" + dir_ + "/member.db",
                                          "http://127.0.0.1:1")),
            "");
  EXPECT_TRUE(WaitUntil([&] {
    return Published().find("prometheusUrl") != std::string::npos;
  })) << ReadFile(cluster_->Get("lens-multicluster")->log);
  ExpectRbacIsExact(*rendered_, *cluster_->Get("lens-multicluster"),
                    std::chrono::seconds(40));
  // In the member: only its storage Secret, by name.
  for (const KubeRequest& r : member_->Requests()) {
    if (r.verb == "discovery") continue;
    EXPECT_EQ(r.verb + " " + r.resource + " " + r.namespace_name + "/" +
                  RequestName(r),
              "get secrets lens/lens-storage")
        << r.method << " " << r.path;
  }
}

}  // namespace
}  // namespace lens::test
