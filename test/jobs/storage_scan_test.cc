// The storage scan against the in-process API server, with the CSI drivers
// and PersistentVolumes of test/fixtures/kube/storage, and against real
// mount points (statfs).
#include "scheduled/storage_scan.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kube_api_server.h"
#include "lens/kube.h"

namespace lens::scheduled {
namespace {

using std::chrono::seconds;
using test::KubeApiServer;

const std::string kStorageFixtures =
    std::string(LENS_FIXTURES_DIR) + "/kube/storage/";
const Timestamp kNow = std::chrono::time_point_cast<std::chrono::microseconds>(
    std::chrono::sys_days(std::chrono::year(2026) / 3 / 8) + seconds(3600));

SteadyTime Later() { return std::chrono::steady_clock::now() + seconds(60); }

// The objects of a fixture file (a JSON array), each as JSON text.
std::vector<std::string> Objects(const std::string& file) {
  std::ifstream in(kStorageFixtures + file);
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(text.str().c_str());
  std::vector<std::string> out;
  if (!doc.IsArray()) {
    ADD_FAILURE() << file << " is not a JSON array";
    return out;
  }
  for (const auto& o : doc.GetArray()) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    o.Accept(w);
    out.emplace_back(buffer.GetString(), buffer.GetSize());
  }
  return out;
}

// A minimal PersistentVolume (as a test writes it, not a fixture).
std::string Volume(const std::string& name, const std::string& spec,
                   const std::string& phase) {
  return R"({"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":")" +
         name + R"("},"spec":)" + spec + R"(,"status":{"phase":")" + phase +
         R"("}})";
}

std::map<std::string, StorageRecord> ByName(
    const std::vector<StorageRecord>& rows) {
  std::map<std::string, StorageRecord> out;
  for (const StorageRecord& r : rows) out[r.name] = r;
  return out;
}

class StorageScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok()) << server_.error();
    server_.AddResource(
        {"storage.k8s.io", "v1", "csidrivers", "CSIDriver", false});
    server_.AddResource(
        {"", "v1", "persistentvolumes", "PersistentVolume", false});
    KubeConnection connection;
    connection.server = server_.url();
    connection.origin = "test";
    auto client = KubeClient::Create(connection);
    ASSERT_TRUE(client.ok()) << client.status().message();
    client_ = std::move(*client);
  }

  void LoadFixtures() {
    for (const char* file : {"csidrivers.json", "persistentvolumes.json"}) {
      for (const std::string& o : Objects(file)) {
        ASSERT_FALSE(server_.Create(o).empty()) << file << ": " << o;
      }
    }
  }

  // The list requests of one collection ("persistentvolumes"), in order.
  std::vector<test::KubeRequest> Lists(const std::string& resource) const {
    std::vector<test::KubeRequest> out;
    for (const test::KubeRequest& r : server_.Requests()) {
      if (r.verb == "list" && r.resource == resource) out.push_back(r);
    }
    return out;
  }

  KubeApiServer server_;
  std::unique_ptr<KubeClient> client_;
};

TEST_F(StorageScanTest, ReportsCsiDriversWithTheirVolumes) {
  LoadFixtures();
  auto rows = ScanStorage(client_.get(), {}, kNow, Later());
  ASSERT_TRUE(rows.ok()) << rows.status();
  auto by_name = ByName(*rows);
  ASSERT_EQ(rows->size(), 7u);

  const StorageRecord& juicefs = by_name["csi:csi.juicefs.com"];
  EXPECT_EQ(juicefs.kind, "csi");
  EXPECT_EQ(juicefs.status, "Available");
  EXPECT_EQ(juicefs.config_json,
            R"({"attachRequired":false,"podInfoOnMount":false,)"
            R"("volumeLifecycleModes":["Persistent"],)"
            R"("fsGroupPolicy":"ReadWriteOnceWithFSType","volumes":2})");
  EXPECT_EQ(juicefs.updated_at, kNow);

  const StorageRecord& nfs = by_name["csi:nfs.csi.k8s.io"];
  EXPECT_EQ(nfs.kind, "csi");
  EXPECT_EQ(nfs.status, "Available");
  EXPECT_EQ(nfs.config_json,
            R"({"attachRequired":false,"podInfoOnMount":false,)"
            R"("volumeLifecycleModes":["Persistent","Ephemeral"],)"
            R"("fsGroupPolicy":"File","volumes":0})");

  // tokenRequests and requiresRepublish are not whitelisted.
  const StorageRecord& secrets = by_name["csi:secrets-store.csi.k8s.io"];
  EXPECT_EQ(secrets.kind, "csi");
  EXPECT_EQ(secrets.config_json,
            R"({"attachRequired":false,"podInfoOnMount":true,)"
            R"("volumeLifecycleModes":["Ephemeral"],)"
            R"("fsGroupPolicy":"ReadWriteOnceWithFSType","volumes":0})");
}

