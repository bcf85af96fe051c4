// The replay's implementation class, shared by nvml_replay.cc (the file and
// its lookups) and nvml_replay_calls.cc (the calls that return structs).
// Internal to the replay.
#ifndef LENS_GPU_NVML_NVML_REPLAY_IMPL_H_
#define LENS_GPU_NVML_NVML_REPLAY_IMPL_H_

#include <rapidjson/document.h>

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/nvml/nvml_replay.h"

namespace lens::nvml::replay {

using rapidjson::Value;

inline constexpr int kNvmlErrorUninitialized = 1;
inline constexpr int kNvmlErrorInvalidArgument = 2;
inline constexpr int kNvmlErrorNotFound = 6;

class NvmlReplayImpl final : public NvmlReplay {
 public:
  Status Load(const std::string& path) override;
  int init_count() const override {
    std::shared_lock lock(mu_);
    return init_count_;
  }

  Status Init() override {
    std::unique_lock lock(mu_);
    if (const Value* init = Find(*doc_, "nvmlInit_v2")) {
      LENS_RETURN_IF_ERROR(Failure(*init, "nvmlInit_v2", "nvmlInit_v2"));
    }
    ++init_count_;
    return OkStatus();
  }
  Status Shutdown() override {
    std::unique_lock lock(mu_);
    if (init_count_ == 0)
      return NvmlStatus(kNvmlErrorUninitialized, "nvmlShutdown");
    --init_count_;
    return OkStatus();
  }

  StatusOr<std::string> DriverVersion() override {
    const auto reading = Reading();
    return String(Top("nvmlSystemGetDriverVersion"));
  }
  StatusOr<std::string> NvmlVersion() override {
    const auto reading = Reading();
    return String(Top("nvmlSystemGetNVMLVersion"));
  }
  StatusOr<unsigned> DeviceCount() override {
    const auto reading = Reading();
    if (init_count_ == 0) return Uninitialized("nvmlDeviceGetCount_v2");
    if (Find(*doc_, "nvmlDeviceGetCount_v2") == nullptr) {
      return static_cast<unsigned>(devices().Size());
    }
    return Uint32(Top("nvmlDeviceGetCount_v2"));
  }
  StatusOr<NvmlDevice> DeviceByIndex(unsigned index) override;

