// One device's health state machine (GPU or RDMA port): counter baselines,
// trailing windows of rates, the evidence that holds the state and its
// clearing. Internal to the device health insight (lens/insights_health.h).
#ifndef LENS_INSIGHTS_DEVICE_HEALTH_DEVICE_H_
#define LENS_INSIGHTS_DEVICE_HEALTH_DEVICE_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/insights_health.h"

namespace lens::health_internal {

inline constexpr int64_t kHealthNever = std::numeric_limits<int64_t>::max();

// Amounts per channel over a trailing window of time. Amortised O(1) per
// Add and Expire; holds at most the entries inside the window.
class HealthWindow {
 public:
  // `amount` must be > 0; `at_us` not before the previous Add.
  void Add(int64_t at_us, uint32_t channel, uint64_t amount);
  // Drops the entries at or before `cutoff_us`.
  void Expire(int64_t cutoff_us);
  uint64_t Sum(uint32_t channel) const {
    return channel < sums_.size() ? sums_[channel] : 0;
  }
  bool empty() const { return head_ == entries_.size(); }

 private:
  struct Entry {
    int64_t at_us;
    uint32_t channel;
    uint64_t amount;
  };
  std::vector<Entry> entries_;
  size_t head_ = 0;
  std::vector<uint64_t> sums_;
};

// A total's last value; an increase is evidence. Eight bytes (no counter
// reaches 2^64 - 1, which marks "none yet"), so a port's counters share two
// cache lines.
struct HealthCounter {
  static constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  uint64_t value = kNone;

  // What a decrease means: a counter that restarts from zero (the driver's
  // counts since it loaded, a port's error counters) counted the new value
  // since, as PromQL's increase() reads it; a lifetime total kept on the
  // board is re-based and shows no increase.
  enum class Drop { kRestart, kRebase };

  // The increase since the last value: 0 for the first value and for a
  // missing one; a decrease counts in `resets` and reads as `drop` says.
  // Inline: it runs for every counter of every observation.
  uint64_t Step(const std::optional<uint64_t>& now, uint32_t* resets,
                Drop drop = Drop::kRestart) {
    if (!now) return 0;
    const uint64_t previous = value;
    value = *now;
    if (previous == kNone || *now == previous) return 0;
    if (*now < previous) {
      ++*resets;
      return drop == Drop::kRestart ? *now : 0;
    }
    return *now - previous;
  }
};

// The latest evidence of one signal, while it holds the state.
struct HealthHeld {
  bool active = false;
  DeviceHealth severity = DeviceHealth::kHealthy;
  int64_t at_us = 0;     // the latest evidence of this signal
  uint32_t counter = 0;  // which counter or reason (see MakeHealthEvidence)
  uint64_t amount = 0;
};

// A transition found while applying an observation, before the tracker
// gives it a device reference and a sequence number.
struct HealthChange {
  int64_t at_us = 0;
  DeviceHealth from = DeviceHealth::kHealthy;
  DeviceHealth to = DeviceHealth::kHealthy;
  bool cleared = false;
  HealthSignal signal = HealthSignal::kEccUncorrectable;
  HealthHeld held;
};

// What every observation of a device reads and writes, kept apart from the
// rest (a vector of these, in the order the samples visit the devices,
// streams through the cache).
struct HealthHot {
  int64_t next_clear_us = kHealthNever;
  int64_t last_seen_us = std::numeric_limits<int64_t>::min();
  // The slot the device was last seen in: node number and position.
  uint32_t slot_node = 0;
  uint32_t slot_pos = 0;
  int32_t number = 0;  // the GPU index or port number of the slot
  uint32_t counter_resets = 0;
  DeviceHealth state = DeviceHealth::kHealthy;
  bool observed = false;
  bool present = true;
  bool slot_rebound = false;  // bound to its slot since the last observation
  bool link_seen_active = false;
  RdmaLinkState link_state = RdmaLinkState::kUnknown;
  RdmaPhysState phys_state = RdmaPhysState::kUnknown;
  // The identity text (a GPU's serial, else unique id, else PCI address;
  // a port's node GUID) inline when it fits, else in HealthDevice::identity.
  static constexpr uint8_t kIdentityInline = 31;
  uint8_t identity_len = 0;  // > kIdentityInline: not inline
  char identity[kIdentityInline] = {};
  // GPU: ue, ce, ue_lifetime, ce_lifetime; port: PortErrorCounter order.
  std::array<HealthCounter, kPortErrorCounterCount> counters{};

