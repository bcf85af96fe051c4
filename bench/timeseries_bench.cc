// The sample-history time-series source (NewSampleHistorySource), on SQLite
// (a temp file) and PostgreSQL (a server this program starts on loopback, as
// the tests do): one range query over a day of 30 s samples of 64 series
// (184,320 points read), on a 60 s step (1,440 points a series out).
//   BM_HistoryRange/fn:0  kValue (the last point of each step)
//   BM_HistoryRange/fn:1  kRate (a counter's increase per step)
// items/s: samples read and downsampled per second.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_stores.h"
#include "lens/store.h"
#include "lens/timeseries.h"

namespace {

constexpr int kSeries = 64;
constexpr int64_t kEveryMs = 30000;
constexpr int64_t kDayMs = 86400000;
constexpr int64_t kPoints = kDayMs / kEveryMs;  // per series
constexpr int64_t kT0Ms = 1700000040000;

std::string g_sqlite_url;
std::string g_pg_url;

// A day of 64 GPUs' energy counters (8 nodes of 8), as the node agent's
// series look after enrichment.
lens::Status Fill(lens::Store& store) {
  std::vector<lens::MetricSample> batch;
  for (int64_t k = 0; k < kPoints; k += 60) {  // 30 minutes per call
    batch.clear();
    for (int s = 0; s < kSeries; ++s) {
      const std::string node = "node-" + std::to_string(s / 8);
      lens::MetricSample m;
      m.metric = "lens_gpu_energy_joules_total";
      m.labels = {{"node", node},
                  {"gpu", std::to_string(s % 8)},
                  {"instance", node + ":8989"},
                  {"job", "lens-node-agent"},
                  {"namespace", "ml"},
                  {"pod", "trainer-" + std::to_string(s / 8)}};
      for (int64_t j = k; j < k + 60 && j < kPoints; ++j) {
        m.timestamp_ms = kT0Ms + j * kEveryMs;
        m.value = 700.0 * 30 * static_cast<double>(j) + s;
        batch.push_back(m);
      }
    }
    LENS_RETURN_IF_ERROR(store.samples().AppendSamples(batch));
  }
  return lens::OkStatus();
}

lens::Store* Filled(int backend) {
  static std::map<int, std::unique_ptr<lens::Store>> stores;
  auto& store = stores[backend];
  if (!store) {
    auto opened = lens::Store::Open(backend == 0 ? g_sqlite_url : g_pg_url);
    if (!opened.ok()) return nullptr;
    store = std::move(*opened);
    if (lens::Status st = Fill(*store); !st.ok()) {
      fprintf(stderr, "fill: %s\n", st.message().c_str());
      store.reset();
    }
  }
  return store.get();
}

void BM_HistoryRange(benchmark::State& state) {
  const int backend = static_cast<int>(state.range(0));
  if (backend == 1 && g_pg_url.empty()) {
    return state.SkipWithError("no PostgreSQL");
  }
  lens::Store* store = Filled(backend);
  if (!store) return state.SkipWithError("open or fill failed");
  auto source = lens::NewSampleHistorySource(store);
  lens::RangeQuery q;
  q.metric = "lens_gpu_energy_joules_total";
  q.from_ms = kT0Ms;
  q.to_ms = kT0Ms + kDayMs - 1;
  q.step = std::chrono::seconds(60);
  q.function = state.range(1) == 0 ? lens::RangeFunction::kValue
                                   : lens::RangeFunction::kRate;
  int64_t out_points = 0;
  for (auto _ : state) {
    auto got = source->QueryRange(q);
    if (!got.ok()) return state.SkipWithError(got.status().message().c_str());
    if (got->size() != kSeries) return state.SkipWithError("wrong series");
    for (const auto& s : *got)
      out_points += static_cast<int64_t>(s.points.size());
  }
  state.SetItemsProcessed(state.iterations() * kSeries * kPoints);
  state.counters["points_out"] =
      benchmark::Counter(static_cast<double>(out_points) /
                         static_cast<double>(state.iterations()));
}

BENCHMARK(BM_HistoryRange)
    ->ArgNames({"pg", "fn"})
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Args({1, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  return lens::bench::RunWithStores(argc, argv, "timeseries_bench",
                                    &g_sqlite_url, &g_pg_url);
}
