// The one JSON writer on Lens's hot documents: an API page of records (the
// REST API, the node REST API), a training record (`lens parse-log`, the
// store's `fields` column) and a log line's fields. The same page through
// RapidJSON's Writer, which Lens used before, gives the comparison.
#include <benchmark/benchmark.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>

#include "core/json.h"
#include "lens/training.h"
#include "store/training_codec.h"

namespace lens {
namespace {

struct Row {
  std::string name = "gpu-node-017";
  std::string uid = "5d1c7a2e-8f3b-4c1d-9e6a-0b2f4c8d1e3a";
  std::string model = "AMD Instinct MI300X";
  std::string status = "Ready";
  int64_t gpus = 8;
  int64_t created = 1763798400;
  double utilisation = 0.8734;
  double power_watts = 612.5;
};

constexpr int kRows = 500;

template <typename W>
void WritePage(W& w, const Row& r) {
  w.StartObject();
  w.Key("items");
  w.StartArray();
  for (int i = 0; i < kRows; ++i) {
    w.StartObject();
    w.Key("name");
    w.String(r.name);
    w.Key("uid");
    w.String(r.uid);
    w.Key("gpuModel");
    w.String(r.model);
    w.Key("status");
    w.String(r.status);
    w.Key("gpuCount");
    w.Int64(r.gpus);
    w.Key("createdAt");
    w.Int64(r.created + i);
    w.Key("utilization");
    w.Double(r.utilisation);
    w.Key("powerWatts");
    w.Double(r.power_watts);
    w.EndObject();
  }
  w.EndArray();
  w.Key("total");
  w.Int64(kRows);
  w.EndObject();
}

// Both writers keep their buffer from one page to the next: the figures are
// the writing, not the allocator's growth (a fresh 93 KB buffer per page
// costs both about the same page faults).
void BM_PageJsonWriter(benchmark::State& state) {
  const Row row;
  size_t bytes = 0;
  JsonWriter w;
  for (auto _ : state) {
    w.Reset();
    WritePage(w, row);
    bytes += w.size();
    benchmark::DoNotOptimize(w.str().data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.SetItemsProcessed(state.iterations() * kRows);
}
BENCHMARK(BM_PageJsonWriter);

// RapidJSON's Writer on the same page (std::string overloads).
struct RapidPage {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  void StartObject() { w.StartObject(); }
  void EndObject() { w.EndObject(); }
  void StartArray() { w.StartArray(); }
  void EndArray() { w.EndArray(); }
  void Key(const char* k) { w.Key(k); }
  void String(const std::string& s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  }
  void Int64(int64_t v) { w.Int64(v); }
  void Double(double v) { w.Double(v); }
};

void BM_PageRapidJsonWriter(benchmark::State& state) {
  const Row row;
  size_t bytes = 0;
  RapidPage p;
  for (auto _ : state) {
    p.buf.Clear();
    p.w.Reset(p.buf);
    WritePage(p, row);
    bytes += p.buf.GetSize();
    benchmark::DoNotOptimize(p.buf.GetString());
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.SetItemsProcessed(state.iterations() * kRows);
}
BENCHMARK(BM_PageRapidJsonWriter);

IterationRecord Megatron() {
  IterationRecord r;
  r.run = 2;
  r.iteration = 136001;
  r.line = 12345;
  r.format = TrainingFormat::kMegatron;
  r.timestamp_s = 1762767795.068981;
  r.Set(IterationField::kTargetIteration, 500000);
  r.Set(IterationField::kConsumedSamples, 835596288);
  r.Set(IterationField::kElapsedMs, 3413.5);
  r.Set(IterationField::kLearningRate, 2.0128e-05);
  r.Set(IterationField::kGlobalBatchSize, 6144);
  r.Set(IterationField::kLoss, 2.069709);
  r.Set(IterationField::kLossScale, 1);
  r.Set(IterationField::kGradNorm, 0.853078);
  r.Set(IterationField::kSkippedIterations, 0);
  r.Set(IterationField::kNanIterations, 0);
  r.Set(IterationField::kTflopsPerGpu, 396.1);
  r.Set(IterationField::kTokensPerSPerGpu, 4799.815);
  r.extra.emplace_back("deepspeed_skipped_total", 0);
  return r;
}

// One record as a `lens parse-log --format jsonl` line.
void BM_TrainingRecordJson(benchmark::State& state) {
  const IterationRecord r = Megatron();
  std::string out;
  for (auto _ : state) {
    out.clear();
    AppendJson(r, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TrainingRecordJson);

// One record's `fields` column, as the store writes it per iteration.
void BM_StoreFieldsJson(benchmark::State& state) {
  const IterationRecord r = Megatron();
  for (auto _ : state) {
    std::string json = store::FieldsJson(r);
    benchmark::DoNotOptimize(json.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StoreFieldsJson);

}  // namespace
}  // namespace lens

BENCHMARK_MAIN();
