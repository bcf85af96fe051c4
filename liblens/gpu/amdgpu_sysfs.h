// Internals of the amdgpu sysfs GPU source (lens::NewAmdGpuSysfsSource):
// the pure parsers for amdgpu's text attributes, the marketing-name table,
// and the per-GPU state Scan builds and Sample reads.
#ifndef LENS_GPU_AMDGPU_SYSFS_H_
#define LENS_GPU_AMDGPU_SYSFS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/kernel_file.h"
#include "gpu/amdgpu_metrics.h"
#include "gpu/kfd_topology.h"
#include "lens/gpu.h"
#include "lens/host.h"
#include "lens/status.h"

namespace lens {

// ---- Parsers (pure; a value they cannot understand is nullopt, never 0) ----

// The current level of a pp_dpm_* clock file, in hertz: the line marked with
// '*' ("1: 1900Mhz *"; SMU 13.0.6 (MI300) prints a deep-sleep line
// "S: 132Mhz *" above the levels). nullopt when no line is marked or the
// file says "unavailable" (printed while a RAS interrupt is pending).
std::optional<double> ParseDpmCurrentHz(std::string_view text);

// A PCIe link speed attribute ("16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s PCIe")
// in GT/s per lane; nullopt for "Unknown" and anything else.
std::optional<double> ParseLinkSpeedGtps(std::string_view text);

// One RAS error counter file (ras/<block>_err_count or ras/aca_<block>):
// "ue: N\nce: M\n", newer kernels add "de: K" (deferred, not counted here).
struct RasCounts {
  uint64_t uncorrectable = 0;
  uint64_t correctable = 0;
};
// nullopt unless both ue and ce are present ("Query currently inaccessible"
// during a GPU reset, for example).
std::optional<RasCounts> ParseRasCounts(std::string_view text);

// The marketing name of an AMD PCI device id and revision, from a table
// that follows libdrm's amdgpu.ids ("AMD Instinct MI300X"). A revision the
// table does not list still matches when every listed revision of the device
// has the same name. nullopt when unknown.
std::optional<std::string_view> LookupAmdGpuMarketingName(uint16_t device_id,
                                                          uint8_t revision);

// GpuInfo::model for an AMD GPU: product_name when non-empty, else the
// table, else "AMD GPU 0x74a1".
std::string AmdGpuModel(std::string_view product_name, uint16_t device_id,
                        uint8_t revision);

// ---- Matching KFD nodes to PCI GPUs ----

// What matching needs to know of one physical GPU.
struct AmdKfdKey {
  uint64_t pci_domain = 0;
  // bus << 8 | device << 3 | function: what KFD prints as location_id.
  uint32_t pci_devid = 0;
  // Minor of the GPU's own render node (renderD128 -> 128).
  std::optional<uint64_t> render_minor;
};

// For each GPU of `gpus`, its KFD GPU nodes: partition 0 first (the node
// whose drm_render_minor is the GPU's own render node; without render minors,
// the node whose domain and location_id are the GPU's), then the other
// partitions of a CPX/DPX/... GPU in partition order. Partition nodes point
// at the render nodes of amdgpu_xcp platform devices and carry the physical
// GPU's PCI address with the partition number OR-ed in: into the function
// bits (kfd_topology.c, "location_id |= node_id") or, in some driver
// releases, into bits 28..31. They are matched on domain and bus/device
// (the way the ROCm device plugin does) and, when KFD lists one, on the
// unique_id that all partitions of a GPU share. A GPU without KFD nodes gets
// an empty list; nodes that match no GPU are ignored.
std::vector<std::vector<const KfdNode*>> MatchKfdNodes(
    const std::vector<AmdKfdKey>& gpus, const std::vector<KfdNode>& nodes);

// ---- Scan / Sample state ----

// One RAS block counter kept open.
struct AmdRasFile {
  std::string block;  // "umc", "gfx", ...
  KernelFile file;
};

// The files Sample reads for one physical GPU, opened by Scan. A file that
// does not exist stays closed (its value is "not reported").
struct AmdGpuFiles {
  KernelFile gpu_busy_percent;
  KernelFile mem_busy_percent;
  KernelFile vram_used;
  KernelFile power;  // hwmon power1_average, else power1_input (microwatts)
  // hwmon energy1_input (microjoules). amdgpu does not create it (its
  // energy counter is only in the binary gpu_metrics); read if a driver does.
  KernelFile energy;
  KernelFile temp_edge;  // hwmon millidegrees Celsius
  KernelFile temp_junction;
  KernelFile temp_mem;
  KernelFile sclk;          // pp_dpm_sclk
  KernelFile mclk;          // pp_dpm_mclk
  KernelFile socclk;        // pp_dpm_socclk
  KernelFile fan_input;     // hwmon fan1_input (RPM)
  KernelFile pwm;           // hwmon pwm1 (0..pwm1_max)
  KernelFile link_speed;    // current_link_speed
  KernelFile link_width;    // current_link_width
  KernelFile replay_count;  // pcie_replay_count
  std::vector<AmdRasFile> ras;
  // The binary gpu_metrics table; closed when absent or when Scan found it
  // unreadable or of an unknown format (logged once then).
  AmdGpuMetricsFile gpu_metrics;
};

// One logical GPU as Scan found it.
struct AmdGpuDevice {
  GpuInfo info;
  // False for partitions 1..n-1 of a partitioned GPU: amdgpu reports power,
  // temperature, clocks, utilization, VRAM and RAS per physical device only,
  // so those values are given once, on partition 0 (as rocm-smi shows N/A
  // for the other partitions), and never counted twice.
  bool reports_device_values = true;
  AmdGpuFiles files;
  // hwmon fan1_max (RPM) and pwm1_max, read once; nullopt when absent.
  std::optional<uint64_t> fan_max_rpm;
  std::optional<uint64_t> pwm_max;
  // Aldebaran (MI250X/MI250) packages two dies; only the primary die's SMU
  // reports package power, the secondary die's power1_average reads 0
  // (rocm-smi prints "N/A (Secondary die)"). A 0 there means "not reported".
  bool zero_power_is_unreported = false;
};

// One PCI function driven by amdgpu, before KFD partitions are applied.
struct AmdPhysicalGpu {
  AmdGpuDevice device;
  AmdKfdKey key;
};

// Lists class/drm/card* (skipping connectors such as card0-DP-1, platform
// devices and cards of other drivers), reads each amdgpu PCI function's
// static facts and opens its sample files. In class/drm order. An empty list
// when class/drm does not exist; Unavailable when it cannot be listed;
// InvalidArgument naming a malformed PCI id file.
StatusOr<std::vector<AmdPhysicalGpu>> ScanPhysicalAmdGpus(
    const HostRoots& roots);

// Finds the amdgpu GPUs under `roots`, reads their static facts and opens
// the files Sample will read. Sorted by BDF then partition; index 0.. in
// that order. Errors as GpuSource::Scan.
StatusOr<std::vector<AmdGpuDevice>> ScanAmdGpus(const HostRoots& roots);

// What Sample keeps of one physical GPU's gpu_metrics between cycles.
struct AmdGpuMetricsState {
  AmdGpuMetrics metrics;
  bool valid = false;  // `metrics` was read this cycle
  // The throttle residency counters of the previous cycle (formats 1.6+).
  std::optional<AmdThrottleResidency> previous_residency;
};

// Reads the dynamic values of `device` into `out`: each value it samples is
// set, or reset to nullopt when it cannot be read; time, vram_total_bytes
// and process fields are left as they are. The gpu_metrics table is read
// first (into `state`); a value it carries is taken from it and the text
// file that would give the same value is not read. Text files are read into
// `scratch` (reserve 16 KiB to read without allocating). Returns how many
// values were read; 0 means the device did not answer at all, and always 0
// for a device whose reports_device_values is false. `out` should arrive
// cleared by ClearAmdGpuSample so its vectors keep their capacity.
int SampleAmdGpu(const AmdGpuDevice& device, std::string* scratch,
                 AmdGpuMetricsState* state, GpuSample* out);

// Resets `sample` to an empty GpuSample, keeping the capacity of the
// vectors Sample fills (xcds, throttle_reasons) so that a steady-state
// Sample allocates nothing.
void ClearAmdGpuSample(GpuSample* sample);

// From one physical GPU's gpu_metrics: sets the values a sample takes from
// the table alone (energy, video clocks, throttle reasons and XCDs) on the
// sample of partition `partition_id`. Partition 0 also gets the throttle
// state (compared with `state->previous_residency`, then updated); with
// per-partition stats (format 1.6+) and more than one partition, each
// partition gets its own XCDs and their mean as utilization_ratio, without
// them partition 0 gets every XCD. Returns how many values were set.
int ApplyAmdGpuMetrics(AmdGpuMetricsState* state, int partition_id,
                       GpuSample* out);

}  // namespace lens

#endif  // LENS_GPU_AMDGPU_SYSFS_H_
