// NvmlApi replayed from a JSON file: what each NVML call returned on a real
// machine, keyed by the NVML function name, so tests run the GPU source
// against real values and real failures without a GPU.
//
//   {
//     "nvmlSystemGetDriverVersion": "550.90.07",
//     "nvmlSystemGetNVMLVersion": "12.550.90.07",
//     "devices": [
//       {"nvmlDeviceGetName": "NVIDIA H100 80GB HBM3",
//        "nvmlDeviceGetPowerUsage": 72514,
//        "nvmlDeviceGetFanSpeed": {"nvmlReturn": "NVML_ERROR_NOT_SUPPORTED"},
//        "nvmlDeviceGetClockInfo": {"NVML_CLOCK_GRAPHICS": 1980, ...},
//        ...},
//       {"nvmlDeviceGetHandleByIndex_v2":
//            {"nvmlReturn": "NVML_ERROR_GPU_IS_LOST"}}
//     ]
//   }
//
// Any value (or, for calls with an enum argument, any per-argument value) may
// be {"nvmlReturn": "<nvmlReturn_t name>"}: the call fails with that code.
// Integers may be JSON numbers or "0x..." strings (bitmasks and PCI ids the
// way nvidia-smi prints them). Optional top-level keys: "nvmlInit_v2" (an
// error object: init fails) and "nvmlDeviceGetCount_v2" (default: the number
// of devices). Keys, by call:
//   nvmlDeviceGetHandleByIndex_v2   only as an error object
//   nvmlDeviceGetName / GetUUID / GetSerial / GetVbiosVersion    strings
//   nvmlDeviceGetPciInfo_v3    {"busId", "pciDeviceId", "pciSubSystemId"}
//   nvmlDeviceGetMemoryInfo_v2 {"total", "reserved", "free", "used"} bytes,
//     or nvmlDeviceGetMemoryInfo {"total", "free", "used"} (older drivers)
//   nvmlDeviceGetUtilizationRates {"gpu", "memory"} percent
//   nvmlDeviceGetMinorNumber, GetPowerUsage (mW), GetEnforcedPowerLimit
//     (mW), GetTotalEnergyConsumption (mJ), GetCurrPcieLinkGeneration,
//     GetCurrPcieLinkWidth, GetMaxPcieLinkGeneration, GetMaxPcieLinkWidth,
//     GetPcieReplayCounter, GetFanSpeed (%),
//     GetCurrentClocksEventReasons (bitmask; drivers before R535:
//     GetCurrentClocksThrottleReasons)                           integers
//   nvmlDeviceGetTemperature {"NVML_TEMPERATURE_GPU"} celsius
//   nvmlDeviceGetFieldValues {"NVML_FI_DEV_MEMORY_TEMP"} celsius
//   nvmlDeviceGetClockInfo {"NVML_CLOCK_GRAPHICS", "NVML_CLOCK_SM",
//     "NVML_CLOCK_MEM"} MHz
//   nvmlDeviceGetTotalEccErrors {"NVML_VOLATILE_ECC": {...},
//     "NVML_AGGREGATE_ECC": {...}}, each {"NVML_MEMORY_ERROR_TYPE_CORRECTED",
//     "NVML_MEMORY_ERROR_TYPE_UNCORRECTED"}
//   nvmlDeviceGetComputeRunningProcesses_v3 [{"pid", "usedGpuMemory"}],
//     in MIG mode also "gpuInstanceId", "computeInstanceId"
//   nvmlDeviceGetMigMode {"current", "pending"} (1 = enabled)
//   nvmlDeviceGetMaxMigDeviceCount   integer
//   migDevices  [MIG device objects] by MIG index, each with the per-device
//     keys above that NVML answers on a MIG handle (nvmlDeviceGetUUID,
//     nvmlDeviceGetMemoryInfo_v2) and nvmlDeviceGetGpuInstanceId,
//     nvmlDeviceGetComputeInstanceId (integers), nvmlDeviceGetAttributes_v2
//     {"multiprocessorCount", "gpuInstanceSliceCount",
//     "computeInstanceSliceCount", "memorySizeMB"}; an index past the list,
//     or an entry {"nvmlDeviceGetMigDeviceHandleByIndex": {"nvmlReturn":
//     ...}}, has no MIG device (NVML_ERROR_NOT_FOUND)
// A key the file lacks is an InvalidArgument error naming the file, the
// device and the key (a fixture bug, not an NVML answer).
#ifndef LENS_GPU_NVML_NVML_REPLAY_H_
#define LENS_GPU_NVML_NVML_REPLAY_H_

#include <memory>
#include <string>

#include "gpu/nvml/nvml_api.h"
#include "lens/status.h"

namespace lens::nvml {

// Like the real library, every call but Init fails with
// NVML_ERROR_UNINITIALIZED until Init succeeds (and again after the last
// Shutdown). Thread-safe like the library: calls may run on several threads
// while Load replaces the machine (a call sees the old or the new one).
class NvmlReplay : public NvmlApi {
 public:
  // Reads and parses `path`. Errors: NotFound/PermissionDenied naming the
  // path, InvalidArgument for malformed JSON or a file without "devices".
  static StatusOr<std::shared_ptr<NvmlReplay>> Open(const std::string& path);

  // Replaces the replayed machine with the one in `path` (a changed device
  // set), keeping the Init count. Errors as Open; on error nothing changes.
  virtual Status Load(const std::string& path) = 0;
  // Successful Init calls not yet balanced by Shutdown.
  virtual int init_count() const = 0;
};

}  // namespace lens::nvml

#endif  // LENS_GPU_NVML_NVML_REPLAY_H_