  void SetIdentity(std::string_view text);
  // Whether `text` is the identity (inline compare; `cold` when too long).
  bool SameIdentity(std::string_view text, const std::string& cold) const {
    if (identity_len > kIdentityInline) return text == cold;
    if (text.size() != identity_len) return false;
    // Eight bytes at a time, then the tail: inline, no library call.
    size_t i = 0;
    for (; i + 8 <= text.size(); i += 8) {
      uint64_t a, b;
      std::memcpy(&a, text.data() + i, 8);
      std::memcpy(&b, identity + i, 8);
      if (a != b) return false;
    }
    for (; i < text.size(); ++i) {
      if (text[i] != identity[i]) return false;
    }
    return true;
  }
};

inline constexpr size_t kHealthUe = 0, kHealthCe = 1, kHealthUeLifetime = 2,
                        kHealthCeLifetime = 3;

// The rest of a device: what it is, the evidence it holds, rates and RAS
// blocks (touched when something happens).
struct HealthDevice {
  HealthDeviceRef ref;
  std::string identity;  // as in HealthHot
  int gpu_index = -1;    // sort key for GPUs
  int64_t since_us = 0;
  int64_t first_seen_us = 0;
  uint32_t transitions = 0;
  std::array<HealthHeld, kHealthSignalCount> held{};
  std::vector<std::string> ras_names;
  std::vector<HealthCounter> ras_ue, ras_ce;
  HealthWindow correctable;  // channel 0, 1: ecc, lifetime; 2 + b: block b
  HealthWindow throttled;    // channel 0: throttled microseconds
  HealthWindow port_errors;  // channel: PortErrorCounter
};

// The text a GPU is known by: its serial, else unique id, else PCI address.
inline std::string_view HealthGpuIdentity(const GpuHealthObservation& obs) {
  if (!obs.serial.empty()) return obs.serial;
  if (!obs.unique_id.empty()) return obs.unique_id;
  return obs.bdf;
}

// Applies one observation at `t_us` (not before the device's last one) and
// appends the transitions it causes to `changes`.
void HealthObserveGpu(const GpuHealthObservation& obs, int64_t t_us,
                      const DeviceHealthOptions& options, HealthHot* hot,
                      HealthDevice* dev, std::vector<HealthChange>* changes);
void HealthObservePort(const PortHealthObservation& obs, int64_t t_us,
                       const DeviceHealthOptions& options, HealthHot* hot,
                       HealthDevice* dev, std::vector<HealthChange>* changes);

// The quiet period after which evidence of `severity` stops holding.
int64_t HealthClearAfterUs(DeviceHealth severity,
                           const DeviceHealthOptions& options);

// The readable evidence of a held signal of `dev`.
HealthEvidence MakeHealthEvidence(const HealthDevice& dev, HealthSignal signal,
                                  const HealthHeld& held,
                                  const DeviceHealthOptions& options);

// The signal holding the current state (worst, then latest); nullopt when
// healthy.
std::optional<HealthSignal> HealthHoldingSignal(const HealthHot& hot,
                                                const HealthDevice& dev);

// When the current state would drop without new evidence; kHealthNever when
// healthy.
int64_t HealthClearsAtUs(const HealthHot& hot, const HealthDevice& dev,
                         const DeviceHealthOptions& options);

}  // namespace lens::health_internal

#endif  // LENS_INSIGHTS_DEVICE_HEALTH_DEVICE_H_
