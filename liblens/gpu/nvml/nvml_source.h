// The "nvml" GpuSource over any NvmlApi (the dlopen'ed library in
// production, a replay in tests). NewNvmlGpuSource() in lens/gpu.h is this
// over OpenNvmlLibrary().
#ifndef LENS_GPU_NVML_NVML_SOURCE_H_
#define LENS_GPU_NVML_NVML_SOURCE_H_

#include <memory>
#include <string>

#include "gpu/nvml/nvml_api.h"
#include "lens/gpu.h"
#include "lens/status.h"

namespace lens::nvml {

// What the source reads beside NVML.
struct NvmlSourceOptions {
  // Where process names come from (<procfs>/<pid>/comm): a procfs of the
  // caller's own PID namespace, since NVML reports pids as that namespace
  // sees them (nvml_processes.h). Not the host roots of a GpuSource.
  std::string procfs = "/proc";
};

// Calls api->Init() and returns a source that calls api->Shutdown() when
// destroyed; the source shares ownership of `api`. Errors: Unavailable
// "nvmlInit failed: <NVML call>: <nvmlErrorString>" when Init fails, whatever
// NVML's code (a machine whose driver is not usable has no NVIDIA GPUs to
// report). The source is not thread-safe (gpu.h).
//
// Scan: one GpuInfo per device NVML lists, sorted by BDF, with its
// /dev/nvidiaN minor and, in MIG mode, its MIG devices. A device whose
// handle or PCI address cannot be read is left out with a warning in the log
// (it cannot be identified); its absence shows in DeviceSetToken.
// Sample: NotFound answers and failed calls leave the value nullopt; the call
// fails (Unavailable, with the first error) only when no value at all could
// be read from any device. ECC counts are the volatile ones (since driver
// load) and the aggregate ones (lifetime); processes carry their comm name
// and, in MIG mode, their GPU/compute instance; MIG devices their memory.
// DeviceSetToken: "<count>|<uuid>|<uuid>..." in NVML's index order, with
// "?" for a device whose handle or UUID cannot be read, each UUID followed
// by "[<MIG uuid>,...]" when MIG is on (a new MIG layout rescans).
StatusOr<std::unique_ptr<GpuSource>> NewNvmlGpuSourceFromApi(
    std::shared_ptr<NvmlApi> api, NvmlSourceOptions options = {});

}  // namespace lens::nvml

#endif  // LENS_GPU_NVML_NVML_SOURCE_H_
