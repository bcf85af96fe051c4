// What the API suites share (api_test.cc, api_series_test.cc,
// api_openapi_test.cc): the seeded store, the time series seeded into its
// sample history, and a fixture serving the API on loopback over it (on
// SQLite and PostgreSQL), with helpers to call it.
#ifndef LENS_TEST_API_API_TEST_ENV_H_
#define LENS_TEST_API_API_TEST_ENV_H_

#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/api.h"
#include "http/http.h"
#include "lens/store.h"
#include "lens/timeseries.h"
#include "store_test_env.h"

namespace lens::test {

constexpr int64_t kT0 = 1700000000;  // Unix seconds
inline Timestamp AtSeconds(int64_t seconds) {
  return Timestamp(std::chrono::seconds(seconds));
}

// Seeds the store through its own API, each value one a test looks for.
inline void Seed(Store& store) {
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
    n.updated_at = AtSeconds(kT0);
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
  ASSERT_TRUE(
      store.nodes().SyncGpuDevices("node-a", gpus, AtSeconds(kT0)).ok());
  gpus[1].serial = "SN-NEW1";
  ASSERT_TRUE(
      store.nodes().SyncGpuDevices("node-a", gpus, AtSeconds(kT0 + 10)).ok());
  RdmaDeviceRecord rdma;
  rdma.node = "node-a";
  rdma.name = "mlx5_0";
  rdma.node_guid = "0xabcd";
  ASSERT_TRUE(
      store.nodes().SyncRdmaDevices("node-a", {&rdma, 1}, AtSeconds(kT0)).ok());
  GpuAllocationRecord points[] = {{"", AtSeconds(kT0), 3, 14},
                                  {"", AtSeconds(kT0 + 60), 6, 14}};
  ASSERT_TRUE(
      store.nodes().AddGpuAllocation(points, AtSeconds(kT0 - 3600)).ok());

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
    c.created_at = c.updated_at = AtSeconds(kT0);
    c.devices.push_back({DeviceKind::kGpu, "SN-A0", "", "pod-resources"});
  }
  // A privileged debug container sees every GPU and holds none.
  ContainerRecord debug = containers[0];
  debug.container_id = "ctr-debug";
  debug.container_name = "debug";
  debug.privileged = true;
  debug.state = ContainerState::kExited;
  debug.devices = {{DeviceKind::kGpu, "SN-NEW1", "", "oci-spec"}};
  containers.push_back(debug);
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
    p.created_at = p.updated_at = AtSeconds(kT0 + i);
  }
  ASSERT_TRUE(store.pods().UpsertPods(pods).ok());
  const PodEventRecord pod_events[] = {
      {"pod-1", "Running", "Running", 0, AtSeconds(kT0 + 5)},
      {"pod-1", "Scheduled", "Pending", 0, AtSeconds(kT0 + 1)}};
  ASSERT_TRUE(store.pods().AddPodEvents(pod_events).ok());
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
    w.created_at = w.updated_at = AtSeconds(kT0 + i);
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
  storage.updated_at = AtSeconds(kT0);
  Status st = store.storage().UpsertStorage(storage);
  ASSERT_TRUE(st.ok()) << st;
}
// The series start: a multiple of the 60 s step the series tests use.
constexpr int64_t kS0 = 1700000040;

