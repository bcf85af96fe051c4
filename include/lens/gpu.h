// GPU inventory and samples, one vendor-neutral model for AMD and NVIDIA.
//
// A GpuSource finds a vendor's GPUs (Scan, the static inventory, read once and
// again only when the device set changes) and samples them (Sample, the
// dynamic values, cheap enough for every collection cycle: no process is
// forked, files stay open between cycles).
//
//   auto amd = lens::NewAmdGpuSysfsSource(lens::HostRoots{});
//   auto gpus = amd->Scan();                  // StatusOr<std::vector<GpuInfo>>
//   std::vector<lens::GpuSample> samples;
//   lens::Status st = amd->Sample(&samples);  // one per GpuInfo, same order
//
// A value a device or driver does not report is std::nullopt ("not reported"),
// never 0. Units are in the names: bytes, watts, joules, celsius, hertz,
// ratios 0..1.
//
// Identity: a GPU is identified by its serial number and PCI address (BDF,
// with its real PCI domain), never by the PCI device id, which every GPU of a
// model shares. A partitioned AMD GPU (CPX/DPX compute partitions) appears as
// one GpuInfo per logical GPU, all with the physical GPU's BDF and serial and
// distinct partition_id values. Values that belong to the physical device
// (power, temperatures, clocks, VRAM, ECC, power cap) are reported on
// partition 0 only, so sums over GPUs stay right.
//
// Source coverage: amdgpu sysfs has no energy counter (only the binary
// gpu_metrics blob) and no throttle reasons, so AMD GPUs report
// energy_joules only where a driver exposes hwmon energy1_input, and
// throttle reasons never; NVML reports both.
#ifndef LENS_GPU_H_
#define LENS_GPU_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/export.h"
#include "lens/host.h"
#include "lens/status.h"

namespace lens {

enum class GpuVendor { kAmd, kNvidia };

// "amd" or "nvidia".
LENS_EXPORT std::string_view GpuVendorName(GpuVendor vendor);

// Static facts about one GPU (or one logical partition of one). Plain value.
struct LENS_EXPORT GpuInfo {
  GpuVendor vendor = GpuVendor::kAmd;
  // Position in the node's GPU list: sorted by vendor, then BDF, then
  // partition; stable while the device set does not change.
  int index = -1;
  // PCI address "dddd:bb:dd.f", lower case, with the real domain.
  std::string bdf;
  // Marketing name when known ("AMD Instinct MI300X", "NVIDIA H100 80GB
  // HBM3"); otherwise "AMD GPU 0x74a1" built from the PCI ids.
  std::string model;
  // Board serial number (AMD: serial_number, else unique_id; NVIDIA: serial).
  // Empty when not reported (consumer cards often have none).
  std::string serial;
  // AMD unique_id (hex, as the driver prints it); NVIDIA UUID ("GPU-...").
  std::string unique_id;
  std::string vbios_version;
  uint16_t pci_vendor_id = 0;
  uint16_t pci_device_id = 0;
  uint16_t pci_subsystem_vendor_id = 0;
  uint16_t pci_subsystem_device_id = 0;
  std::optional<int> numa_node;
  std::optional<uint64_t> vram_total_bytes;
  // DRM nodes of the device: "card1", "renderD128" (AMD; empty otherwise).
  std::string drm_card;
  std::string drm_render;
  // KFD topology gpu_id (what ROCm tools and the AMD device plugin use);
  // nullopt without KFD or for NVIDIA.
  std::optional<uint32_t> kfd_gpu_id;
  // Compute partition mode as the driver names it ("SPX", "DPX", "CPX", ...);
  // empty when the device has no partitioning.
  std::string compute_partition;
  // Memory partition mode ("NPS1", "NPS4", ...); empty when not reported.
  std::string memory_partition;
  // Index of this logical GPU within its physical GPU (0 when not partitioned).
  int partition_id = 0;
  // Kernel driver and its version as the source reports them ("amdgpu",
  // "6.7.0"; "nvidia", "550.90.07"); version empty when not reported.
  std::string driver;
  std::string driver_version;
  // Maximum PCIe link of the device.
  std::optional<double> pcie_max_speed_gtps;  // GT/s per lane
  std::optional<int> pcie_max_width;
  // Board power limit.
  std::optional<double> power_cap_watts;

