// The cluster the telemetry tests enrich against, as the controller, the
// container stream and lens-jobs would have stored it, matching the
// exporter fixtures (test/fixtures/telemetry/*.prom): node-c's H100s as
// dcgm-exporter labels them, node-a's MI300X as the AMD device metrics
// exporter does; small remote-write helpers; reading back what
// VictoriaMetrics exported; and the fixture of the service tests.
#ifndef LENS_TEST_TELEMETRY_TELEMETRY_TESTING_H_
#define LENS_TEST_TELEMETRY_TELEMETRY_TESTING_H_

#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "command.h"
#include "lens/store.h"
#include "service/telemetry_service.h"
#include "telemetry/remote_write.h"
#include "victoria_metrics.h"

namespace lens::telemetry::testing {

inline Timestamp AtMs(int64_t ms) {
  return Timestamp(std::chrono::milliseconds(ms));
}

inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline PodRecord Pod(std::string uid, std::string name, std::string node,
                     std::string owner, int64_t start_ms,
                     std::optional<int64_t> end_ms = std::nullopt) {
  PodRecord p;
  p.uid = std::move(uid);
  p.name = std::move(name);
  p.namespace_name = "ml";
  p.node = std::move(node);
  p.owner_uid = std::move(owner);
  p.phase = end_ms ? "Succeeded" : "Running";
  p.running = !end_ms;
  p.gpu_allocated = 1;
  p.created_at = AtMs(start_ms - 5000);
  p.started_at = AtMs(start_ms);
  if (end_ms) p.ended_at = AtMs(*end_ms);
  p.updated_at = AtMs(end_ms.value_or(start_ms));
  return p;
}

inline ContainerRecord Container(std::string id, std::string pod_uid,
                                 std::string node, std::string device_key,
                                 int64_t start_ms,
                                 std::optional<int64_t> end_ms = std::nullopt) {
  ContainerRecord c;
  c.container_id = std::move(id);
  c.node = std::move(node);
  c.pod_uid = std::move(pod_uid);
  c.container_name = "trainer";
  c.state = end_ms ? ContainerState::kExited : ContainerState::kRunning;
  c.created_at = AtMs(start_ms - 1000);
  c.started_at = AtMs(start_ms);
  if (end_ms) c.finished_at = AtMs(*end_ms);
  c.updated_at = AtMs(end_ms.value_or(start_ms));
  c.devices.push_back(
      {DeviceKind::kGpu, std::move(device_key), "", "pod-resources"});
  return c;
}

inline WorkloadRecord Workload(std::string uid, std::string kind,
                               std::string name, int64_t created_ms) {
  WorkloadRecord w;
  w.uid = std::move(uid);
  w.kind = std::move(kind);
  w.name = std::move(name);
  w.namespace_name = "ml";
  w.status = "Running";
  w.created_at = w.updated_at = AtMs(created_ms);
  return w;
}

// node-c: two H100s (the fixture's UUIDs and PCI addresses); node-a: two
// MI300X (serials). Workloads: PyTorchJob llama-70b (worker-0 on node-c
// GPU 0, worker-1 on node-a GPU 2) and Job bert-ft (bert-0 on node-c GPU 1,
// a pod dcgm-exporter does not name). node-a GPU 3 is free. Everything
// started at `t0_ms`.
inline void SeedCluster(Store& store, int64_t t0_ms) {
  for (const char* name : {"node-a", "node-c"}) {
    NodeRecord node;
    node.name = name;
    node.updated_at = AtMs(t0_ms);
    ASSERT_TRUE(store.nodes().UpsertNode(node).ok());
  }
  std::vector<GpuDeviceRecord> h100(2);
  h100[0].gpu_index = 0;
  h100[0].serial = "1655022005470";
  h100[0].uuid = "GPU-b66ea1a7-1f45-5cad-ffaf-d115903e98bf";
  h100[0].bdf = "0000:19:00.0";
  h100[1].gpu_index = 1;
  h100[1].serial = "1655022005473";
  h100[1].uuid = "GPU-4aa8834f-cd01-d0fc-b817-549e6c705ba3";
  h100[1].bdf = "0000:3b:00.0";
  ASSERT_TRUE(store.nodes().SyncGpuDevices("node-c", h100, AtMs(t0_ms)).ok());
  std::vector<GpuDeviceRecord> mi300(2);
  mi300[0].gpu_index = 2;
  mi300[0].serial = "692353001198";
  mi300[0].bdf = "0000:0c:00.0";
  mi300[1].gpu_index = 3;
  mi300[1].serial = "692454001235";
  mi300[1].bdf = "0000:0d:00.0";
  ASSERT_TRUE(store.nodes().SyncGpuDevices("node-a", mi300, AtMs(t0_ms)).ok());
  const WorkloadRecord workloads[] = {
      Workload("w-llama", "PyTorchJob", "llama-70b", t0_ms - 10000),
      Workload("w-bert", "Job", "bert-ft", t0_ms - 10000)};
  ASSERT_TRUE(store.pods().UpsertWorkloads(workloads).ok());
  const PodRecord pods[] = {
      Pod("p-w0", "llama-70b-worker-0", "node-c", "w-llama", t0_ms),
      Pod("p-w1", "llama-70b-worker-1", "node-a", "w-llama", t0_ms),
      Pod("p-bert", "bert-0", "node-c", "w-bert", t0_ms)};
  ASSERT_TRUE(store.pods().UpsertPods(pods).ok());
  const ContainerRecord containers[] = {
      Container("c-w0", "p-w0", "node-c", "1655022005470", t0_ms),
      Container("c-w1", "p-w1", "node-a", "692353001198", t0_ms),
      Container("c-bert", "p-bert", "node-c", "1655022005473", t0_ms)};
  ASSERT_TRUE(store.containers().UpsertContainers(containers).ok());
}

// One series of a remote-write request.
struct Series {
  std::vector<std::pair<std::string, std::string>> labels;  // sorted by name
  std::vector<WireSample> samples;
};

// The snappy body of a WriteRequest of `series`.
inline std::string Encode(const std::vector<Series>& series) {
  RemoteWriteEncoder encoder;
  for (const Series& s : series) {
    std::vector<WireLabel> labels;
    for (const auto& [k, v] : s.labels) labels.push_back({k, v});
    encoder.AddSeries(labels, s.samples);
  }
  return encoder.Finish();
}

// One exported series: its labels and (timestamp ms, value) points.
struct Exported {
  std::map<std::string, std::string> labels;
  std::vector<std::pair<int64_t, double>> points;
};

inline std::vector<Exported> ParseExport(const std::string& text) {
  std::vector<Exported> out;
  for (const std::string& line : test::Lines(text)) {
    rapidjson::Document doc;
    doc.Parse(line.c_str());
    if (doc.HasParseError() || !doc.IsObject()) continue;
    Exported e;
    for (const auto& m : doc["metric"].GetObject()) {
      e.labels[m.name.GetString()] = m.value.GetString();
    }
    const auto& values = doc["values"].GetArray();
    const auto& stamps = doc["timestamps"].GetArray();
    for (rapidjson::SizeType i = 0; i < values.Size(); ++i) {
      e.points.emplace_back(stamps[i].GetInt64(), values[i].GetDouble());
    }
    out.push_back(std::move(e));
  }
  return out;
}

template <typename F>
inline bool Eventually(F done,
                       std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return done();
}

}  // namespace lens::telemetry::testing

