#include "gpu/nvml/nvml_replay.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <charconv>
#include <climits>
#include <utility>
#include <vector>

#include "core/kernel_file.h"

namespace lens::nvml {
namespace {

using rapidjson::Value;

constexpr int kNvmlErrorUninitialized = 1;
constexpr int kNvmlErrorInvalidArgument = 2;
constexpr size_t kMaxReplayBytes = size_t{16} << 20;

class NvmlReplayImpl final : public NvmlReplay {
 public:
  Status Load(const std::string& path) override;
  int init_count() const override { return init_count_; }

  Status Init() override {
    if (const Value* init = Find(*doc_, "nvmlInit_v2")) {
      LENS_RETURN_IF_ERROR(Failure(*init, "nvmlInit_v2", "nvmlInit_v2"));
    }
    ++init_count_;
    return OkStatus();
  }
  Status Shutdown() override {
    if (init_count_ == 0)
      return NvmlStatus(kNvmlErrorUninitialized, "nvmlShutdown");
    --init_count_;
    return OkStatus();
  }

  StatusOr<std::string> DriverVersion() override {
    return String(Top("nvmlSystemGetDriverVersion"));
  }
  StatusOr<std::string> NvmlVersion() override {
    return String(Top("nvmlSystemGetNVMLVersion"));
  }
  StatusOr<unsigned> DeviceCount() override {
    if (init_count_ == 0) return Uninitialized("nvmlDeviceGetCount_v2");
    if (Find(*doc_, "nvmlDeviceGetCount_v2") == nullptr) {
      return static_cast<unsigned>(devices().Size());
    }
    return Uint32(Top("nvmlDeviceGetCount_v2"));
  }
  StatusOr<NvmlDevice> DeviceByIndex(unsigned index) override;

  StatusOr<std::string> Name(NvmlDevice d) override {
    return String(Call(d, "nvmlDeviceGetName"));
  }
  StatusOr<std::string> Uuid(NvmlDevice d) override {
    return String(Call(d, "nvmlDeviceGetUUID"));
  }
  StatusOr<std::string> Serial(NvmlDevice d) override {
    return String(Call(d, "nvmlDeviceGetSerial"));
  }
  StatusOr<std::string> VbiosVersion(NvmlDevice d) override {
    return String(Call(d, "nvmlDeviceGetVbiosVersion"));
  }
  StatusOr<NvmlPciInfo> PciInfo(NvmlDevice d) override;
  StatusOr<unsigned> MinorNumber(NvmlDevice d) override {
    return Uint32(Call(d, "nvmlDeviceGetMinorNumber"));
  }
  StatusOr<NvmlMemory> Memory(NvmlDevice d) override;
  StatusOr<NvmlUtilization> Utilization(NvmlDevice d) override {
    const Located call = Call(d, "nvmlDeviceGetUtilizationRates");
    LENS_ASSIGN_OR_RETURN(unsigned gpu, Uint32(Field(call, "gpu")));
    LENS_ASSIGN_OR_RETURN(unsigned memory, Uint32(Field(call, "memory")));
    return NvmlUtilization{gpu, memory};
  }
  StatusOr<unsigned> PowerUsageMilliwatts(NvmlDevice d) override {
    return Uint32(Call(d, "nvmlDeviceGetPowerUsage"));
  }
  StatusOr<unsigned> EnforcedPowerLimitMilliwatts(NvmlDevice d) override {
    return Uint32(Call(d, "nvmlDeviceGetEnforcedPowerLimit"));
  }
  StatusOr<uint64_t> TotalEnergyMillijoules(NvmlDevice d) override {
    return Uint64(Call(d, "nvmlDeviceGetTotalEnergyConsumption"));
  }
  StatusOr<int> TemperatureCelsius(NvmlDevice d, NvmlSensor sensor) override {
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
    const char* name = clock == NvmlClock::kGraphics ? "NVML_CLOCK_GRAPHICS"
                       : clock == NvmlClock::kSm     ? "NVML_CLOCK_SM"
                                                     : "NVML_CLOCK_MEM";
    return Uint32(Field(Call(d, "nvmlDeviceGetClockInfo"), name, true));
  }
  StatusOr<unsigned> PcieLinkGeneration(NvmlDevice d,
                                        NvmlPcieLink which) override {
    return Uint32(Call(d, which == NvmlPcieLink::kCurrent
                              ? "nvmlDeviceGetCurrPcieLinkGeneration"
                              : "nvmlDeviceGetMaxPcieLinkGeneration"));
  }
  StatusOr<unsigned> PcieLinkWidth(NvmlDevice d, NvmlPcieLink which) override {
    return Uint32(Call(d, which == NvmlPcieLink::kCurrent
                              ? "nvmlDeviceGetCurrPcieLinkWidth"
                              : "nvmlDeviceGetMaxPcieLinkWidth"));
  }
  StatusOr<unsigned> PcieReplayCount(NvmlDevice d) override {
    return Uint32(Call(d, "nvmlDeviceGetPcieReplayCounter"));
  }
  StatusOr<NvmlEccCounts> EccErrors(NvmlDevice d,
                                    NvmlEccCounter counter) override {
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
    // Drivers before R535 (NVML 12.2) only have the "Throttle" name.
    return Uint64(Call(d, Either(d, "nvmlDeviceGetCurrentClocksEventReasons",
                                 "nvmlDeviceGetCurrentClocksThrottleReasons")));
  }
  StatusOr<std::vector<NvmlProcess>> ComputeProcesses(NvmlDevice d) override;
  StatusOr<unsigned> FanSpeedPercent(NvmlDevice d) override {
    return Uint32(Call(d, "nvmlDeviceGetFanSpeed"));
  }

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