  StatusOr<std::string> Name(NvmlDevice d) override {
    const auto reading = Reading();
    return String(Call(d, "nvmlDeviceGetName"));
  }
  StatusOr<std::string> Uuid(NvmlDevice d) override {
    const auto reading = Reading();
    return String(Call(d, "nvmlDeviceGetUUID"));
  }
  StatusOr<std::string> Serial(NvmlDevice d) override {
    const auto reading = Reading();
    return String(Call(d, "nvmlDeviceGetSerial"));
  }
  StatusOr<std::string> VbiosVersion(NvmlDevice d) override {
    const auto reading = Reading();
    return String(Call(d, "nvmlDeviceGetVbiosVersion"));
  }
  StatusOr<NvmlPciInfo> PciInfo(NvmlDevice d) override;
  StatusOr<unsigned> MinorNumber(NvmlDevice d) override {
    const auto reading = Reading();
    return Uint32(Call(d, "nvmlDeviceGetMinorNumber"));
  }
  StatusOr<NvmlMemory> Memory(NvmlDevice d) override;
  StatusOr<NvmlUtilization> Utilization(NvmlDevice d) override {
    const auto reading = Reading();
    const Located call = Call(d, "nvmlDeviceGetUtilizationRates");
    LENS_ASSIGN_OR_RETURN(unsigned gpu, Uint32(Field(call, "gpu")));
    LENS_ASSIGN_OR_RETURN(unsigned memory, Uint32(Field(call, "memory")));
    return NvmlUtilization{gpu, memory};
  }
  StatusOr<unsigned> PowerUsageMilliwatts(NvmlDevice d) override {
    const auto reading = Reading();
    return Uint32(Call(d, "nvmlDeviceGetPowerUsage"));
  }
  StatusOr<unsigned> EnforcedPowerLimitMilliwatts(NvmlDevice d) override {
    const auto reading = Reading();
    return Uint32(Call(d, "nvmlDeviceGetEnforcedPowerLimit"));
  }
  StatusOr<uint64_t> TotalEnergyMillijoules(NvmlDevice d) override {
    const auto reading = Reading();
    return Uint64(Call(d, "nvmlDeviceGetTotalEnergyConsumption"));
  }
  StatusOr<int> TemperatureCelsius(NvmlDevice d, NvmlSensor sensor) override {
    const auto reading = Reading();
    LENS_ASSIGN_OR_RETURN(
        unsigned celsius,
        Uint32(sensor == NvmlSensor::kGpu
                   ? Field(Call(d, "nvmlDeviceGetTemperature"),
                           "NVML_TEMPERATURE_GPU", true)
                   : Field(Call(d, "nvmlDeviceGetFieldValues"),
                           "NVML_FI_DEV_MEMORY_TEMP", true)));
    return static_cast<int>(celsius);
  }
  StatusOr<unsigned> ClockMhz(NvmlDevice d, NvmlClock clock) override {
    const auto reading = Reading();
    const char* name = clock == NvmlClock::kGraphics ? "NVML_CLOCK_GRAPHICS"
                       : clock == NvmlClock::kSm     ? "NVML_CLOCK_SM"
                                                     : "NVML_CLOCK_MEM";
    return Uint32(Field(Call(d, "nvmlDeviceGetClockInfo"), name, true));
  }
  StatusOr<unsigned> PcieLinkGeneration(NvmlDevice d,
                                        NvmlPcieLink which) override {
    const auto reading = Reading();
    return Uint32(Call(d, which == NvmlPcieLink::kCurrent
                              ? "nvmlDeviceGetCurrPcieLinkGeneration"
                              : "nvmlDeviceGetMaxPcieLinkGeneration"));
  }
  StatusOr<unsigned> PcieLinkWidth(NvmlDevice d, NvmlPcieLink which) override {
    const auto reading = Reading();
    return Uint32(Call(d, which == NvmlPcieLink::kCurrent
                              ? "nvmlDeviceGetCurrPcieLinkWidth"
                              : "nvmlDeviceGetMaxPcieLinkWidth"));
  }
  StatusOr<unsigned> PcieReplayCount(NvmlDevice d) override {
    const auto reading = Reading();
    return Uint32(Call(d, "nvmlDeviceGetPcieReplayCounter"));
  }
  StatusOr<NvmlEccCounts> EccErrors(NvmlDevice d,
                                    NvmlEccCounter counter) override {
    const auto reading = Reading();
    const Located call =
        Field(Call(d, "nvmlDeviceGetTotalEccErrors"),
              counter == NvmlEccCounter::kVolatile ? "NVML_VOLATILE_ECC"
                                                   : "NVML_AGGREGATE_ECC",
              true);
    LENS_ASSIGN_OR_RETURN(
        uint64_t corrected,
        Uint64(Field(call, "NVML_MEMORY_ERROR_TYPE_CORRECTED", true)));
    LENS_ASSIGN_OR_RETURN(
        uint64_t uncorrected,
        Uint64(Field(call, "NVML_MEMORY_ERROR_TYPE_UNCORRECTED", true)));
    return NvmlEccCounts{corrected, uncorrected};
  }
  StatusOr<uint64_t> ClocksEventReasons(NvmlDevice d) override {
    const auto reading = Reading();
    // Drivers before R535 (NVML 12.2) only have the "Throttle" name.
    return Uint64(Call(d, Either(d, "nvmlDeviceGetCurrentClocksEventReasons",
                                 "nvmlDeviceGetCurrentClocksThrottleReasons")));
  }
  StatusOr<std::vector<NvmlProcess>> ComputeProcesses(NvmlDevice d) override;
  StatusOr<unsigned> FanSpeedPercent(NvmlDevice d) override {
    const auto reading = Reading();
    return Uint32(Call(d, "nvmlDeviceGetFanSpeed"));
  }
  StatusOr<bool> MigEnabled(NvmlDevice d) override {
    const auto reading = Reading();
    LENS_ASSIGN_OR_RETURN(
        unsigned current,
        Uint32(Field(Call(d, "nvmlDeviceGetMigMode"), "current")));
    return current == 1;  // NVML_DEVICE_MIG_ENABLE
  }
  StatusOr<unsigned> MaxMigDeviceCount(NvmlDevice d) override {
    const auto reading = Reading();
    return Uint32(Call(d, "nvmlDeviceGetMaxMigDeviceCount"));
  }
  StatusOr<NvmlDevice> MigDeviceByIndex(NvmlDevice parent,
                                        unsigned index) override;
  StatusOr<unsigned> GpuInstanceId(NvmlDevice d) override {
    const auto reading = Reading();
    return Uint32(Call(d, "nvmlDeviceGetGpuInstanceId"));
  }
  StatusOr<unsigned> ComputeInstanceId(NvmlDevice d) override {
    const auto reading = Reading();
    return Uint32(Call(d, "nvmlDeviceGetComputeInstanceId"));
  }
  StatusOr<NvmlDeviceAttributes> Attributes(NvmlDevice d) override;

