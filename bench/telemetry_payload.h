// The remote-write payload the telemetry benchmarks send: dcgm-exporter's
// label set (12 labels) for `series` series (8 GPUs per node, one pod per
// node: llama-70b-worker-<node>), `samples_per_series` samples each.
#ifndef LENS_BENCH_TELEMETRY_PAYLOAD_H_
#define LENS_BENCH_TELEMETRY_PAYLOAD_H_

#include <string>
#include <vector>

#include "telemetry/remote_write.h"

namespace lens::telemetry {

inline constexpr int64_t kPayloadT0Ms = 1795624473000;

// dcgm-exporter's label set for 2,000 series (250 nodes x 8 GPUs).
inline std::string Payload(int series, int samples_per_series) {
  RemoteWriteEncoder enc;
  std::vector<std::string> text;
  for (int i = 0; i < series; ++i) {
    const std::string gpu = std::to_string(i % 8);
    const std::string node = "gpu-node-" + std::to_string(i / 8);
    text = {"DCGM_FI_DEV_GPU_UTIL",
            "GPU-" + std::to_string(100000000 + i) + "-1f45-5cad-ffaf-d1159",
            "550.90.07",
            node,
            "NVIDIA H100 80GB HBM3",
            "trainer",
            "nvidia" + gpu,
            gpu,
            node + ":9400",
            "dcgm-exporter",
            "ml",
            "llama-70b-worker-" + std::to_string(i / 8)};
    const WireLabel labels[] = {{"__name__", text[0]},
                                {"UUID", text[1]},
                                {"DCGM_FI_DRIVER_VERSION", text[2]},
                                {"Hostname", text[3]},
                                {"modelName", text[4]},
                                {"container", text[5]},
                                {"device", text[6]},
                                {"gpu", text[7]},
                                {"instance", text[8]},
                                {"job", text[9]},
                                {"namespace", text[10]},
                                {"pod", text[11]}};
    std::vector<WireSample> samples;
    for (int s = 0; s < samples_per_series; ++s) {
      samples.push_back(
          {static_cast<double>((i * 7 + s) % 101), kPayloadT0Ms + s * 15000});
    }
    enc.AddSeries(labels, samples);
  }
  return enc.Finish();
}

}  // namespace lens::telemetry

#endif  // LENS_BENCH_TELEMETRY_PAYLOAD_H_
