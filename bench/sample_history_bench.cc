// The store's sample history (embedded mode's time series), on SQLite (a
// temp file) and PostgreSQL (a server this program starts on loopback, as
// the tests do):
//   BM_AppendSamples  AppendSamples batches of 10,000 samples over 1,000
//                     series (8 labels each, 10 steps per series, as remote
//                     write lists them: series by series), one transaction
//                     each; the series are known after the first batch
//                     (budget: >= 100k samples/s on SQLite)
//   BM_QuerySamples   one metric's 100 series over an hour (240 points each)
// A run below its budget is reported as an error ("below budget").
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_stores.h"
#include "lens/store.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kSeries = 1000;
constexpr int kSteps = 10;  // samples per series per batch
constexpr int64_t kStepMs = 15000;
constexpr int64_t kT0Ms = 1700000040000;

std::string g_sqlite_url;
std::string g_pg_url;

lens::Store& Open(const std::string& url) {
  static std::map<std::string, std::unique_ptr<lens::Store>> stores;
  auto& s = stores[url];
  if (!s) {
    auto opened = lens::Store::Open(url);
    if (!opened.ok()) {
      fprintf(stderr, "open %s: %s\n", url.c_str(),
              opened.status().message().c_str());
      std::exit(1);
    }
    s = std::move(*opened);
  }
  return *s;
}

const std::string& Url(int backend) {
  return backend == 0 ? g_sqlite_url : g_pg_url;
}

// Ten GPU metrics of 100 GPUs on 13 nodes, with the labels the telemetry
// processor writes after enrichment.
std::vector<lens::MetricSample> Batch(int64_t first_step) {
  static const char* kMetrics[] = {"gpu_utilization",   "gpu_memory_used_bytes",
                                   "gpu_power_watts",   "gpu_temperature_c",
                                   "gpu_sm_clock_hz",   "gpu_mem_clock_hz",
                                   "gpu_ecc_errors",    "gpu_pcie_rx_bytes",
                                   "gpu_pcie_tx_bytes", "gpu_xgmi_bytes"};
  std::vector<lens::MetricSample> out;
  out.reserve(kSeries * kSteps);
  for (int s = 0; s < kSeries; ++s) {
    const int gpu = s % 100;
    const std::string node = "node-" + std::to_string(gpu / 8);
    lens::MetricSample base;
    base.metric = kMetrics[s / 100];
    base.labels = {{"job", "lens-node-agent"},
                   {"instance", node + ":8989"},
                   {"node", node},
                   {"gpu", std::to_string(gpu % 8)},
                   {"serial", "PHB" + std::to_string(700000 + gpu)},
                   {"namespace", "ml"},
                   {"pod", "trainer-" + std::to_string(gpu / 8)},
                   {"workload_uid", "9f1c2d3e-0000-4000-8000-00000000002a"}};
    for (int k = 0; k < kSteps; ++k) {
      base.timestamp_ms = kT0Ms + (first_step + k) * kStepMs + 123;
      base.value = static_cast<double>(s * 7 + k) * 0.01;
      out.push_back(base);
    }
  }
  return out;
}

void BM_AppendSamples(benchmark::State& state) {
  const int backend = static_cast<int>(state.range(0));
  if (Url(backend).empty()) return state.SkipWithError("no PostgreSQL");
  lens::Store& store = Open(Url(backend));
  static int64_t step[2] = {0, 0};
  // The series become known once, as after a processor's first request.
  if (step[backend] == 0) {
    auto warm = Batch(step[backend]);
    step[backend] += kSteps;
    if (!store.samples().AppendSamples(warm).ok()) {
      return state.SkipWithError("warm-up append failed");
    }
  }
  double write_s = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto batch = Batch(step[backend]);
    step[backend] += kSteps;
    state.ResumeTiming();
    const auto t0 = Clock::now();
    lens::Status st = store.samples().AppendSamples(batch);
    write_s += std::chrono::duration<double>(Clock::now() - t0).count();
    if (!st.ok()) return state.SkipWithError(st.message().c_str());
  }
  const int64_t samples = state.iterations() * kSeries * kSteps;
  state.SetItemsProcessed(samples);
  const double per_s = static_cast<double>(samples) / std::max(write_s, 1e-9);
  state.counters["samples_per_s"] = per_s;
  // Only a run of at least 10 batches is long enough to judge.
  if (backend == 0 && state.iterations() >= 10 && per_s < 100000) {
    static std::string msg;
    msg = "below budget: " + std::to_string(static_cast<int>(per_s)) +
          " samples/s < 100000";
    state.SkipWithError(msg.c_str());
  }
}

void BM_QuerySamples(benchmark::State& state) {
  const int backend = static_cast<int>(state.range(0));
  if (Url(backend).empty()) return state.SkipWithError("no PostgreSQL");
  // A store of its own, filled with an hour of all 1,000 series.
  static std::map<int, std::unique_ptr<lens::Store>> stores;
  auto& store = stores[backend];
  if (!store) {
    std::string url = Url(backend);
    if (backend == 0) url += ".query";
    auto opened = lens::Store::Open(url);
    if (!opened.ok()) return state.SkipWithError("open");
    store = std::move(*opened);
    for (int64_t step = 0; step < 240; step += kSteps) {
      if (!store->samples().AppendSamples(Batch(step)).ok()) {
        return state.SkipWithError("fill");
      }
    }
  }
  lens::SampleQuery q;
  q.metric = "gpu_power_watts";
  q.from_ms = kT0Ms;
  q.to_ms = kT0Ms + 240 * kStepMs;
  int64_t points = 0;
  for (auto _ : state) {
    auto got = store->samples().QuerySamples(q);
    if (!got.ok()) return state.SkipWithError(got.status().message().c_str());
    for (const auto& s : *got) points += static_cast<int64_t>(s.points.size());
  }
  state.SetItemsProcessed(points);
}

BENCHMARK(BM_AppendSamples)
    ->ArgName("pg")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_QuerySamples)
    ->ArgName("pg")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  return lens::bench::RunWithStores(argc, argv, "sample_history_bench",
                                    &g_sqlite_url, &g_pg_url);
}
