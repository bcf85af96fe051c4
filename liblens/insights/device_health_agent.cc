// A node agent cycle (GPU inventory and samples, RDMA devices and port
// counters) as the observations of the device health insight.
#include <utility>

#include "lens/insights_health.h"

namespace lens {
namespace {

std::optional<PortErrorCounter> HealthPortCounterByName(std::string_view name) {
  for (size_t c = 0; c < kPortErrorCounterCount; ++c) {
    const auto counter = static_cast<PortErrorCounter>(c);
    if (PortErrorCounterName(counter) == name) return counter;
  }
  return std::nullopt;
}

GpuHealthObservation HealthGpuObservation(const GpuInfo& info,
                                          const GpuSample& sample) {
  GpuHealthObservation obs;
  obs.index = info.index;
  obs.serial = info.serial;
  obs.unique_id = info.unique_id;
  obs.bdf = info.bdf;
  obs.ecc_uncorrectable = sample.ecc_uncorrectable_errors;
  obs.ecc_correctable = sample.ecc_correctable_errors;
  obs.ecc_uncorrectable_lifetime = sample.ecc_uncorrectable_errors_lifetime;
  obs.ecc_correctable_lifetime = sample.ecc_correctable_errors_lifetime;
  obs.throttle_reasons = GpuThrottleMask(sample.throttle_reasons);
  obs.throttle_known = sample.throttle_known;
  return obs;
}

PortHealthObservation HealthPortObservation(
    const RdmaPortCounters& counters,
    std::span<const RdmaDevice> rdma_devices) {
  PortHealthObservation obs;
  obs.device = counters.device;
  obs.port = counters.port;
  for (const RdmaDevice& device : rdma_devices) {
    if (device.name == counters.device) {
      obs.node_guid = device.node_guid;
      break;
    }
  }
  obs.state = ParseRdmaLinkState(counters.state);
  obs.phys_state = ParseRdmaPhysState(counters.phys_state);
  for (const RdmaCounter& counter : counters.counters) {
    // hw_counters are driver-specific (and on mlx5 mostly about the
    // applications' queues, such as out_of_buffer): not device evidence.
    if (counter.hardware) continue;
    if (auto c = HealthPortCounterByName(counter.name)) {
      obs.errors[static_cast<size_t>(*c)] = counter.value;
    }
  }
  return obs;
}

}  // namespace

HealthSample HealthSampleFromAgent(
    std::string node, Timestamp time, std::span<const GpuInfo> gpus,
    std::span<const GpuSample> gpu_samples,
    std::span<const RdmaDevice> rdma_devices,
    std::span<const RdmaPortCounters> rdma_ports) {
  HealthSample out;
  out.node = std::move(node);
  out.time = time;
  const size_t n = std::min(gpus.size(), gpu_samples.size());
  for (size_t i = 0; i < n; ++i) {
    // The partitions of one AMD GPU share its serial; partition 0 carries
    // the physical device's ECC values (gpu.h).
    if (gpus[i].partition_id != 0) continue;
    out.gpus.push_back(HealthGpuObservation(gpus[i], gpu_samples[i]));
  }
  for (const RdmaPortCounters& port : rdma_ports) {
    out.ports.push_back(HealthPortObservation(port, rdma_devices));
  }
  return out;
}

}  // namespace lens
