// Insights at cluster scale (budget: each under 1 s of CPU):
//   BM_IdleAllocatedGpus  1,000 nodes x 8 GPUs, 24 h of 30 s utilisation
//                         samples (23 M points), two holders per GPU
//   BM_Goodput            1,000 workloads, each 24 h of iterations logged
//                         every 30 s in three runs (2.9 M records)
// A run over budget is reported as an error ("over budget").
#include <benchmark/benchmark.h>

#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include "lens/insights.h"

namespace {

constexpr int kNodes = 1000;
constexpr int kGpusPerNode = 8;
constexpr int64_t kT0Ms = 1764000000000;
constexpr int64_t kStepMs = 30000;
constexpr int kSteps = 24 * 3600 * 1000 / kStepMs;  // 2,880

lens::Timestamp AtMs(int64_t ms) {
  return lens::Timestamp(std::chrono::milliseconds(ms));
}

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

void Budget(benchmark::State& state, double cpu_s, double budget_s) {
  const double per = cpu_s / static_cast<double>(state.iterations());
  state.counters["cpu_s"] = per;
  if (per > budget_s) {
    static std::string msg;
    msg = "over budget: " + std::to_string(per) + " s CPU > " +
          std::to_string(budget_s);
    state.SkipWithError(msg.c_str());
  }
}

void BM_IdleAllocatedGpus(benchmark::State& state) {
  std::vector<lens::GpuHolding> holdings;
  std::vector<lens::GpuUtilizationSeries> series;
  series.reserve(kNodes * kGpusPerNode);
  for (int n = 0; n < kNodes; ++n) {
    const std::string node = "node-" + std::to_string(n);
    for (int g = 0; g < kGpusPerNode; ++g) {
      lens::GpuUtilizationSeries s{node, std::to_string(g), {}};
      s.points.reserve(kSteps);
      // Busy, with an idle hour every six hours on every third GPU.
      for (int k = 0; k < kSteps; ++k) {
        const bool idle = (n + g) % 3 == 0 && (k % 720) < 120;
        s.points.push_back({kT0Ms + k * kStepMs, idle ? 0.01 : 0.85});
      }
      series.push_back(std::move(s));
      for (int half = 0; half < 2; ++half) {
        lens::GpuHolding h;
        h.node = node;
        h.gpu = std::to_string(g);
        h.pod_uid = node + "-pod-" + std::to_string(half);
        h.workload_uid = "w-" + std::to_string(n % 100);
        h.from = AtMs(kT0Ms + half * 12 * 3600 * 1000LL);
        if (half == 0) h.to = AtMs(kT0Ms + 12 * 3600 * 1000LL);
        holdings.push_back(std::move(h));
      }
    }
  }
  lens::IdleGpuOptions options;
  options.now = AtMs(kT0Ms + kSteps * kStepMs);
  size_t episodes = 0;
  const double cpu0 = CpuSeconds();
  for (auto _ : state) {
    auto got = lens::FindIdleAllocatedGpus(holdings, series, options);
    if (!got.ok()) return state.SkipWithError(got.status().message().c_str());
    episodes = got->size();
    benchmark::DoNotOptimize(got->data());
  }
  Budget(state, CpuSeconds() - cpu0, 1.0);
  state.counters["episodes"] = static_cast<double>(episodes);
  state.SetItemsProcessed(state.iterations() * kNodes * kGpusPerNode * kSteps);
}

void BM_Goodput(benchmark::State& state) {
  std::vector<lens::GoodputInput> inputs(kNodes);
  const double t0 = kT0Ms / 1000.0;
  for (int n = 0; n < kNodes; ++n) {
    lens::GoodputInput& in = inputs[n];
    in.created_at = AtMs(kT0Ms);
    in.now = AtMs(kT0Ms + kSteps * kStepMs);
    in.gpu_model = "AMD Instinct MI300X";
    in.pods = {{"p", AtMs(kT0Ms), AtMs(kT0Ms + 60000), std::nullopt}};
    in.iterations.reserve(kSteps);
    // Three runs of 960 records, each resuming 50 iterations back.
    int64_t iteration = 0;
    for (int k = 0; k < kSteps; ++k) {
      lens::IterationRecord r;
      r.run = 1 + k / 960;
      if (k > 0 && k % 960 == 0) iteration -= 50;
      iteration += 10;
      r.iteration = iteration;
      r.timestamp_s = t0 + 120 + k * 30.0;
      r.Set(lens::IterationField::kTflopsPerGpu, 380 + k % 40);
      in.iterations.push_back(r);
    }
  }
  double productive = 0;
  const double cpu0 = CpuSeconds();
  for (auto _ : state) {
    for (const lens::GoodputInput& in : inputs) {
      auto got = lens::ComputeGoodput(in);
      if (!got.ok()) return state.SkipWithError(got.status().message().c_str());
      productive = got->total.productive_s;
    }
  }
  Budget(state, CpuSeconds() - cpu0, 1.0);
  state.counters["productive_s"] = productive;
  state.SetItemsProcessed(state.iterations() * kNodes * kSteps);
}

BENCHMARK(BM_IdleAllocatedGpus)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Goodput)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
