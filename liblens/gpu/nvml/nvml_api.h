// The narrow slice of NVML that Lens uses, in Lens types.
//
// Two implementations: the real library loaded at run time with dlopen
// (nvml_library.h) and a replay of a JSON file (nvml_replay.h) for tests.
// Every call returns a StatusOr: NVML_ERROR_NOT_SUPPORTED (and the other "the
// device has no such value" returns) become NotFound, which the GPU source
// treats as "not reported"; other failures keep nvmlErrorString's text and
// name the NVML function ("nvmlDeviceGetPowerUsage: GPU is lost").
#ifndef LENS_GPU_NVML_NVML_API_H_
#define LENS_GPU_NVML_NVML_API_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"

namespace lens::nvml {

// An opaque device handle from DeviceByIndex or MigDeviceByIndex: the
// library's nvmlDevice_t, or the replay's device position (`index`, and
// `mig_index` for a MIG device of that GPU). Valid until Shutdown.
struct NvmlDevice {
  void* handle = nullptr;
  unsigned index = 0;
  int mig_index = -1;
};

// nvmlDeviceGetPciInfo: the address and the PCI ids.
struct NvmlPciInfo {
  std::string bdf;                // "0000:17:00.0" (NormalizeNvmlBusId)
  uint32_t pci_device_id = 0;     // (device id << 16) | vendor id: 0x233010de
  uint32_t pci_subsystem_id = 0;  // (subsystem device << 16) | subsystem vendor
};

// nvmlDeviceGetMemoryInfo(_v2), in bytes. `used` excludes the driver's
// reservation when the v2 call was available (what nvidia-smi shows).
struct NvmlMemory {
  uint64_t total_bytes = 0;
  uint64_t used_bytes = 0;
  std::optional<uint64_t> reserved_bytes;  // v2 only
};

// nvmlDeviceGetUtilizationRates, percent over the driver's sample period.
struct NvmlUtilization {
  unsigned gpu_percent = 0;
  unsigned memory_percent = 0;
};

// nvmlDeviceGetTotalEccErrors for one counter type (both error types).
struct NvmlEccCounts {
  uint64_t corrected = 0;
  uint64_t uncorrected = 0;
};

// One entry of nvmlDeviceGetComputeRunningProcesses(_v3/_v2).
struct NvmlProcess {
  uint32_t pid = 0;
  // nullopt when NVML reports NVML_VALUE_NOT_AVAILABLE (e.g. under WDDM).
  std::optional<uint64_t> used_memory_bytes;
  // MIG mode only (v2/v3 layouts); nullopt for 0xFFFFFFFF or the v1 layout.
  std::optional<uint32_t> gpu_instance_id;
  std::optional<uint32_t> compute_instance_id;
};

// nvmlDeviceGetAttributes(_v2) of a MIG device (the fields Lens reads).
struct NvmlDeviceAttributes {
  unsigned multiprocessor_count = 0;
  unsigned gpu_instance_slice_count = 0;
  unsigned compute_instance_slice_count = 0;
  uint64_t memory_size_mib = 0;
};

enum class NvmlClock { kGraphics, kSm, kMemory };     // nvmlClockType_t
enum class NvmlSensor { kGpu, kMemory };              // die, HBM/GDDR
enum class NvmlEccCounter { kVolatile, kAggregate };  // nvmlEccCounterType_t
enum class NvmlPcieLink { kCurrent, kMax };

// NVML, narrowed to what Lens reads. Implementations are used from one thread
// at a time (NVML itself is thread-safe; the replay is not).
class NvmlApi {
 public:
  virtual ~NvmlApi();

  // nvmlInit_v2 (or nvmlInit). Errors: the NVML failure (Unavailable for
  // "Driver Not Loaded", "Driver/library version mismatch").
  virtual Status Init() = 0;
  // nvmlShutdown; balances one successful Init.
  virtual Status Shutdown() = 0;

  // "550.90.07"; "12.550.90.07".
  virtual StatusOr<std::string> DriverVersion() = 0;
  virtual StatusOr<std::string> NvmlVersion() = 0;
  virtual StatusOr<unsigned> DeviceCount() = 0;
  virtual StatusOr<NvmlDevice> DeviceByIndex(unsigned index) = 0;

  virtual StatusOr<std::string> Name(NvmlDevice device) = 0;
  virtual StatusOr<std::string> Uuid(NvmlDevice device) = 0;    // "GPU-..."
  virtual StatusOr<std::string> Serial(NvmlDevice device) = 0;  // board
  virtual StatusOr<std::string> VbiosVersion(NvmlDevice device) = 0;
  virtual StatusOr<NvmlPciInfo> PciInfo(NvmlDevice device) = 0;
  virtual StatusOr<unsigned> MinorNumber(
      NvmlDevice device) = 0;  // /dev/nvidiaN

