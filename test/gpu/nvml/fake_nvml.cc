// A stand-in libnvidia-ml.so for the dlopen path of the NVML adapter: built
// as a loadable module by the tests, loaded by path. It exports what an older
// driver (R470-era NVML 11) has and nothing newer: nvmlInit without _v2,
// nvmlDeviceGetCount without _v2, the v1 nvmlDeviceGetPciInfo (16-byte busId
// in the legacy slot), nvmlDeviceGetMemoryInfo without _v2, the v1 compute
// process list, the "Throttle" name of the clock reasons and no
// nvmlDeviceGetFieldValues, so the adapter's fallbacks are what runs.
//
// Two GPUs: index 0 answers (Tesla P100 values from nvidia-smi -q -x of
// netdata's tesla-p100.xml), index 1 has fallen off the bus. With
// LENS_FAKE_NVML=driver_not_loaded in the environment nvmlInit fails the way
// it does when the nvidia kernel module is not loaded.
#include <cstdlib>
#include <cstring>

#include "gpu/nvml/nvml_abi.h"

using namespace lens::nvml::abi;  // NOLINT: the C ABI names

namespace {

constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kUninitialized = 1;
constexpr nvmlReturn_t kInvalidArgument = 2;
constexpr nvmlReturn_t kNotSupported = 3;
constexpr nvmlReturn_t kInsufficientSize = 7;
constexpr nvmlReturn_t kDriverNotLoaded = 9;
constexpr nvmlReturn_t kGpuIsLost = 15;

int g_init_count = 0;
// Any non-null pointer serves as the one device's handle.
int g_device_token = 0;
nvmlDevice_t Device0() {
  return reinterpret_cast<nvmlDevice_t>(&g_device_token);
}

bool InitFails() {
  const char* mode = std::getenv("LENS_FAKE_NVML");
  return mode != nullptr && std::strcmp(mode, "driver_not_loaded") == 0;
}

nvmlReturn_t CopyString(const char* value, char* out, unsigned length) {
  if (std::strlen(value) + 1 > length) return kInsufficientSize;
  std::strcpy(out, value);
  return kSuccess;
}

nvmlReturn_t CheckDevice(nvmlDevice_t device) {
  if (g_init_count == 0) return kUninitialized;
  return device == Device0() ? kSuccess : kInvalidArgument;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit() {
  if (InitFails()) return kDriverNotLoaded;
  ++g_init_count;
  return kSuccess;
}

nvmlReturn_t nvmlShutdown() {
  if (g_init_count == 0) return kUninitialized;
  --g_init_count;
  return kSuccess;
}

const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case kSuccess:
      return "Success";
    case kUninitialized:
      return "Uninitialized";
    case kInvalidArgument:
      return "Invalid Argument";
    case kNotSupported:
      return "Not Supported";
    case kDriverNotLoaded:
      return "Driver Not Loaded";
    case kGpuIsLost:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

// How many Init calls are unbalanced: lets the test check Shutdown.
int lens_fake_nvml_init_count() { return g_init_count; }

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned length) {
  return g_init_count == 0 ? kUninitialized
                           : CopyString("510.47.03", version, length);
}

nvmlReturn_t nvmlDeviceGetCount(unsigned* count) {
  if (g_init_count == 0) return kUninitialized;
  *count = 2;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index,
                                           nvmlDevice_t* device) {
  if (g_init_count == 0) return kUninitialized;
  if (index == 1) return kGpuIsLost;
  if (index != 0) return kInvalidArgument;
  *device = Device0();
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned length) {
  nvmlReturn_t ret = CheckDevice(d);
  return ret != kSuccess ? ret
                         : CopyString("Tesla P100-PCIE-16GB", name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned length) {
  nvmlReturn_t ret = CheckDevice(d);
  return ret != kSuccess
             ? ret
             : CopyString("GPU-3b1f0c4e-8d7a-11ec-a3c2-0242ac120002", uuid,
                          length);
}

nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char* serial,
                                 unsigned length) {
  nvmlReturn_t ret = CheckDevice(d);
  return ret != kSuccess ? ret : CopyString("0324217146032", serial, length);
}

// The v1 struct: char busId[16] then domain, bus, device, pciDeviceId,
// pciSubSystemId and four reserved words (52 bytes).
nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t d, void* pci) {
  nvmlReturn_t ret = CheckDevice(d);
  if (ret != kSuccess) return ret;
  unsigned char v1[52] = {};
  std::strcpy(reinterpret_cast<char*>(v1), "0000:3B:00.0");
  const unsigned ids[5] = {0x0000, 0x3b, 0x00, 0x15F810DE, 0x118F10DE};
  std::memcpy(v1 + 16, ids, sizeof(ids));
  std::memcpy(pci, v1, sizeof(v1));
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* memory) {
  nvmlReturn_t ret = CheckDevice(d);
  if (ret != kSuccess) return ret;
  memory->total = 16384ull << 20;
  memory->used = 103ull << 20;  // v1 "used" includes the reservation
  memory->free = memory->total - memory->used;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned* milliwatts) {
  nvmlReturn_t ret = CheckDevice(d);
  if (ret == kSuccess) *milliwatts = 26160;
  return ret;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d,
                                                 unsigned long long* mj) {
  nvmlReturn_t ret = CheckDevice(d);
  return ret != kSuccess ? ret : kNotSupported;  // before Volta
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor,
                                      unsigned* celsius) {
  nvmlReturn_t ret = CheckDevice(d);
  if (ret != kSuccess) return ret;
  if (sensor != kNvmlTemperatureGpu) return kInvalidArgument;
  *celsius = 38;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned* mhz) {
  nvmlReturn_t ret = CheckDevice(d);
  if (ret != kSuccess) return ret;
  if (type == kNvmlClockGraphics || type == kNvmlClockSm) {
    *mhz = 405;
  } else if (type == kNvmlClockMem) {
    *mhz = 715;
  } else {
    return kInvalidArgument;
  }
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(
    nvmlDevice_t d, unsigned long long* reasons) {
  nvmlReturn_t ret = CheckDevice(d);
  if (ret == kSuccess) *reasons = 0x1;  // GpuIdle
  return ret;
}

// The v1 layout: {pid, usedGpuMemory}, 16 bytes each. 40 processes (an MPS
// server's clients), more than a first guess of 32 entries holds; the last
// one's memory is NVML_VALUE_NOT_AVAILABLE.
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d,
                                                  unsigned* count,
                                                  nvmlProcessInfo_v1_t* infos) {
  nvmlReturn_t ret = CheckDevice(d);
  if (ret != kSuccess) return ret;
  constexpr unsigned kRunning = 40;
  if (*count < kRunning) {
    *count = kRunning;
    return kInsufficientSize;
  }
  for (unsigned i = 0; i < kRunning; ++i) {
    infos[i].pid = 4200 + i;
    infos[i].usedGpuMemory =
        i + 1 == kRunning ? kNvmlValueNotAvailable : (100ull + i) << 20;
  }
  *count = kRunning;
  return kSuccess;
}

}  // extern "C"
