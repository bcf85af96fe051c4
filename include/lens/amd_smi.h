// amd-smi as a secondary AMD GPU source: parsing `amd-smi <command> --json`
// output and, only when configured, running the tool under a time limit.
//
// Lens reads AMD GPUs from sysfs every cycle (NewAmdGpuSysfsSource). amd-smi
// fills the few fields sysfs lacks (marketing name, board serial, partition
// modes, power cap, processes); it is a Python program that takes seconds to
// start, so it is run rarely (at inventory time, or on a long period), never
// on every collection cycle.
//
//   lens::AmdSmiRunOptions run;                      // "amd-smi", 10 s limit
//   auto smi = lens::RunAmdSmi(run);                 // list, static, metric,
//   if (smi.ok()) {                                  // process
//     auto matched = lens::ApplyAmdSmi(*smi, &infos, &samples);
//   }
//
// Formats understood (key names differ between amd-smi versions; each known
// variant is read):
//  - ROCm 6.1/6.2 era (amd-smi 24.x): a top-level JSON array with one object
//    per GPU ({"gpu": 0, ...}).
//  - later releases: the same objects wrapped as {"gpu_data": [...]}, next to
//    other keys ("cpu_data", "core_data", "nic_data", ...) that are ignored.
//  - values as plain numbers or strings, as {"value": 42, "unit": "W"}
//    (converted to base units: W, C, Hz, bytes, ratios 0..1, J, GT/s), or
//    "N/A" (not reported: the field stays empty/nullopt, never 0).
//  - trailing commas before ']' / '}' (seen in amd-smi output) are accepted;
//    text before the JSON (amd-smi prints "WARNING: User is missing the
//    following required groups..." to stdout) is skipped.
// Note: amd-smi's "MB" is 2^20 bytes (it divides byte counts by 1024*1024),
// "KB" 2^10 and "GB" 2^30; "MiB"/"KiB"/"GiB" are read the same way.
#ifndef LENS_AMD_SMI_H_
#define LENS_AMD_SMI_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/export.h"
#include "lens/gpu.h"
#include "lens/status.h"

namespace lens {

// What amd-smi reported about one GPU (or one logical partition of one),
// merged over the commands that were parsed. Plain value. Strings are empty
// and optionals nullopt when not reported (absent or "N/A").
struct LENS_EXPORT AmdSmiGpu {
  // amd-smi's own GPU index ("gpu"). Outputs of `metric` and `process` carry
  // no BDF, only this index; it joins them to the `list`/`static` records of
  // the same amd-smi installation. -1 when the output had no index.
  int gpu = -1;
  // "dddd:bb:dd.f", lower case (list "bdf", static "bus.bdf").
  std::string bdf;
  // Logical partition within the physical GPU (list / static.partition
  // "partition_id"); nullopt on amd-smi versions that do not report it.
  std::optional<int> partition_id;
  std::string uuid;                // list "uuid"
  std::optional<uint64_t> kfd_id;  // list "kfd_id" (the KFD gpu_id)
  std::optional<int> kfd_node_id;  // list "node_id"
  std::string market_name;         // static asic.market_name
  std::string product_name;        // static board.product_name
  std::string serial;              // static board.product_serial
  // static asic.asic_serial as printed ("0xAF54E92B0A5D57C8"); the same number
  // as the amdgpu sysfs unique_id.
  std::string asic_serial;
  // static vbios (ifwi on newer versions) "part_number" ("113-M3000100-102",
  // what amdgpu sysfs calls vbios_version) and "version" (the VBIOS build
  // string, "022.040.003.042.000001").
  std::string vbios_part_number;
  std::string vbios_version;
  std::string driver_name;     // static driver.name ("amdgpu")
  std::string driver_version;  // static driver.version
  // static partition.compute_partition (accelerator_partition on newer
  // versions): "SPX", "DPX", "CPX", ...; memory_partition: "NPS1", "NPS4".
  std::string compute_partition;
  std::string memory_partition;
  std::optional<uint16_t> pci_vendor_id;            // asic.vendor_id
  std::optional<uint16_t> pci_device_id;            // asic.device_id
  std::optional<uint16_t> pci_subsystem_vendor_id;  // asic.subvendor_id
  std::optional<uint16_t> pci_subsystem_device_id;  // asic.subsystem_id
  std::optional<int> numa_node;                     // numa.node
  std::optional<uint64_t> vram_total_bytes;         // vram.size
  // Current board power cap (limit.socket_power; limit.ppt0.
  // socket_power_limit on newer versions) and its settable maximum
  // (limit.max_power; ppt0.max_power_limit).
  std::optional<double> power_cap_watts;
  std::optional<double> power_cap_max_watts;
  std::optional<double> pcie_max_speed_gtps;  // bus.max_pcie_speed
  std::optional<int> pcie_max_width;          // bus.max_pcie_width
  // `metric` values in base units and `process` entries
  // (sample.processes_known is true once a process output was read, also
  // when it listed none). sample.time is left at the epoch: the caller
  // stamps it. Graphics clock: the first reported engine (gfx_0).
  // Process memory: the VRAM part (memory_usage.vram_mem), else mem_usage.
  GpuSample sample;

