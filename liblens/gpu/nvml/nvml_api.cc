// NVML return codes, bus ids, PCIe generations and clock event reasons: the
// tables both NvmlApi implementations share.
#include "gpu/nvml/nvml_api.h"

#include <cctype>
#include <charconv>
#include <cstdio>

namespace lens::nvml {

NvmlApi::~NvmlApi() = default;

namespace {

struct NvmlReturnInfo {
  int code;
  std::string_view name;  // nvml.h's enumerator
  StatusCode status;
  std::string_view text;  // what nvmlErrorString returns for it
};

// Codes and names from nvml.h (nvmlReturn_t); texts as nvmlErrorString
// prints them (the same strings DCGM's nvml_error_strings.h reproduces).
constexpr NvmlReturnInfo kNvmlReturns[] = {
    {0, "NVML_SUCCESS", StatusCode::kOk, "Success"},
    {1, "NVML_ERROR_UNINITIALIZED", StatusCode::kFailedPrecondition,
     "Uninitialized"},
    {2, "NVML_ERROR_INVALID_ARGUMENT", StatusCode::kInternal,
     "Invalid Argument"},
    {3, "NVML_ERROR_NOT_SUPPORTED", StatusCode::kNotFound, "Not Supported"},
    {4, "NVML_ERROR_NO_PERMISSION", StatusCode::kPermissionDenied,
     "Insufficient Permissions"},
    {5, "NVML_ERROR_ALREADY_INITIALIZED", StatusCode::kFailedPrecondition,
     "Already Initialized"},
    {6, "NVML_ERROR_NOT_FOUND", StatusCode::kNotFound, "Not Found"},
    {7, "NVML_ERROR_INSUFFICIENT_SIZE", StatusCode::kInternal,
     "Insufficient Size"},
    {8, "NVML_ERROR_INSUFFICIENT_POWER", StatusCode::kUnavailable,
     "Insufficient External Power"},
    {9, "NVML_ERROR_DRIVER_NOT_LOADED", StatusCode::kUnavailable,
     "Driver Not Loaded"},
    {10, "NVML_ERROR_TIMEOUT", StatusCode::kUnavailable, "Timeout"},
    {11, "NVML_ERROR_IRQ_ISSUE", StatusCode::kUnavailable,
     "Interrupt Request Issue"},
    {12, "NVML_ERROR_LIBRARY_NOT_FOUND", StatusCode::kUnavailable,
     "NVML Shared Library Not Found"},
    {13, "NVML_ERROR_FUNCTION_NOT_FOUND", StatusCode::kUnimplemented,
     "Function Not Found"},
    {14, "NVML_ERROR_CORRUPTED_INFOROM", StatusCode::kDataLoss,
     "Corrupted infoROM"},
    {15, "NVML_ERROR_GPU_IS_LOST", StatusCode::kUnavailable, "GPU is lost"},
    {16, "NVML_ERROR_RESET_REQUIRED", StatusCode::kUnavailable,
     "GPU requires reset"},
    {17, "NVML_ERROR_OPERATING_SYSTEM", StatusCode::kPermissionDenied,
     "GPU access blocked by the operating system"},
    {18, "NVML_ERROR_LIB_RM_VERSION_MISMATCH", StatusCode::kUnavailable,
     "Driver/library version mismatch"},
    {19, "NVML_ERROR_IN_USE", StatusCode::kUnavailable,
     "In use by another client"},
    {20, "NVML_ERROR_MEMORY", StatusCode::kResourceExhausted,
     "Insufficient Memory"},
    {21, "NVML_ERROR_NO_DATA", StatusCode::kNotFound, "No data"},
    {23, "NVML_ERROR_INSUFFICIENT_RESOURCES", StatusCode::kResourceExhausted,
     "Insufficient Resources"},
    {999, "NVML_ERROR_UNKNOWN", StatusCode::kUnknown, "Unknown Error"},
};

const NvmlReturnInfo* FindReturn(int code) {
  for (const NvmlReturnInfo& info : kNvmlReturns) {
    if (info.code == code) return &info;
  }
  return nullptr;
}

// nvmlClocksEventReason* bits (nvml.h) and their names in gpu.h.
struct ReasonBit {
  uint64_t bit;
  std::string_view name;
};
constexpr ReasonBit kReasonBits[] = {
    {0x001, "idle"},                 // GpuIdle
    {0x002, "applications_clocks"},  // ApplicationsClocksSetting
    {0x004, "sw_power_cap"},         // SwPowerCap
    {0x008, "hw_slowdown"},          // HwSlowdown
    {0x010, "sync_boost"},           // SyncBoost
    {0x020, "sw_thermal"},           // SwThermalSlowdown
    {0x040, "hw_thermal"},           // HwThermalSlowdown
    {0x080, "hw_power_brake"},       // HwPowerBrakeSlowdown
    {0x100, "display_clocks"},       // DisplayClockSetting
};

// GT/s per lane of PCIe generations 1..6.
constexpr double kPcieGtps[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};

// Parses exactly `text` as hex; false on anything else.
bool ParseHex(std::string_view text, unsigned* out) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), *out, 16);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

