// The REST API over a seeded store (SQLite and PostgreSQL), served by a real
// HttpServer on loopback and called with cpp-httplib's client: every route's
// shape and values, pages, sort keys, bad parameters, unknown ids and clusters,
// auth, the OpenAPI document, and that no secret-looking field is ever
// returned.
#include "lens/api.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "lens/http.h"
#include "lens/store.h"
#include "store_test_env.h"

namespace lens::test {
namespace {

constexpr int64_t kT0 = 1700000000;  // Unix seconds
Timestamp At(int64_t seconds) {
  return Timestamp(std::chrono::seconds(seconds));
}

// Seeds the store through its own API, each value one a test looks for.
void Seed(Store& store) {
  auto node = [](std::string name, std::string status, std::string vendor,
                 int gpus, int allocated, double utilization) {
    NodeRecord n;
    n.name = std::move(name);
    n.status = std::move(status);
    n.gpu_vendor = std::move(vendor);
    n.gpu_count = n.gpu_allocatable = gpus;
    n.gpu_allocated = allocated;
    n.gpu_utilization_ratio = utilization;
    n.agent_state = n.status == "Ready" ? "ok" : "stale";
    n.labels = {{"api-token", "s3cr3t-label"}};
    n.updated_at = At(kT0);
    return n;
  };
  ASSERT_TRUE(
      store.nodes().UpsertNode(node("node-a", "Ready", "amd", 8, 4, 0.5)).ok());
  ASSERT_TRUE(store.nodes()
                  .UpsertNode(node("node-b", "NotReady", "nvidia", 4, 0, 0.25))
                  .ok());
  ASSERT_TRUE(
      store.nodes().UpsertNode(node("node-c", "Ready", "amd", 2, 2, 1)).ok());
  std::vector<GpuDeviceRecord> gpus(2);
  for (int i = 0; i < 2; ++i) {
    gpus[i].node = "node-a";
    gpus[i].gpu_index = i;
    gpus[i].model = "MI300X";
    gpus[i].serial = "SN-A" + std::to_string(i);
  }
  ASSERT_TRUE(store.nodes().SyncGpuDevices("node-a", gpus, At(kT0)).ok());
  gpus[1].serial = "SN-NEW1";
  ASSERT_TRUE(store.nodes().SyncGpuDevices("node-a", gpus, At(kT0 + 10)).ok());
  RdmaDeviceRecord rdma;
  rdma.node = "node-a";
  rdma.name = "mlx5_0";
  rdma.node_guid = "0xabcd";
  ASSERT_TRUE(
      store.nodes().SyncRdmaDevices("node-a", {&rdma, 1}, At(kT0)).ok());
  GpuAllocationRecord points[] = {{"", At(kT0), 3, 14},
                                  {"", At(kT0 + 60), 6, 14}};
  ASSERT_TRUE(store.nodes().AddGpuAllocation(points, At(kT0 - 3600)).ok());

  std::vector<ContainerRecord> containers(2);
  for (int i = 0; i < 2; ++i) {
    ContainerRecord& c = containers[i];
    c.container_id = "ctr-" + std::to_string(i);
    c.node = "node-a";
    c.pod_uid = "pod-1";
    c.container_name = i == 0 ? "trainer" : "init-done";
    c.image = "rocm/megatron:latest";
    c.state = i == 0 ? ContainerState::kRunning : ContainerState::kExited;
    c.labels = {{"PASSWORD", "hunter2"}};
    c.created_at = c.updated_at = At(kT0);
    c.devices.push_back({DeviceKind::kGpu, "SN-A0", "", "pod-resources"});
  }
  ASSERT_TRUE(store.containers().UpsertContainers(containers).ok());

  std::vector<PodRecord> pods(2);
  for (int i = 0; i < 2; ++i) {
    PodRecord& p = pods[i];
    p.uid = "pod-" + std::to_string(i + 1);
    p.name = i == 0 ? "llama-worker-0" : "bert-worker-0";
    p.namespace_name = i == 0 ? "ml" : "research";
    p.node = i == 0 ? "node-a" : "node-b";
    p.phase = i == 0 ? "Running" : "Succeeded";
    p.running = i == 0;
    p.owner_uid = i == 0 ? "w-1" : "w-2";
    p.gpu_allocated = 4;
    p.labels = {{"secret", "hunter2"}};
    p.created_at = p.updated_at = At(kT0 + i);
  }
  ASSERT_TRUE(store.pods().UpsertPods(pods).ok());
  std::vector<WorkloadRecord> workloads(2);
  for (int i = 0; i < 2; ++i) {
    WorkloadRecord& w = workloads[i];
    w.uid = "w-" + std::to_string(i + 1);
    w.kind = i == 0 ? "PyTorchJob" : "Job";
    w.name = i == 0 ? "train-llama" : "eval-bert";
    w.namespace_name = i == 0 ? "ml" : "research";
    w.status = i == 0 ? "Running" : "Succeeded";
    w.gpu_request = i == 0 ? 8 : 4;
    w.labels = {{"token", "hunter2"}};
    w.created_at = w.updated_at = At(kT0 + i);
  }
  ASSERT_TRUE(store.pods().UpsertWorkloads(workloads).ok());
  std::pair<std::string, std::string> link{"w-1", "pod-1"};
  ASSERT_TRUE(store.pods().LinkPods({&link, 1}).ok());

  std::vector<IterationRecord> records(3);
  for (int i = 0; i < 3; ++i) {
    records[i].iteration = i + 1;
    records[i].line = i + 1;
    records[i].timestamp_s = double(kT0 + i);
    records[i].Set(IterationField::kLoss, 2.5 - 0.5 * i);
  }
  TrainingEvent checkpoint;
  checkpoint.type = TrainingEventType::kCheckpointSaveEnd;
  checkpoint.line = 4;
  checkpoint.iteration = 3;
  checkpoint.path = "/ckpt/iter_3";
  auto writer = store.training().OpenWriter("w-1", "pod-1/trainer");
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE(writer->Write(records, {&checkpoint, 1}).ok());

  StorageRecord storage;
  storage.name = "pg-main";
  storage.kind = "postgresql";
  storage.status = "ok";
  storage.config_json =
      R"({"host":"db.lens","port":5432,"url":"postgresql://lens:hunter2@db/x"})";
  storage.updated_at = At(kT0);
  Status st = store.storage().UpsertStorage(storage);
  ASSERT_TRUE(st.ok()) << st;
}

class ApiTest : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { Start(""); }

