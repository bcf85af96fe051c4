// The store routes of the REST API over a seeded store (SQLite and
// PostgreSQL), served by a real HttpServer on loopback and called with
// cpp-httplib's client: every route's shape and values, pages, sort keys,
// bad parameters, unknown ids and clusters, auth, and that no
// secret-looking field is ever returned. The time-series routes are in
// api_series_test.cc, the OpenAPI document in api_openapi_test.cc.
#include "api/api.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "api_test_env.h"
#include "http/http.h"
#include "lens/store.h"

namespace lens::test {
namespace {

class ApiTest : public ApiFixture {};

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
  // Too large is said as such, not as "1 or more".
  ExpectError("/api/v1/nodes?pageNum=99999999999", 400,
              "pageNum: 99999999999 is not a page number (1..2147483647)");
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
  // The GPU its containers hold, by inventory; not the privileged one's.
  ASSERT_EQ(d["gpus"].Size(), 2u);
  for (const auto& g : d["gpus"].GetArray()) {
    EXPECT_STREQ(g["node"].GetString(), "node-a");
    EXPECT_EQ(g["gpuIndex"].GetInt(), 0);
    EXPECT_STREQ(g["serial"].GetString(), "SN-A0");
    EXPECT_STREQ(g["model"].GetString(), "MI300X");
    EXPECT_STREQ(g["pod"].GetString(), "llama-worker-0");
  }
  EXPECT_STREQ(d["gpus"][0]["container"].GetString(), "trainer");
  EXPECT_STREQ(d["gpus"][0]["containerState"].GetString(), "running");
  EXPECT_STREQ(d["gpus"][1]["container"].GetString(), "init-done");
  // The pods' lifecycle, oldest first.
  ASSERT_EQ(d["lifecycle"].Size(), 2u);
  EXPECT_STREQ(d["lifecycle"][0]["type"].GetString(), "Scheduled");
  EXPECT_EQ(d["lifecycle"][0]["at"].GetInt64(), kT0 + 1);
  EXPECT_STREQ(d["lifecycle"][1]["type"].GetString(), "Running");
  EXPECT_STREQ(d["lifecycle"][1]["pod"].GetString(), "llama-worker-0");
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
        "/api/v1/nodes/node-a/gpu-metrics", "/api/v1/gpu-allocation",
        "/api/v1/gpu-heatmap", "/api/v1/workloads", "/api/v1/workloads/w-1",
        "/api/v1/workloads/w-1/iterations",
        "/api/v1/workloads/w-1/training-series",
        "/api/v1/workloads/w-1/gpu-metrics", "/api/v1/workloads/w-1/flows",
        "/api/v1/flows", "/api/v1/pods", "/api/v1/storage"}) {
    ExpectError(std::string(path) + "?cluster=other", 404, "unknown cluster");
  }
}

TEST_P(ApiTest, BearerTokenIsRequiredWhenSet) {
  Start("t0ken-for-test");
  ExpectError("/api/v1/nodes", 401, "missing bearer token");
  EXPECT_EQ(Get("/api/v1/nodes", "wrong").first, 401);
  EXPECT_EQ(Get("/api/v1/nodes", "t0ken-for-test").first, 200);
}

TEST_P(ApiTest, NoResponseCarriesASecretLookingField) {
  for (const char* path :
       {"/api/v1/clusters", "/api/v1/nodes?pageSize=100",
        "/api/v1/nodes/node-a", "/api/v1/gpu-allocation",
        "/api/v1/workloads?pageSize=100", "/api/v1/workloads/w-1",
        "/api/v1/workloads/w-1/iterations", "/api/v1/pods?pageSize=100",
        "/api/v1/storage", "/api/v1/workloads/w-3/training-series"}) {
    EXPECT_EQ(Get(path).first, 200) << path;
  }
  ExpectNoSecrets();
}

TEST(ApiOptionsTest, AddApiRoutesRejectsBadOptionsNamingTheField) {
  HttpServerOptions http;
  http.listen = "127.0.0.1:0";
  auto server = HttpServer::Create(http);
  ASSERT_TRUE(server.ok()) << server.status();
  ApiOptions options;
  options.max_page_size = 5000;
  Status st = AddApiRoutes(nullptr, nullptr, options, server->get());
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
