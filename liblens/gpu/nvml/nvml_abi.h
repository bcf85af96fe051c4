// The C ABI of the few libnvidia-ml.so.1 entry points Lens calls, declared
// here so that nothing at build time depends on NVIDIA's headers or library.
// Layouts and signatures follow NVIDIA's public nvml.h (as vendored by
// github.com/NVIDIA/go-nvml, gen/nvml/nvml.h; stable since NVML API 11):
// only this file may know them, with the table of entry point names (and
// their older aliases) nvml_library.cc resolves. Also used by the stand-in
// library the tests build.
#ifndef LENS_GPU_NVML_NVML_ABI_H_
#define LENS_GPU_NVML_NVML_ABI_H_

#include <array>
#include <cstddef>
#include <iterator>

namespace lens::nvml::abi {

using nvmlReturn_t = int;  // a C enum: int-sized on every Linux ABI
using nvmlDevice_t = struct nvmlDevice_st*;

// nvmlPciInfo_t of nvmlDeviceGetPciInfo_v2/_v3. The unversioned (v1) call
// fills a smaller, older struct whose 16-byte busId sits where busIdLegacy
// is, followed by the same five ids: passing this larger struct is safe.
struct nvmlPciInfo_t {
  char busIdLegacy[16];  // "%04X:%02X:%02X.0"
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;     // (device << 16) | vendor
  unsigned int pciSubSystemId;  // (subsystem device << 16) | vendor
  char busId[32];               // "%08X:%02X:%02X.0"
};

struct nvmlMemory_t {  // nvmlDeviceGetMemoryInfo
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;  // includes the driver's reservation
};

struct nvmlMemory_v2_t {  // nvmlDeviceGetMemoryInfo_v2
  unsigned int version;   // kNvmlMemoryV2Version
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
// NVML_STRUCT_VERSION(Memory, 2): sizeof | (2 << 24).
inline constexpr unsigned kNvmlMemoryV2Version =
    static_cast<unsigned>(sizeof(nvmlMemory_v2_t)) | (2u << 24);

struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};

// nvmlDeviceGetComputeRunningProcesses (unversioned).
struct nvmlProcessInfo_v1_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
// ..._v2 and ..._v3 (nvmlProcessInfo_t).
struct nvmlProcessInfo_v2_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
// What ..._v3 writes in the drivers of the NVML 12.0-12.1 headers (R530 to
// early R535, e.g. 535.54.03): the v2 fields and the confidential-computing
// protected memory, 32 bytes an entry. Later drivers went back to the v2
// layout for _v3 and moved this one to nvmlDeviceGetRunningProcessDetailList.
struct nvmlProcessInfo_v3cc_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
  unsigned long long usedGpuCcProtectedMemory;
};
// usedGpuMemory when the driver cannot tell (NVML_VALUE_NOT_AVAILABLE).
inline constexpr unsigned long long kNvmlValueNotAvailable = ~0ull;
// gpuInstanceId/computeInstanceId of a process outside MIG mode.
inline constexpr unsigned kNvmlInstanceIdNone = 0xFFFFFFFFu;

// nvmlDeviceGetAttributes(_v2), answered for MIG device handles only.
struct nvmlDeviceAttributes_t {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;  // MiB
};

union nvmlValue_t {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
};

struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;  // nvmlValueType_t
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};

// nvmlValueType_t.
enum : int {
  kValueTypeDouble = 0,
  kValueTypeUnsignedInt = 1,
  kValueTypeUnsignedLong = 2,
  kValueTypeUnsignedLongLong = 3,
  kValueTypeSignedLongLong = 4,
  kValueTypeSignedInt = 5,
  kValueTypeUnsignedShort = 6,
};