Status NvmlStatus(int nvml_return, std::string_view call,
                  std::string_view text) {
  const NvmlReturnInfo* info = FindReturn(nvml_return);
  std::string message(call);
  message += ": ";
  if (!text.empty()) {
    message += text;
  } else {
    message += NvmlReturnText(nvml_return);
  }
  if (info == nullptr) {
    message += " (nvmlReturn_t " + std::to_string(nvml_return) + ")";
    return Status(StatusCode::kUnknown, std::move(message));
  }
  if (info->status == StatusCode::kOk) {
    return InternalError(message + " reported as an error");
  }
  return Status(info->status, std::move(message));
}

std::string_view NvmlReturnName(int nvml_return) {
  const NvmlReturnInfo* info = FindReturn(nvml_return);
  return info == nullptr ? std::string_view() : info->name;
}

std::string_view NvmlReturnText(int nvml_return) {
  const NvmlReturnInfo* info = FindReturn(nvml_return);
  return info == nullptr ? FindReturn(kNvmlErrorUnknown)->text : info->text;
}

std::optional<int> ParseNvmlReturnName(std::string_view name) {
  for (const NvmlReturnInfo& info : kNvmlReturns) {
    if (info.name == name) return info.code;
  }
  return std::nullopt;
}

StatusOr<std::string> NormalizeNvmlBusId(std::string_view bus_id) {
  // domain:bus:device.function, each part hex.
  const size_t c1 = bus_id.find(':');
  const size_t c2 =
      c1 == std::string_view::npos ? c1 : bus_id.find(':', c1 + 1);
  const size_t dot = c2 == std::string_view::npos ? c2 : bus_id.find('.', c2);
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  const bool ok = dot != std::string_view::npos && c1 <= 8 &&
                  c2 - c1 - 1 <= 2 && dot - c2 - 1 <= 2 &&
                  bus_id.size() - dot - 1 == 1 &&
                  ParseHex(bus_id.substr(0, c1), &domain) &&
                  ParseHex(bus_id.substr(c1 + 1, c2 - c1 - 1), &bus) &&
                  ParseHex(bus_id.substr(c2 + 1, dot - c2 - 1), &dev) &&
                  ParseHex(bus_id.substr(dot + 1), &fn) && dev < 32 && fn < 8;
  if (!ok) {
    return InvalidArgumentError("NVML PCI bus id \"" + std::string(bus_id) +
                                "\": expected domain:bus:device.function");
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04x:%02x:%02x.%x", domain, bus, dev, fn);
  return std::string(buf);
}

std::optional<double> PcieGenerationGtps(unsigned generation) {
  if (generation < 1 || generation > std::size(kPcieGtps)) return std::nullopt;
  return kPcieGtps[generation - 1];
}

std::string MigProfileName(const NvmlDeviceAttributes& attributes,
                           uint64_t parent_memory_total_bytes) {
  const unsigned g = attributes.gpu_instance_slice_count;
  const unsigned c = attributes.compute_instance_slice_count;
  const uint64_t total = parent_memory_total_bytes;
  if (g == 0 || c == 0 || total == 0 || attributes.memory_size_mib == 0) {
    return "";
  }
  constexpr uint64_t kMiB = uint64_t{1} << 20, kGiB = uint64_t{1} << 30;
  // Integer arithmetic for the device plugin's float formula, so that a
  // share exactly on an eighth stays there.
  const uint64_t eighths =
      (attributes.memory_size_mib * kMiB * 8 + total - 1) / total;
  const uint64_t total_gib = (total + kGiB - 1) / kGiB;
  const uint64_t gb = (eighths * total_gib + 4) / 8;  // half away from zero
  std::string name;
  if (c != g) name = std::to_string(c) + "c.";
  return name + std::to_string(g) + "g." + std::to_string(gb) + "gb";
}

std::vector<std::string> ClocksEventReasonNames(uint64_t mask) {
  std::vector<std::string> names;
  for (const ReasonBit& reason : kReasonBits) {
    if (mask & reason.bit) names.emplace_back(reason.name);
  }
  return names;
}

}  // namespace lens::nvml
