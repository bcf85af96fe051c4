// Store hot paths on SQLite (a temp file) and PostgreSQL (a server this
// program starts on loopback, as the tests do):
//   BM_BatchUpsertIterations  TrainingWriter batches of 1,000 Megatron-shaped
//                             iteration records, one transaction each
//                             (budget: >= 100k rows/s on both)
//   BM_SingleRowUpsert        one pod upsert per transaction (p50/p99)
//   BM_PointLookup            GetPod by uid among 10,000 pods (p50/p99)
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

std::vector<lens::IterationRecord> Records(int64_t first, int n) {
  std::vector<lens::IterationRecord> out(n);
  for (int i = 0; i < n; ++i) {
    auto& r = out[i];
    r.run = 1;
    r.iteration = first + i;
    r.line = static_cast<uint64_t>(first + i);
    r.format = lens::TrainingFormat::kMegatron;
    r.timestamp_s = 1.7e9 + static_cast<double>(first + i);
    using F = lens::IterationField;
    r.Set(F::kTargetIteration, 500000);
    r.Set(F::kConsumedSamples, static_cast<double>((first + i) * 1024));
    r.Set(F::kElapsedMs, 8100.5 + i % 7);
    r.Set(F::kLearningRate, 2.9e-4);
    r.Set(F::kGlobalBatchSize, 1024);
    r.Set(F::kLoss, 3.5 - i * 1e-5);
    r.Set(F::kLossScale, 1.0);
    r.Set(F::kGradNorm, 0.72);
    r.Set(F::kTflopsPerGpu, 395.3);
    r.Set(F::kTokensPerSPerGpu, 12009.0);
  }
  return out;
}

void Percentiles(benchmark::State& state, std::vector<double>& us) {
  if (us.empty()) return;
  std::sort(us.begin(), us.end());
  state.counters["p50_us"] = us[us.size() / 2];
  state.counters["p99_us"] = us[std::min(us.size() - 1, us.size() * 99 / 100)];
}

void BM_BatchUpsertIterations(benchmark::State& state) {
  const int backend = static_cast<int>(state.range(0));
  if (Url(backend).empty()) return state.SkipWithError("no PostgreSQL");
  lens::Store& store = Open(Url(backend));
  static int workload = 0;
  auto writer = store.training().OpenWriter(
      "bench-" + std::to_string(workload++), "bench");
  constexpr int kBatch = 1000;
  int64_t next = 1;
  double write_s = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto records = Records(next, kBatch);
    next += kBatch;
    state.ResumeTiming();
    const auto t0 = Clock::now();
    lens::Status st = writer->Write(records, {});
    write_s += std::chrono::duration<double>(Clock::now() - t0).count();
    if (!st.ok()) return state.SkipWithError(st.message().c_str());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  const double rows_per_s = static_cast<double>(state.iterations() * kBatch) /
                            std::max(write_s, 1e-9);
  const double budget = 100000;
  // Google Benchmark first runs a few iterations to size the run; only a run
  // of at least 20 batches is long enough to judge (the first batch also
  // prepares the statements).
  if (state.iterations() >= 20 && rows_per_s < budget) {
    static std::string msg;
    msg = "below budget: " + std::to_string(static_cast<int>(rows_per_s)) +
          " rows/s < " + std::to_string(static_cast<int>(budget));
    state.SkipWithError(msg.c_str());
  }
}

void BM_SingleRowUpsert(benchmark::State& state) {
  const int backend = static_cast<int>(state.range(0));
  if (Url(backend).empty()) return state.SkipWithError("no PostgreSQL");
  lens::Store& store = Open(Url(backend));
  lens::PodRecord p;
  p.name = "trainer";
  p.namespace_name = "bench";
  p.node = "node-1";
  p.phase = "Running";
  p.running = true;
  std::vector<double> us;
  int i = 0;
  for (auto _ : state) {
    p.uid = "single-" + std::to_string(i++ % 1000);
    p.updated_at =
        lens::Timestamp(std::chrono::microseconds(1700000000000000 + i));
    const auto t0 = Clock::now();
    lens::Status st = store.pods().UpsertPods({&p, 1});
    us.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (!st.ok()) return state.SkipWithError(st.message().c_str());
  }
  state.SetItemsProcessed(state.iterations());
  Percentiles(state, us);
}

void BM_PointLookup(benchmark::State& state) {
  const int backend = static_cast<int>(state.range(0));
  if (Url(backend).empty()) return state.SkipWithError("no PostgreSQL");
  lens::Store& store = Open(Url(backend));
  static bool seeded[2] = {false, false};
  if (!seeded[backend]) {
    std::vector<lens::PodRecord> pods(10000);
    for (int i = 0; i < 10000; ++i) {
      pods[i].uid = "lookup-" + std::to_string(i);
      pods[i].name = pods[i].uid;
      pods[i].namespace_name = "bench";
      pods[i].updated_at =
          lens::Timestamp(std::chrono::microseconds(1700000000000000));
    }
    if (!store.pods().UpsertPods(pods).ok()) return state.SkipWithError("seed");
    seeded[backend] = true;
  }
  std::vector<double> us;
  int i = 0;
  for (auto _ : state) {
    const std::string uid = "lookup-" + std::to_string((i++ * 7919) % 10000);
    const auto t0 = Clock::now();
    auto pod = store.pods().GetPod(uid);
    us.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (!pod.ok()) return state.SkipWithError(pod.status().message().c_str());
    benchmark::DoNotOptimize(pod->name);
  }
  state.SetItemsProcessed(state.iterations());
  Percentiles(state, us);
}

BENCHMARK(BM_BatchUpsertIterations)
    ->ArgName("pg")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SingleRowUpsert)
    ->ArgName("pg")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PointLookup)
    ->ArgName("pg")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  return lens::bench::RunWithStores(argc, argv, "store_bench", &g_sqlite_url,
                                    &g_pg_url);
}
