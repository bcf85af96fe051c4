// The controller's per-event pod work: MayRequestGpus on every watched pod
// (most are not GPU pods: the full scan is the common case) and DecodePod on
// the GPU pods it keeps (an 8-GPU ROCm PyTorchJob master with an init
// container, ~5 KB compact JSON), from test/fixtures/kube.
#include <benchmark/benchmark.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "controller/pod_model.h"

namespace lens::controller {
namespace {

// The pod `name` in test/fixtures/kube/<file>, as the API server sends it
// (compact JSON).
std::string FixturePod(const char* file, const char* name) {
  std::ifstream in(std::string(LENS_FIXTURES_DIR) + "/kube/" + file);
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(text.str().c_str());
  for (const auto& o : doc.GetArray()) {
    if (std::string_view(o["metadata"]["name"].GetString()) != name) continue;
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    o.Accept(writer);
    return buffer.GetString();
  }
  std::fprintf(stderr, "no pod %s in %s\n", name, file);
  std::abort();
}

void BM_DecodePodEightGpus(benchmark::State& state) {
  const std::string json =
      FixturePod("pytorchjob.json", "llama-pretrain-master-0");
  const GpuResourceMatcher gpus;
  for (auto _ : state) {
    StatusOr<PodView> pod = DecodePod(json, gpus);
    if (!pod.ok() || pod->requests.gpus != 8) {
      state.SkipWithError("decode failed");
      break;
    }
    benchmark::DoNotOptimize(pod);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(json.size()));
  state.counters["json_bytes"] = static_cast<double>(json.size());
}
BENCHMARK(BM_DecodePodEightGpus);

void BM_MayRequestGpusPlainPod(benchmark::State& state) {
  const std::string json =
      FixturePod("plain-pods.json", "coredns-7db6d8ff4d-nx29g");
  const GpuResourceMatcher gpus;
  for (auto _ : state) {
    bool may = MayRequestGpus(json, gpus);
    benchmark::DoNotOptimize(may);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(json.size()));
  state.counters["json_bytes"] = static_cast<double>(json.size());
}
BENCHMARK(BM_MayRequestGpusPlainPod);

void BM_MayRequestGpusGpuPod(benchmark::State& state) {
  const std::string json =
      FixturePod("pytorchjob.json", "llama-pretrain-master-0");
  const GpuResourceMatcher gpus;
  for (auto _ : state) {
    bool may = MayRequestGpus(json, gpus);
    benchmark::DoNotOptimize(may);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(json.size()));
}
BENCHMARK(BM_MayRequestGpusGpuPod);

}  // namespace
}  // namespace lens::controller

BENCHMARK_MAIN();
