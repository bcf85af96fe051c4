// Hot paths of the Prometheus registry: counter updates (every probe sample)
// and Render() (every scrape) of a registry the size of a busy node agent
// (~1000 series).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "core/metrics.h"

namespace lens {
namespace {

// One counter shared by all benchmark threads (worst case: one contended cache
// line).
std::shared_ptr<Counter>& SharedCounter() {
  static Registry* registry = new Registry();
  static std::shared_ptr<Counter> counter =
      std::move(registry->AddCounter("bench_shared_total", "Shared.")).value();
  return counter;
}

void BM_CounterInc(benchmark::State& state) {
  Counter& counter = *SharedCounter();
  for (auto _ : state) counter.Inc();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CounterInc)->ThreadRange(1, 4)->UseRealTime();

void BM_CounterAddDouble(benchmark::State& state) {
  Counter& counter = *SharedCounter();
  for (auto _ : state) counter.Add(0.5);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CounterAddDouble)->ThreadRange(1, 4)->UseRealTime();

// Each thread its own child: the uncontended case of per-GPU series.
void BM_CounterIncPerThreadChild(benchmark::State& state) {
  static Registry* registry = new Registry();
  static CounterFamily* family =
      registry->AddCounterFamily("bench_per_thread_total", "Per thread.", {"t"})
          .value();
  auto child =
      family->WithLabels({std::to_string(state.thread_index())}).value();
  for (auto _ : state) child->Inc();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CounterIncPerThreadChild)->ThreadRange(1, 4)->UseRealTime();

// Looking a child up by label values each time (callers that do not cache
// handles).
void BM_WithLabelsLookup(benchmark::State& state) {
  Registry registry;
  auto* family =
      registry.AddGaugeFamily("bench_lookup", "Lookup.", {"node", "gpu"})
          .value();
  for (int g = 0; g < 64; ++g)
    (void)family->WithLabels({"node-1", std::to_string(g)});
  for (auto _ : state) {
    auto child = family->WithLabels({"node-1", "42"});
    benchmark::DoNotOptimize(child);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WithLabelsLookup);

// 1000 series: 8 GPUs x 25 gauges x 4 metrics + 200 counters, plus 10
// histograms.
void BM_Render1000Series(benchmark::State& state) {
  Registry registry;
  for (int m = 0; m < 4; ++m) {
    auto* gauges =
        registry
            .AddGaugeFamily("lens_bench_gpu_metric_" + std::to_string(m),
                            "A GPU gauge.", {"node", "gpu", "serial"})
            .value();
    for (int g = 0; g < 200; ++g) {
      gauges
          ->WithLabels({"node-17", std::to_string(g),
                        "SN-\"" + std::to_string(g) + "\""})
          .value()
          ->Set(g * 1.25);
    }
  }
  auto* counters = registry
                       .AddCounterFamily("lens_bench_bytes_total", "Bytes.",
                                         {"device", "port"})
                       .value();
  for (int d = 0; d < 200; ++d) {
    counters->WithLabels({"mlx5_" + std::to_string(d), "1"})
        .value()
        ->Add(1e12 + d);
  }
  auto* hist = registry
                   .AddHistogramFamily("lens_bench_latency_seconds", "Latency.",
                                       {"op"}, DefaultBuckets())
                   .value();
  for (int o = 0; o < 10; ++o)
    hist->WithLabels({"op" + std::to_string(o)}).value()->Observe(0.3);
  std::string out;
  for (auto _ : state) {
    out.clear();
    registry.RenderTo(&out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * out.size()));
  state.counters["bytes_per_render"] = static_cast<double>(out.size());
}
BENCHMARK(BM_Render1000Series);

}  // namespace
}  // namespace lens

BENCHMARK_MAIN();
