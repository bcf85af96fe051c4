// The compute-process side of the NVML adapter: decoding the entry layouts
// nvmlDeviceGetComputeRunningProcesses* write (they changed without a
// version bump once), and naming processes from procfs.
#ifndef LENS_GPU_NVML_NVML_PROCESSES_H_
#define LENS_GPU_NVML_NVML_PROCESSES_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpu/nvml/nvml_api.h"

namespace lens::nvml {

// The entry layouts: v1 {pid, usedGpuMemory} (16 bytes); v2 adds the MIG
// instance ids (24 bytes; what _v2 and, in most drivers, _v3 write); v3cc
// adds the protected memory (32 bytes; _v3 of R530 to early R535).
enum class NvmlProcessLayout { kV1, kV2, kV3cc };

// Bytes per entry of `layout`.
size_t NvmlProcessEntryBytes(NvmlProcessLayout layout);
// The most bytes any layout takes per entry: a buffer sized with it cannot
// be overrun whatever layout the driver really writes.
inline constexpr size_t kNvmlProcessMaxEntryBytes = 32;

// The layout the _v3 call writes, told apart by the entry points the
// library exports: drivers of the NVML 12.0-12.1 headers have
// nvmlDeviceGetConfComputeMemSizeInfo but not yet
// nvmlDeviceGetRunningProcessDetailList, and write v3cc; the others v2.
NvmlProcessLayout NvmlV3ProcessLayout(bool has_conf_compute_mem_size_info,
                                      bool has_running_process_detail_list);

// The first `count` entries of `bytes` in `layout` (fewer when `bytes` is
// short). NVML_VALUE_NOT_AVAILABLE memory and 0xFFFFFFFF instance ids
// become nullopt.
std::vector<NvmlProcess> DecodeNvmlProcesses(std::span<const std::byte> bytes,
                                             unsigned count,
                                             NvmlProcessLayout layout);

// Names processes by pid from <procfs>/<pid>/comm. NVML reports pids as the
// caller's PID namespace sees them (the driver translates them and leaves
// out processes the caller cannot see), so `procfs` must be a procfs of the
// caller's own namespace: the node agent's /proc (with hostPID: true in
// Kubernetes, to see every workload). When <procfs>/self/status shows a
// nested NSpid (the procfs belongs to an ancestor namespace, where the same
// numbers name other processes) nothing is named. Not thread-safe.
class NvmlProcessNames {
 public:
  explicit NvmlProcessNames(std::string procfs);

  // Starts a collection cycle: names read in the last one stay cached for
  // the pids asked for again in this one (a pid that leaves NVML's list is
  // forgotten, so a reused pid is read afresh).
  void BeginCycle();
  // The comm of `pid`, "" when it cannot be read (the process has exited)
  // or the procfs is not of the caller's namespace.
  const std::string& Name(uint32_t pid);
  // Whether names can be read at all (the namespace check passed).
  bool usable();

 private:
  std::string procfs_;
  std::optional<bool> usable_;
  std::map<uint32_t, std::string> current_;
  std::map<uint32_t, std::string> previous_;
};

}  // namespace lens::nvml

#endif  // LENS_GPU_NVML_NVML_PROCESSES_H_
