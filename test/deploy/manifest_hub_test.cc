// The hub overlay (deploy/overlays/multicluster) run as processes
// (manifest_cluster.h): lens-multicluster publishes a member cluster that
// sits behind a second test API server, lens-api serves `cluster=<member>`
// from the published directory, and lens-multicluster's RBAC, resource names
// included, is exactly what it asks.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>
#include <unistd.h>

#include <filesystem>

#include "core/cluster_directory.h"
#include "core/text.h"
#include "lens/store.h"
#include "manifest_rbac.h"

namespace lens::test {
namespace {

namespace fs = std::filesystem;

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
