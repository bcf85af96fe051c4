// lens-api's insight metrics: computed from the store and the time series on
// the service's own thread, so a scrape of /metrics answers at once whatever
// the store or the PromQL server do.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api_service_fixture.h"
#include "lens/store.h"
#include "service/api_service.h"

namespace lens {
namespace {

class ApiInsightMetricsTest : public test::ApiStoreTest {
 protected:
  // /metrics once the insight metrics were computed (their last success is
  // set), within 20 s.
  static std::optional<std::string> WaitComputed(httplib::Client& client) {
    const std::string unset =
        "lens_insight_metrics_last_success_timestamp_seconds 0\n";
    for (int i = 0; i < 400; ++i) {
      auto res = client.Get("/metrics");
      if (res && res->status == 200 &&
          res->body.find("lens_insight_metrics_last_success_timestamp_seconds"
                         " ") != std::string::npos &&
          res->body.find(unset) == std::string::npos) {
        return res->body;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return std::nullopt;
  }
};

// lens_gpu_idle_allocated: a running container holds GPUs 0 and 1 of
// gpu-node-7 since 50 minutes ago; GPU 0 read 1% every 30 s for the last 40
// minutes (idle for more than the 30-minute window), GPU 1 90%. One GPU of
// workload "llama" is idle now; a workload with no idle GPU has no series.
TEST_F(ApiInsightMetricsTest, CountIdleAllocatedGpusPerWorkload) {
  {
    auto store = Store::Open(database_);
    ASSERT_TRUE(store.ok()) << store.status();
    const auto now = std::chrono::time_point_cast<std::chrono::microseconds>(
        std::chrono::system_clock::now());
    NodeInventory inv;
    inv.node = "gpu-node-7";
    for (int i = 0; i < 2; ++i) {
      GpuDeviceRecord g;
      g.node = inv.node;
      g.gpu_index = i;
      g.serial = "S" + std::to_string(i);
      g.updated_at = now;
      inv.gpus.push_back(g);
    }
    ASSERT_TRUE((*store)->nodes().SyncNodeDevices({&inv, 1}, now).ok());
    WorkloadRecord w;
    w.uid = "w-llama";
    w.name = "llama";
    w.namespace_name = "ml";
    w.gpu_request = 8;
    w.created_at = w.updated_at = now - std::chrono::minutes(60);
    ASSERT_TRUE((*store)->pods().UpsertWorkloads({&w, 1}).ok());
    PodRecord p;
    p.uid = "p-1";
    p.name = "llama-0";
    p.namespace_name = "ml";
    p.node = inv.node;
    p.owner_uid = w.uid;
    p.running = true;
    p.created_at = p.updated_at = w.created_at;
    ASSERT_TRUE((*store)->pods().UpsertPods({&p, 1}).ok());
    ContainerRecord c;
    c.container_id = "c-1";
    c.node = inv.node;
    c.pod_uid = p.uid;
    c.state = ContainerState::kRunning;
    c.created_at = c.updated_at = now - std::chrono::minutes(50);
    c.started_at = c.created_at;
    c.devices = {{DeviceKind::kGpu, "S0", "", "pod-resources"},
                 {DeviceKind::kGpu, "S1", "", "pod-resources"}};
    ASSERT_TRUE((*store)->containers().UpsertContainers({&c, 1}).ok());
    std::vector<MetricSample> samples;
    const int64_t now_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(
            now.time_since_epoch())
            .count();
    for (int64_t t = now_ms - 40 * 60'000; t <= now_ms; t += 30'000) {
      for (int gpu = 0; gpu < 2; ++gpu) {
        samples.push_back({"lens_gpu_utilization_ratio",
                           {{"node", inv.node}, {"gpu", std::to_string(gpu)}},
                           t,
                           gpu == 0 ? 0.01 : 0.9});
      }
    }
    ASSERT_TRUE((*store)->samples().AppendSamples(samples).ok());
  }
  ApiServiceOptions o;
  o.database_url = database_;
  o.http.listen = "127.0.0.1:0";
  o.api.cluster = "lab";
  auto service = ApiService::Start(o);
  ASSERT_TRUE(service.ok()) << service.status();
  const std::string url = (*service)->http_url();
  httplib::Client client("127.0.0.1",
                         std::stoi(url.substr(url.rfind(':') + 1)));
  // Computed on the service's own thread, at once after the start.
  std::optional<std::string> body = WaitComputed(client);
  ASSERT_TRUE(body);
  EXPECT_NE(body->find("lens_gpu_idle_allocated{namespace=\"ml\","
                       "workload=\"llama\",workload_uid=\"w-llama\"}"
                       " 1\n"),
            std::string::npos)
      << *body;
  EXPECT_NE(body->find("lens_insight_metrics_errors_total 0"),
            std::string::npos);
  // Its goodput: created an hour ago, no iteration logged: 0, no MFU.
  EXPECT_NE(body->find("lens_workload_goodput_ratio{namespace=\"ml\","
                       "workload=\"llama\",workload_uid=\"w-llama\"}"
                       " 0\n"),
            std::string::npos);
  EXPECT_EQ(body->find("lens_workload_mfu_ratio{"), std::string::npos);
  // Stragglers looked for (8 GPUs requested), none found: its two GPUs
  // are too few to compare.
  EXPECT_NE(body->find("lens_workload_straggler_suspects{namespace="
                       "\"ml\",workload=\"llama\",workload_uid="
                       "\"w-llama\"} 0\n"),
            std::string::npos);
}

// A PromQL server that holds every query until the test releases it, then
// answers with no series.
class HeldPromQl {
 public:
  HeldPromQl() {
    server_.Post("/api/v1/query_range", [this](const httplib::Request&,
                                               httplib::Response& res) {
      std::unique_lock lock(mu_);
      ++held_;
      released_cv_.wait(lock, [this] { return released_; });
      res.set_content(R"({"status":"success","data":{"resultType":)"
                      R"("matrix","result":[]}})",
                      "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~HeldPromQl() {
    Release();
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  int held() {
    std::lock_guard lock(mu_);
    return held_;
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      released_ = true;
    }
    released_cv_.notify_all();
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = -1;
  std::mutex mu_;
  std::condition_variable released_cv_;
  bool released_ = false;  // GUARDED_BY(mu_)
  int held_ = 0;           // GUARDED_BY(mu_)
};

// While the PromQL server holds the computation's query, every scrape of
// /metrics answers (the computation waits on its own thread, not the
// scrape's) with the service's own series and the insights still unset;
// once the server answers, the insights are set.
TEST_F(ApiInsightMetricsTest, ScrapesAnswerWhileTheBackendHoldsTheQuery) {
  HeldPromQl promql;
  ASSERT_GT(promql.port(), 0);
  ApiServiceOptions o;
  o.database_url = database_;
  o.http.listen = "127.0.0.1:0";
  o.api.cluster = "lab";
  o.promql = PromQlSourceOptions{};
  o.promql->url = "http://127.0.0.1:" + std::to_string(promql.port());
  o.promql->timeout = std::chrono::seconds(120);  // held, never timed out
  auto service = ApiService::Start(o);
  ASSERT_TRUE(service.ok()) << service.status();
  // A failed assertion below must not leave the service's Stop() waiting on
  // a query still held.
  struct ReleaseFirst {
    HeldPromQl& promql;
    ~ReleaseFirst() { promql.Release(); }
  } release_first{promql};
  const std::string url = (*service)->http_url();
  httplib::Client client("127.0.0.1",
                         std::stoi(url.substr(url.rfind(':') + 1)));
  client.set_read_timeout(std::chrono::seconds(30));
  for (int i = 0; i < 600 && promql.held() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(promql.held(), 1) << "the computation never asked the backend";
  for (int i = 0; i < 5; ++i) {
    auto res = client.Get("/metrics");
    ASSERT_TRUE(res) << "scrape " << i << " waited for the held query";
    EXPECT_EQ(res->status, 200);
    EXPECT_NE(res->body.find("lens_api_info{cluster=\"lab\","
                             "series_backend=\"promql\"} 1"),
              std::string::npos);
    EXPECT_NE(res->body.find(
                  "lens_insight_metrics_last_success_timestamp_seconds 0\n"),
              std::string::npos)
        << res->body;
  }
  EXPECT_EQ(promql.held(), 1);  // still held: the scrapes did not wait
  promql.Release();
  std::optional<std::string> body = WaitComputed(client);
  ASSERT_TRUE(body);
  EXPECT_NE(body->find("lens_insight_metrics_errors_total 0\n"),
            std::string::npos)
      << *body;
  (*service)->Stop();
}

}  // namespace
}  // namespace lens