// Enumerators passed to the calls.
inline constexpr int kNvmlTemperatureGpu = 0;  // nvmlTemperatureSensors_t
inline constexpr unsigned kNvmlFiDevMemoryTemp = 82;  // NVML_FI_DEV_MEMORY_TEMP
inline constexpr int kNvmlClockGraphics = 0;          // nvmlClockType_t
inline constexpr int kNvmlClockSm = 1;
inline constexpr int kNvmlClockMem = 2;
inline constexpr int kNvmlMemoryErrorCorrected = 0;  // nvmlMemoryErrorType_t
inline constexpr int kNvmlMemoryErrorUncorrected = 1;
inline constexpr int kNvmlVolatileEcc = 0;  // nvmlEccCounterType_t
inline constexpr int kNvmlAggregateEcc = 1;
inline constexpr int kNvmlErrorArgumentVersionMismatch = 25;
inline constexpr unsigned kNvmlDeviceMigEnable = 1;  // NVML_DEVICE_MIG_ENABLE

static_assert(sizeof(nvmlPciInfo_t) == 68);
static_assert(sizeof(nvmlMemory_v2_t) == 40);
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16);
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24);
static_assert(sizeof(nvmlProcessInfo_v3cc_t) == 32);
static_assert(sizeof(nvmlDeviceAttributes_t) == 40);
static_assert(sizeof(nvmlFieldValue_t) == 40);
static_assert(offsetof(nvmlFieldValue_t, value) == 32);

// Signatures (nvml.h), by shape.
using FnVoid = nvmlReturn_t (*)();
using FnErrorString = const char* (*)(nvmlReturn_t);
using FnSystemString = nvmlReturn_t (*)(char*, unsigned int);
using FnCount = nvmlReturn_t (*)(unsigned int*);
using FnHandleByIndex = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using FnDeviceString = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using FnDeviceUint = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using FnDeviceUll = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);
using FnPciInfo = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
using FnMemory = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using FnMemoryV2 = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_v2_t*);
using FnUtilization = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using FnTemperature = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*);
using FnFieldValues = nvmlReturn_t (*)(nvmlDevice_t, int, nvmlFieldValue_t*);
using FnClock = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*);
using FnTotalEcc = nvmlReturn_t (*)(nvmlDevice_t, int, int,
                                    unsigned long long*);
using FnProcessesV1 = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*,
                                       nvmlProcessInfo_v1_t*);
using FnProcessesV2 = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*,
                                       nvmlProcessInfo_v2_t*);
// The process calls with the entry layout left to the caller.
using FnProcessesRaw = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, void*);
using FnMigMode = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*);
using FnMigHandle = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlDevice_t*);
using FnAttributes = nvmlReturn_t (*)(nvmlDevice_t, nvmlDeviceAttributes_t*);

// The entry points Lens calls. Where two names share a slot they share a
// signature and struct layout; the first name found wins.
enum Sym : int {
  kInit,
  kShutdown,
  kErrorString,
  kDriverVersion,
  kNvmlVersion,
  kCount,
  kHandleByIndex,
  kName,
  kUuid,
  kSerial,
  kVbios,
  kPciInfo,    // v3/v2 layout
  kPciInfoV1,  // busId in the busIdLegacy slot
  kMinor,
  kMemoryV2,
  kMemoryV1,
  kUtilization,
  kPower,
  kPowerLimit,
  kEnergy,
  kTemperature,
  kFieldValues,
  kClock,
  kCurrGen,
  kCurrWidth,
  kMaxGen,
  kMaxWidth,
  kReplay,
  kEcc,
  kEventReasons,
  kProcesses,    // v3/v2 layout
  kProcessesV1,  // v1 layout
  kFan,
  kMigMode,
  kMaxMigCount,
  kMigHandle,
  kGpuInstanceId,
  kComputeInstanceId,
  kAttributes,
  // Looked up only to tell which layout ..._v3 writes (never called).
  kConfComputeMemSize,
  kProcessDetailList,
  kSymCount
};

struct SymbolSpec {
  Sym sym;
  std::array<const char*, 2> names;  // newest first; nullptr = none
  bool required;
};

