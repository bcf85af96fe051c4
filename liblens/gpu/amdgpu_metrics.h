// amdgpu's binary gpu_metrics attribute (class/drm/cardN/device/gpu_metrics):
// a versioned table, struct metrics_table_header { u16 structure_size;
// u8 format_revision; u8 content_revision; } followed by the fields of
// gpu_metrics_v<format>_<content> in drivers/gpu/drm/amd/include/
// kgd_pp_interface.h (native little-endian, natural alignment, no packing).
// The driver fills a table with 0xFF bytes before setting the fields it
// knows (smu_cmn_init_soft_gpu_metrics), so an all-ones field is "not
// supported" and parsed as absent.
//
// Formats: 1.0-1.3 (dGPUs up to MI200: one value per clock domain, 1.3 adds
// the ASIC-independent throttle bits), 1.4-1.8 (SMU 13.0.6, MI300: clocks
// per instance, 1.6+ per-partition XCD activity and throttle residency
// counters instead of throttle bits; 1.6 has two layouts, told apart by
// size), 2.0-2.4 (APUs: centi-degrees, centi-percent, milliwatts), 3.0
// (APUs). 1.9 is not a flat table (attribute list with kernel pointers) and
// is rejected like any other unknown revision.
#ifndef LENS_GPU_AMDGPU_METRICS_H_
#define LENS_GPU_AMDGPU_METRICS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"

namespace lens {

// Per-instance array sizes of kgd_pp_interface.h (MAX_GFX_CLKS, MAX_XCC,
// NUM_XCP).
inline constexpr size_t kAmdMaxXcds = 8;
inline constexpr size_t kAmdMaxPartitions = 8;

// Throttle residency accumulators (formats 1.6+): counts of accumulation
// cycles spent throttled, since driver load.
struct AmdThrottleResidency {
  uint32_t accumulation_counter = 0;
  uint32_t prochot = 0;
  uint32_t ppt = 0;  // package power tracking (the power cap)
  uint32_t socket_thermal = 0;
  uint32_t vr_thermal = 0;
  uint32_t hbm_thermal = 0;
  bool operator==(const AmdThrottleResidency&) const = default;
};

// One parsed table, in base units. A field the format does not carry or the
// driver marks unsupported is nullopt. Fixed size: parsing allocates nothing.
struct AmdGpuMetrics {
  uint8_t format_revision = 0;
  uint8_t content_revision = 0;
  std::optional<double> temperature_edge_celsius;     // APUs: gfx sensor
  std::optional<double> temperature_hotspot_celsius;  // MI300: socket max
  std::optional<double> temperature_mem_celsius;      // HBM max
  std::optional<double> power_watts;  // socket power (average or current)
  std::optional<double> gfx_activity_ratio;  // 0..1
  std::optional<double> umc_activity_ratio;  // memory controller, 0..1
  std::optional<double> energy_joules;       // accumulator x 2^-16 J
  std::optional<double> gfxclk_hz;           // first instance
  std::optional<double> socclk_hz;
  std::optional<double> uclk_hz;  // memory clock
  std::optional<double> vclk_hz;  // video core clock (VCN)
  std::optional<double> dclk_hz;  // video decode clock (VCN)
  // Per-XCD graphics clocks (formats 1.4+), by logical XCD; absent beyond
  // the device's XCDs.
  std::array<std::optional<double>, kAmdMaxXcds> xcd_gfxclk_hz{};
  // ASIC-independent throttle bits (the SMU_THROTTLER_*_BIT positions of
  // amdgpu_smu.h): the table's indep_throttle_status, or for the MI300
  // formats 1.4-1.6 that only carry the ASIC-dependent throttle_status, its
  // SMU 13.0.6 bits translated. nullopt when the format has neither.
  std::optional<uint64_t> indep_throttle_status;
  std::optional<AmdThrottleResidency> residency;
  // Formats 1.6+: partitions in use and each partition's XCD activity
  // (instantaneous, 0..1), XCDs in partition order.
  int partitions = 0;
  std::array<std::array<std::optional<double>, kAmdMaxXcds>, kAmdMaxPartitions>
      partition_xcd_activity_ratio{};
};

// Parses one gpu_metrics blob. Reads nothing outside `blob`. Errors:
// InvalidArgument for a blob shorter than its header or than the
// structure_size it declares, or whose structure_size is not the size of
// its revision's layout (the message names the revision and both sizes);
// Unimplemented for a revision without a known flat layout.
Status ParseAmdGpuMetrics(std::span<const uint8_t> blob, AmdGpuMetrics* out);

// Appends to `reasons` the GpuSample throttle reasons the independent
// throttle bits amount to: power (PPT0-3, SPL, FPPT, SPPT, PPM) ->
// "power_cap", current (TDC, EDC, APCC) -> "current", temperature and VR hot
// -> "thermal", PROCHOT -> "hw_slowdown", FIT -> "reliability". Each reason
// at most once.
void AppendAmdThrottleReasons(uint64_t indep_throttle_status,
                              std::vector<std::string>* reasons);

// The SMU_THROTTLER_* name of each set bit ("ppt0", "temp_hotspot",
// "prochot_gfx", ...), lowest bit first; unknown bits as "bit<N>".
std::vector<std::string_view> AmdThrottlerNames(uint64_t indep_throttle_status);

// Throttle reasons active between two residency readings: a counter that
// grew means that limiter engaged in the interval (ppt -> "power_cap",
// socket/VR/HBM thermal -> "thermal", prochot -> "hw_slowdown").
void AppendAmdResidencyReasons(const AmdThrottleResidency& before,
                               const AmdThrottleResidency& now,
                               std::vector<std::string>* reasons);

// The gpu_metrics file kept open; each Read is one pread at offset 0.
// Move-only, not thread-safe.
class AmdGpuMetricsFile {
 public:
  // The largest blob read: sysfs hands out at most one page, and amdgpu
  // caps gpu_metrics at PAGE_SIZE - 1.
  static constexpr size_t kMaxBytes = 4096;

  AmdGpuMetricsFile() = default;
  ~AmdGpuMetricsFile();
  AmdGpuMetricsFile(AmdGpuMetricsFile&& other) noexcept;
  AmdGpuMetricsFile& operator=(AmdGpuMetricsFile&& other) noexcept;
  AmdGpuMetricsFile(const AmdGpuMetricsFile&) = delete;
  AmdGpuMetricsFile& operator=(const AmdGpuMetricsFile&) = delete;

  // Opens `path`; a closed file when it does not exist or cannot be opened.
  static AmdGpuMetricsFile OpenIfPresent(const std::string& path);

  bool is_open() const { return fd_ >= 0; }
  void Close();
  // Reads and parses the blob into `out` (reset first). Errors: those of
  // ParseAmdGpuMetrics, or of the read (naming the path).
  Status Read(AmdGpuMetrics* out) const;

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace lens

#endif  // LENS_GPU_AMDGPU_METRICS_H_