  void Start(std::string token) {
    server_.reset();
    store_.reset();
    db_ = std::make_unique<TestDatabase>(GetParam());
    ASSERT_FALSE(db_->url().empty());
    auto store = Store::Open(db_->url());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    Seed(*store_);
    HttpServerOptions options;
    options.listen = "127.0.0.1:0";
    options.bearer_token = std::move(token);
    auto server = HttpServer::Create(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    ApiOptions api;
    api.cluster = "lab";
    api.default_page_size = 2;
    ASSERT_TRUE(AddApiRoutes(store_.get(), api, server_.get()).ok());
    ASSERT_TRUE(server_->Start().ok());
  }

  void TearDown() override {
    server_.reset();
    store_.reset();
    db_.reset();
  }

  // GET `path`: the status and body; every body is kept for the secrets
  // check.
  std::pair<int, std::string> Get(const std::string& path,
                                  const std::string& token = "") {
    httplib::Client client("127.0.0.1", server_->port());
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    auto res = client.Get(path, headers);
    EXPECT_TRUE(res) << path;
    if (!res) return {0, ""};
    bodies_.push_back(res->body);
    return {res->status, res->body};
  }

  // The envelope's data of a 200 response.
  rapidjson::Document Data(const std::string& path) {
    auto [status, body] = Get(path);
    EXPECT_EQ(status, 200) << path << ": " << body;
    rapidjson::Document doc;
    doc.Parse(body.c_str());
    EXPECT_FALSE(doc.HasParseError()) << body;
    EXPECT_EQ(doc["code"].GetInt(), 0);
    rapidjson::Document data;
    data.CopyFrom(doc["data"], data.GetAllocator());
    return data;
  }

  void ExpectError(const std::string& path, int status,
                   const std::string& mention) {
    auto [got, body] = Get(path);
    EXPECT_EQ(got, status) << path << ": " << body;
    EXPECT_NE(body.find("\"code\":" + std::to_string(status)),
              std::string::npos)
        << body;
    EXPECT_NE(body.find(mention), std::string::npos) << path << ": " << body;
  }

  std::unique_ptr<TestDatabase> db_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<HttpServer> server_;
  std::vector<std::string> bodies_;
};

TEST_P(ApiTest, ClusterOverviewCountsNodesGpusAndWorkloads) {
  rapidjson::Document d = Data("/api/v1/clusters?cluster=lab");
  EXPECT_EQ(d["total"].GetInt(), 1);
  const auto& c = d["items"][0];
  EXPECT_STREQ(c["name"].GetString(), "lab");
  EXPECT_EQ(c["nodes"]["total"].GetInt(), 3);
  EXPECT_EQ(c["nodes"]["ready"].GetInt(), 2);
  EXPECT_EQ(c["nodes"]["stale"].GetInt(), 1);
  EXPECT_EQ(c["gpus"]["total"].GetInt(), 14);
  EXPECT_EQ(c["gpus"]["allocated"].GetInt(), 6);
  EXPECT_NEAR(c["gpus"]["allocationRatio"].GetDouble(), 6.0 / 14, 1e-9);
  EXPECT_NEAR(c["gpus"]["utilizationRatio"].GetDouble(), (4 + 1 + 2) / 14.0,
              1e-9);
  EXPECT_EQ(c["workloads"]["running"].GetInt(), 1);
}

TEST_P(ApiTest, NodesFilterSortAndPage) {
  rapidjson::Document d = Data("/api/v1/nodes");
  EXPECT_EQ(d["total"].GetInt(), 3);
  EXPECT_EQ(d["pageSize"].GetInt(), 2);  // the configured default
  EXPECT_EQ(d["items"].Size(), 2u);
  d = Data("/api/v1/nodes?sort=gpuAllocated&order=desc&pageSize=1&pageNum=2");
  EXPECT_EQ(d["total"].GetInt(), 3);
  EXPECT_EQ(d["pageNum"].GetInt(), 2);
  ASSERT_EQ(d["items"].Size(), 1u);
  EXPECT_STREQ(d["items"][0]["name"].GetString(), "node-c");
  d = Data("/api/v1/nodes?gpuVendor=amd&status=Ready&sort=gpuCount");
  ASSERT_EQ(d["total"].GetInt(), 2);
  EXPECT_STREQ(d["items"][0]["name"].GetString(), "node-c");
  EXPECT_EQ(d["items"][1]["updatedAt"].GetInt64(), kT0);
  ExpectError("/api/v1/nodes?sort=labels", 400,
              "allowed: name, gpuCount, gpuAllocated, updatedAt");
  ExpectError("/api/v1/nodes?pageSize=5000", 400, "pageSize");
  ExpectError("/api/v1/nodes?pageNum=x", 400, "pageNum");
  ExpectError("/api/v1/nodes?order=sideways&sort=name", 400, "order");
}

TEST_P(ApiTest, NodeDetailHasDevicesLiveContainersAndChangeLog) {
  rapidjson::Document d = Data("/api/v1/nodes/node-a");
  EXPECT_STREQ(d["node"]["gpuVendor"].GetString(), "amd");
  ASSERT_EQ(d["gpus"].Size(), 2u);
  EXPECT_STREQ(d["gpus"][1]["serial"].GetString(), "SN-NEW1");
  ASSERT_EQ(d["rdmaDevices"].Size(), 1u);
  EXPECT_STREQ(d["rdmaDevices"][0]["name"].GetString(), "mlx5_0");
  ASSERT_EQ(d["containers"].Size(), 1u);  // the exited one is not live
  EXPECT_STREQ(d["containers"][0]["name"].GetString(), "trainer");
  EXPECT_STREQ(d["containers"][0]["devices"][0]["deviceKey"].GetString(),
               "SN-A0");
  bool replaced = false;
  for (const auto& c : d["deviceChanges"].GetArray()) {
    replaced |= std::string(c["change"].GetString()) == "REPLACE" &&
                std::string(c["newSerial"].GetString()) == "SN-NEW1" &&
                c["at"].GetInt64() == kT0 + 10;
  }
  EXPECT_TRUE(replaced);
  ExpectError("/api/v1/nodes/node-zz", 404, "node-zz");
}

TEST_P(ApiTest, WorkloadsListAndDetailWithTraining) {
  rapidjson::Document d = Data("/api/v1/workloads?namespace=ml");
  ASSERT_EQ(d["total"].GetInt(), 1);
  EXPECT_STREQ(d["items"][0]["name"].GetString(), "train-llama");
  d = Data("/api/v1/workloads?sort=gpuRequest&order=asc");
  EXPECT_STREQ(d["items"][0]["uid"].GetString(), "w-2");
  ExpectError("/api/v1/workloads?sort=secret", 400,
              "allowed: createdAt, name, kind, gpuRequest");
  d = Data("/api/v1/workloads/w-1");
  EXPECT_STREQ(d["workload"]["kind"].GetString(), "PyTorchJob");
  ASSERT_EQ(d["pods"].Size(), 1u);
  EXPECT_STREQ(d["pods"][0]["name"].GetString(), "llama-worker-0");
  ASSERT_EQ(d["runs"].Size(), 1u);
  EXPECT_EQ(d["runs"][0]["iterations"].GetInt(), 3);
  EXPECT_EQ(d["latestIteration"]["iteration"].GetInt(), 3);
  EXPECT_DOUBLE_EQ(d["latestIteration"]["fields"]["loss"].GetDouble(), 1.5);
  ASSERT_EQ(d["events"].Size(), 1u);
  EXPECT_STREQ(d["events"][0]["type"].GetString(), "checkpoint_save_end");
  EXPECT_STREQ(d["events"][0]["path"].GetString(), "/ckpt/iter_3");
  d = Data("/api/v1/workloads/w-2");
  EXPECT_TRUE(d["latestIteration"].IsNull());
  ExpectError("/api/v1/workloads/nope", 404, "nope");
}

TEST_P(ApiTest, IterationsArePagedAndFilteredByRun) {
  rapidjson::Document d =
      Data("/api/v1/workloads/w-1/iterations?pageSize=2&pageNum=2&run=1");
  EXPECT_EQ(d["total"].GetInt(), 3);
  ASSERT_EQ(d["items"].Size(), 1u);
  EXPECT_EQ(d["items"][0]["iteration"].GetInt(), 3);
  EXPECT_EQ(d["items"][0]["timestamp"].GetDouble(), double(kT0 + 2));
  d = Data("/api/v1/workloads/w-1/iterations?run=2");
  EXPECT_EQ(d["total"].GetInt(), 0);
  ExpectError("/api/v1/workloads/w-1/iterations?run=one", 400, "run");
  ExpectError("/api/v1/workloads/nope/iterations", 404, "nope");
}

TEST_P(ApiTest, PodsFilterByNamespaceNodeAndRunning) {
  rapidjson::Document d = Data("/api/v1/pods?running=true");
  ASSERT_EQ(d["total"].GetInt(), 1);
  EXPECT_STREQ(d["items"][0]["workloadUid"].GetString(), "w-1");
  d = Data("/api/v1/pods?namespace=research&node=node-b");
  ASSERT_EQ(d["total"].GetInt(), 1);
  EXPECT_STREQ(d["items"][0]["phase"].GetString(), "Succeeded");
  d = Data("/api/v1/pods?sort=name");
  EXPECT_STREQ(d["items"][0]["name"].GetString(), "bert-worker-0");
  ExpectError("/api/v1/pods?running=maybe", 400, "running");
}

TEST_P(ApiTest, GpuAllocationNowAndOverARange) {
  rapidjson::Document d = Data("/api/v1/gpu-allocation");
  EXPECT_EQ(d["now"]["allocated"].GetInt(), 6);
  EXPECT_EQ(d["now"]["allocatable"].GetInt(), 14);
  EXPECT_EQ(d["now"]["nodes"].Size(), 3u);
  EXPECT_EQ(d["history"].Size(), 2u);
  d = Data("/api/v1/gpu-allocation?from=" + std::to_string(kT0 + 30) +
           "&to=" + std::to_string(kT0 + 120));
  ASSERT_EQ(d["history"].Size(), 1u);
  EXPECT_EQ(d["history"][0]["at"].GetInt64(), kT0 + 60);
  EXPECT_EQ(d["history"][0]["allocated"].GetInt(), 6);
  ExpectError("/api/v1/gpu-allocation?from=yesterday", 400, "from");
  ExpectError("/api/v1/gpu-allocation?node=ghost", 404, "ghost");
}

TEST_P(ApiTest, StorageListsConfigs) {
  rapidjson::Document d = Data("/api/v1/storage");
  ASSERT_EQ(d["total"].GetInt(), 1);
  EXPECT_STREQ(d["items"][0]["kind"].GetString(), "postgresql");
  EXPECT_STREQ(d["items"][0]["config"]["host"].GetString(), "db.lens");
  EXPECT_STREQ(d["items"][0]["config"]["url"].GetString(),
               "postgresql://lens:REDACTED@db/x");
}

TEST_P(ApiTest, UnknownClusterIs404OnEveryRoute) {
  for (const char* path :
       {"/api/v1/clusters", "/api/v1/nodes", "/api/v1/nodes/node-a",
        "/api/v1/gpu-allocation", "/api/v1/workloads", "/api/v1/workloads/w-1",
        "/api/v1/workloads/w-1/iterations", "/api/v1/pods",
        "/api/v1/storage"}) {
    ExpectError(std::string(path) + "?cluster=other", 404, "unknown cluster");
  }
}

TEST_P(ApiTest, BearerTokenIsRequiredWhenSet) {
  Start("t0ken-for-test");
  ExpectError("/api/v1/nodes", 401, "missing bearer token");
  EXPECT_EQ(Get("/api/v1/nodes", "wrong").first, 401);
  EXPECT_EQ(Get("/api/v1/nodes", "t0ken-for-test").first, 200);
}

TEST_P(ApiTest, OpenApiDocumentListsExactlyTheServedRoutes) {
  auto [status, body] = Get("/api/v1/openapi.json");
  ASSERT_EQ(status, 200);
  rapidjson::Document doc;
  doc.Parse(body.c_str());
  ASSERT_FALSE(doc.HasParseError());
  EXPECT_STREQ(doc["openapi"].GetString(), "3.0.3");
  std::set<std::string> paths;
  for (const auto& p : doc["paths"].GetObject()) {
    paths.insert(p.name.GetString());
    // Every documented route is served (a filled-in path is not a 404).
    std::string path = p.name.GetString();
    for (const char* param : {"{name}", "{uid}"}) {
      if (auto at = path.find(param); at != std::string::npos)
        path.replace(at, std::string(param).size(), "x");
    }
    EXPECT_EQ(Get(path).second.find("no such path"), std::string::npos) << path;
    EXPECT_TRUE(p.value.HasMember("get")) << path;
  }
  const std::set<std::string> served = {"/api/v1/clusters",
                                        "/api/v1/nodes",
                                        "/api/v1/nodes/{name}",
                                        "/api/v1/gpu-allocation",
                                        "/api/v1/workloads",
                                        "/api/v1/workloads/{uid}",
                                        "/api/v1/workloads/{uid}/iterations",
                                        "/api/v1/pods",
                                        "/api/v1/storage",
                                        "/api/v1/openapi.json"};
  EXPECT_EQ(paths, served);
  const auto& sort = doc["paths"]["/api/v1/nodes"]["get"]["parameters"];
  EXPECT_NE(body.find("\"gpuAllocated\""), std::string::npos);
  EXPECT_TRUE(sort.IsArray());
}

TEST_P(ApiTest, NoResponseCarriesASecretLookingField) {
  for (const char* path :
       {"/api/v1/clusters", "/api/v1/nodes?pageSize=100",
        "/api/v1/nodes/node-a", "/api/v1/gpu-allocation",
        "/api/v1/workloads?pageSize=100", "/api/v1/workloads/w-1",
        "/api/v1/workloads/w-1/iterations", "/api/v1/pods?pageSize=100",
        "/api/v1/storage"}) {
    EXPECT_EQ(Get(path).first, 200) << path;
  }
  for (const std::string& body : bodies_) {
    std::string lower = body;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    for (const char* bad : {"hunter2", "s3cr3t", "password", "\"labels\"",
                            "\"env\"", "secret", "\"token\""}) {
      EXPECT_EQ(lower.find(bad), std::string::npos) << bad << " in " << body;
    }
  }
}

TEST(ApiOptionsTest, AddApiRoutesRejectsBadOptionsNamingTheField) {
  HttpServerOptions http;
  http.listen = "127.0.0.1:0";
  auto server = HttpServer::Create(http);
  ASSERT_TRUE(server.ok()) << server.status();
  ApiOptions options;
  options.max_page_size = 5000;
  Status st = AddApiRoutes(nullptr, options, server->get());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  options.max_page_size = 100;
  options.default_page_size = 200;
  EXPECT_NE(options.Validate().message().find("default_page_size"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Backends, ApiTest,
                         testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace lens::test
