// Device health that clears (docs/insights.md#device-health): a state per
// GPU and per RDMA port (healthy, degraded, unhealthy) computed from what the
// node agent samples over time, with hysteresis, so that a device that
// recovers returns to healthy and a flapping one does not flap its state.
//
//   auto tracker = lens::DeviceHealthTracker::Create({});
//   for (const lens::HealthSample& s : samples)    // per node, time order
//     lens::Status st = tracker->Observe(s);
//   auto now = tracker->States();                   // one per device
//   auto changes = tracker->TransitionsAfter(seq);  // events since `seq`
//
// Evidence. Counters are totals (since driver load, or over the board's life)
// and only their increase between two observations of the same device is
// evidence. A count since driver load that goes down restarted: its new
// value is what it counted since (PromQL's increase()); a lifetime total
// that goes down is re-based. Never a negative or wrapped increase. A
// device is:
//   unhealthy  at once on a new uncorrectable ECC/RAS error, or when an RDMA
//              port that was seen ACTIVE is not ACTIVE (DOWN, INIT, ...);
//   degraded   when correctable ECC/RAS errors, RDMA port error counters or
//              throttle time (thermal and hardware slowdown reasons, not
//              power capping) reach a threshold within a trailing window,
//              or when an ACTIVE port's physical state is not LinkUp.
// Each piece of evidence holds the state until a quiet period without new
// evidence of that kind has passed (degraded_clear_after,
// unhealthy_clear_after); the state is the worst evidence still held.
//
// Identity: a GPU is its serial (else its unique id/UUID, else node and PCI
// address), an RDMA port its HCA's node GUID and port number. A device
// swapped into the same slot (same index or HCA name, new serial or GUID)
// starts clean with its own history; the old one keeps its state, marked no
// longer present. A device seen again in another slot continues its history.
#ifndef LENS_INSIGHTS_HEALTH_H_
#define LENS_INSIGHTS_HEALTH_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lens/export.h"
#include "lens/gpu.h"
#include "lens/model.h"
#include "lens/rdma.h"
#include "lens/status.h"

