// lens-telemetry between real peers: a real Prometheus (and a real vmagent)
// scraping exporter-shaped fixtures and remote-writing to the service, a
// real VictoriaMetrics as the forward target, queried for what arrived; and
// on one machine, the store's sample history instead.
#include "service/telemetry_service.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <thread>

#include "command.h"
#include "loopback_traffic.h"
#include "telemetry_testing.h"
#include "training_rows.h"
#include "victoria_metrics.h"

namespace lens::telemetry {
namespace {

namespace fs = std::filesystem;
using namespace testing;  // NOLINT: the helpers of telemetry_testing.h

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

// One machine, no VictoriaMetrics: the enriched series go to the store's
// sample history, one point per series per resolution, with the workload
// labels, and nothing else is kept.
TEST_F(TelemetryServiceTest, SampleHistoryKeepsTheEnrichedSeries) {
  TelemetryServiceOptions o = Options();
  o.telemetry.forward.clear();
  o.telemetry.sample_history = true;
  o.telemetry.sample_resolution = std::chrono::seconds(15);
  StartService(o);
  // The start of the first step after the pods started (and before now).
  const int64_t base = (t0_ / 15000 + 1) * 15000;
  Series gpu;
  gpu.labels = {{"__name__", "gpu_gfx_activity"},
                {"gpu_id", "2"},
                {"hostname", "node-a"},
                {"namespace", "ml"},
                {"pod", "llama-70b-worker-1"}};
  // Two samples in the first step (the later one stays), one in the next.
  gpu.samples = {{10, base + 1000}, {20, base + 9000}, {30, base + 16000}};
  Series other;  // not a looked-at metric
  other.labels = {{"__name__", "node_load1"}, {"instance", "node-a"}};
  other.samples = {{1.5, base + 1000}};
  auto res = Post("/api/v1/write", Encode({gpu, other}));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 204) << res->body;
  auto store = Store::Open("sqlite://" + dir_ + "/lens.db");
  ASSERT_TRUE(store.ok());
  SampleQuery q;
  q.metric = "gpu_gfx_activity";
  q.matchers = {{"workload_name", "llama-70b"}};
  q.from_ms = base - 60000;
  q.to_ms = base + 60000;
  auto got = (*store)->samples().QuerySamples(q);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  const SeriesSamples& series = got->front();
  std::map<std::string, std::string> labels(series.labels.begin(),
                                            series.labels.end());
  EXPECT_EQ(labels["pod_uid"], "p-w1");
  EXPECT_EQ(labels["workload_kind"], "PyTorchJob");
  ASSERT_EQ(series.points.size(), 2u);
  EXPECT_EQ(series.points[0].timestamp_ms, base);
  EXPECT_EQ(series.points[0].value, 20);
  EXPECT_EQ(series.points[1].timestamp_ms, base + 15000);
  EXPECT_EQ(series.points[1].value, 30);
  q.metric = "node_load1";
  q.matchers.clear();
  got = (*store)->samples().QuerySamples(q);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty()) << "only the looked-at series are kept";
}

// fluent-bit's records of a pod's training log: the iterations are stored
// under the pod's workload, its latest values exported, and the series
// gone once the workload ended (the ownership feed tells the logs path).
TEST_F(TelemetryServiceTest,
       LogsBecomeTrainingRowsAndGaugesEndWithTheWorkload) {
  {
    auto store = Store::Open("sqlite://" + dir_ + "/lens.db");
    ASSERT_TRUE(store.ok());
    const PodRecord pod =
        Pod("uid-trainer-0", "trainer-0", "node-a", "w-bert", t0_);
    ASSERT_TRUE((*store)->pods().UpsertPods(std::span(&pod, 1)).ok());
  }
  StartService(Options());
  std::string body;
  for (int i = 1; i <= 5; ++i) {
    body += Record("trainer-0", Iteration(i, 10.0 - i)) + "\n";
  }
  httplib::Client client("127.0.0.1", port_);
  auto res = client.Post("/v1/logs", body, "application/x-ndjson");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 204) << res->body;
  auto store = Store::Open("sqlite://" + dir_ + "/lens.db");
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(Eventually([&] {
    auto latest = (*store)->training().LatestIteration("w-bert");
    return latest.ok() && latest->iteration == 5;
  })) << "the iterations are stored under the pod's workload";
  const std::string gauge = "lens_training_iteration{workload_uid=\"w-bert\"";
  auto metrics = [&] {
    auto r = client.Get("/metrics");
    return r ? r->body : std::string();
  };
  ASSERT_TRUE(Eventually([&] {
    return metrics().find(gauge) != std::string::npos;
  })) << metrics();
  WorkloadRecord ended = Workload("w-bert", "Job", "bert-ft", t0_ - 10000);
  ended.status = "Succeeded";
  ended.ended_at = AtMs(NowMs());
  ended.updated_at = *ended.ended_at;
  ASSERT_TRUE((*store)->pods().UpdateWorkloadStatus(std::span(&ended, 1)).ok());
  EXPECT_TRUE(Eventually([&] {
    return metrics().find(gauge) == std::string::npos;
  })) << metrics();
}

}  // namespace
}  // namespace lens::telemetry
