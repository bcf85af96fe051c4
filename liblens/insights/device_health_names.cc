// Device health vocabulary: names, the port state strings of the kernel's
// InfiniBand sysfs (drivers/infiniband/core/sysfs.c prints "%d: %s"), the
// default thresholds, option checks and readable evidence.
#include <algorithm>
#include <bit>
#include <iterator>
#include <string>

#include "insights/device_health_device.h"
#include "lens/insights_health.h"

namespace lens {
namespace {

constexpr std::string_view kHealthThrottleNames[] = {
    "power_cap",           "thermal",    "sw_power_cap",   "hw_slowdown",
    "sync_boost",          "hw_thermal", "hw_power_brake", "sw_thermal",
    "applications_clocks", "idle",       "display_clocks", "current",
    "reliability",
};

// Indexed by RdmaLinkState / RdmaPhysState.
constexpr std::string_view kHealthLinkStateNames[] = {
    "unknown", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
constexpr std::string_view kHealthPhysStateNames[] = {
    "unknown",
    "Sleep",
    "Polling",
    "Disabled",
    "PortConfigurationTraining",
    "LinkUp",
    "LinkErrorRecovery",
    "Phy Test"};

struct HealthPortCounterRow {
  std::string_view name;
  uint64_t threshold;  // errors per port_error_window; see the header
};
// Indexed by PortErrorCounter.
constexpr HealthPortCounterRow kHealthPortCounters[] = {
    {"symbol_error", 100},
    {"link_error_recovery", 1},
    {"link_downed", 1},
    {"port_rcv_errors", 10},
    {"port_rcv_remote_physical_errors", 10},
    {"port_rcv_switch_relay_errors", 10},
    {"port_xmit_discards", 100},
    {"port_xmit_constraint_errors", 10},
    {"port_rcv_constraint_errors", 10},
    {"local_link_integrity_errors", 1},
    {"excessive_buffer_overrun_errors", 1},
};
static_assert(std::size(kHealthPortCounters) == kPortErrorCounterCount);

constexpr std::string_view kHealthSignalNames[] = {
    "ecc_uncorrectable", "ras_uncorrectable", "ecc_correctable",
    "ras_correctable",   "throttle",          "link_down",
    "link_physical",     "port_errors"};
static_assert(std::size(kHealthSignalNames) == kHealthSignalCount);

// "4: ACTIVE" -> "ACTIVE".
std::string_view HealthStripStatePrefix(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.remove_suffix(1);
  }
  const size_t colon = text.find(": ");
  if (colon != std::string_view::npos &&
      std::all_of(text.begin(), text.begin() + colon,
                  [](char c) { return c >= '0' && c <= '9'; })) {
    text.remove_prefix(colon + 2);
  }
  return text;
}

std::string HealthSeconds(uint64_t us) {
  return std::to_string(us / 1000000) + " s";
}

}  // namespace

std::string_view DeviceHealthName(DeviceHealth health) {
  switch (health) {
    case DeviceHealth::kHealthy:
      return "healthy";
    case DeviceHealth::kDegraded:
      return "degraded";
    case DeviceHealth::kUnhealthy:
      return "unhealthy";
  }
  return "unknown";
}

std::string_view HealthDeviceKindName(HealthDeviceKind kind) {
  return kind == HealthDeviceKind::kGpu ? "gpu" : "rdma_port";
}

uint32_t GpuThrottleMask(std::span<const std::string> reasons) {
  uint32_t mask = 0;
  for (const std::string& reason : reasons) {
    for (size_t b = 0; b < std::size(kHealthThrottleNames); ++b) {
      if (kHealthThrottleNames[b] == reason) mask |= 1u << b;
    }
  }
  return mask;
}

std::string_view GpuThrottleBitName(uint32_t bit) {
  if (bit == 0 || (bit & (bit - 1)) != 0) return "";
  const size_t index = static_cast<size_t>(std::countr_zero(bit));
  return index < std::size(kHealthThrottleNames) ? kHealthThrottleNames[index]
                                                 : "";
}

RdmaLinkState ParseRdmaLinkState(std::string_view text) {
  text = HealthStripStatePrefix(text);
  for (size_t i = 1; i < std::size(kHealthLinkStateNames); ++i) {
    if (kHealthLinkStateNames[i] == text) return static_cast<RdmaLinkState>(i);
  }
  return RdmaLinkState::kUnknown;
}

RdmaPhysState ParseRdmaPhysState(std::string_view text) {
  text = HealthStripStatePrefix(text);
  if (text == "PhyTest") return RdmaPhysState::kPhyTest;
  for (size_t i = 1; i < std::size(kHealthPhysStateNames); ++i) {
    if (kHealthPhysStateNames[i] == text) return static_cast<RdmaPhysState>(i);
  }
  return RdmaPhysState::kUnknown;
}

std::string_view RdmaLinkStateName(RdmaLinkState state) {
  const size_t i = static_cast<size_t>(state);
  return i < std::size(kHealthLinkStateNames) ? kHealthLinkStateNames[i]
                                              : "unknown";
}

std::string_view RdmaPhysStateName(RdmaPhysState state) {
  const size_t i = static_cast<size_t>(state);
  return i < std::size(kHealthPhysStateNames) ? kHealthPhysStateNames[i]
                                              : "unknown";
}

std::string_view PortErrorCounterName(PortErrorCounter counter) {
  const size_t i = static_cast<size_t>(counter);
  return i < kPortErrorCounterCount ? kHealthPortCounters[i].name : "";
}

std::array<uint64_t, kPortErrorCounterCount> DefaultPortErrorThresholds() {
  std::array<uint64_t, kPortErrorCounterCount> out{};
  for (size_t i = 0; i < kPortErrorCounterCount; ++i) {
    out[i] = kHealthPortCounters[i].threshold;
  }
  return out;
}

std::string_view HealthSignalName(HealthSignal signal) {
  const size_t i = static_cast<size_t>(signal);
  return i < kHealthSignalCount ? kHealthSignalNames[i] : "";
}

Status DeviceHealthOptions::Validate() const {
  const std::pair<std::string_view, std::chrono::seconds> durations[] = {
      {"degraded_clear_after", degraded_clear_after},
      {"unhealthy_clear_after", unhealthy_clear_after},
      {"correctable_window", correctable_window},
      {"throttle_window", throttle_window},
      {"throttle_threshold", throttle_threshold},
      {"max_sample_gap", max_sample_gap},
      {"port_error_window", port_error_window},
  };
  for (const auto& [name, value] : durations) {
    if (value.count() <= 0) {
      return InvalidArgumentError(std::string(name) +
                                  " must be positive, got " +
                                  std::to_string(value.count()) + " s");
    }
  }
  if (throttle_threshold > throttle_window) {
    return InvalidArgumentError(
        "throttle_threshold (" + std::to_string(throttle_threshold.count()) +
        " s) must not exceed throttle_window (" +
        std::to_string(throttle_window.count()) + " s)");
  }
  if (correctable_errors_threshold == 0) {
    return InvalidArgumentError("correctable_errors_threshold must be >= 1");
  }
  if (max_transitions == 0) {
    return InvalidArgumentError("max_transitions must be >= 1");
  }
  return OkStatus();
}

namespace health_internal {

HealthEvidence MakeHealthEvidence(const HealthDevice& dev, HealthSignal signal,
                                  const HealthHeld& held,
                                  const DeviceHealthOptions& options) {
  HealthEvidence e;
  e.signal = signal;
  e.severity = held.severity;
  e.amount = held.amount;
  e.at = Timestamp(std::chrono::microseconds(held.at_us));
  const std::string window_of =
      [&](std::chrono::seconds w) {
        return std::to_string(held.amount) + " in " +
               std::to_string(w.count()) + " s";
      }(signal == HealthSignal::kPortErrors ? options.port_error_window
                                            : options.correctable_window);
  switch (signal) {
    case HealthSignal::kEccUncorrectable:
    case HealthSignal::kEccCorrectable: {
      const bool ue = signal == HealthSignal::kEccUncorrectable;
      e.counter = ue ? "ecc_uncorrectable_errors" : "ecc_correctable_errors";
      if (held.counter == 1) e.counter += "_lifetime";
      e.detail = ue ? e.counter + " +" + std::to_string(held.amount)
                    : e.counter + ": " + window_of + " (>= " +
                          std::to_string(options.correctable_errors_threshold) +
                          ")";
      break;
    }
    case HealthSignal::kRasUncorrectable:
    case HealthSignal::kRasCorrectable: {
      const bool ue = signal == HealthSignal::kRasUncorrectable;
      e.counter = held.counter < dev.ras_names.size()
                      ? dev.ras_names[held.counter]
                      : "ras";
      e.detail = ue ? e.counter + " ue +" + std::to_string(held.amount)
                    : e.counter + " ce: " + window_of + " (>= " +
                          std::to_string(options.correctable_errors_threshold) +
                          ")";
      break;
    }
    case HealthSignal::kThrottle:
      e.counter = std::string(GpuThrottleBitName(1u << (held.counter & 31)));
      e.amount = held.amount / 1000000;
      e.detail =
          e.counter + ": " + HealthSeconds(held.amount) + " throttled in " +
          std::to_string(options.throttle_window.count()) +
          " s (>= " + std::to_string(options.throttle_threshold.count()) +
          " s)";
      break;
    case HealthSignal::kLinkDown:
    case HealthSignal::kLinkPhysical: {
      const auto state = static_cast<RdmaLinkState>(held.counter >> 8);
      const auto phys = static_cast<RdmaPhysState>(held.counter & 0xff);
      e.counter = signal == HealthSignal::kLinkDown ? "state" : "phys_state";
      e.detail = std::string(RdmaLinkStateName(state)) + "/" +
                 std::string(RdmaPhysStateName(phys));
      break;
    }
    case HealthSignal::kPortErrors: {
      const auto c = static_cast<PortErrorCounter>(held.counter);
      e.counter = std::string(PortErrorCounterName(c));
      e.detail = e.counter + ": " + window_of + " (>= " +
                 std::to_string(
                     options.port_error_thresholds[held.counter %
                                                   kPortErrorCounterCount]) +
                 ")";
      break;
    }
  }
  return e;
}

}  // namespace health_internal
}  // namespace lens