namespace lens {

class TimeSeriesSource;  // lens/timeseries.h

enum class DeviceHealth { kHealthy = 0, kDegraded = 1, kUnhealthy = 2 };
// "healthy", "degraded", "unhealthy".
LENS_EXPORT std::string_view DeviceHealthName(DeviceHealth health);

enum class HealthDeviceKind { kGpu, kRdmaPort };
// "gpu", "rdma_port".
LENS_EXPORT std::string_view HealthDeviceKindName(HealthDeviceKind kind);

// ---- observations ----------------------------------------------------------

// GpuSample::throttle_reasons as bits (one per reason of gpu.h's vocabulary).
enum GpuThrottleBit : uint32_t {
  kThrottlePowerCap = 1u << 0,
  kThrottleThermal = 1u << 1,
  kThrottleSwPowerCap = 1u << 2,
  kThrottleHwSlowdown = 1u << 3,
  kThrottleSyncBoost = 1u << 4,
  kThrottleHwThermal = 1u << 5,
  kThrottleHwPowerBrake = 1u << 6,
  kThrottleSwThermal = 1u << 7,
  kThrottleApplicationsClocks = 1u << 8,
  kThrottleIdle = 1u << 9,
  kThrottleDisplayClocks = 1u << 10,
  kThrottleCurrent = 1u << 11,
  kThrottleReliability = 1u << 12,
};
// The bits of `reasons` (names as in GpuSample); unknown names are ignored.
LENS_EXPORT uint32_t GpuThrottleMask(std::span<const std::string> reasons);
// The name of one bit ("thermal"); "" for a value that is not one bit.
LENS_EXPORT std::string_view GpuThrottleBitName(uint32_t bit);

// An AMD RAS block's error totals (ras/<block>_err_count: "ue: N", "ce: N").
struct RasBlockCounts {
  std::string block;  // "umc", "gfx", "sdma", "xgmi_wafl", ...
  std::optional<uint64_t> uncorrectable;
  std::optional<uint64_t> correctable;
};

// One GPU at one moment. Counters not reported are nullopt.
struct GpuHealthObservation {
  int index = -1;         // the node's GPU index (the slot)
  std::string serial;     // identity; "" when the board reports none
  std::string unique_id;  // used when serial is ""
  std::string bdf;        // used when both are ""
  // Totals since driver load (NVML volatile, amdgpu RAS sums) and over the
  // board's life (NVML aggregate).
  std::optional<uint64_t> ecc_uncorrectable;
  std::optional<uint64_t> ecc_correctable;
  std::optional<uint64_t> ecc_uncorrectable_lifetime;
  std::optional<uint64_t> ecc_correctable_lifetime;
  // Per-block RAS totals (AMD), in a stable order. When present they are
  // the evidence and ecc_uncorrectable/ecc_correctable (their sums) are not
  // looked at, so one error is not counted twice.
  std::vector<RasBlockCounts> ras_blocks;
  uint32_t throttle_reasons = 0;  // GpuThrottleBit bits active now
  bool throttle_known = false;    // false: reasons not reported
};

enum class RdmaLinkState {
  kUnknown,
  kDown,
  kInit,
  kArmed,
  kActive,
  kActiveDefer
};
enum class RdmaPhysState {
  kUnknown,
  kSleep,
  kPolling,
  kDisabled,
  kPortConfigurationTraining,
  kLinkUp,
  kLinkErrorRecovery,
  kPhyTest,
};
// Parses class/infiniband/<dev>/ports/<n>/state and phys_state, with or
// without the numeric prefix ("4: ACTIVE", "ACTIVE", "5: LinkUp");
// kUnknown for anything else, "" included.
LENS_EXPORT RdmaLinkState ParseRdmaLinkState(std::string_view text);
LENS_EXPORT RdmaPhysState ParseRdmaPhysState(std::string_view text);
// As the kernel prints them: "ACTIVE", "LinkUp"; "unknown".
LENS_EXPORT std::string_view RdmaLinkStateName(RdmaLinkState state);
LENS_EXPORT std::string_view RdmaPhysStateName(RdmaPhysState state);

// The InfiniBand PortCounters error counters (ports/<n>/counters/, the same
// names on RoCE).
enum class PortErrorCounter : uint8_t {
  kSymbolError,
  kLinkErrorRecovery,
  kLinkDowned,
  kPortRcvErrors,
  kPortRcvRemotePhysicalErrors,
  kPortRcvSwitchRelayErrors,
  kPortXmitDiscards,
  kPortXmitConstraintErrors,
  kPortRcvConstraintErrors,
  kLocalLinkIntegrityErrors,
  kExcessiveBufferOverrunErrors,
};
inline constexpr size_t kPortErrorCounterCount = 11;
// The counter's file name: "symbol_error", "port_rcv_errors", ...
LENS_EXPORT std::string_view PortErrorCounterName(PortErrorCounter counter);

// One RDMA port at one moment.
struct PortHealthObservation {
  std::string device;  // "mlx5_0" (with `port`, the slot)
  int port = 1;
  std::string node_guid;  // identity with `port`; "" falls back to the slot
  RdmaLinkState state = RdmaLinkState::kUnknown;
  RdmaPhysState phys_state = RdmaPhysState::kUnknown;
  // Indexed by PortErrorCounter; nullopt when not read.
  std::array<std::optional<uint64_t>, kPortErrorCounterCount> errors{};
};

// One node's devices at one moment (one node agent cycle).
struct HealthSample {
  std::string node;
  Timestamp time{};
  std::vector<GpuHealthObservation> gpus;
  std::vector<PortHealthObservation> ports;
};

// A node agent's cycle (NodeSnapshot's fields) as a HealthSample. A
// partitioned AMD GPU (several GpuInfo with one serial) is observed once,
// through partition 0, which holds the physical device's values. Ports are
// matched to their device by name for the node GUID; hardware counters are
// not used. `gpu_samples[i]` belongs to `gpus[i]` (extra entries of either
// are ignored).
LENS_EXPORT HealthSample HealthSampleFromAgent(
    std::string node, Timestamp time, std::span<const GpuInfo> gpus,
    std::span<const GpuSample> gpu_samples,
    std::span<const RdmaDevice> rdma_devices,
    std::span<const RdmaPortCounters> rdma_ports);

// ---- options ---------------------------------------------------------------

// The default per-counter thresholds (errors within port_error_window that
// make a port degraded; 0: the counter is not evidence): 1 for link_downed,
// link_error_recovery, local_link_integrity_errors and
// excessive_buffer_overrun_errors (each is a link event), 100 for
// symbol_error and port_xmit_discards (a few are normal on long links and
// under congestion), 10 for the receive and constraint errors.
LENS_EXPORT std::array<uint64_t, kPortErrorCounterCount>
DefaultPortErrorThresholds();

struct LENS_EXPORT DeviceHealthOptions {
  // Quiet time after the last degrading / unhealthy evidence before it
  // stops holding the state.
  std::chrono::seconds degraded_clear_after{30 * 60};
  std::chrono::seconds unhealthy_clear_after{60 * 60};
  // Correctable ECC/RAS errors (per counter or RAS block) within the window
  // that make a GPU degraded.
  uint64_t correctable_errors_threshold = 100;
  std::chrono::seconds correctable_window{60 * 60};
  // Throttle reasons that are evidence, and how much throttled time within
  // the window makes a GPU degraded. An observation with one of the reasons
  // counts the time since the device's previous observation, at most
  // max_sample_gap (a longer gap is unknown time).
  uint32_t throttle_reasons = kThrottleThermal | kThrottleHwThermal |
                              kThrottleSwThermal | kThrottleHwSlowdown |
                              kThrottleHwPowerBrake;
  std::chrono::seconds throttle_window{10 * 60};
  std::chrono::seconds throttle_threshold{5 * 60};
  std::chrono::seconds max_sample_gap{120};
  // RDMA port error counters: errors within the window (see
  // DefaultPortErrorThresholds) that make a port degraded.
  std::chrono::seconds port_error_window{10 * 60};
  std::array<uint64_t, kPortErrorCounterCount> port_error_thresholds =
      DefaultPortErrorThresholds();
  // Transitions a tracker keeps (the oldest are dropped); states are kept
  // for every device ever seen.
  size_t max_transitions = 100000;

