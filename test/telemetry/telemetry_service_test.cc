// lens-telemetry between real peers: a real Prometheus (and a real vmagent)
// scraping exporter-shaped fixtures and remote-writing to the service, a
// real VictoriaMetrics as the forward target, queried for what arrived.
#include "lens/telemetry_service.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <thread>

#include "command.h"
#include "loopback_traffic.h"
#include "telemetry_testing.h"
#include "victoria_metrics.h"

namespace lens::telemetry {
namespace {

namespace fs = std::filesystem;
using namespace testing;  // NOLINT: the helpers of telemetry_testing.h

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
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    t0_ = NowMs() - 60000;
    auto store = Store::Open("sqlite://" + dir_ + "/lens.db");
    ASSERT_TRUE(store.ok()) << store.status();
    SeedCluster(**store, t0_);
    auto vm = test::VictoriaMetrics::Start();
    ASSERT_TRUE(vm.ok()) << vm.status();
    vm_ = std::move(*vm);
  }
  void TearDown() override {
    service_.reset();
    vm_.reset();
    fs::remove_all(dir_);
  }

  TelemetryServiceOptions Options() const {
    TelemetryServiceOptions o;
    o.database_url = "sqlite://" + dir_ + "/lens.db";
    o.http.listen = "127.0.0.1:0";
    o.telemetry.forward.push_back({vm_->write_url()});
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
  std::vector<Exported> Export(const std::string& match) {
    auto text = vm_->Export(match);
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? ParseExport(*text) : std::vector<Exported>{};
  }

  std::string dir_;
  int64_t t0_ = 0;
  std::unique_ptr<test::VictoriaMetrics> vm_;
  std::unique_ptr<TelemetryService> service_;
  int port_ = 0;
};

// The exporter fixtures served the way the exporters serve them.
std::unique_ptr<httplib::Server> ServeFixtures(int* port) {
  auto server = std::make_unique<httplib::Server>();
  for (const auto& [path, file] :
       {std::pair{"/dcgm", "dcgm_exporter.prom"},
        std::pair{"/amd", "amd_device_metrics_exporter.prom"}}) {
    const std::string text =
        test::ReadFile(std::string(LENS_FIXTURES_DIR) + "/telemetry/" + file);
    server->Get(path, [text](const httplib::Request&, httplib::Response& r) {
      r.set_content(text, "text/plain; version=0.0.4");
    });
  }
  *port = server->bind_to_any_port("127.0.0.1");
  return server;
}

std::string ScrapeConfigs(int exporter_port) {
  const std::string target = "127.0.0.1:" + std::to_string(exporter_port);
  return "scrape_configs:\n"
         "  - job_name: dcgm\n"
         "    metrics_path: /dcgm\n"
         "    static_configs: [{targets: ['" +
         target +
         "']}]\n"
         "  - job_name: amd\n"
         "    metrics_path: /amd\n"
         "    static_configs: [{targets: ['" +
         target + "']}]\n";
}

// What the fixtures' series must carry once through lens-telemetry.
void ExpectFixtureOwners(const std::vector<Exported>& dcgm,
                         const std::vector<Exported>& amd) {
  std::map<std::string, const Exported*> dcgm_by_gpu, amd_by_gpu;
  for (const Exported& e : dcgm) dcgm_by_gpu[e.labels.at("gpu")] = &e;
  for (const Exported& e : amd) amd_by_gpu[e.labels.at("gpu_id")] = &e;
  ASSERT_TRUE(dcgm_by_gpu.count("0") && dcgm_by_gpu.count("1"));
  ASSERT_TRUE(amd_by_gpu.count("2") && amd_by_gpu.count("3"));
  // By the pod dcgm-exporter names.
  const auto& g0 = dcgm_by_gpu["0"]->labels;
  EXPECT_EQ(g0.at("workload_name"), "llama-70b");
  EXPECT_EQ(g0.at("workload_kind"), "PyTorchJob");
  EXPECT_EQ(g0.at("workload_uid"), "w-llama");
  EXPECT_EQ(g0.at("workload_namespace"), "ml");
  EXPECT_EQ(g0.at("pod_uid"), "p-w0");
  // No pod label: by the GPU (dcgm's UUID and NVML-style PCI address).
  const auto& g1 = dcgm_by_gpu["1"]->labels;
  ASSERT_TRUE(g1.count("workload_name")) << "GPU 1 not enriched";
  EXPECT_EQ(g1.at("workload_name"), "bert-ft");
  EXPECT_EQ(g1.at("pod_uid"), "p-bert");
  // AMD: by pod, and a free GPU left as it came.
  EXPECT_EQ(amd_by_gpu["2"]->labels.at("workload_uid"), "w-llama");
  EXPECT_EQ(amd_by_gpu["2"]->labels.at("pod_uid"), "p-w1");
  EXPECT_FALSE(amd_by_gpu["3"]->labels.count("workload_uid"));
  EXPECT_FALSE(amd_by_gpu["3"]->labels.count("pod_uid"));
}

TEST_F(TelemetryServiceTest, RealPrometheusToVictoriaMetricsGainsWorkloads) {
  const std::string prometheus = test::FindBinary("prometheus");
  if (prometheus.empty()) GTEST_SKIP() << "prometheus not installed";
  StartService(Options());
  int exporter_port = 0;
  auto exporter = ServeFixtures(&exporter_port);
  std::thread serve([&] { exporter->listen_after_bind(); });
  const int web_port = test::FreeLoopbackPort();
  ASSERT_TRUE(test::WriteFile(dir_ + "/prometheus.yml",
                              "global: {scrape_interval: 1s}\n" +
                                  ScrapeConfigs(exporter_port) +
                                  "remote_write:\n"
                                  "  - url: http://127.0.0.1:" +
                                  std::to_string(port_) +
                                  "/api/v1/write\n"
                                  "    queue_config: {batch_send_deadline: 1s, "
                                  "min_backoff: 100ms, max_backoff: 1s}\n")
                  .ok());
  const pid_t pid = test::Spawn(
      {prometheus, "--config.file=" + dir_ + "/prometheus.yml",
       "--storage.tsdb.path=" + dir_ + "/prom",
       "--web.listen-address=127.0.0.1:" + std::to_string(web_port)},
      dir_ + "/prometheus.log");
  ASSERT_GT(pid, 0);
  std::vector<Exported> dcgm, amd;
  const bool arrived = Eventually([&] {
    dcgm = Export("DCGM_FI_DEV_GPU_UTIL");
    amd = Export("gpu_gfx_activity");
    return dcgm.size() >= 2 && amd.size() >= 2;
  });
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  exporter->stop();
  serve.join();
  ASSERT_TRUE(arrived) << test::ReadFile(dir_ + "/prometheus.log");
  ExpectFixtureOwners(dcgm, amd);
  // Prometheus' own labels and every exporter label came through.
  EXPECT_EQ(dcgm[0].labels.at("job"), "dcgm");
  EXPECT_EQ(dcgm[0].labels.at("modelName"), "NVIDIA H100 80GB HBM3");
  // A series Lens does not look at passes untouched.
  for (const Exported& e : Export("up")) {
    EXPECT_FALSE(e.labels.count("workload_uid"));
  }
}

TEST_F(TelemetryServiceTest, RealVmagentToVictoriaMetricsGainsWorkloads) {
  if (test::VictoriaMetrics::AgentBinary().empty()) {
    GTEST_SKIP() << "vmagent not installed (scripts/install-deps.sh)";
  }
  StartService(Options());
  int exporter_port = 0;
  auto exporter = ServeFixtures(&exporter_port);
  std::thread serve([&] { exporter->listen_after_bind(); });
  ASSERT_TRUE(
      test::WriteFile(dir_ + "/scrape.yml", "global: {scrape_interval: 1s}\n" +
                                                ScrapeConfigs(exporter_port))
          .ok());
  auto agent = test::VictoriaMetrics::StartAgent(
      {"-promscrape.config=" + dir_ + "/scrape.yml",
       "-remoteWrite.url=http://127.0.0.1:" + std::to_string(port_) +
           "/api/v1/write",
       "-remoteWrite.flushInterval=200ms"});
  ASSERT_TRUE(agent.ok()) << agent.status();
  std::vector<Exported> dcgm, amd;
  const bool arrived = Eventually([&] {
    dcgm = Export("DCGM_FI_DEV_GPU_UTIL");
    amd = Export("gpu_gfx_activity");
    return dcgm.size() >= 2 && amd.size() >= 2;
  });
  const std::string agent_log = (*agent)->log();
  agent->reset();
  exporter->stop();
  serve.join();
  ASSERT_TRUE(arrived) << agent_log;
  ExpectFixtureOwners(dcgm, amd);
}

// A GPU passed from one pod to another while its series streams: the
// samples before and after the handover carry each their own workload,
// whenever they arrive.
TEST_F(TelemetryServiceTest, OwnershipChangeMidStreamSplitsTheSeries) {
  auto store = Store::Open("sqlite://" + dir_ + "/lens.db");
  ASSERT_TRUE(store.ok());
  const int64_t handover = t0_ + 30000;
  // GPU 3 of node-a: held by eval-0 (bert-ft) until the handover, then by
  // worker-2 (llama-70b).
  const PodRecord pods[] = {
      Pod("p-eval", "eval-0", "node-a", "w-bert", t0_, handover),
      Pod("p-w2", "llama-70b-worker-2", "node-a", "w-llama", handover + 1)};
  ASSERT_TRUE((*store)->pods().UpsertPods(pods).ok());
  const ContainerRecord containers[] = {
      Container("c-eval", "p-eval", "node-a", "692454001235", t0_, handover),
      Container("c-w2", "p-w2", "node-a", "692454001235", handover + 1)};
  ASSERT_TRUE((*store)->containers().UpsertContainers(containers).ok());
  StartService(Options());
  // One series, samples every 5 s across the handover (none at the very
  // millisecond nobody held the GPU), in one request.
  Series s;
  s.labels = {{"__name__", "gpu_gfx_activity"},
              {"gpu_id", "3"},
              {"hostname", "node-a"},
              {"serial_number", "692454001235"}};
  for (int64_t ts = t0_ + 2500; ts <= t0_ + 57500; ts += 5000) {
    s.samples.push_back({static_cast<double>(ts - t0_), ts});
  }
  auto res = Post("/api/v1/write", Encode({s}));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 204) << res->body;
  std::vector<Exported> series;
  ASSERT_TRUE(Eventually([&] {
    series = Export("gpu_gfx_activity");
    size_t points = 0;
    for (const Exported& e : series) points += e.points.size();
    return points == s.samples.size();
  }));
  ASSERT_EQ(series.size(), 2u);
  for (const Exported& e : series) {
    const bool bert = e.labels.at("workload_uid") == "w-bert";
    for (const auto& [ts, v] : e.points) {
      EXPECT_EQ(bert, ts < handover) << ts;
    }
    EXPECT_EQ(e.labels.at("pod_uid"), bert ? "p-eval" : "p-w2");
  }
}

