// A stand-in libnvidia-ml.so for a current driver (R550-era NVML 12): the
// _v2/_v3 entry points, MIG and the aggregate ECC counters. Built twice:
//   lens_fake_nvml_mig   _v3 processes in the 24-byte v2 layout, and
//                        nvmlDeviceGetRunningProcessDetailList exported
//                        (what drivers from late R535 on do);
//   lens_fake_nvml_v3cc  (LENS_FAKE_NVML_V3CC) _v3 processes in the 32-byte
//                        layout with nvmlDeviceGetConfComputeMemSizeInfo but
//                        no ...DetailList (R530 to early R535).
//
// Two NVIDIA H100 80GB HBM3 (values of the h100_8x replay, nvml/README.md):
//   index 0, bus 4C:00.0, /dev/nvidia2: MIG enabled, NVML MIG indexes 0 and 1
//     1g.10gb (GPU instances 9 and 10), 2 empty, 3 a 3g.40gb (GPU instance
//     2), 4..6 empty; memory sizes and SM counts of nvidia-smi mig -lgip on
//     an H100 80GB (9.75 and 39.50 GiB, 16 and 60 SMs). One process, in
//     GPU instance 2.
//   index 1, bus 5D:00.0, /dev/nvidia5: MIG disabled, ECC corrected 2
//     volatile / 14 aggregate, uncorrected 0 / 1; the processes of
//     LENS_FAKE_NVML_PIDS ("pid,pid,..."; default the three pids of the
//     H200 MIG capture), 1 GiB each.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/nvml/nvml_abi.h"

using namespace lens::nvml::abi;  // NOLINT: the C ABI names