// The node agent's GPU gauges and netflow's counters, as lens-telemetry
// stores them, every 60 s for k = -1..4 (kS0 + 60k):
//  - lens_gpu_utilization_ratio of node-a GPUs 0, 1 (workload_uid w-1) and
//    node-b GPUs 2, 10: (gpu + 1) / 10 + k / 100, except node-b GPU 10 at
//    k = 2 (no sample); a second series of node-a GPU 1 (another instance)
//    has 0.99 at k = 4;
//  - memory, power and temperature of node-a GPU 0: 1e9 + k, 300 + k,
//    50 + k;
//  - flow counters growing per 60 s by: node-a ml/llama-worker-0 external
//    egress sent 6000, received 3000, retransmits 6; node-b host internal
//    ingress sent 1200; node-b research/bert-worker-0 k8s_pod egress sent
//    600; remotes 10.0.0.1 (node-a, external egress) 9000, other (node-b,
//    internal ingress) 60.
// Every series carries a secret-looking label no response may show.
inline void SeedSeries(Store& store) {
  using Labels = std::vector<std::pair<std::string, std::string>>;
  std::vector<MetricSample> samples;
  auto add = [&](std::string metric, Labels labels, int k, double value) {
    labels.emplace_back("password", "hunter2");
    samples.push_back(
        {std::move(metric), std::move(labels), (kS0 + 60 * k) * 1000, value});
  };
  for (int k = -1; k <= 4; ++k) {
    for (const auto& [node, gpu] : std::vector<std::pair<std::string, int>>{
             {"node-a", 0}, {"node-a", 1}, {"node-b", 2}, {"node-b", 10}}) {
      if (node == "node-b" && gpu == 10 && k == 2) continue;
      Labels labels = {{"node", node},
                       {"gpu", std::to_string(gpu)},
                       {"instance", node + ":8989"}};
      if (node == "node-a") labels.emplace_back("workload_uid", "w-1");
      add("lens_gpu_utilization_ratio", labels, k,
          (gpu + 1) / 10.0 + k / 100.0);
    }
    const Labels a0 = {
        {"node", "node-a"}, {"gpu", "0"}, {"workload_uid", "w-1"}};
    add("lens_gpu_memory_used_bytes", a0, k, 1e9 + k);
    add("lens_gpu_power_watts", a0, k, 300 + k);
    add("lens_gpu_temperature_celsius", a0, k, 50 + k);
    const double n = k + 1;  // counters start at 0 at k = -1
    const Labels llama = {{"node", "node-a"},
                          {"workload", "ml/llama-worker-0"},
                          {"class", "external"},
                          {"direction", "egress"}};
    add("lens_tcp_flow_bytes_sent_total", llama, k, 6000 * n);
    add("lens_tcp_flow_bytes_received_total", llama, k, 3000 * n);
    add("lens_tcp_flow_retransmits_total", llama, k, 6 * n);
    add("lens_tcp_flow_bytes_sent_total",
        {{"node", "node-b"},
         {"workload", "host"},
         {"class", "internal"},
         {"direction", "ingress"}},
        k, 1200 * n);
    add("lens_tcp_flow_bytes_sent_total",
        {{"node", "node-b"},
         {"workload", "research/bert-worker-0"},
         {"class", "k8s_pod"},
         {"direction", "egress"}},
        k, 600 * n);
    add("lens_tcp_flow_remote_bytes_total",
        {{"node", "node-a"},
         {"remote", "10.0.0.1"},
         {"class", "external"},
         {"direction", "egress"}},
        k, 9000 * n);
    add("lens_tcp_flow_remote_bytes_total",
        {{"node", "node-b"},
         {"remote", "other"},
         {"class", "internal"},
         {"direction", "ingress"}},
        k, 60 * n);
  }
  add("lens_gpu_utilization_ratio",
      {{"node", "node-a"}, {"gpu", "1"}, {"instance", "node-a:9999"}}, 4, 0.99);
  Status st = store.samples().AppendSamples(samples);
  ASSERT_TRUE(st.ok()) << st;
  std::pair<std::string, std::string> link{"w-2", "pod-2"};
  ASSERT_TRUE(store.pods().LinkPods({&link, 1}).ok());
}

// The training of w-3, a workload the store has not seen (its log was read
// first): run 1 is iterations 1..100 (loss = iteration, 500 ms
// steps, line times kT0 + iteration), run 2 (a restart) iterations
// 50..149; a checkpoint of run 1 at iteration 100.
inline void SeedTraining(Store& store) {
  std::vector<IterationRecord> records;
  for (int run = 1; run <= 2; ++run) {
    for (int i = run == 1 ? 1 : 50; i < (run == 1 ? 101 : 150); ++i) {
      IterationRecord r;
      r.run = run;
      r.iteration = i;
      r.line = records.size() + 1;
      r.timestamp_s = double(kT0 + 1000 * (run - 1) + i);
      r.Set(IterationField::kLoss, double(i));
      r.Set(IterationField::kElapsedMs, 500);
      records.push_back(r);
    }
  }
  TrainingEvent checkpoint;
  checkpoint.type = TrainingEventType::kCheckpointSaveEnd;
  checkpoint.line = 101;
  checkpoint.iteration = 100;
  checkpoint.timestamp_s = double(kT0 + 100);
  auto writer = store.training().OpenWriter("w-3", "pod-3/trainer");
  ASSERT_TRUE(writer.ok()) << writer.status();
  Status st = writer->Write(records, {&checkpoint, 1});
  ASSERT_TRUE(st.ok()) << st;
}

// The API of cluster "lab" (default page size 2) over a fresh seeded
// store, with the store's sample history as its time series.
class ApiFixture : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { Start(""); }

  void Start(std::string token, bool with_series = true) {
    server_.reset();
    series_.reset();
    store_.reset();
    db_ = std::make_unique<TestDatabase>(GetParam());
    ASSERT_FALSE(db_->url().empty());
    auto store = Store::Open(db_->url());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    Seed(*store_);
    SeedSeries(*store_);
    SeedTraining(*store_);
    if (with_series) series_ = NewSampleHistorySource(store_.get());
    HttpServerOptions options;
    options.listen = "127.0.0.1:0";
    options.bearer_token = std::move(token);
    auto server = HttpServer::Create(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    ApiOptions api;
    api.cluster = "lab";
    api.default_page_size = 2;
    ASSERT_TRUE(
        AddApiRoutes(store_.get(), series_.get(), api, server_.get()).ok());
    ASSERT_TRUE(server_->Start().ok());
  }

  void TearDown() override {
    server_.reset();
    series_.reset();
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
    rapidjson::Document data;
    if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("data"))
      return data;
    EXPECT_EQ(doc["code"].GetInt(), 0);
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

  // No body returned so far holds a secret or a secret-looking field.
  void ExpectNoSecrets() {
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

  std::unique_ptr<TestDatabase> db_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<TimeSeriesSource> series_;
  std::unique_ptr<HttpServer> server_;
  std::vector<std::string> bodies_;
};

}  // namespace lens::test

#endif  // LENS_TEST_API_API_TEST_ENV_H_
