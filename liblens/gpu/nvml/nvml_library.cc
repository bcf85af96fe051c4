#include "gpu/nvml/nvml_library.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "gpu/nvml/nvml_abi.h"
#include "gpu/nvml/nvml_processes.h"

namespace lens::nvml {
namespace {

using namespace abi;  // NOLINT: the C ABI names, local to this file

class NvmlLibrary final : public NvmlApi {
 public:
  NvmlLibrary(void* dl, std::string library)
      : dl_(dl), library_(std::move(library)) {}
  ~NvmlLibrary() override {
    for (; init_count_ > 0; --init_count_) Fn<FnVoid>(kShutdown)();
    dlclose(dl_);
  }

  // Resolves every symbol; Unavailable when a required one is missing.
  Status Resolve() {
    for (const SymbolSpec& spec : kSymbols) {
      for (const char* name : spec.names) {
        if (name == nullptr) break;
        if (void* fn = dlsym(dl_, name)) {
          fns_[spec.sym] = fn;
          names_[spec.sym] = name;
          break;
        }
      }
      if (spec.required && fns_[spec.sym] == nullptr) {
        return UnavailableError(library_ + " has no " + spec.names[0] +
                                ": not a usable NVML library");
      }
    }
    return OkStatus();
  }

  Status Init() override {
    LENS_RETURN_IF_ERROR(Check(kInit, Fn<FnVoid>(kInit)()));
    ++init_count_;
    return OkStatus();
  }
  Status Shutdown() override {
    if (init_count_ == 0)
      return NvmlStatus(1, "nvmlShutdown");  // UNINITIALIZED
    --init_count_;
    return Check(kShutdown, Fn<FnVoid>(kShutdown)());
  }

  StatusOr<std::string> DriverVersion() override {
    return SystemString(kDriverVersion);
  }
  StatusOr<std::string> NvmlVersion() override {
    return SystemString(kNvmlVersion);
  }
  StatusOr<unsigned> DeviceCount() override {
    unsigned count = 0;
    LENS_RETURN_IF_ERROR(Check(kCount, Fn<FnCount>(kCount)(&count)));
    return count;
  }
  StatusOr<NvmlDevice> DeviceByIndex(unsigned index) override {
    nvmlDevice_t handle = nullptr;
    LENS_RETURN_IF_ERROR(Check(
        kHandleByIndex, Fn<FnHandleByIndex>(kHandleByIndex)(index, &handle)));
    return NvmlDevice{handle, index};
  }

