// MIG devices of an NVIDIA GPU through NvmlApi: the inventory (MigDevice
// entries of GpuInfo) and a cheap token of the MIG layout, so that a
// created or destroyed instance triggers a rescan.
#ifndef LENS_GPU_NVML_NVML_MIG_H_
#define LENS_GPU_NVML_NVML_MIG_H_

#include <optional>
#include <string>
#include <vector>

#include "gpu/nvml/nvml_api.h"
#include "lens/gpu.h"
#include "lens/status.h"

namespace lens::nvml {

// What ReadMigDevices found for one GPU.
struct MigScan {
  // nullopt when the GPU has no MIG (NotFound from nvmlDeviceGetMigMode).
  std::optional<bool> enabled;
  std::vector<MigDevice> devices;
  std::vector<NvmlDevice> handles;  // same order, for sampling
  // The first failure other than NotFound (left-out values), else OK.
  Status first_error;
};

// Reads MIG mode and, when enabled, every MIG device index up to
// nvmlDeviceGetMaxMigDeviceCount: NotFound indexes are empty slots; a MIG
// device whose handle fails otherwise is left out (first_error says why).
// `parent_memory_total_bytes` (0 when unknown) names the profiles.
MigScan ReadMigDevices(NvmlApi& api, NvmlDevice gpu,
                       uint64_t parent_memory_total_bytes);

// "" for a GPU without MIG enabled, else "[<uuid>,<uuid>...]" of its MIG
// devices by index ("?" where a handle or UUID cannot be read).
std::string MigLayoutToken(NvmlApi& api, NvmlDevice gpu);

}  // namespace lens::nvml

#endif  // LENS_GPU_NVML_NVML_MIG_H_
