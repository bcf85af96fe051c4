// libFuzzer target for Prometheus remote write requests as lens-telemetry
// receives them (built with LENS_BUILD_FUZZERS=ON and clang).
//
// Input layout: byte 0 chooses the form (even: a snappy body as sent over
// HTTP; odd: the uncompressed WriteRequest); the rest is the payload.
// Besides crashes and UB, it checks the codec's contract: a request that
// decodes re-encodes to a request that decodes to the same series, labels,
// samples (to the bit) and carried-through bytes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "telemetry/remote_write.h"

namespace {

using lens::telemetry::RemoteWriteEncoder;
using lens::telemetry::RemoteWriteLimits;
using lens::telemetry::RemoteWriteRequest;
using lens::telemetry::WireSeries;

void Fail(const char* what) {
  std::fprintf(stderr, "remote_write_fuzzer: %s\n", what);
  std::abort();
}

bool SameBits(double a, double b) { return std::memcmp(&a, &b, 8) == 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1,
                               size - 1);
  RemoteWriteLimits limits;
  limits.max_uncompressed_bytes = 4 << 20;  // keep each run small
  limits.max_series = 100000;
  RemoteWriteRequest first;
  const lens::Status st =
      data[0] % 2 == 0
          ? lens::telemetry::DecodeRemoteWrite(input, limits, &first)
          : lens::telemetry::DecodeWriteRequest(input, limits, &first);
  if (!st.ok()) return 0;
  RemoteWriteEncoder enc;
  for (const WireSeries& s : first.series) {
    enc.AddSeries(first.LabelsOf(s), first.SamplesOf(s), first.ExtraOf(s));
  }
  enc.AddExtra(first.extra);
  RemoteWriteRequest second;
  if (!lens::telemetry::DecodeRemoteWrite(enc.Finish(), limits, &second).ok()) {
    Fail("a re-encoded request does not decode");
  }
  if (second.series.size() != first.series.size() ||
      second.labels.size() != first.labels.size() ||
      second.samples.size() != first.samples.size() ||
      second.extra != first.extra) {
    Fail("a re-encoded request decodes to other counts");
  }
  for (size_t i = 0; i < first.labels.size(); ++i) {
    if (first.labels[i].name != second.labels[i].name ||
        first.labels[i].value != second.labels[i].value) {
      Fail("a label changed in the round trip");
    }
  }
  for (size_t i = 0; i < first.samples.size(); ++i) {
    if (!SameBits(first.samples[i].value, second.samples[i].value) ||
        first.samples[i].timestamp_ms != second.samples[i].timestamp_ms) {
      Fail("a sample changed in the round trip");
    }
  }
  for (size_t i = 0; i < first.series.size(); ++i) {
    if (first.ExtraOf(first.series[i]) != second.ExtraOf(second.series[i])) {
      Fail("a series' carried bytes changed in the round trip");
    }
  }
  return 0;
}