  StatusOr<std::string> Name(NvmlDevice d) override {
    return DeviceString(kName, d);
  }
  StatusOr<std::string> Uuid(NvmlDevice d) override {
    return DeviceString(kUuid, d);
  }
  StatusOr<std::string> Serial(NvmlDevice d) override {
    return DeviceString(kSerial, d);
  }
  StatusOr<std::string> VbiosVersion(NvmlDevice d) override {
    return DeviceString(kVbios, d);
  }
  StatusOr<NvmlPciInfo> PciInfo(NvmlDevice d) override;
  StatusOr<unsigned> MinorNumber(NvmlDevice d) override {
    return DeviceUint(kMinor, d);
  }
  StatusOr<NvmlMemory> Memory(NvmlDevice d) override;
  StatusOr<NvmlUtilization> Utilization(NvmlDevice d) override {
    LENS_RETURN_IF_ERROR(Available(kUtilization));
    nvmlUtilization_t u{};
    LENS_RETURN_IF_ERROR(
        Check(kUtilization, Fn<FnUtilization>(kUtilization)(Handle(d), &u)));
    return NvmlUtilization{u.gpu, u.memory};
  }
  StatusOr<unsigned> PowerUsageMilliwatts(NvmlDevice d) override {
    return DeviceUint(kPower, d);
  }
  StatusOr<unsigned> EnforcedPowerLimitMilliwatts(NvmlDevice d) override {
    return DeviceUint(kPowerLimit, d);
  }
  StatusOr<uint64_t> TotalEnergyMillijoules(NvmlDevice d) override {
    return DeviceUll(kEnergy, d);
  }
  StatusOr<int> TemperatureCelsius(NvmlDevice d, NvmlSensor sensor) override;
  StatusOr<unsigned> ClockMhz(NvmlDevice d, NvmlClock clock) override {
    LENS_RETURN_IF_ERROR(Available(kClock));
    const int type = clock == NvmlClock::kGraphics ? kNvmlClockGraphics
                     : clock == NvmlClock::kSm     ? kNvmlClockSm
                                                   : kNvmlClockMem;
    unsigned mhz = 0;
    LENS_RETURN_IF_ERROR(
        Check(kClock, Fn<FnClock>(kClock)(Handle(d), type, &mhz)));
    return mhz;
  }
  StatusOr<unsigned> PcieLinkGeneration(NvmlDevice d,
                                        NvmlPcieLink which) override {
    return DeviceUint(which == NvmlPcieLink::kCurrent ? kCurrGen : kMaxGen, d);
  }
  StatusOr<unsigned> PcieLinkWidth(NvmlDevice d, NvmlPcieLink which) override {
    return DeviceUint(which == NvmlPcieLink::kCurrent ? kCurrWidth : kMaxWidth,
                      d);
  }
  StatusOr<unsigned> PcieReplayCount(NvmlDevice d) override {
    return DeviceUint(kReplay, d);
  }
  StatusOr<NvmlEccCounts> EccErrors(NvmlDevice d,
                                    NvmlEccCounter counter) override;
  StatusOr<uint64_t> ClocksEventReasons(NvmlDevice d) override {
    return DeviceUll(kEventReasons, d);
  }
  StatusOr<std::vector<NvmlProcess>> ComputeProcesses(NvmlDevice d) override;
  StatusOr<unsigned> FanSpeedPercent(NvmlDevice d) override {
    return DeviceUint(kFan, d);
  }
  StatusOr<bool> MigEnabled(NvmlDevice d) override {
    LENS_RETURN_IF_ERROR(Available(kMigMode));
    unsigned current = 0, pending = 0;
    LENS_RETURN_IF_ERROR(Check(
        kMigMode, Fn<FnMigMode>(kMigMode)(Handle(d), &current, &pending)));
    return current == kNvmlDeviceMigEnable;
  }
  StatusOr<unsigned> MaxMigDeviceCount(NvmlDevice d) override {
    return DeviceUint(kMaxMigCount, d);
  }
  StatusOr<NvmlDevice> MigDeviceByIndex(NvmlDevice parent,
                                        unsigned index) override {
    LENS_RETURN_IF_ERROR(Available(kMigHandle));
    nvmlDevice_t mig = nullptr;
    LENS_RETURN_IF_ERROR(Check(
        kMigHandle, Fn<FnMigHandle>(kMigHandle)(Handle(parent), index, &mig)));
    return NvmlDevice{mig, parent.index, static_cast<int>(index)};
  }
  StatusOr<unsigned> GpuInstanceId(NvmlDevice mig) override {
    return DeviceUint(kGpuInstanceId, mig);
  }
  StatusOr<unsigned> ComputeInstanceId(NvmlDevice mig) override {
    return DeviceUint(kComputeInstanceId, mig);
  }
  StatusOr<NvmlDeviceAttributes> Attributes(NvmlDevice mig) override {
    LENS_RETURN_IF_ERROR(Available(kAttributes));
    nvmlDeviceAttributes_t a{};
    LENS_RETURN_IF_ERROR(
        Check(kAttributes, Fn<FnAttributes>(kAttributes)(Handle(mig), &a)));
    return NvmlDeviceAttributes{a.multiprocessorCount, a.gpuInstanceSliceCount,
                                a.computeInstanceSliceCount, a.memorySizeMB};
  }

 private:
  template <typename F>
  F Fn(Sym sym) const {
    return reinterpret_cast<F>(fns_[sym]);
  }
  static nvmlDevice_t Handle(NvmlDevice d) {
    return static_cast<nvmlDevice_t>(d.handle);
  }

  // NotFound ("not reported") for an entry point this driver lacks.
  Status Available(Sym sym) const {
    if (fns_[sym] != nullptr) return OkStatus();
    return NotFoundError(std::string(kSymbols[sym].names[0]) + ": not in " +
                         library_ + " (driver too old)");
  }
  Status Check(Sym sym, nvmlReturn_t ret) const {
    if (ret == kNvmlSuccess) return OkStatus();
    return NvmlStatus(ret, names_[sym], ErrorText(ret));
  }
  // nvmlErrorString's text ("" lets NvmlStatus use our table's).
  std::string_view ErrorText(nvmlReturn_t ret) const {
    const char* text = Fn<FnErrorString>(kErrorString)(ret);
    return text == nullptr ? "" : text;
  }