  // InvalidArgument naming the field: durations must be positive,
  // throttle_threshold at most throttle_window, thresholds and
  // max_transitions at least 1.
  Status Validate() const;
};

// ---- results ---------------------------------------------------------------

// What a device is and where it was last seen.
struct HealthDeviceRef {
  HealthDeviceKind kind = HealthDeviceKind::kGpu;
  // The identity: a GPU's serial ("uuid:<id>" or "bdf:<node>/<bdf>" when it
  // has none); an RDMA port's "<node_guid>/<port>" ("<node>/<device>/<port>"
  // without a GUID).
  std::string id;
  std::string node;
  std::string device;  // the GPU index ("3") or the HCA ("mlx5_0")
  int port = 0;        // RDMA ports; 0 for GPUs
};

enum class HealthSignal {
  kEccUncorrectable,  // counter: ecc_uncorrectable[_lifetime]; amount: +N
  kRasUncorrectable,  // counter: the RAS block; amount: +N
  kEccCorrectable,    // counter: ecc_correctable[_lifetime]; amount: in window
  kRasCorrectable,    // counter: the RAS block; amount: in window
  kThrottle,          // counter: a reason; amount: throttled s in window
  kLinkDown,          // counter: "state"; detail: "DOWN/Disabled"
  kLinkPhysical,      // counter: "phys_state"; detail: "ACTIVE/Polling"
  kPortErrors,        // counter: the error counter; amount: in window
};
inline constexpr size_t kHealthSignalCount = 8;
// "ecc_uncorrectable", "ras_uncorrectable", "ecc_correctable",
// "ras_correctable", "throttle", "link_down", "link_physical", "port_errors".
LENS_EXPORT std::string_view HealthSignalName(HealthSignal signal);

// One piece of evidence: which counter or reason, by how much, when.
struct HealthEvidence {
  HealthSignal signal = HealthSignal::kEccUncorrectable;
  DeviceHealth severity = DeviceHealth::kHealthy;
  std::string counter;
  uint64_t amount = 0;  // see HealthSignal; seconds for kThrottle
  std::string detail;   // readable: "symbol_error: 120 in 600 s (>= 100)"
  Timestamp at{};       // the observation it came from
};

// A change of state. Escalations carry the new evidence; a recovery
// (cleared) carries the evidence that stopped holding the state, and is
// timed when its quiet period ended (which may be before the observation
// that revealed it).
struct HealthTransition {
  uint64_t sequence = 0;  // 1, 2, ... in the order the tracker emitted them
  Timestamp time{};
  HealthDeviceRef device;
  DeviceHealth from = DeviceHealth::kHealthy;
  DeviceHealth to = DeviceHealth::kHealthy;
  bool cleared = false;
  HealthEvidence cause;
};

struct DeviceHealthStatus {
  HealthDeviceRef device;
  DeviceHealth state = DeviceHealth::kHealthy;
  Timestamp since{};  // entered `state` (first_seen while always healthy)
  // The evidence holding the state (the worst, latest); unset when healthy.
  std::optional<HealthEvidence> cause;
  // When the state would drop if no new evidence came; unset when healthy.
  std::optional<Timestamp> clears_at;
  Timestamp first_seen{};
  Timestamp last_seen{};
  bool present = true;  // still the device in its slot
  uint32_t transitions = 0;
  uint32_t counter_resets = 0;  // counters seen going down (restarts)
  // RDMA ports only: seen ACTIVE at least once (a port never up, such as
  // an uncabled second port, is not evidence of anything).
  bool link_seen_active = false;
};

// ---- computation
// -------------------------------------------------------------

// Streaming health: feed each node's samples in time order; per-observation
// cost is constant (it does not grow with history). Not thread-safe: one
// caller at a time (const methods may run concurrently with each other).
class LENS_EXPORT DeviceHealthTracker {
 public:
  // InvalidArgument when the options are not valid.
  static StatusOr<std::unique_ptr<DeviceHealthTracker>> Create(
      const DeviceHealthOptions& options);
  ~DeviceHealthTracker();
  DeviceHealthTracker(const DeviceHealthTracker&) = delete;
  DeviceHealthTracker& operator=(const DeviceHealthTracker&) = delete;