TEST_F(StorageScanTest, ReportsStorageClassesOfTheVolumes) {
  LoadFixtures();
  auto rows = ScanStorage(client_.get(), {}, kNow, Later());
  ASSERT_TRUE(rows.ok()) << rows.status();
  auto by_name = ByName(*rows);

  const StorageRecord& nfs = by_name["class:nfs-static"];
  EXPECT_EQ(nfs.kind, "nfs");
  EXPECT_EQ(nfs.status, "Available");
  EXPECT_EQ(nfs.config_json,
            R"({"volumes":2,"bound":1,"capacity_bytes":76965813944320,)"
            R"("nfs_servers":["10.20.0.11","10.20.0.12"]})");  // 50Ti + 20Ti
  EXPECT_EQ(nfs.updated_at, kNow);

  const StorageRecord& juicefs = by_name["class:juicefs-sc"];
  EXPECT_EQ(juicefs.kind, "csi.juicefs.com");
  EXPECT_EQ(juicefs.status, "Available");
  EXPECT_EQ(juicefs.config_json,
            R"({"volumes":1,"bound":1,"capacity_bytes":11258999068426240})");

  // The static JuiceFS volume has no storage class.
  const StorageRecord& none = by_name["class:(none)"];
  EXPECT_EQ(none.kind, "csi.juicefs.com");
  EXPECT_EQ(none.status, "Available");
  EXPECT_EQ(none.config_json,
            R"({"volumes":1,"bound":0,"capacity_bytes":11258999068426240})");

  // One of the two local volumes failed to be deleted.
  const StorageRecord& local = by_name["class:local-nvme"];
  EXPECT_EQ(local.kind, "local");
  EXPECT_EQ(local.status, "Degraded");
  EXPECT_EQ(local.config_json,
            R"({"volumes":2,"bound":1,"capacity_bytes":7679401525248})");
}

TEST_F(StorageScanTest, NeverCopiesSecretsOrFieldsNotWhitelisted) {
  LoadFixtures();
  auto rows = ScanStorage(client_.get(), {}, kNow, Later());
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_FALSE(rows->empty());
  for (const StorageRecord& r : *rows) {
    const std::string all =
        r.name + "\n" + r.kind + "\n" + r.status + "\n" + r.config_json;
    for (const char* text :
         {"FAKE-S3CRET", "redis://", "metaurl", "juicefs-secret", "kube-system",
          "SecretRef", "volumeAttributes", "mountOptions", "cache-size",
          "nfsvers", "tokenRequests", "lens-fixture-token-audience",
          "requiresRepublish", "/exports", "/mnt/nvme0", "claimRef", "training",
          "volumeHandle"}) {
      EXPECT_EQ(all.find(text), std::string::npos)
          << r.name << " contains " << text << ": " << all;
    }
  }
}

TEST_F(StorageScanTest, FollowsContinueTokensAcrossPages) {
  for (int i = 0; i < 1200; ++i) {
    const std::string spec =
        R"({"capacity":{"storage":"1Gi"},"nfs":{"server":"10.0.0.)" +
        std::to_string(i % 3) + R"(","path":"/x"},"storageClassName":"bulk"})";
    ASSERT_FALSE(
        server_.Create(Volume("bulk-" + std::to_string(i), spec, "Bound"))
            .empty());
  }
  auto rows = ScanStorage(client_.get(), {}, kNow, Later());
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].name, "class:bulk");
  EXPECT_EQ((*rows)[0].kind, "nfs");
  EXPECT_EQ((*rows)[0].config_json,
            R"({"volumes":1200,"bound":1200,"capacity_bytes":1288490188800,)"
            R"("nfs_servers":["10.0.0.0","10.0.0.1","10.0.0.2"]})");

  const auto lists = Lists("persistentvolumes");
  ASSERT_EQ(lists.size(), 3u);
  EXPECT_EQ(lists[0].query, "limit=500");
  for (size_t i = 1; i < lists.size(); ++i) {
    EXPECT_EQ(lists[i].query.rfind("limit=500&continue=", 0), 0u)
        << lists[i].query;
    EXPECT_EQ(lists[i].status, 200);
  }
  ASSERT_EQ(Lists("csidrivers").size(), 1u);
  EXPECT_EQ(Lists("csidrivers")[0].query, "limit=500");
}