  StatusOr<std::string> SystemString(Sym sym) {
    LENS_RETURN_IF_ERROR(Available(sym));
    char buf[96] = {};  // NVML_SYSTEM_*_VERSION_BUFFER_SIZE is 80
    LENS_RETURN_IF_ERROR(
        Check(sym, Fn<FnSystemString>(sym)(buf, sizeof(buf) - 1)));
    return std::string(buf);
  }
  StatusOr<std::string> DeviceString(Sym sym, NvmlDevice d) {
    LENS_RETURN_IF_ERROR(Available(sym));
    char buf[128] = {};  // the largest NVML device string buffer is 96
    LENS_RETURN_IF_ERROR(
        Check(sym, Fn<FnDeviceString>(sym)(Handle(d), buf, sizeof(buf) - 1)));
    return std::string(buf);
  }
  StatusOr<unsigned> DeviceUint(Sym sym, NvmlDevice d) {
    LENS_RETURN_IF_ERROR(Available(sym));
    unsigned value = 0;
    LENS_RETURN_IF_ERROR(Check(sym, Fn<FnDeviceUint>(sym)(Handle(d), &value)));
    return value;
  }
  StatusOr<uint64_t> DeviceUll(Sym sym, NvmlDevice d) {
    LENS_RETURN_IF_ERROR(Available(sym));
    unsigned long long value = 0;
    LENS_RETURN_IF_ERROR(Check(sym, Fn<FnDeviceUll>(sym)(Handle(d), &value)));
    return static_cast<uint64_t>(value);
  }
  StatusOr<int> MemoryTemperature(NvmlDevice d);
  StatusOr<std::vector<NvmlProcess>> ListProcesses(Sym sym,
                                                   NvmlProcessLayout layout,
                                                   NvmlDevice d);

