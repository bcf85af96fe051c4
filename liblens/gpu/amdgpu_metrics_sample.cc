// The GpuSample values that come from gpu_metrics alone: energy, video
// clocks, throttle reasons and the XCDs of each partition.
#include <algorithm>

#include "gpu/amdgpu_sysfs.h"

namespace lens {
namespace {

// Leading entries present: the XCDs a device or partition has (the driver
// leaves the slots of absent instances at all ones).
size_t CountPresent(
    const std::array<std::optional<double>, kAmdMaxXcds>& values) {
  size_t n = 0;
  while (n < values.size() && values[n]) ++n;
  return n;
}

void SetThrottle(AmdGpuMetricsState* state, GpuSample* out) {
  const AmdGpuMetrics& m = state->metrics;
  out->throttle_reasons.clear();
  out->throttle_known = false;
  if (m.indep_throttle_status) {
    AppendAmdThrottleReasons(*m.indep_throttle_status, &out->throttle_reasons);
    out->throttle_known = true;
  } else if (m.residency && state->previous_residency) {
    AppendAmdResidencyReasons(*state->previous_residency, *m.residency,
                              &out->throttle_reasons);
    out->throttle_known = true;
  }
  state->previous_residency = m.residency;
}

// Every XCD of the device, with clocks only (tables without partition
// stats), or the single partition of an unpartitioned device.
void DeviceXcds(const AmdGpuMetrics& m, GpuSample* out) {
  const size_t clocks = CountPresent(m.xcd_gfxclk_hz);
  const size_t busy =
      m.partitions == 1 ? CountPresent(m.partition_xcd_activity_ratio[0]) : 0;
  const size_t n = std::max(clocks, busy);
  out->xcds.resize(n);
  for (size_t i = 0; i < n; ++i) {
    out->xcds[i].clock_graphics_hz = m.xcd_gfxclk_hz[i];
    out->xcds[i].utilization_ratio =
        busy > 0 ? m.partition_xcd_activity_ratio[0][i] : std::nullopt;
  }
}

// Partition `p` of a partitioned device: its XCDs' activity, their clocks
// (partitions own consecutive logical XCDs), and their mean activity.
void PartitionXcds(const AmdGpuMetrics& m, size_t p, GpuSample* out) {
  const auto& busy = m.partition_xcd_activity_ratio[p];
  const size_t n = CountPresent(busy);
  const size_t per_partition =
      CountPresent(m.xcd_gfxclk_hz) / static_cast<size_t>(m.partitions);
  out->xcds.resize(n);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t logical = p * per_partition + i;
    out->xcds[i].utilization_ratio = busy[i];
    out->xcds[i].clock_graphics_hz = i < per_partition && logical < kAmdMaxXcds
                                         ? m.xcd_gfxclk_hz[logical]
                                         : std::nullopt;
    sum += *busy[i];
  }
  if (n > 0) out->utilization_ratio = sum / static_cast<double>(n);
}

}  // namespace

void ClearAmdGpuSample(GpuSample* sample) {
  std::vector<GpuXcdSample> xcds = std::move(sample->xcds);
  std::vector<std::string> reasons = std::move(sample->throttle_reasons);
  *sample = GpuSample{};
  xcds.clear();
  reasons.clear();
  sample->xcds = std::move(xcds);
  sample->throttle_reasons = std::move(reasons);
}

int ApplyAmdGpuMetrics(AmdGpuMetricsState* state, int partition_id,
                       GpuSample* out) {
  if (!state->valid) return 0;
  const AmdGpuMetrics& m = state->metrics;
  if (partition_id == 0) {
    if (m.energy_joules) out->energy_joules = m.energy_joules;
    out->clock_video_hz = m.vclk_hz;
    out->clock_decode_hz = m.dclk_hz;
    SetThrottle(state, out);
  }
  const bool split = m.partitions > 1;
  if (split && partition_id >= 0 && partition_id < m.partitions) {
    PartitionXcds(m, static_cast<size_t>(partition_id), out);
  } else if (partition_id == 0) {
    DeviceXcds(m, out);
  }
  return (out->energy_joules ? 1 : 0) + (out->clock_video_hz ? 1 : 0) +
         (out->clock_decode_hz ? 1 : 0) + (out->throttle_known ? 1 : 0) +
         static_cast<int>(out->xcds.size());
}

}  // namespace lens
