// Sample for the amdgpu sysfs source: preads on the files Scan opened, no
// directory listing, no allocation (text files are read into the caller's
// scratch buffer). The binary gpu_metrics table is read first; a value it
// carries is not read again from a text file (both come from the same SMU
// metrics on the GPUs that have the table). Units per
// Documentation/gpu/amdgpu/thermal.rst and the hwmon sysfs ABI: millidegrees
// Celsius, microwatts, microjoules, RPM, pwm 0..pwm1_max.
#include <algorithm>

#include "gpu/amdgpu_sysfs.h"

namespace lens {
namespace {

std::optional<uint64_t> ReadUint(const KernelFile& file) {
  if (!file.is_open()) return std::nullopt;
  StatusOr<uint64_t> value = file.ReadUint64();
  if (!value.ok()) return std::nullopt;
  return *value;
}

std::optional<int64_t> ReadInt(const KernelFile& file) {
  if (!file.is_open()) return std::nullopt;
  StatusOr<int64_t> value = file.ReadInt64();
  if (!value.ok()) return std::nullopt;
  return *value;
}

std::optional<std::string_view> ReadText(const KernelFile& file,
                                         std::string* scratch) {
  if (!file.is_open()) return std::nullopt;
  StatusOr<std::string_view> value = file.Read(scratch);
  if (!value.ok()) return std::nullopt;
  return *value;
}

std::optional<double> DividedBy(std::optional<uint64_t> value, double divisor) {
  if (!value) return std::nullopt;
  return static_cast<double>(*value) / divisor;
}

std::optional<double> Celsius(const KernelFile& file) {
  std::optional<int64_t> millidegrees = ReadInt(file);
  if (!millidegrees) return std::nullopt;
  return static_cast<double>(*millidegrees) / 1000.0;
}

// The table's value when it has one, else `read()`.
template <typename Read>
std::optional<double> Prefer(const AmdGpuMetrics* table,
                             std::optional<double> AmdGpuMetrics::*field,
                             Read read) {
  if (table != nullptr && table->*field) return table->*field;
  return read();
}

std::optional<double> ClockHz(const KernelFile& file, std::string* scratch) {
  std::optional<std::string_view> text = ReadText(file, scratch);
  if (!text) return std::nullopt;
  return ParseDpmCurrentHz(*text);
}

// Measured fan speed over the fan's maximum; else the PWM duty cycle.
std::optional<double> FanRatio(const AmdGpuDevice& device) {
  std::optional<uint64_t> rpm = ReadUint(device.files.fan_input);
  if (rpm && device.fan_max_rpm && *device.fan_max_rpm > 0) {
    return std::min(1.0, static_cast<double>(*rpm) /
                             static_cast<double>(*device.fan_max_rpm));
  }
  std::optional<uint64_t> pwm = ReadUint(device.files.pwm);
  uint64_t pwm_max = device.pwm_max.value_or(255);
  if (!pwm || pwm_max == 0) return std::nullopt;
  return std::min(1.0,
                  static_cast<double>(*pwm) / static_cast<double>(pwm_max));
}

// Sums the RAS blocks; nullopt unless every block could be read (a partial
// sum would look like a counter reset).
bool SampleRas(const AmdGpuFiles& files, std::string* scratch, GpuSample* out) {
  out->ecc_uncorrectable_errors.reset();
  out->ecc_correctable_errors.reset();
  if (files.ras.empty()) return false;
  RasCounts total;
  for (const AmdRasFile& block : files.ras) {
    std::optional<std::string_view> text = ReadText(block.file, scratch);
    std::optional<RasCounts> counts =
        text ? ParseRasCounts(*text) : std::nullopt;
    if (!counts) return false;
    total.uncorrectable += counts->uncorrectable;
    total.correctable += counts->correctable;
  }
  out->ecc_uncorrectable_errors = total.uncorrectable;
  out->ecc_correctable_errors = total.correctable;
  return true;
}

void SamplePower(const AmdGpuDevice& device, const AmdGpuMetrics* table,
                 GpuSample* out) {
  out->power_watts = Prefer(table, &AmdGpuMetrics::power_watts, [&] {
    return DividedBy(ReadUint(device.files.power), 1e6);
  });
  if (out->power_watts && *out->power_watts == 0 &&
      device.zero_power_is_unreported) {
    out->power_watts.reset();
  }
  out->energy_joules = Prefer(table, &AmdGpuMetrics::energy_joules, [&] {
    return DividedBy(ReadUint(device.files.energy), 1e6);
  });
}

void SamplePcie(const AmdGpuFiles& files, std::string* scratch,
                GpuSample* out) {
  if (std::optional<std::string_view> speed =
          ReadText(files.link_speed, scratch)) {
    out->pcie_link_speed_gtps = ParseLinkSpeedGtps(*speed);
  }
  if (std::optional<uint64_t> width = ReadUint(files.link_width)) {
    out->pcie_link_width = static_cast<int>(*width);
  }
  out->pcie_replay_count = ReadUint(files.replay_count);
}

int CountValues(const GpuSample& s) {
  int n = 0;
  for (bool present :
       {s.utilization_ratio.has_value(), s.memory_utilization_ratio.has_value(),
        s.vram_used_bytes.has_value(), s.power_watts.has_value(),
        s.energy_joules.has_value(), s.temperature_edge_celsius.has_value(),
        s.temperature_junction_celsius.has_value(),
        s.temperature_memory_celsius.has_value(),
        s.clock_graphics_hz.has_value(), s.clock_memory_hz.has_value(),
        s.clock_soc_hz.has_value(), s.fan_speed_ratio.has_value(),
        s.pcie_link_speed_gtps.has_value(), s.pcie_link_width.has_value(),
        s.pcie_replay_count.has_value(),
        s.ecc_correctable_errors.has_value()}) {
    n += present ? 1 : 0;
  }
  return n;
}

}  // namespace

int SampleAmdGpu(const AmdGpuDevice& device, std::string* scratch,
                 AmdGpuMetricsState* state, GpuSample* out) {
  if (!device.reports_device_values) return 0;
  const AmdGpuFiles& f = device.files;
  state->valid =
      f.gpu_metrics.is_open() && f.gpu_metrics.Read(&state->metrics).ok();
  const AmdGpuMetrics* t = state->valid ? &state->metrics : nullptr;
  using M = AmdGpuMetrics;
  out->utilization_ratio = Prefer(t, &M::gfx_activity_ratio, [&] {
    return DividedBy(ReadUint(f.gpu_busy_percent), 100.0);
  });
  out->memory_utilization_ratio = Prefer(t, &M::umc_activity_ratio, [&] {
    return DividedBy(ReadUint(f.mem_busy_percent), 100.0);
  });
  out->vram_used_bytes = ReadUint(f.vram_used);
  SamplePower(device, t, out);
  out->temperature_edge_celsius = Prefer(t, &M::temperature_edge_celsius,
                                         [&] { return Celsius(f.temp_edge); });
  out->temperature_junction_celsius =
      Prefer(t, &M::temperature_hotspot_celsius,
             [&] { return Celsius(f.temp_junction); });
  out->temperature_memory_celsius = Prefer(t, &M::temperature_mem_celsius,
                                           [&] { return Celsius(f.temp_mem); });
  out->clock_graphics_hz =
      Prefer(t, &M::gfxclk_hz, [&] { return ClockHz(f.sclk, scratch); });
  out->clock_memory_hz =
      Prefer(t, &M::uclk_hz, [&] { return ClockHz(f.mclk, scratch); });
  out->clock_soc_hz =
      Prefer(t, &M::socclk_hz, [&] { return ClockHz(f.socclk, scratch); });
  out->fan_speed_ratio = FanRatio(device);
  SamplePcie(f, scratch, out);
  SampleRas(f, scratch, out);
  ApplyAmdGpuMetrics(state, 0, out);
  return CountValues(*out);
}

}  // namespace lens