  bool operator==(const AmdSmiGpu&) const = default;
};

// Limits on what the parser accepts.
struct LENS_EXPORT AmdSmiParseOptions {
  // Larger inputs are refused (ResourceExhausted) before parsing.
  size_t max_input_bytes = size_t{16} << 20;
};

// Parses the stdout of one `amd-smi <list|static|metric|process> --json`
// (the command is recognised by the keys present; other commands' sections
// are ignored). Returns one record per GPU object, in output order. Pure
// function, thread-safe.
// Errors: InvalidArgument for malformed JSON ("offset 123: Missing a comma or
// ']' after an array element.") or a bad field, naming its path
// ("gpu_data[2].power.socket_power.value: expected a number, got \"abc\"";
// "[1].mem_usage.used_vram.unit: unit \"mV\" is not a memory unit");
// ResourceExhausted when larger than options.max_input_bytes.
LENS_EXPORT StatusOr<std::vector<AmdSmiGpu>> ParseAmdSmiJson(
    std::string_view json, const AmdSmiParseOptions& options = {});

// Merges `more` into `*gpus`: records with the same amd-smi index ("gpu") are
// one GPU, and a field already set in `*gpus` is kept (first output wins);
// the rest are appended. The result is sorted by BDF, then partition, then
// index; records without a BDF come last. Errors: InvalidArgument when two
// records of one index disagree on BDF or partition (outputs of different
// machines or of a device set that changed between the commands).
LENS_EXPORT Status MergeAmdSmiGpus(std::vector<AmdSmiGpu> more,
                                   std::vector<AmdSmiGpu>* gpus);

// ParseAmdSmiJson on each output + MergeAmdSmiGpus. Errors name the output
// by position ("output 2: [0].bdf: ...").
LENS_EXPORT StatusOr<std::vector<AmdSmiGpu>> ParseAmdSmiOutputs(
    const std::vector<std::string_view>& outputs,
    const AmdSmiParseOptions& options = {});

// Fills the fields of `*infos` (and of `*samples`, the parallel vector of
// their samples; may be null) that sysfs left empty, from the amd-smi record
// of the same GPU. Never overrides a value that is already set. Only
// vendor kAmd entries are touched.
// Matching: BDF (case-insensitive) and partition_id. A record without a
// partition_id matches only a BDF that appears once on both sides (an
// unpartitioned GPU). A record whose BDF function equals its non-zero
// partition_id (older KFD reported the partition in the PCI function bits)
// is matched as the physical GPU's ".0" BDF with that partition. Records
// without a BDF are never applied.
// Fills: GpuInfo model (market_name, else board product_name; it also
// replaces the PCI-id fallback "AMD GPU 0x74a1" that gpu.h prescribes for an
// unknown marketing name), serial (board serial, else the asic serial the way
// sysfs prints unique_id: 16 lower-case hex digits), unique_id, vbios_version
// (part number, else version), PCI ids, numa_node, vram_total_bytes,
// kfd_gpu_id, compute/memory partition, driver and driver_version, PCIe
// maximum, power_cap_watts; GpuSample metric values and, when not already
// known, processes.
// Returns how many entries of *infos were matched. Errors: InvalidArgument
// when infos is null, or samples is non-null and not the size of *infos.
LENS_EXPORT StatusOr<size_t> ApplyAmdSmi(const std::vector<AmdSmiGpu>& smi,
                                         std::vector<GpuInfo>* infos,
                                         std::vector<GpuSample>* samples);

// The amd-smi subcommands Lens reads.
enum class AmdSmiCommand { kList, kStatic, kMetric, kProcess };

// "list", "static", "metric", "process".
LENS_EXPORT std::string_view AmdSmiCommandName(AmdSmiCommand command);

// How to run amd-smi. Plain value.
struct LENS_EXPORT AmdSmiRunOptions {
  // Path of the executable; a name without '/' is looked up in PATH.
  std::string executable = "amd-smi";
  // Run in this order, each as `<executable> <command> --json`.
  std::vector<AmdSmiCommand> commands = {
      AmdSmiCommand::kList, AmdSmiCommand::kStatic, AmdSmiCommand::kMetric,
      AmdSmiCommand::kProcess};
  // Wall-clock limit per command; on expiry the command's process group is
  // killed (SIGKILL) and reaped.
  std::chrono::milliseconds timeout{10000};
  // Larger stdout is refused (the process is killed); passed on to the
  // parser as its input limit.
  size_t max_output_bytes = size_t{16} << 20;
};

// Runs `<executable> <command> --json` once and returns its stdout. The
// child is started with posix_spawn (no shell), stdin from /dev/null, in its
// own process group, with default signal handling and no file descriptors of
// the caller other than stdio. Blocks the calling thread for at most about
// options.timeout; thread-safe (no shared state).
// Errors (each message names the command line): NotFound when the executable
// does not exist; PermissionDenied when it is not executable;
// DeadlineExceeded when it ran past the limit (the process group was
// killed); ResourceExhausted when stdout exceeded max_output_bytes; Unknown
// when it exited with a non-zero status or was killed by a signal (with the
// status and the start of its stderr); errno-derived codes when it could not
// be started.
LENS_EXPORT StatusOr<std::string> RunAmdSmiCommand(
    const AmdSmiRunOptions& options, AmdSmiCommand command);

// Runs every command of options.commands (stops at the first failure) and
// returns the merged records (ParseAmdSmiOutputs). Errors: those of
// RunAmdSmiCommand and of the parser, with the command line as context.
LENS_EXPORT StatusOr<std::vector<AmdSmiGpu>> RunAmdSmi(
    const AmdSmiRunOptions& options);

}  // namespace lens

#endif  // LENS_AMD_SMI_H_