  bool operator==(const GpuInfo&) const = default;
};

// A process using a GPU (NVML, amd-smi). Plain value.
struct LENS_EXPORT GpuProcess {
  int64_t pid = 0;
  std::string name;  // empty when not reported
  std::optional<uint64_t> used_memory_bytes;
  bool operator==(const GpuProcess&) const = default;
};

// Dynamic values of one GPU at one moment. Plain value.
struct LENS_EXPORT GpuSample {
  std::chrono::system_clock::time_point time;
  std::optional<double> utilization_ratio;         // busy time, 0..1
  std::optional<double> memory_utilization_ratio;  // memory controller busy
  std::optional<uint64_t> vram_used_bytes;
  std::optional<uint64_t> vram_total_bytes;
  std::optional<double> power_watts;    // average board power
  std::optional<double> energy_joules;  // since driver load (counter)
  std::optional<double> temperature_edge_celsius;
  std::optional<double> temperature_junction_celsius;  // hotspot
  std::optional<double> temperature_memory_celsius;
  std::optional<double> clock_graphics_hz;  // current shader/graphics clock
  std::optional<double> clock_memory_hz;
  std::optional<double> clock_soc_hz;
  std::optional<double> fan_speed_ratio;
  std::optional<double> pcie_link_speed_gtps;  // current, GT/s per lane
  std::optional<int> pcie_link_width;
  std::optional<uint64_t> pcie_replay_count;  // counter
  // ECC/RAS error totals since driver load (counters).
  std::optional<uint64_t> ecc_correctable_errors;
  std::optional<uint64_t> ecc_uncorrectable_errors;
  // Active clock throttle reasons, from a fixed vocabulary: "power_cap",
  // "thermal", "sw_power_cap", "hw_slowdown", "sync_boost", "hw_thermal",
  // "hw_power_brake", "sw_thermal", "applications_clocks", "idle",
  // "display_clocks". Empty when none or not reported (see throttle_known).
  std::vector<std::string> throttle_reasons;
  bool throttle_known = false;
  // Processes holding the GPU, when the source reports them (NVML).
  std::vector<GpuProcess> processes;
  bool processes_known = false;

  bool operator==(const GpuSample&) const = default;
};

// One GPU: its inventory and its latest sample.
struct LENS_EXPORT Gpu {
  GpuInfo info;
  GpuSample sample;
};

// Finds and samples one vendor's GPUs. Not thread-safe: one caller (the
// collector's loop) at a time.
class LENS_EXPORT GpuSource {
 public:
  virtual ~GpuSource();
  // Short stable name for logs and metrics: "amdgpu-sysfs", "nvml".
  virtual std::string_view name() const = 0;
  // Reads the static inventory and prepares sampling (opens the files it
  // will read). Index values are assigned 0.. in the source's order and
  // renumbered by the caller when sources are combined. An empty vector
  // means no GPU of this kind: not an error. Errors: Unavailable (driver
  // interface cannot be read), InvalidArgument naming the file that was
  // malformed.
  virtual StatusOr<std::vector<GpuInfo>> Scan() = 0;
  // Samples every GPU of the last Scan into `samples` (resized to match, same
  // order). A value that cannot be read this cycle is left nullopt; the
  // call fails only when nothing could be read (then the caller rescans).
  virtual Status Sample(std::vector<GpuSample>* samples) = 0;
  // A cheap token of the current device set (directory listing of the DRM
  // cards, the NVML device count): when it differs from the one taken at the
  // last Scan, the caller rescans.
  virtual StatusOr<std::string> DeviceSetToken() = 0;
};

// amdgpu through sysfs: class/drm/card*/device bound to amdgpu (PCI vendor
// 0x1002), hwmon, pp_dpm_* clocks, RAS counters, dev/dri/by-path and the KFD
// topology. Never fails to construct; Scan() on a machine without amdgpu
// returns an empty list.
LENS_EXPORT std::unique_ptr<GpuSource> NewAmdGpuSysfsSource(
    const HostRoots& roots);

// NVIDIA GPUs through NVML, loaded at run time with
// dlopen("libnvidia-ml.so.1") (no build-time dependency). Unavailable when the
// library cannot be loaded or nvmlInit fails (the message says which).
LENS_EXPORT StatusOr<std::unique_ptr<GpuSource>> NewNvmlGpuSource();

// The DRM nodes of the machine, from dev/dri/by-path: "pci-0000:0c:00.0-card"
// -> card1 and "...-render" -> renderD128. Sorted by BDF. The node REST API's
// /driMapping.
struct LENS_EXPORT DriMapping {
  std::string bdf;
  std::string card;    // "card1"; empty when there is no card link
  std::string render;  // "renderD128"; empty when there is no render link
  bool operator==(const DriMapping&) const = default;
};
// Errors: NotFound when dev/dri/by-path does not exist (no DRM devices).
LENS_EXPORT StatusOr<std::vector<DriMapping>> ReadDriMapping(
    const HostRoots& roots);

// What ProbeGpus looks at.
struct LENS_EXPORT GpuProbeOptions {
  bool amd_sysfs = true;
  // Try NVML; a machine without the library simply reports no NVIDIA GPUs.
  bool nvml = true;
};

// One-shot probe for the CLI and scripts: scans every enabled source, takes
// one sample, returns the GPUs with indexes renumbered across sources. A
// source that is unavailable contributes nothing; a source that fails
// otherwise makes the probe fail with its error.
LENS_EXPORT StatusOr<std::vector<Gpu>> ProbeGpus(
    const HostRoots& roots, const GpuProbeOptions& options = {});

}  // namespace lens

#endif  // LENS_GPU_H_
