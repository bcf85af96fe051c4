// The telemetry processor's wire path: decode a remote-write request
// (snappy + protobuf), then encode it again with every series' labels
// passed through (the cost enrichment adds to is measured on its own when
// it lands). Payloads are shaped like vmagent's and Prometheus's batches of
// GPU exporter series: 2,000 series of 12 labels, one sample each (about
// 120 kB of protobuf). Items are samples.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "telemetry/enrich.h"
#include "telemetry/remote_write.h"
#include "telemetry_payload.h"

namespace lens::telemetry {
namespace {

void BM_DecodeRemoteWrite(benchmark::State& state) {
  const std::string body = Payload(2000, static_cast<int>(state.range(0)));
  RemoteWriteRequest request;
  for (auto _ : state) {
    Status st = DecodeRemoteWrite(body, {}, &request);
    if (!st.ok()) state.SkipWithError(st.message().c_str());
    benchmark::DoNotOptimize(request.samples.data());
  }
  state.SetItemsProcessed(state.iterations() * request.samples.size());
  state.SetBytesProcessed(state.iterations() * body.size());
}
BENCHMARK(BM_DecodeRemoteWrite)->Arg(1)->Arg(10);

void BM_DecodeAndReencode(benchmark::State& state) {
  const std::string body = Payload(2000, static_cast<int>(state.range(0)));
  RemoteWriteRequest request;
  RemoteWriteEncoder enc;
  for (auto _ : state) {
    Status st = DecodeRemoteWrite(body, {}, &request);
    if (!st.ok()) state.SkipWithError(st.message().c_str());
    for (const WireSeries& s : request.series) {
      enc.AddSeries(request.LabelsOf(s), request.SamplesOf(s),
                    request.ExtraOf(s));
    }
    enc.AddExtra(request.extra);
    std::string out = enc.Finish();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * request.samples.size());
  state.SetBytesProcessed(state.iterations() * body.size());
}
BENCHMARK(BM_DecodeAndReencode)->Arg(1)->Arg(10);

// Decode, enrich every series (each pod owned, by a workload that changed
// once in the middle of the batch's time range) and re-encode: the whole
// wire path of one request.
void BM_DecodeEnrichReencode(benchmark::State& state) {
  const int per_series = static_cast<int>(state.range(0));
  const std::string body = Payload(2000, per_series);
  OwnershipIndex index;
  for (int w = 0; w < 250; ++w) {
    const std::string pod = "llama-70b-worker-" + std::to_string(w);
    auto a = std::make_shared<const Owner>(
        Owner{"pod-a-" + pod, "w-a-" + std::to_string(w), "pretrain",
              "PyTorchJob", "ml"});
    auto b = std::make_shared<const Owner>(
        Owner{"pod-b-" + pod, "w-b-" + std::to_string(w), "finetune",
              "PyTorchJob", "ml"});
    const int64_t middle = 1795624473000 + per_series / 2 * 15000;
    index.AddPod("ml", pod, {0, middle, a});
    index.AddPod("ml", pod, {middle, kOpenEnd, b});
  }
  index.Seal();
  RemoteWriteRequest request;
  RemoteWriteEncoder enc;
  Enricher enricher({});
  uint64_t enriched = 0;
  for (auto _ : state) {
    Status st = DecodeRemoteWrite(body, {}, &request);
    if (!st.ok()) state.SkipWithError(st.message().c_str());
    enriched = enricher.Enrich(request, index, &enc).samples_enriched;
    std::string out = enc.Finish();
    benchmark::DoNotOptimize(out.data());
  }
  if (enriched != request.samples.size()) {
    state.SkipWithError("not every sample was enriched");
  }
  state.SetItemsProcessed(state.iterations() * request.samples.size());
  state.SetBytesProcessed(state.iterations() * body.size());
}
BENCHMARK(BM_DecodeEnrichReencode)->Arg(1)->Arg(10);

}  // namespace
}  // namespace lens::telemetry

BENCHMARK_MAIN();