  void* dl_;
  std::string library_;
  std::array<void*, kSymCount> fns_{};
  std::array<const char*, kSymCount> names_{};
  int init_count_ = 0;
};

StatusOr<NvmlPciInfo> NvmlLibrary::PciInfo(NvmlDevice d) {
  const Sym sym = fns_[kPciInfo] != nullptr ? kPciInfo : kPciInfoV1;
  LENS_RETURN_IF_ERROR(Available(sym));
  nvmlPciInfo_t pci{};
  LENS_RETURN_IF_ERROR(Check(sym, Fn<FnPciInfo>(sym)(Handle(d), &pci)));
  NvmlPciInfo out;
  out.pci_device_id = pci.pciDeviceId;
  out.pci_subsystem_id = pci.pciSubSystemId;
  const char* bus_id = sym == kPciInfo ? pci.busId : pci.busIdLegacy;
  StatusOr<std::string> bdf =
      NormalizeNvmlBusId(std::string_view(bus_id, strnlen(bus_id, 32)));
  if (bdf.ok()) {
    out.bdf = *std::move(bdf);
  } else {
    // NVML builds busId from these same fields; the function is always 0.
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%04x:%02x:%02x.0", pci.domain, pci.bus,
                  pci.device);
    out.bdf = buf;
  }
  return out;
}

StatusOr<NvmlMemory> NvmlLibrary::Memory(NvmlDevice d) {
  if (fns_[kMemoryV2] != nullptr) {
    nvmlMemory_v2_t m{};
    m.version = kNvmlMemoryV2Version;
    const nvmlReturn_t ret = Fn<FnMemoryV2>(kMemoryV2)(Handle(d), &m);
    if (ret == kNvmlSuccess) return NvmlMemory{m.total, m.used, m.reserved};
    // Drivers that export _v2 but reject this struct version fall back.
    if (ret != kNvmlErrorArgumentVersionMismatch &&
        ret != kNvmlErrorFunctionNotFound) {
      return Check(kMemoryV2, ret);
    }
  }
  LENS_RETURN_IF_ERROR(Available(kMemoryV1));
  nvmlMemory_t m{};
  LENS_RETURN_IF_ERROR(
      Check(kMemoryV1, Fn<FnMemory>(kMemoryV1)(Handle(d), &m)));
  return NvmlMemory{m.total, m.used, std::nullopt};
}

StatusOr<int> NvmlLibrary::TemperatureCelsius(NvmlDevice d, NvmlSensor sensor) {
  if (sensor == NvmlSensor::kMemory) return MemoryTemperature(d);
  LENS_RETURN_IF_ERROR(Available(kTemperature));
  unsigned celsius = 0;
  LENS_RETURN_IF_ERROR(
      Check(kTemperature, Fn<FnTemperature>(kTemperature)(
                              Handle(d), kNvmlTemperatureGpu, &celsius)));
  return static_cast<int>(celsius);
}

StatusOr<int> NvmlLibrary::MemoryTemperature(NvmlDevice d) {
  LENS_RETURN_IF_ERROR(Available(kFieldValues));
  nvmlFieldValue_t field{};
  field.fieldId = kNvmlFiDevMemoryTemp;
  LENS_RETURN_IF_ERROR(Check(
      kFieldValues, Fn<FnFieldValues>(kFieldValues)(Handle(d), 1, &field)));
  if (field.nvmlReturn != kNvmlSuccess) {
    return NvmlStatus(field.nvmlReturn,
                      "nvmlDeviceGetFieldValues(NVML_FI_DEV_MEMORY_TEMP)",
                      ErrorText(field.nvmlReturn));
  }
  switch (field.valueType) {
    case kValueTypeDouble:
      return static_cast<int>(field.value.dVal);
    case kValueTypeUnsignedInt:
      return static_cast<int>(field.value.uiVal);
    case kValueTypeUnsignedLong:
      return static_cast<int>(field.value.ulVal);
    case kValueTypeUnsignedLongLong:
      return static_cast<int>(field.value.ullVal);
    case kValueTypeSignedLongLong:
      return static_cast<int>(field.value.sllVal);
    case kValueTypeSignedInt:
      return field.value.siVal;
    case kValueTypeUnsignedShort:
      return static_cast<int>(field.value.usVal);
  }
  return InternalError(
      "nvmlDeviceGetFieldValues(NVML_FI_DEV_MEMORY_TEMP): value type " +
      std::to_string(field.valueType));
}

StatusOr<NvmlEccCounts> NvmlLibrary::EccErrors(NvmlDevice d,
                                               NvmlEccCounter counter) {
  LENS_RETURN_IF_ERROR(Available(kEcc));
  const int type = counter == NvmlEccCounter::kVolatile ? kNvmlVolatileEcc
                                                        : kNvmlAggregateEcc;
  unsigned long long corrected = 0, uncorrected = 0;
  const FnTotalEcc fn = Fn<FnTotalEcc>(kEcc);
  LENS_RETURN_IF_ERROR(
      Check(kEcc, fn(Handle(d), kNvmlMemoryErrorCorrected, type, &corrected)));
  LENS_RETURN_IF_ERROR(Check(
      kEcc, fn(Handle(d), kNvmlMemoryErrorUncorrected, type, &uncorrected)));
  return NvmlEccCounts{corrected, uncorrected};
}

StatusOr<std::vector<NvmlProcess>> NvmlLibrary::ListProcesses(
    Sym sym, NvmlProcessLayout layout, NvmlDevice d) {
  // Processes come and go between calls: grow and retry on
  // NVML_ERROR_INSUFFICIENT_SIZE (which reports the count needed). Every
  // entry gets room for the largest layout, so a driver that writes a
  // larger one than its exports suggest garbles the list but never
  // overruns the buffer.
  std::vector<std::byte> buffer;
  unsigned capacity = 32;
  for (int attempt = 0;; ++attempt) {
    buffer.assign(size_t{capacity} * kNvmlProcessMaxEntryBytes, std::byte{0});
    unsigned count = capacity;
    const nvmlReturn_t ret =
        Fn<FnProcessesRaw>(sym)(Handle(d), &count, buffer.data());
    if (ret == kNvmlErrorInsufficientSize && attempt < 3) {
      capacity = count + 16;
      continue;
    }
    LENS_RETURN_IF_ERROR(Check(sym, ret));
    return DecodeNvmlProcesses(buffer, std::min(count, capacity), layout);
  }
}

StatusOr<std::vector<NvmlProcess>> NvmlLibrary::ComputeProcesses(NvmlDevice d) {
  if (fns_[kProcesses] != nullptr) {
    const bool v3 = std::string_view(names_[kProcesses]).ends_with("_v3");
    const NvmlProcessLayout layout =
        v3 ? NvmlV3ProcessLayout(fns_[kConfComputeMemSize] != nullptr,
                                 fns_[kProcessDetailList] != nullptr)
           : NvmlProcessLayout::kV2;
    return ListProcesses(kProcesses, layout, d);
  }
  LENS_RETURN_IF_ERROR(Available(kProcessesV1));
  return ListProcesses(kProcessesV1, NvmlProcessLayout::kV1, d);
}

}  // namespace

StatusOr<std::unique_ptr<NvmlApi>> OpenNvmlLibrary(const std::string& library) {
  dlerror();  // clear
  void* dl = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (dl == nullptr) {
    const char* why = dlerror();
    return UnavailableError(library +
                            " not found: no NVIDIA driver on this machine (" +
                            (why != nullptr ? why : "dlopen failed") + ")");
  }
  auto nvml = std::make_unique<NvmlLibrary>(dl, library);
  LENS_RETURN_IF_ERROR(nvml->Resolve());
  return std::unique_ptr<NvmlApi>(std::move(nvml));
}

}  // namespace lens::nvml