  const Value& devices() const { return (*doc_)["devices"]; }
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

  std::unique_ptr<rapidjson::Document> doc_;
  std::string path_;
  int init_count_ = 0;
};

Status NvmlReplayImpl::Load(const std::string& path) {
  LENS_ASSIGN_OR_RETURN(std::string text,
                        ReadKernelFile(path, kMaxReplayBytes));
  auto doc = std::make_unique<rapidjson::Document>();
  doc->Parse(text.data(), text.size());
  if (doc->HasParseError()) {
    return InvalidArgumentError(
        path + ": offset " + std::to_string(doc->GetErrorOffset()) + ": " +
        rapidjson::GetParseError_En(doc->GetParseError()));
  }
  const Value* list = Find(*doc, "devices");
  if (list == nullptr || !list->IsArray()) {
    return InvalidArgumentError(
        path + ": expected an object with a \"devices\" array");
  }
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    if (!(*list)[i].IsObject()) {
      return InvalidArgumentError(path + ": devices[" + std::to_string(i) +
                                  "] is not an object");
    }
  }
  doc_ = std::move(doc);
  path_ = path;
  return OkStatus();
}

Status NvmlReplayImpl::Failure(const Value& value, const std::string& where,
                               const std::string& call) const {
  const Value* code = Find(value, "nvmlReturn");
  if (code == nullptr) return OkStatus();
  if (!code->IsString()) return Invalid(where, "nvmlReturn must be a string");
  std::optional<int> ret = ParseNvmlReturnName(code->GetString());
  if (!ret) {
    return Invalid(
        where, std::string("unknown nvmlReturn \"") + code->GetString() + "\"");
  }
  return NvmlStatus(*ret, call);
}

NvmlReplayImpl::Located NvmlReplayImpl::Top(const char* key) const {
  Located at{OkStatus(), Find(*doc_, key), key, key};
  if (init_count_ == 0) {
    at.status = Uninitialized(key);
  } else if (at.value == nullptr) {
    at.status = Invalid("top level", std::string("no \"") + key + "\"");
  } else {
    at.status = Failure(*at.value, at.where, at.call);
  }
  return at;
}

NvmlReplayImpl::Located NvmlReplayImpl::Call(NvmlDevice d,
                                             const char* key) const {
  const std::string device = "devices[" + std::to_string(d.index) + "]";
  Located at{OkStatus(), nullptr, device + "." + key, key};
  if (init_count_ == 0) {
    at.status = Uninitialized(key);
  } else if (d.index >= devices().Size()) {
    // A handle from before Load replaced the machine.
    at.status = NvmlStatus(kNvmlErrorInvalidArgument, key);
  } else if ((at.value = Find(devices()[d.index], key)) == nullptr) {
    at.status = Invalid(device, std::string("no \"") + key + "\"");
  } else {
    at.status = Failure(*at.value, at.where, at.call);
  }
  return at;
}

NvmlReplayImpl::Located NvmlReplayImpl::Field(const Located& parent,
                                              const char* key,
                                              bool argument) const {
  Located at{parent.status, nullptr, parent.where + "." + key,
             argument ? parent.call + "(" + key + ")" : parent.call};
  if (!at.status.ok()) return at;
  if ((at.value = Find(*parent.value, key)) == nullptr) {
    at.status = Invalid(parent.where, std::string("no \"") + key + "\"");
  } else if (argument) {
    at.status = Failure(*at.value, at.where, at.call);
  }
  return at;
}

StatusOr<uint64_t> NvmlReplayImpl::Uint64(const Located& at) const {
  LENS_RETURN_IF_ERROR(at.status);
  if (at.value->IsUint64()) return at.value->GetUint64();
  if (at.value->IsString()) {
    std::string_view text(at.value->GetString(), at.value->GetStringLength());
    uint64_t v = 0;
    if (text.size() > 2 &&
        (text.substr(0, 2) == "0x" || text.substr(0, 2) == "0X")) {
      auto [ptr, ec] =
          std::from_chars(text.data() + 2, text.data() + text.size(), v, 16);
      if (ec == std::errc() && ptr == text.data() + text.size()) return v;
    }
  }
  return Invalid(at.where, "expected an unsigned integer or \"0x...\"");
}

StatusOr<unsigned> NvmlReplayImpl::Uint32(const Located& at) const {
  LENS_ASSIGN_OR_RETURN(uint64_t v, Uint64(at));
  if (v > UINT_MAX) return Invalid(at.where, "does not fit an unsigned int");
  return static_cast<unsigned>(v);
}

StatusOr<std::string> NvmlReplayImpl::String(const Located& at) const {
  LENS_RETURN_IF_ERROR(at.status);
  if (!at.value->IsString()) return Invalid(at.where, "expected a string");
  return std::string(at.value->GetString(), at.value->GetStringLength());
}

StatusOr<NvmlDevice> NvmlReplayImpl::DeviceByIndex(unsigned index) {
  static constexpr char kCall[] = "nvmlDeviceGetHandleByIndex_v2";
  if (init_count_ == 0) return Uninitialized(kCall);
  if (index >= devices().Size()) {
    return NvmlStatus(kNvmlErrorInvalidArgument, kCall);
  }
  if (const Value* v = Find(devices()[index], kCall)) {
    const std::string where = "devices[" + std::to_string(index) + "]." + kCall;
    Status failure = Failure(*v, where, kCall);
    if (!failure.ok()) return failure;
    return Invalid(where,
                   "only a failure ({\"nvmlReturn\": ...}) may be given");
  }
  return NvmlDevice{nullptr, index};
}

StatusOr<NvmlPciInfo> NvmlReplayImpl::PciInfo(NvmlDevice d) {
  const Located call = Call(d, "nvmlDeviceGetPciInfo_v3");
  LENS_ASSIGN_OR_RETURN(std::string bus_id, String(Field(call, "busId")));
  NvmlPciInfo pci;
  LENS_ASSIGN_OR_RETURN(pci.bdf, NormalizeNvmlBusId(bus_id));
  LENS_ASSIGN_OR_RETURN(pci.pci_device_id, Uint32(Field(call, "pciDeviceId")));
  LENS_ASSIGN_OR_RETURN(pci.pci_subsystem_id,
                        Uint32(Field(call, "pciSubSystemId")));
  return pci;
}

StatusOr<NvmlMemory> NvmlReplayImpl::Memory(NvmlDevice d) {
  // Like the library: the v2 call when the file has it, else v1 (drivers
  // before R510).
  const char* key =
      Either(d, "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetMemoryInfo");
  const bool v2 = std::string_view(key) == "nvmlDeviceGetMemoryInfo_v2";
  const Located call = Call(d, key);
  NvmlMemory memory;
  LENS_ASSIGN_OR_RETURN(memory.total_bytes, Uint64(Field(call, "total")));
  LENS_ASSIGN_OR_RETURN(memory.used_bytes, Uint64(Field(call, "used")));
  if (v2) {
    LENS_ASSIGN_OR_RETURN(memory.reserved_bytes,
                          Uint64(Field(call, "reserved")));
  }
  return memory;
}

StatusOr<std::vector<NvmlProcess>> NvmlReplayImpl::ComputeProcesses(
    NvmlDevice d) {
  const Located call = Call(d, "nvmlDeviceGetComputeRunningProcesses_v3");
  LENS_RETURN_IF_ERROR(call.status);
  if (!call.value->IsArray()) return Invalid(call.where, "expected an array");
  std::vector<NvmlProcess> processes;
  for (rapidjson::SizeType i = 0; i < call.value->Size(); ++i) {
    const Located entry{OkStatus(), &(*call.value)[i],
                        call.where + "[" + std::to_string(i) + "]", call.call};
    NvmlProcess p;
    LENS_ASSIGN_OR_RETURN(p.pid, Uint32(Field(entry, "pid")));
    LENS_ASSIGN_OR_RETURN(uint64_t used, Uint64(Field(entry, "usedGpuMemory")));
    // NVML_VALUE_NOT_AVAILABLE, as the library writes it.
    if (used != ~uint64_t{0}) p.used_memory_bytes = used;
    processes.push_back(p);
  }
  return processes;
}

}  // namespace

StatusOr<std::shared_ptr<NvmlReplay>> NvmlReplay::Open(
    const std::string& path) {
  auto replay = std::make_shared<NvmlReplayImpl>();
  LENS_RETURN_IF_ERROR(replay->Load(path));
  return std::shared_ptr<NvmlReplay>(std::move(replay));
}

}  // namespace lens::nvml