inline constexpr SymbolSpec kSymbols[] = {
    {kInit, {"nvmlInit_v2", "nvmlInit"}, true},
    {kShutdown, {"nvmlShutdown"}, true},
    {kErrorString, {"nvmlErrorString"}, true},
    {kDriverVersion, {"nvmlSystemGetDriverVersion"}, false},
    {kNvmlVersion, {"nvmlSystemGetNVMLVersion"}, false},
    {kCount, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}, true},
    {kHandleByIndex,
     {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"},
     true},
    {kName, {"nvmlDeviceGetName"}, false},
    {kUuid, {"nvmlDeviceGetUUID"}, false},
    {kSerial, {"nvmlDeviceGetSerial"}, false},
    {kVbios, {"nvmlDeviceGetVbiosVersion"}, false},
    {kPciInfo, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"}, false},
    {kPciInfoV1, {"nvmlDeviceGetPciInfo"}, false},
    {kMinor, {"nvmlDeviceGetMinorNumber"}, false},
    {kMemoryV2, {"nvmlDeviceGetMemoryInfo_v2"}, false},
    {kMemoryV1, {"nvmlDeviceGetMemoryInfo"}, false},
    {kUtilization, {"nvmlDeviceGetUtilizationRates"}, false},
    {kPower, {"nvmlDeviceGetPowerUsage"}, false},
    {kPowerLimit, {"nvmlDeviceGetEnforcedPowerLimit"}, false},
    {kEnergy, {"nvmlDeviceGetTotalEnergyConsumption"}, false},
    {kTemperature, {"nvmlDeviceGetTemperature"}, false},
    {kFieldValues, {"nvmlDeviceGetFieldValues"}, false},
    {kClock, {"nvmlDeviceGetClockInfo"}, false},
    {kCurrGen, {"nvmlDeviceGetCurrPcieLinkGeneration"}, false},
    {kCurrWidth, {"nvmlDeviceGetCurrPcieLinkWidth"}, false},
    {kMaxGen, {"nvmlDeviceGetMaxPcieLinkGeneration"}, false},
    {kMaxWidth, {"nvmlDeviceGetMaxPcieLinkWidth"}, false},
    {kReplay, {"nvmlDeviceGetPcieReplayCounter"}, false},
    {kEcc, {"nvmlDeviceGetTotalEccErrors"}, false},
    // Renamed in NVML 12.x (R535); the old name is kept as an alias.
    {kEventReasons,
     {"nvmlDeviceGetCurrentClocksEventReasons",
      "nvmlDeviceGetCurrentClocksThrottleReasons"},
     false},
    {kProcesses,
     {"nvmlDeviceGetComputeRunningProcesses_v3",
      "nvmlDeviceGetComputeRunningProcesses_v2"},
     false},
    {kProcessesV1, {"nvmlDeviceGetComputeRunningProcesses"}, false},
    {kFan, {"nvmlDeviceGetFanSpeed"}, false},
    // MIG: NVML 11 (R450) and newer.
    {kMigMode, {"nvmlDeviceGetMigMode"}, false},
    {kMaxMigCount, {"nvmlDeviceGetMaxMigDeviceCount"}, false},
    {kMigHandle, {"nvmlDeviceGetMigDeviceHandleByIndex"}, false},
    {kGpuInstanceId, {"nvmlDeviceGetGpuInstanceId"}, false},
    {kComputeInstanceId, {"nvmlDeviceGetComputeInstanceId"}, false},
    {kAttributes,
     {"nvmlDeviceGetAttributes_v2", "nvmlDeviceGetAttributes"},
     false},
    {kConfComputeMemSize, {"nvmlDeviceGetConfComputeMemSizeInfo"}, false},
    {kProcessDetailList, {"nvmlDeviceGetRunningProcessDetailList"}, false},
};
static_assert(std::size(kSymbols) == kSymCount);

}  // namespace lens::nvml::abi

#endif  // LENS_GPU_NVML_NVML_ABI_H_