namespace lens::telemetry {

// A store seeded with SeedCluster, a real VictoriaMetrics, and the service
// under test (StartService) forwarding to it.
class TelemetryServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test::VictoriaMetrics::Binary().empty()) {
      GTEST_SKIP()
          << "victoria-metrics not installed (scripts/install-deps.sh)";
    }
    dir_ = ::testing::TempDir() + "telemetry-" + std::to_string(::getpid()) +
           "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    t0_ = testing::NowMs() - 60000;
    auto store = Store::Open("sqlite://" + dir_ + "/lens.db");
    ASSERT_TRUE(store.ok()) << store.status();
    testing::SeedCluster(**store, t0_);
    auto vm = test::VictoriaMetrics::Start();
    ASSERT_TRUE(vm.ok()) << vm.status();
    vm_ = std::move(*vm);
  }
  void TearDown() override {
    service_.reset();
    vm_.reset();
    std::filesystem::remove_all(dir_);
  }

  TelemetryServiceOptions Options() const {
    TelemetryServiceOptions o;
    o.database_url = "sqlite://" + dir_ + "/lens.db";
    o.http.listen = "127.0.0.1:0";
    o.telemetry.forward.push_back({.url = vm_->write_url()});
    o.telemetry.queue_dir = dir_ + "/queue";
    o.telemetry.ownership_refresh = std::chrono::milliseconds(200);
    return o;
  }
  void StartService(const TelemetryServiceOptions& o) {
    auto service = TelemetryService::Start(o);
    ASSERT_TRUE(service.ok()) << service.status();
    service_ = std::move(*service);
    const std::string url = service_->http_url();
    port_ = std::stoi(url.substr(url.rfind(':') + 1));
  }
  httplib::Result Post(const std::string& path, const std::string& body) {
    httplib::Client client("127.0.0.1", port_);
    httplib::Headers headers = {{"Content-Encoding", "snappy"}};
    return client.Post(path, headers, body, "application/x-protobuf");
  }
  std::vector<testing::Exported> Export(const std::string& match) {
    auto text = vm_->Export(match);
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? testing::ParseExport(*text)
                     : std::vector<testing::Exported>{};
  }

  std::string dir_;
  int64_t t0_ = 0;
  std::unique_ptr<test::VictoriaMetrics> vm_;
  std::unique_ptr<TelemetryService> service_;
  int port_ = 0;
};

}  // namespace lens::telemetry

#endif  // LENS_TEST_TELEMETRY_TELEMETRY_TESTING_H_
