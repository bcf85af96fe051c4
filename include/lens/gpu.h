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
// Source coverage: AMD energy, throttle reasons, video clocks and per-XCD
// values come from amdgpu's binary gpu_metrics table (read once per physical
// GPU per sample), so they are reported where the driver provides one (MI200,
// MI300 and most GPUs since Linux 5.10); NVML reports energy and throttle
// reasons. On a partitioned AMD GPU whose gpu_metrics has per-partition
// stats (format 1.6+), each partition reports its own XCDs and a
// utilization_ratio that is their mean.
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

// One MIG (Multi-Instance GPU) device of an NVIDIA GPU in MIG mode: a
// compute instance inside a GPU instance, what CUDA, nvidia-smi -L and the
// NVIDIA device plugin present as a GPU of its own. Plain value.
struct LENS_EXPORT MigDevice {
  // NVML's index of the MIG device under its parent GPU.
  int index = 0;
  // "MIG-<uuid>" (drivers R470 and newer): the id the device plugin puts in
  // pod-resources. Empty when not reported.
  std::string uuid;
  uint32_t gpu_instance_id = 0;
  uint32_t compute_instance_id = 0;
  // The profile as nvidia-smi -L names it: "1g.10gb", "3g.40gb", or
  // "1c.3g.71gb" when the compute instance holds fewer slices than its GPU
  // instance; computed from the device attributes the way the NVIDIA device
  // plugin does (media-extension variants such as "1g.10gb+me" appear as
  // their base name). Empty when the attributes are not reported.
  std::string profile;
  std::optional<int> gpu_instance_slices;
  std::optional<int> compute_instance_slices;
  std::optional<int> multiprocessor_count;
  std::optional<uint64_t> memory_total_bytes;

  bool operator==(const MigDevice&) const = default;
};

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
  // NVIDIA: N of the GPU's /dev/nvidiaN node (nvmlDeviceGetMinorNumber);
  // nullopt otherwise.
  std::optional<int> nvidia_minor;
  // NVIDIA: whether MIG mode is on (nullopt: the GPU cannot do MIG or does
  // not say) and, when it is, its MIG devices in NVML's index order.
  std::optional<bool> mig_enabled;
  std::vector<MigDevice> mig_devices;

  bool operator==(const GpuInfo&) const = default;
};

// A process using a GPU (NVML, amd-smi). Plain value.
struct LENS_EXPORT GpuProcess {
  int64_t pid = 0;
  // The process's short name (NVML: /proc/<pid>/comm, at most 15 bytes; never
  // its command line or environment). Empty when not reported or when the
  // process has exited.
  std::string name;
  std::optional<uint64_t> used_memory_bytes;
  // NVIDIA MIG: the GPU and compute instance the process runs in (which
  // MigDevice); nullopt when the GPU is not in MIG mode.
  std::optional<uint32_t> gpu_instance_id;
  std::optional<uint32_t> compute_instance_id;
  bool operator==(const GpuProcess&) const = default;
};

// One compute die (AMD XCD) of a GPU at one moment. Plain value.
struct LENS_EXPORT GpuXcdSample {
  std::optional<double> utilization_ratio;  // graphics engine busy, 0..1
  std::optional<double> clock_graphics_hz;
  bool operator==(const GpuXcdSample&) const = default;
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
  std::optional<double> clock_video_hz;   // AMD VCLK (VCN video core)
  std::optional<double> clock_decode_hz;  // AMD DCLK (VCN decoder)
  std::optional<double> fan_speed_ratio;
  std::optional<double> pcie_link_speed_gtps;  // current, GT/s per lane
  std::optional<int> pcie_link_width;
  std::optional<uint64_t> pcie_replay_count;  // counter
  // ECC/RAS error totals since driver load (counters).
  std::optional<uint64_t> ecc_correctable_errors;
  std::optional<uint64_t> ecc_uncorrectable_errors;
  // ECC error totals over the device's life, kept by the board across driver
  // reloads and reboots (NVML aggregate counts; counters).
  std::optional<uint64_t> ecc_correctable_errors_lifetime;
  std::optional<uint64_t> ecc_uncorrectable_errors_lifetime;
  // Active clock throttle reasons, from a fixed vocabulary: "power_cap",
  // "thermal", "sw_power_cap", "hw_slowdown", "sync_boost", "hw_thermal",
  // "hw_power_brake", "sw_thermal", "applications_clocks", "idle",
  // "display_clocks", and for AMD also "current" (TDC/EDC current limits)
  // and "reliability" (FIT limit). Empty when none or not reported (see
  // throttle_known).
  std::vector<std::string> throttle_reasons;
  bool throttle_known = false;
  // Processes holding the GPU, when the source reports them (NVML).
  std::vector<GpuProcess> processes;
  bool processes_known = false;
  // NVIDIA MIG: memory in use per MIG device, in GpuInfo::mig_devices order
  // (empty when the GPU has none).
  std::vector<std::optional<uint64_t>> mig_memory_used_bytes;
  // AMD: the compute dies (XCDs) of this GPU or partition, in XCD order, from
  // gpu_metrics (empty when not reported).
  std::vector<GpuXcdSample> xcds;

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
// -> card1 and "...-render" -> renderD128. The nodes of an AMD compute
// partition ("platform-amdgpu_xcp_3-card"/"-render": platform devices with
// no PCI address) are mapped to their physical GPU's BDF and partition
// through the KFD topology (each partition's node names its render minor);
// without KFD, or in SPX mode where the amdgpu_xcp nodes are unused, they
// are left out. Sorted by BDF, then partition. The node REST API's
// /driMapping.
struct LENS_EXPORT DriMapping {
  std::string bdf;
  std::string card;    // "card1"; empty when there is no card link
  std::string render;  // "renderD128"; empty when there is no render link
  // Compute partition of the GPU at `bdf` these nodes belong to (0: the
  // PCI device's own nodes).
  int partition_id = 0;
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