 private:
  // A value found in the file, or why not; `where` names it for errors
  // ("h100.json: devices[3].nvmlDeviceGetClockInfo") and `call` for NVML
  // failures ("nvmlDeviceGetClockInfo(NVML_CLOCK_SM)").
  struct Located {
    Status status;
    const Value* value = nullptr;
    std::string where;
    std::string call;
  };

  // Held by every call for as long as it reads the document, so Load (which
  // takes it exclusively) never frees what a call is reading.
  std::shared_lock<std::shared_mutex> Reading() const {
    return std::shared_lock(mu_);
  }
  const Value& devices() const { return (*doc_)["devices"]; }
  // The object of device `d`: a GPU, or one of its "migDevices"; nullptr
  // when there is none (the caller reports it).
  const Value* DeviceObject(NvmlDevice d) const {
    if (d.index >= devices().Size()) return nullptr;
    const Value& gpu = devices()[d.index];
    if (d.mig_index < 0) return &gpu;
    const Value* migs = Find(gpu, "migDevices");
    if (migs == nullptr || !migs->IsArray() ||
        static_cast<unsigned>(d.mig_index) >= migs->Size()) {
      return nullptr;
    }
    return &(*migs)[static_cast<rapidjson::SizeType>(d.mig_index)];
  }
  static std::string DeviceWhere(NvmlDevice d) {
    return "devices[" + std::to_string(d.index) + "]" +
           (d.mig_index < 0
                ? ""
                : ".migDevices[" + std::to_string(d.mig_index) + "]");
  }
  static const Value* Find(const Value& object, std::string_view key) {
    if (!object.IsObject()) return nullptr;
    auto it = object.FindMember(
        Value(key.data(), static_cast<rapidjson::SizeType>(key.size())));
    return it == object.MemberEnd() ? nullptr : &it->value;
  }
  // `newer` when device `d` has that key or lacks both, else `older`: the
  // two names of one call across driver versions.
  const char* Either(NvmlDevice d, const char* newer, const char* older) const {
    if (d.index >= devices().Size()) return newer;
    const Value& device = devices()[d.index];
    return Find(device, newer) == nullptr && Find(device, older) != nullptr
               ? older
               : newer;
  }
  Status Uninitialized(std::string_view call) const {
    return NvmlStatus(kNvmlErrorUninitialized, call);
  }
  Status Invalid(const std::string& where, std::string_view what) const {
    return InvalidArgumentError(path_ + ": " + where + ": " +
                                std::string(what));
  }
  // The NVML failure a value stands for ({"nvmlReturn": "..."}), else OK.
  Status Failure(const Value& value, const std::string& where,
                 const std::string& call) const;
  Located Top(const char* key) const;
  Located Call(NvmlDevice d, const char* key) const;
  // `key` inside the object `parent` located; `argument` marks a
  // per-argument value (which may itself be a failure).
  Located Field(const Located& parent, const char* key,
                bool argument = false) const;
  StatusOr<uint64_t> Uint64(const Located& at) const;
  StatusOr<unsigned> Uint32(const Located& at) const;
  StatusOr<std::string> String(const Located& at) const;

  mutable std::shared_mutex mu_;
  std::unique_ptr<rapidjson::Document> doc_;
  std::string path_;
  int init_count_ = 0;
};

}  // namespace lens::nvml::replay

#endif  // LENS_GPU_NVML_NVML_REPLAY_IMPL_H_
