// Throttle decoding for gpu_metrics and the open gpu_metrics file.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "gpu/amdgpu_metrics.h"

namespace lens {
namespace {

// The SMU_THROTTLER_*_BIT positions of amdgpu_smu.h (ASIC-independent
// throttle status) and the GpuSample reason each amounts to.
struct Throttler {
  uint8_t bit;
  std::string_view name;
  std::string_view reason;
};
constexpr Throttler kThrottlers[] = {
    {0, "ppt0", "power_cap"},
    {1, "ppt1", "power_cap"},
    {2, "ppt2", "power_cap"},
    {3, "ppt3", "power_cap"},
    {4, "spl", "power_cap"},
    {5, "fppt", "power_cap"},
    {6, "sppt", "power_cap"},
    {7, "sppt_apu", "power_cap"},
    {16, "tdc_gfx", "current"},
    {17, "tdc_soc", "current"},
    {18, "tdc_mem", "current"},
    {19, "tdc_vdd", "current"},
    {20, "tdc_cvip", "current"},
    {21, "edc_cpu", "current"},
    {22, "edc_gfx", "current"},
    {23, "apcc", "current"},
    {32, "temp_gpu", "thermal"},
    {33, "temp_core", "thermal"},
    {34, "temp_mem", "thermal"},
    {35, "temp_edge", "thermal"},
    {36, "temp_hotspot", "thermal"},
    {37, "temp_soc", "thermal"},
    {38, "temp_vr_gfx", "thermal"},
    {39, "temp_vr_soc", "thermal"},
    {40, "temp_vr_mem0", "thermal"},
    {41, "temp_vr_mem1", "thermal"},
    {42, "temp_liquid0", "thermal"},
    {43, "temp_liquid1", "thermal"},
    {44, "vrhot0", "thermal"},
    {45, "vrhot1", "thermal"},
    {46, "prochot_cpu", "hw_slowdown"},
    {47, "prochot_gfx", "hw_slowdown"},
    {56, "ppm", "power_cap"},
    {57, "fit", "reliability"},
};

void AddOnce(std::string_view reason, std::vector<std::string>* reasons) {
  for (const std::string& r : *reasons) {
    if (r == reason) return;
  }
  reasons->emplace_back(reason);
}

constexpr std::string_view kBitNames[] = {
    "bit0",  "bit1",  "bit2",  "bit3",  "bit4",  "bit5",  "bit6",  "bit7",
    "bit8",  "bit9",  "bit10", "bit11", "bit12", "bit13", "bit14", "bit15",
    "bit16", "bit17", "bit18", "bit19", "bit20", "bit21", "bit22", "bit23",
    "bit24", "bit25", "bit26", "bit27", "bit28", "bit29", "bit30", "bit31",
    "bit32", "bit33", "bit34", "bit35", "bit36", "bit37", "bit38", "bit39",
    "bit40", "bit41", "bit42", "bit43", "bit44", "bit45", "bit46", "bit47",
    "bit48", "bit49", "bit50", "bit51", "bit52", "bit53", "bit54", "bit55",
    "bit56", "bit57", "bit58", "bit59", "bit60", "bit61", "bit62", "bit63"};

}  // namespace

void AppendAmdThrottleReasons(uint64_t indep_throttle_status,
                              std::vector<std::string>* reasons) {
  for (const Throttler& t : kThrottlers) {
    if (indep_throttle_status & (uint64_t{1} << t.bit))
      AddOnce(t.reason, reasons);
  }
}

std::vector<std::string_view> AmdThrottlerNames(
    uint64_t indep_throttle_status) {
  std::vector<std::string_view> out;
  for (int bit = 0; bit < 64; ++bit) {
    if (!(indep_throttle_status & (uint64_t{1} << bit))) continue;
    const auto it =
        std::find_if(std::begin(kThrottlers), std::end(kThrottlers),
                     [bit](const Throttler& t) { return t.bit == bit; });
    out.push_back(it != std::end(kThrottlers) ? it->name : kBitNames[bit]);
  }
  return out;
}

void AppendAmdResidencyReasons(const AmdThrottleResidency& before,
                               const AmdThrottleResidency& now,
                               std::vector<std::string>* reasons) {
  // Unsigned differences: a counter that wrapped still counts as grown.
  auto grew = [](uint32_t a, uint32_t b) { return b - a != 0; };
  if (grew(before.ppt, now.ppt)) AddOnce("power_cap", reasons);
  if (grew(before.socket_thermal, now.socket_thermal) ||
      grew(before.vr_thermal, now.vr_thermal) ||
      grew(before.hbm_thermal, now.hbm_thermal)) {
    AddOnce("thermal", reasons);
  }
  if (grew(before.prochot, now.prochot)) AddOnce("hw_slowdown", reasons);
}

AmdGpuMetricsFile::~AmdGpuMetricsFile() { Close(); }

AmdGpuMetricsFile::AmdGpuMetricsFile(AmdGpuMetricsFile&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

AmdGpuMetricsFile& AmdGpuMetricsFile::operator=(
    AmdGpuMetricsFile&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

AmdGpuMetricsFile AmdGpuMetricsFile::OpenIfPresent(const std::string& path) {
  AmdGpuMetricsFile file;
  file.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd_ >= 0) file.path_ = path;
  return file;
}

void AmdGpuMetricsFile::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status AmdGpuMetricsFile::Read(AmdGpuMetrics* out) const {
  if (fd_ < 0) {
    *out = AmdGpuMetrics{};
    return FailedPreconditionError("gpu_metrics: not open");
  }
  alignas(8) uint8_t buffer[kMaxBytes];
  ssize_t n;
  do {
    n = ::pread(fd_, buffer, sizeof buffer, 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    *out = AmdGpuMetrics{};
    return ErrnoError(errno, "read " + path_);
  }
  Status parsed = ParseAmdGpuMetrics(
      std::span<const uint8_t>(buffer, static_cast<size_t>(n)), out);
  if (!parsed.ok()) {
    return Status(parsed.code(), path_ + ": " + parsed.message());
  }
  return OkStatus();
}

}  // namespace lens