  // Applies one node's sample. InvalidArgument (nothing applied) when the
  // node is "", the time unset, or the time before the node's previous
  // sample; a device moved from another node ignores samples older than its
  // own last one.
  Status Observe(const HealthSample& sample);
  // Every device seen: unhealthy first, then degraded, then healthy; by
  // node, kind, device and port within each.
  std::vector<DeviceHealthStatus> States() const;
  // One device by HealthDeviceRef::id; NotFound when never seen.
  StatusOr<DeviceHealthStatus> State(HealthDeviceKind kind,
                                     std::string_view id) const;
  // Kept transitions with time >= `since`, by time (then sequence).
  std::vector<HealthTransition> TransitionsSince(Timestamp since) const;
  // Kept transitions with sequence > `sequence`, in sequence order (a
  // consumer passes the last sequence it saw).
  std::vector<HealthTransition> TransitionsAfter(uint64_t sequence) const;
  // Observations applied, and the last transition sequence (0: none).
  uint64_t observations() const;
  uint64_t last_sequence() const;

 private:
  struct Impl;
  explicit DeviceHealthTracker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct DeviceHealthReport {
  std::vector<DeviceHealthStatus> devices;    // as States()
  std::vector<HealthTransition> transitions;  // by time, all of them
};

// The whole history at once (any order; samples are stably sorted by time).
// InvalidArgument for invalid options or a sample without node or time.
// Every transition is returned (max_transitions does not apply).
LENS_EXPORT StatusOr<DeviceHealthReport> ComputeDeviceHealth(
    std::span<const HealthSample> samples, const DeviceHealthOptions& options);

// ---- the cluster's view, from the agents' metrics ---------------------------

// One device as the agents' lens_gpu_health and lens_rdma_port_health
// series show it over a range.
struct DeviceHealthSeen {
  HealthDeviceKind kind = HealthDeviceKind::kGpu;
  std::string node;
  std::string device;  // GPU index, or HCA name
  int port = 0;        // RDMA ports
  std::string id;      // serial (GPU), node GUID/port (RDMA)
  DeviceHealth state = DeviceHealth::kHealthy;  // at its last point
  Timestamp since{};      // first point of the last run of that state
  Timestamp last_seen{};  // its last point
  int32_t changes = 0;    // state changes within the range
};

// A state change between two consecutive points of one series.
struct DeviceHealthChange {
  HealthDeviceKind kind = HealthDeviceKind::kGpu;
  std::string node;
  std::string device;
  int port = 0;
  std::string id;
  Timestamp at{};  // the first point in the new state
  DeviceHealth from = DeviceHealth::kHealthy;
  DeviceHealth to = DeviceHealth::kHealthy;
};

struct DeviceHealthHistory {
  // Unhealthy first, then degraded, then healthy; by node and device.
  std::vector<DeviceHealthSeen> devices;
  std::vector<DeviceHealthChange> changes;  // by time
};

// Reads both series over [from, to] at `step` from a time-series source
// (the scrape's `node` label). The causes of the changes are on each
// node's GET /health/devices and in its log; the series carry the states.
LENS_EXPORT StatusOr<DeviceHealthHistory> ReadDeviceHealthHistory(
    TimeSeriesSource& source, Timestamp from, Timestamp to,
    std::chrono::milliseconds step);

}  // namespace lens

#endif  // LENS_INSIGHTS_HEALTH_H_