  virtual StatusOr<NvmlMemory> Memory(NvmlDevice device) = 0;
  virtual StatusOr<NvmlUtilization> Utilization(NvmlDevice device) = 0;
  virtual StatusOr<unsigned> PowerUsageMilliwatts(NvmlDevice device) = 0;
  virtual StatusOr<unsigned> EnforcedPowerLimitMilliwatts(
      NvmlDevice device) = 0;
  // Since the driver was loaded (Volta and newer).
  virtual StatusOr<uint64_t> TotalEnergyMillijoules(NvmlDevice device) = 0;
  // kGpu: nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU); kMemory: the field
  // value NVML_FI_DEV_MEMORY_TEMP (HBM boards; NotFound elsewhere).
  virtual StatusOr<int> TemperatureCelsius(NvmlDevice device,
                                           NvmlSensor sensor) = 0;
  virtual StatusOr<unsigned> ClockMhz(NvmlDevice device, NvmlClock clock) = 0;
  virtual StatusOr<unsigned> PcieLinkGeneration(NvmlDevice device,
                                                NvmlPcieLink which) = 0;
  virtual StatusOr<unsigned> PcieLinkWidth(NvmlDevice device,
                                           NvmlPcieLink which) = 0;
  virtual StatusOr<unsigned> PcieReplayCount(NvmlDevice device) = 0;
  virtual StatusOr<NvmlEccCounts> EccErrors(NvmlDevice device,
                                            NvmlEccCounter counter) = 0;
  // nvmlDeviceGetCurrentClocksEventReasons (formerly ...ThrottleReasons):
  // the nvmlClocksEventReason* bitmask.
  virtual StatusOr<uint64_t> ClocksEventReasons(NvmlDevice device) = 0;
  virtual StatusOr<std::vector<NvmlProcess>> ComputeProcesses(
      NvmlDevice device) = 0;
  virtual StatusOr<unsigned> FanSpeedPercent(NvmlDevice device) = 0;

  // MIG (data-center GPUs from Ampere on). nvmlDeviceGetMigMode: whether
  // the current mode is enabled; NotFound on GPUs without MIG.
  virtual StatusOr<bool> MigEnabled(NvmlDevice device) = 0;
  // 0 when MIG is off.
  virtual StatusOr<unsigned> MaxMigDeviceCount(NvmlDevice device) = 0;
  // NotFound (NVML_ERROR_NOT_FOUND) for an index with no MIG device. The
  // handle answers Uuid ("MIG-..."), Memory and the calls below.
  virtual StatusOr<NvmlDevice> MigDeviceByIndex(NvmlDevice parent,
                                                unsigned index) = 0;
  virtual StatusOr<unsigned> GpuInstanceId(NvmlDevice mig) = 0;
  virtual StatusOr<unsigned> ComputeInstanceId(NvmlDevice mig) = 0;
  virtual StatusOr<NvmlDeviceAttributes> Attributes(NvmlDevice mig) = 0;
};

// nvmlReturn_t values Lens names (nvml.h).
inline constexpr int kNvmlSuccess = 0;
inline constexpr int kNvmlErrorNotSupported = 3;
inline constexpr int kNvmlErrorInsufficientSize = 7;
inline constexpr int kNvmlErrorFunctionNotFound = 13;
inline constexpr int kNvmlErrorUnknown = 999;

// Status for a failed NVML call: "<call>: <text>" where `text` is what
// nvmlErrorString returned (NvmlReturnText when empty). NOT_SUPPORTED,
// NOT_FOUND and NO_DATA -> NotFound; NO_PERMISSION -> PermissionDenied;
// driver/GPU availability errors -> Unavailable; others as the table in
// nvml_api.cc says (Unknown for codes it does not list).
Status NvmlStatus(int nvml_return, std::string_view call,
                  std::string_view text = {});
// nvml.h's name of a return code ("NVML_ERROR_GPU_IS_LOST"); empty if unknown.
std::string_view NvmlReturnName(int nvml_return);
// nvmlErrorString's text for a code ("GPU is lost"); "Unknown Error" if
// unknown.
std::string_view NvmlReturnText(int nvml_return);
// Inverse of NvmlReturnName; nullopt for a name not in nvml.h's list.
std::optional<int> ParseNvmlReturnName(std::string_view name);

// NVML's bus id ("00000000:17:00.0", 8-digit domain, upper case; or the
// legacy "0000:17:00.0") -> "0000:17:00.0", lower case, 4-digit domain (more
// digits only for a domain above 0xffff). InvalidArgument otherwise.
StatusOr<std::string> NormalizeNvmlBusId(std::string_view bus_id);

// PCIe generation -> transfer rate per lane in GT/s (1 -> 2.5 ... 6 -> 64);
// nullopt for a generation NVML should not report.
std::optional<double> PcieGenerationGtps(unsigned generation);

// A MIG device's profile name from its attributes and its parent GPU's
// memory size, as nvidia-smi -L and the NVIDIA device plugin print it:
// "<g>g.<gb>gb", or "<c>c.<g>g.<gb>gb" when the compute instance has fewer
// slices than its GPU instance. <gb> is the device's share of the parent's
// memory rounded up to eighths, times the parent's size in whole GiB
// (rounded up), rounded: 71424 MiB of 143771 -> 71. Empty when a count or
// the parent size is 0.
std::string MigProfileName(const NvmlDeviceAttributes& attributes,
                           uint64_t parent_memory_total_bytes);

// nvmlClocksEventReason* bits -> gpu.h's throttle vocabulary, in bit order.
// Bits without a name in the vocabulary are left out.
std::vector<std::string> ClocksEventReasonNames(uint64_t mask);

}  // namespace lens::nvml

#endif  // LENS_GPU_NVML_NVML_API_H_