namespace {

constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kUninitialized = 1;
constexpr nvmlReturn_t kInvalidArgument = 2;
constexpr nvmlReturn_t kNotSupported = 3;
constexpr nvmlReturn_t kNotFound = 6;
constexpr nvmlReturn_t kInsufficientSize = 7;
constexpr unsigned long long kMiB = 1ull << 20;

struct Mig {
  bool present;
  unsigned gi, ci, sm, slices;
  unsigned long long mib, used_mib;
  const char* uuid;
};
constexpr Mig kMigs[7] = {
    {true, 9, 0, 16, 1, 9984, 13, "MIG-1c0e2a94-7d35-5b8f-a6e1-3f9d20c4b701"},
    {true, 10, 0, 16, 1, 9984, 13, "MIG-1c0e2a94-7d35-5b8f-a6e1-3f9d20c4b702"},
    {false, 0, 0, 0, 0, 0, 0, nullptr},
    {true, 2, 0, 60, 3, 40448, 20010,
     "MIG-1c0e2a94-7d35-5b8f-a6e1-3f9d20c4b703"},
    {false, 0, 0, 0, 0, 0, 0, nullptr},
    {false, 0, 0, 0, 0, 0, 0, nullptr},
    {false, 0, 0, 0, 0, 0, 0, nullptr},
};

int g_init_count = 0;
char g_gpu[2];  // the GPUs' handles are &g_gpu[i]
char g_mig[7];  // the MIG devices' &g_mig[i]

int GpuOf(nvmlDevice_t d) {
  for (int i = 0; i < 2; ++i) {
    if (d == reinterpret_cast<nvmlDevice_t>(&g_gpu[i])) return i;
  }
  return -1;
}
const Mig* MigOf(nvmlDevice_t d) {
  for (int i = 0; i < 7; ++i) {
    if (d == reinterpret_cast<nvmlDevice_t>(&g_mig[i]) && kMigs[i].present) {
      return &kMigs[i];
    }
  }
  return nullptr;
}
// Uninitialized, an unknown handle, or a MIG handle where only GPUs answer.
nvmlReturn_t CheckGpu(nvmlDevice_t d) {
  if (g_init_count == 0) return kUninitialized;
  if (MigOf(d) != nullptr) return kNotSupported;
  return GpuOf(d) < 0 ? kInvalidArgument : kSuccess;
}
nvmlReturn_t CheckMig(nvmlDevice_t d) {
  if (g_init_count == 0) return kUninitialized;
  if (GpuOf(d) >= 0) return kNotSupported;
  return MigOf(d) == nullptr ? kInvalidArgument : kSuccess;
}
nvmlReturn_t CopyString(const char* value, char* out, unsigned length) {
  if (std::strlen(value) + 1 > length) return kInsufficientSize;
  std::strcpy(out, value);
  return kSuccess;
}

std::vector<unsigned> Pids() {
  const char* env = std::getenv("LENS_FAKE_NVML_PIDS");
  std::string text = env != nullptr ? env : "12249,12250,12267";
  std::vector<unsigned> pids;
  for (size_t at = 0; at < text.size();) {
    const size_t comma = std::min(text.find(',', at), text.size());
    pids.push_back(static_cast<unsigned>(
        std::strtoul(text.substr(at, comma - at).c_str(), nullptr, 10)));
    at = comma + 1;
  }
  return pids;
}

#ifdef LENS_FAKE_NVML_V3CC
using ProcessEntry = nvmlProcessInfo_v3cc_t;
#else
using ProcessEntry = nvmlProcessInfo_v2_t;
#endif

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2() {
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
    case kNotFound:
      return "Not Found";
    default:
      return "Unknown Error";
  }
}
nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned length) {
  return g_init_count == 0 ? kUninitialized
                           : CopyString("550.90.07", version, length);
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  if (g_init_count == 0) return kUninitialized;
  *count = 2;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* d) {
  if (g_init_count == 0) return kUninitialized;
  if (index > 1) return kInvalidArgument;
  *d = reinterpret_cast<nvmlDevice_t>(&g_gpu[index]);
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned length) {
  if (g_init_count == 0) return kUninitialized;
  if (GpuOf(d) < 0 && MigOf(d) == nullptr) return kInvalidArgument;
  return CopyString("NVIDIA H100 80GB HBM3", name, length);
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned length) {
  if (g_init_count == 0) return kUninitialized;
  if (const Mig* mig = MigOf(d)) return CopyString(mig->uuid, uuid, length);
  const int i = GpuOf(d);
  if (i < 0) return kInvalidArgument;
  return CopyString(i == 0 ? "GPU-8d2c6a1e-44b0-5f3e-9c17-a2e05b7d6c40"
                           : "GPU-8d2c6a1e-44b0-5f3e-9c17-a2e05b7d6c41",
                    uuid, length);
}
nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char* serial,
                                 unsigned length) {
  nvmlReturn_t ret = CheckGpu(d);
  if (ret != kSuccess) return ret;
  return CopyString(GpuOf(d) == 0 ? "1655022005471" : "1655022005472", serial,
                    length);
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  nvmlReturn_t ret = CheckGpu(d);
  if (ret != kSuccess) return ret;
  const int i = GpuOf(d);
  *pci = nvmlPciInfo_t{};
  std::strcpy(pci->busId, i == 0 ? "00000000:4C:00.0" : "00000000:5D:00.0");
  pci->bus = i == 0 ? 0x4c : 0x5d;
  pci->pciDeviceId = 0x233010DE;
  pci->pciSubSystemId = 0x16C110DE;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned* minor) {
  nvmlReturn_t ret = CheckGpu(d);
  if (ret == kSuccess) *minor = GpuOf(d) == 0 ? 2 : 5;
  return ret;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t* m) {
  if (g_init_count == 0) return kUninitialized;
  if (m->version != kNvmlMemoryV2Version) return 25;  // VERSION_MISMATCH
  if (const Mig* mig = MigOf(d)) {
    m->total = mig->mib * kMiB;
    m->reserved = 0;
    m->used = mig->used_mib * kMiB;
  } else if (GpuOf(d) >= 0) {
    m->total = 85520809984ull;
    m->reserved = 502267904ull;
    m->used = (GpuOf(d) == 0 ? 20036 : 3072) * kMiB;
  } else {
    return kInvalidArgument;
  }
  m->free = m->total - m->reserved - m->used;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int error_type,
                                         int counter_type,
                                         unsigned long long* count) {
  nvmlReturn_t ret = CheckGpu(d);
  if (ret != kSuccess) return ret;
  const bool corrected = error_type == kNvmlMemoryErrorCorrected;
  const bool aggregate = counter_type == kNvmlAggregateEcc;
  *count = GpuOf(d) == 0 ? 0
           : corrected   ? (aggregate ? 14 : 2)
                         : (aggregate ? 1 : 0);
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned* current,
                                  unsigned* pending) {
  nvmlReturn_t ret = CheckGpu(d);
  if (ret != kSuccess) return ret;
  *current = *pending = GpuOf(d) == 0 ? kNvmlDeviceMigEnable : 0;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned* count) {
  nvmlReturn_t ret = CheckGpu(d);
  if (ret == kSuccess) *count = GpuOf(d) == 0 ? 7 : 0;  // 0 when MIG is off
  return ret;
}
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned index,
                                                 nvmlDevice_t* mig) {
  nvmlReturn_t ret = CheckGpu(d);
  if (ret != kSuccess) return ret;
  if (GpuOf(d) != 0 || index >= 7) return kInvalidArgument;
  if (!kMigs[index].present) return kNotFound;
  *mig = reinterpret_cast<nvmlDevice_t>(&g_mig[index]);
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned* id) {
  nvmlReturn_t ret = CheckMig(d);
  if (ret == kSuccess) *id = MigOf(d)->gi;
  return ret;
}
nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t d, unsigned* id) {
  nvmlReturn_t ret = CheckMig(d);
  if (ret == kSuccess) *id = MigOf(d)->ci;
  return ret;
}
nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t d,
                                        nvmlDeviceAttributes_t* a) {
  nvmlReturn_t ret = CheckMig(d);
  if (ret != kSuccess) return ret;
  const Mig& mig = *MigOf(d);
  *a = nvmlDeviceAttributes_t{};
  a->multiprocessorCount = mig.sm;
  a->gpuInstanceSliceCount = mig.slices;
  a->computeInstanceSliceCount = mig.slices;
  a->memorySizeMB = mig.mib;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d,
                                                     unsigned* count,
                                                     ProcessEntry* infos) {
  nvmlReturn_t ret = CheckGpu(d);
  if (ret != kSuccess) return ret;
  std::vector<ProcessEntry> list;
  const std::vector<unsigned> pids = Pids();
  for (size_t i = 0; i < pids.size(); ++i) {
    if (GpuOf(d) == 0 && i > 0) break;
    ProcessEntry e{};
    e.pid = pids[i];
    e.usedGpuMemory = 1024 * kMiB;
    e.gpuInstanceId = GpuOf(d) == 0 ? 2 : kNvmlInstanceIdNone;
    e.computeInstanceId = GpuOf(d) == 0 ? 0 : kNvmlInstanceIdNone;
    list.push_back(e);
  }
  if (*count < list.size()) {
    *count = static_cast<unsigned>(list.size());
    return kInsufficientSize;
  }
  std::memcpy(infos, list.data(), list.size() * sizeof(ProcessEntry));
  *count = static_cast<unsigned>(list.size());
  return kSuccess;
}
// Exported only for their presence: they date the _v3 layout.
nvmlReturn_t nvmlDeviceGetConfComputeMemSizeInfo(nvmlDevice_t, void*) {
  return kNotSupported;
}
#ifndef LENS_FAKE_NVML_V3CC
nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t, void*) {
  return kNotSupported;
}
#endif

}  // extern "C"
