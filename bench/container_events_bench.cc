// The node -> lens-jobs container event pipeline: ContainerEventSender ->
// gRPC (loopback) -> ContainerEventServer -> Store (SQLite and PostgreSQL).
//
// BM_PipelineThroughput: 5,000 changes published at once, timed until the
//   server has stored and acked them all (budget: >= 5,000 events/s).
// BM_PipelineLatency: 1,000 events/s paced for 3 s; per event, publish ->
//   acked (stored) latency; reports p50/p99 in ms (budget: p99 <= 100 ms).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

#include "bench_stores.h"
#include "container_events/container_events.h"
#include "lens/store.h"

namespace {

std::string g_sqlite_url;
std::string g_pg_url;

lens::ContainerChange Change(int container, int step) {
  using T = lens::ContainerEventType;
  using S = lens::ContainerState;
  static constexpr T kTypes[] = {T::kCreate, T::kStart, T::kExit, T::kDelete};
  static constexpr S kStates[] = {S::kCreated, S::kRunning, S::kExited,
                                  S::kDeleted};
  lens::ContainerChange c;
  const auto now = std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
  c.container.container_id = "c" + std::to_string(container);
  c.container.node = "bench-node";
  c.container.runtime_namespace = "k8s.io";
  c.container.pod_uid = "uid-" + std::to_string(container / 4);
  c.container.pod_name = "trainer-" + std::to_string(container / 4);
  c.container.pod_namespace = "ml";
  c.container.container_name = "main";
  c.container.image = "registry.local/train:1";
  c.container.state = kStates[step % 4];
  c.container.created_at = now;
  c.container.updated_at = now;
  c.container.devices.push_back({lens::DeviceKind::kGpu,
                                 "SER" + std::to_string(container % 8),
                                 "0000:11:00.0", "pod-resources"});
  c.event.container_id = c.container.container_id;
  c.event.node = "bench-node";
  c.event.event_type = kTypes[step % 4];
  c.event.at = now + std::chrono::microseconds(step);
  return c;
}

struct Pipeline {
  std::unique_ptr<lens::Store> store;
  std::unique_ptr<lens::ContainerEventServer> server;
  std::unique_ptr<lens::ContainerEventSender> sender;
};

std::unique_ptr<Pipeline> StartPipeline(const std::string& url,
                                        benchmark::State& state) {
  auto p = std::make_unique<Pipeline>();
  auto store = lens::Store::Open(url);
  if (!store.ok()) {
    state.SkipWithError(store.status().message().c_str());
    return nullptr;
  }
  p->store = std::move(*store);
  lens::ContainerEventServerOptions so;
  so.listen = "127.0.0.1:0";
  p->server = std::make_unique<lens::ContainerEventServer>(so, p->store.get());
  if (!p->server->Start().ok()) {
    state.SkipWithError("server did not start");
    return nullptr;
  }
  lens::ContainerEventSenderOptions o;
  o.target = "127.0.0.1:" + std::to_string(p->server->port());
  o.node = "bench-node";
  o.max_buffered = 100000;
  p->sender = std::make_unique<lens::ContainerEventSender>(o);
  (void)p->sender->Start();
  p->sender->PublishSnapshot({});
  p->sender->Flush(std::chrono::seconds(30));
  return p;
}

const std::string& Url(benchmark::State& state) {
  return state.range(0) == 0 ? g_sqlite_url : g_pg_url;
}

void BM_PipelineThroughput(benchmark::State& state) {
  if (Url(state).empty()) return state.SkipWithError("no PostgreSQL");
  auto p = StartPipeline(Url(state), state);
  if (!p) return;
  constexpr int kEvents = 5000;
  int round = 0;
  for (auto _ : state) {
    for (int i = 0; i < kEvents; ++i) {
      p->sender->Publish(Change(round * 1000 + i / 4, i));
    }
    if (!p->sender->Flush(std::chrono::seconds(120))) {
      state.SkipWithError("not all events were acked in 120 s");
      return;
    }
    ++round;
  }
  state.SetItemsProcessed(state.iterations() * kEvents);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kEvents),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PipelineThroughput)
    ->ArgName("pg")
    ->Arg(0)
    ->Arg(1)
    ->Iterations(3)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_PipelineLatency(benchmark::State& state) {
  if (Url(state).empty()) return state.SkipWithError("no PostgreSQL");
  auto p = StartPipeline(Url(state), state);
  if (!p) return;
  constexpr int kRate = 1000;
  constexpr int kEvents = 3 * kRate;
  std::vector<double> latencies_ms;
  for (auto _ : state) {
    std::vector<uint64_t> seq(kEvents);
    std::vector<std::chrono::steady_clock::time_point> sent(kEvents);
    std::vector<std::chrono::steady_clock::time_point> acked(kEvents);
    std::atomic<int> published{0};
    // Watches the cumulative ack and stamps every message it covers.
    std::thread watcher([&] {
      int next = 0;
      while (next < kEvents) {
        const uint64_t a = p->sender->stats().acked;
        const auto now = std::chrono::steady_clock::now();
        while (next < published.load() && seq[next] <= a) acked[next++] = now;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kEvents; ++i) {
      std::this_thread::sleep_until(
          start + std::chrono::microseconds(i * 1000000LL / kRate));
      sent[i] = std::chrono::steady_clock::now();
      seq[i] = p->sender->Publish(Change(50000 + i / 4, i));
      published.store(i + 1);
    }
    watcher.join();
    for (int i = 0; i < kEvents; ++i) {
      latencies_ms.push_back(
          std::chrono::duration<double, std::milli>(acked[i] - sent[i])
              .count());
    }
  }
  std::sort(latencies_ms.begin(), latencies_ms.end());
  state.counters["p50_ms"] = latencies_ms[latencies_ms.size() / 2];
  state.counters["p99_ms"] = latencies_ms[latencies_ms.size() * 99 / 100];
  state.counters["max_ms"] = latencies_ms.back();
}
BENCHMARK(BM_PipelineLatency)
    ->ArgName("pg")
    ->Arg(0)
    ->Arg(1)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  return lens::bench::RunWithStores(argc, argv, "container_events_bench",
                                    &g_sqlite_url, &g_pg_url);
}