TEST_F(StorageScanTest, TakesTheKindFromTheVolumeSource) {
  // A PV from before spec.storageClassName names its class in the beta
  // annotation.
  ASSERT_FALSE(
      server_
          .Create(R"({"apiVersion":"v1","kind":"PersistentVolume","metadata":{)"
                  R"("name":"old","annotations":{)"
                  R"("volume.beta.kubernetes.io/storage-class":"legacy"}},)"
                  R"("spec":{"capacity":{"storage":"100Gi"},)"
                  R"("hostPath":{"path":"/data"}},"status":{"phase":"Bound"}})")
          .empty());
  ASSERT_FALSE(
      server_
          .Create(Volume(
              "ceph",
              R"({"capacity":{"storage":"1Ti"},"cephfs":{"monitors":)"
              R"(["10.0.0.9:6789"],"user":"admin","secretRef":{"name":"ceph"}},)"
              R"("storageClassName":"cephfs"})",
              "Released"))
          .empty());
  auto rows = ScanStorage(client_.get(), {}, kNow, Later());
  ASSERT_TRUE(rows.ok()) << rows.status();
  auto by_name = ByName(*rows);
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ(by_name["class:legacy"].kind, "hostPath");
  EXPECT_EQ(by_name["class:legacy"].config_json,
            R"({"volumes":1,"bound":1,"capacity_bytes":107374182400})");
  EXPECT_EQ(by_name["class:cephfs"].kind, "cephfs");
  EXPECT_EQ(by_name["class:cephfs"].status, "Available");
  EXPECT_EQ(by_name["class:cephfs"].config_json,
            R"({"volumes":1,"bound":0,"capacity_bytes":1099511627776})");
}

TEST_F(StorageScanTest, MalformedCapacityNamesTheVolume) {
  ASSERT_FALSE(server_
                   .Create(Volume("odd",
                                  R"({"capacity":{"storage":"lots"},)"
                                  R"("nfs":{"server":"n","path":"/"}})",
                                  "Bound"))
                   .empty());
  auto rows = ScanStorage(client_.get(), {}, kNow, Later());
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rows.status().message().find("persistentvolume odd"),
            std::string::npos)
      << rows.status();
}

TEST_F(StorageScanTest, ServerErrorFailsTheScan) {
  LoadFixtures();
  for (const char* resource : {"persistentvolumes", "csidrivers"}) {
    server_.FailNext(resource, 500);
    auto rows = ScanStorage(client_.get(), {}, kNow, Later());
    ASSERT_FALSE(rows.ok()) << resource;
    EXPECT_EQ(rows.status().code(), StatusCode::kUnavailable) << resource;
    EXPECT_NE(rows.status().message().find("HTTP 500"), std::string::npos)
        << rows.status();
    EXPECT_NE(rows.status().message().find(resource), std::string::npos)
        << rows.status();
  }
}

TEST_F(StorageScanTest, DeadlineInThePastStopsBeforeListing) {
  LoadFixtures();
  const StorageMount mounts[] = {{"tmp", "local", ::testing::TempDir()}};
  auto rows = ScanStorage(client_.get(), mounts, kNow,
                          std::chrono::steady_clock::now() - seconds(1));
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kDeadlineExceeded)
      << rows.status();
  EXPECT_TRUE(Lists("persistentvolumes").empty());
  EXPECT_TRUE(Lists("csidrivers").empty());
}

TEST(StorageScanMountsTest, ReportsMountsFromStatfsWithoutAClient) {
  std::string dir = ::testing::TempDir() + "lens_storage_XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string missing = dir + "/no \"such\" dir";
  const StorageMount mounts[] = {{"juicefs-data", "juicefs", dir},
                                 {"gone", "nfs", missing}};
  auto rows = ScanStorage(nullptr, mounts, kNow, Later());
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);

  const StorageRecord& healthy = (*rows)[0];
  EXPECT_EQ(healthy.name, "juicefs-data");
  EXPECT_EQ(healthy.kind, "juicefs");
  EXPECT_EQ(healthy.status, "Healthy");
  EXPECT_EQ(healthy.updated_at, kNow);
  rapidjson::Document config;
  config.Parse(healthy.config_json.c_str());
  ASSERT_TRUE(config.IsObject()) << healthy.config_json;
  EXPECT_EQ(config.MemberCount(), 4u) << healthy.config_json;
  EXPECT_EQ(std::string(config["path"].GetString()), dir);
  const uint64_t capacity = config["capacity_bytes"].GetUint64();
  EXPECT_GT(capacity, 0u);
  EXPECT_LE(config["used_bytes"].GetUint64(), capacity);
  EXPECT_LE(config["available_bytes"].GetUint64(), capacity);

  const StorageRecord& gone = (*rows)[1];
  EXPECT_EQ(gone.name, "gone");
  EXPECT_EQ(gone.kind, "nfs");
  EXPECT_EQ(gone.status, "Unavailable: No such file or directory");
  // The path is escaped, not pasted.
  rapidjson::Document gone_config;
  gone_config.Parse(gone.config_json.c_str());
  ASSERT_TRUE(gone_config.IsObject()) << gone.config_json;
  EXPECT_EQ(gone_config.MemberCount(), 1u) << gone.config_json;
  EXPECT_EQ(std::string(gone_config["path"].GetString()), missing);
}

TEST(StorageScanMountsTest, NothingToScanIsNoRows) {
  auto rows = ScanStorage(nullptr, {}, kNow, Later());
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_TRUE(rows->empty());
}

}  // namespace
}  // namespace lens::scheduled