// Payloads the sender must not retry get 400 (sizes 413), and harm nothing:
// the next good request goes through.
TEST_F(TelemetryServiceTest, BadPayloadsAreRefusedAndHarmNothing) {
  StartService(Options());
  // A snappy header declaring 4 GiB (varint 0x80 0x80 0x80 0x80 0x10).
  const std::string huge_declared =
      std::string("\x80\x80\x80\x80\x10", 5) + std::string(64, 'x');
  Series many;
  many.labels.push_back({"__name__", "gpu_gfx_activity"});
  for (int i = 0; i < 1'000'000; ++i) {
    many.labels.push_back({"l" + std::to_string(1'000'000 + i), "v"});
  }
  many.samples.push_back({1, NowMs()});
  const std::string good_proto_cut = [] {
    Series s;
    s.labels = {{"__name__", "gpu_gfx_activity"}, {"gpu_id", "2"}};
    s.samples.push_back({1, NowMs()});
    RemoteWriteEncoder e;
    std::vector<WireLabel> labels;
    for (const auto& [k, v] : s.labels) labels.push_back({k, v});
    e.AddSeries(labels, s.samples);
    return e.proto().substr(0, e.proto().size() - 3);
  }();
  std::string truncated;
  {
    // A valid snappy block of a truncated WriteRequest.
    RemoteWriteEncoder e;
    e.AddExtra(good_proto_cut);
    truncated = e.Finish();
  }
  const struct {
    const char* what;
    std::string body;
    int status;
  } cases[] = {
      {"corrupt snappy", std::string("\x0a\xff\xff\xff garbage", 12), 400},
      {"truncated protobuf", truncated, 400},
      {"4 GiB declared", huge_declared, 413},
      {"a million labels", Encode({many}), 400},
      {"empty body", "", 400},
  };
  for (const auto& c : cases) {
    auto res = Post("/api/v1/write", c.body);
    ASSERT_TRUE(res) << c.what;
    EXPECT_EQ(res->status, c.status) << c.what << ": " << res->body;
    EXPECT_FALSE(res->body.empty()) << c.what;
  }
  // Remote write 2.0 is named as what it is.
  httplib::Client client("127.0.0.1", port_);
  auto v2 = client.Post("/api/v1/write", Encode({}),
                        "application/x-protobuf;proto=io.prometheus.write.v2."
                        "Request");
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->status, 415);
  Series s;
  s.labels = {{"__name__", "gpu_gfx_activity"},
              {"gpu_id", "2"},
              {"hostname", "node-a"},
              {"namespace", "ml"},
              {"pod", "llama-70b-worker-1"}};
  s.samples.push_back({42, NowMs()});
  auto res = Post("/prometheus", Encode({s}));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 204) << res->body;
  std::vector<Exported> got;
  ASSERT_TRUE(Eventually([&] {
    got = Export("gpu_gfx_activity");
    return !got.empty();
  }));
  EXPECT_EQ(got[0].labels.at("workload_uid"), "w-llama");
  // The caches show what the index holds.
  auto cache = client.Get("/pods/workload/cache");
  ASSERT_TRUE(cache);
  EXPECT_EQ(cache->status, 200);
  EXPECT_NE(cache->body.find("\"workload_name\":\"bert-ft\""),
            std::string::npos)
      << cache->body;
  auto pods = client.Get("/pods/cache?limit=10");
  ASSERT_TRUE(pods);
  EXPECT_NE(pods->body.find("\"pod\":\"llama-70b-worker-0\""),
            std::string::npos)
      << pods->body;
  EXPECT_NE(pods->body.find("\"device\":\"GPU-4aa8834f-cd01-d0fc-b817-"
                            "549e6c705ba3\""),
            std::string::npos);
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find(
                "lens_telemetry_samples_dropped_total{reason=\"bad_request\"} "
                "4"),
            std::string::npos)
      << metrics->body;
}

// The forward target away for a while: every request acknowledged
// meanwhile waits on disk and arrives once it is back; a queue that fills
// answers 503 with Retry-After rather than growing or dropping.
TEST_F(TelemetryServiceTest, TargetDownThenBackLosesNothingAndPushesBack) {
  TelemetryServiceOptions o = Options();
  o.telemetry.queue_max_bytes = 1 << 20;
  StartService(o);
  vm_->Stop();
  const int64_t base = NowMs() - 30000;
  int acknowledged = 0;
  bool pushed_back = false;
  std::string retry_after;
  // Requests of ~40 KB (poorly compressible values) until the queue says
  // no; each acknowledged one must arrive.
  for (int i = 0; i < 400 && !pushed_back; ++i) {
    Series s;
    s.labels = {{"__name__", "gpu_power_usage"},
                {"gpu_id", "2"},
                {"hostname", "node-a"},
                {"request", std::to_string(i)}};
    for (int k = 0; k < 3000; ++k) {
      s.samples.push_back(
          {static_cast<double>((i * 7919 + k * 104729) % 1000003), base + k});
    }
    auto res = Post("/api/v1/write", Encode({s}));
    ASSERT_TRUE(res);
    if (res->status == 204) {
      ++acknowledged;
    } else {
      ASSERT_EQ(res->status, 503) << res->body;
      retry_after = res->get_header_value("Retry-After");
      pushed_back = true;
    }
  }
  ASSERT_TRUE(pushed_back) << "the 1 MiB queue never filled";
  EXPECT_FALSE(retry_after.empty());
  ASSERT_GT(acknowledged, 3);
  ASSERT_TRUE(vm_->StartAgain().ok()) << vm_->log();
  std::vector<Exported> got;
  ASSERT_TRUE(Eventually(
      [&] {
        got = Export("gpu_power_usage");
        return static_cast<int>(got.size()) == acknowledged;
      },
      std::chrono::seconds(60)))
      << got.size() << " of " << acknowledged << " series arrived";
  for (const Exported& e : got) {
    EXPECT_EQ(e.points.size(), 3000u) << e.labels.at("request");
    EXPECT_EQ(e.labels.at("workload_name"), "llama-70b");
  }
  // Drained: requests are taken again.
  Series s;
  s.labels = {{"__name__", "gpu_power_usage"}, {"gpu_id", "9"}};
  s.samples.push_back({1, NowMs()});
  auto res = Post("/api/v1/write", Encode({s}));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 204);
}

}  // namespace
}  // namespace lens::telemetry
