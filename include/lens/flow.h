// TCP flow analysis: per-socket traffic counted in the kernel by eBPF
// (bytes and segments each way, retransmits, srtt statistics), drained
// periodically, classified by the endpoint policy (lens/flow_policy.h),
// attributed to containers and rendered as bounded Prometheus metrics.
//
//   auto probe = lens::FlowProbe::Open({});       // needs root (CAP_BPF)
//   if (!probe.ok()) return probe.status();       // says what to fix
//   ... later, periodically:
//   auto flows = (*probe)->Drain();               // deltas since last Drain
//
// Higher up, FlowMonitor runs the drain loop, classification, attribution
// and metrics; WatchFlows is the one-shot "watch for N seconds" of
// `lens flows` and Python's lens.watch_flows.
#ifndef LENS_FLOW_H_
#define LENS_FLOW_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lens/export.h"
#include "lens/flow_policy.h"
#include "lens/status.h"

namespace lens {

class ContainerTracker;
class HttpServer;

// srtt histogram buckets: bucket i counts samples in [2^i, 2^(i+1)) µs
// (bucket 0 also holds 0-1 µs; the last is open-ended).
inline constexpr int kFlowRttBuckets = 32;

enum class FlowRole {
  kUnknown,  // the connection predates the probes
  kActive,   // this host connected
  kPassive,  // this host accepted
};

// One TCP socket's traffic. From FlowProbe::Drain the counters are the
// increase since the previous drain; from WatchFlows they are totals over
// the watch. Addresses are the socket's own view: saddr/sport local,
// daddr/dport remote.
struct LENS_EXPORT TcpFlow {
  IpAddress saddr;
  uint16_t sport = 0;
  IpAddress daddr;
  uint16_t dport = 0;
  // cgroup v2 id of the socket (0 when the kernel has none).
  uint64_t cgroup_id = 0;
  // First process seen using the socket (0/empty: not seen, e.g. no I/O
  // since the probes started).
  uint32_t pid = 0;
  std::string comm;
  // CLOCK_MONOTONIC nanoseconds at the connection's establishment; 0 when it
  // was established before the probes were attached. With the addresses,
  // ports and cgroup it tells apart connections that reused a 4-tuple.
  uint64_t open_time_ns = 0;

  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  uint64_t segments_sent = 0;
  uint64_t segments_received = 0;
  uint64_t retransmits = 0;
  // srtt samples: the socket's smoothed RTT, at most one sample per kernel
  // tick, 1 to 10 ms by CONFIG_HZ (see FlowProbeOptions::rtt_per_segment).
  uint64_t rtt_count = 0;
  uint64_t rtt_sum_us = 0;
  uint32_t rtt_min_us = 0;  // 0: no sample
  uint32_t rtt_max_us = 0;
  std::array<uint64_t, kFlowRttBuckets> rtt_histogram{};

  FlowRole role = FlowRole::kUnknown;
  bool opened = false;  // the open happened in this period
  bool closed = false;  // the close happened in this period

  // Filled by FlowMonitor / WatchFlows (not by FlowProbe).
  FlowClass remote_class = FlowClass::kExternal;
  FlowDirection direction = FlowDirection::kUnknown;
  std::string container_id;
  std::string pod_namespace;
  std::string pod_name;

  // Mean srtt in microseconds; 0 without samples.
  double MeanRttUs() const {
    return rtt_count ? static_cast<double>(rtt_sum_us) / rtt_count : 0;
  }
};

// Where flows come from: the eBPF probe, or a replay of recorded drains in
// tests. Drain is called from one thread at a time.
class LENS_EXPORT FlowSource {
 public:
  virtual ~FlowSource() = default;
  // Flows whose counters moved (or that opened/closed) since the previous
  // call; the first call covers the time since the source started.
  virtual StatusOr<std::vector<TcpFlow>> Drain() = 0;
};

struct LENS_EXPORT FlowProbeOptions {
  // Capacity of the in-kernel flow table (LRU: when full, the least
  // recently used socket's counts are lost, reported as evictions).
  uint32_t max_flows = 65536;
  // Open/close event ring buffer; a power of two, at least 4096.
  uint32_t ring_buffer_bytes = 1u << 20;
  // srtt samples come from the application's reads and writes (at most one
  // per socket per kernel tick). true: from tcp/tcp_probe on every received
  // segment instead (still at most one per tick, but it also samples
  // sockets whose application is idle); that program runs per segment and
  // costs ~5% of loopback throughput here (docs/performance.md).
  bool rtt_per_segment = false;
  // Keep each socket's entry in the socket (socket-local storage: ~half the
  // per-call cost) where the kernel allows it. false: the address-hash
  // programs, which also run on kernels that refuse BPF tracing programs
  // (docs/netflow.md); tests use it to cover both sets on one kernel.
  bool socket_storage = true;
  // Measure per-program run time with the kernel's BPF statistics
  // (kernel.bpf_stats_enabled, held through a BPF_ENABLE_STATS fd). That
  // switch is host-wide: while it is on, every BPF program on the host pays
  // two clock reads per run (with ours attached, ~5% of loopback throughput
  // here). So it is on only for `kernel_stats_window` out of every
  // `kernel_stats_period`, the first window opening one period minus one
  // window after Open; Stats() reports what the windows measured and their
  // total length. window == period: on for the probe's whole life.
  bool kernel_stats = true;
  std::chrono::milliseconds kernel_stats_window{1000};
  std::chrono::milliseconds kernel_stats_period{20000};
};

struct LENS_EXPORT FlowProgramStats {
  std::string name;  // e.g. "sock/sock_send_length"
  bool attached = false;
  // Runs and time in the program while the statistics were on (see
  // FlowProbeStats::kernel_stats_sampled_ns).
  uint64_t run_count = 0;
  uint64_t run_time_ns = 0;
};

// The probe's own cost and health. Plain value.
struct LENS_EXPORT FlowProbeStats {
  std::vector<FlowProgramStats> programs;
  // "tracepoint" (sock/sock_{send,recv}_length) or "kprobe" (their
  // fallback before Linux 6.3).
  std::string byte_source;
  // "socket-storage" (BTF-typed tracepoints, entries in the sockets) or
  // "address-hash" (raw tracepoints or kprobes, entries keyed by the
  // socket's address); FlowProbeOptions::socket_storage.
  std::string socket_entries;
  // Why the address-hash programs run (options, what the kernel lacks, or
  // the socket iterator's start-up self-test failing); empty otherwise.
  std::string socket_entries_reason;
  uint64_t events_received = 0;  // ring buffer records read
  uint64_t events_dropped = 0;   // ring buffer full (kernel side)
  uint64_t flows_created = 0;
  uint64_t flow_create_failed = 0;
  uint64_t flows_evicted = 0;  // gone from the table before being closed
  uint64_t active_opens = 0;
  uint64_t passive_opens = 0;
  uint64_t connect_failed = 0;
  uint64_t closes = 0;
  uint64_t drains = 0;
  uint32_t map_entries = 0;  // at the last drain
  uint32_t map_capacity = 0;
  // How long the kernel's BPF statistics were on (FlowProbeOptions); a
  // program's run_time_ns / this = the CPUs it used meanwhile.
  uint64_t kernel_stats_sampled_ns = 0;
};

// The eBPF probe: loads bpf/tcp_flow.bpf.c, attaches it, and turns the
// kernel's running totals into per-drain deltas. Owns every kernel object;
// destroying it detaches. Drain() and Stats() must not run concurrently
// with each other (FlowMonitor serialises them).
class LENS_EXPORT FlowProbe : public FlowSource {
 public:
  // Attaches BTF-typed raw tracepoints by name (no tracefs needed); needs
  // Linux 5.12 or later (docs/netflow.md). Errors say what
  // to do: PermissionDenied when not root / without CAP_BPF+CAP_PERFMON;
  // FailedPrecondition when the kernel has no BTF or its BTF lacks a
  // feature the programs need (each named); Internal with the verifier's last
  // lines when the kernel refuses a program; Unimplemented when Lens was built
  // without eBPF (LENS_BUILD_BPF=OFF).
  static StatusOr<std::unique_ptr<FlowProbe>> Open(
      const FlowProbeOptions& options = {});
  virtual FlowProbeStats Stats() const = 0;
};

struct LENS_EXPORT FlowMonitorOptions {
  FlowPolicy policy = DefaultFlowPolicy();
  std::chrono::milliseconds drain_interval{5000};
  // Remote endpoints exported by name; the rest are folded into "other".
  size_t top_remote = 20;
  // Also render the original platform's metric names
  // (primus_lens_network_tcp_flow_egress, ..._ingress,
  // primus_lens_network_k8s_tcp_flow, primus_lens_network_tcp_flow_rtt).
  bool compat_metrics = false;
  // Where the listening sockets are read (net/tcp, net/tcp6) and process
  // cgroups (<pid>/cgroup) for attribution.
  std::string proc_root = "/proc";
  // Optional, not owned, must outlive the monitor: attributes flows to
  // containers (by the socket's process).
  const ContainerTracker* containers = nullptr;
};

// Runs a FlowSource's drain loop on its own thread, classifies and
// attributes each flow, and keeps the bounded metric state. Thread-safe:
// RenderMetrics/Stats/RecentFlows from any thread.
class LENS_EXPORT FlowMonitor {
 public:
  // Takes ownership of `source` (a FlowProbe, or a replay in tests).
  static StatusOr<std::unique_ptr<FlowMonitor>> Create(
      std::unique_ptr<FlowSource> source, FlowMonitorOptions options);
  virtual ~FlowMonitor() = default;
  // Starts the drain thread; Stop() drains once more and joins.
  virtual Status Start() = 0;
  virtual void Stop() = 0;
  // One drain now, on the caller's thread (tests, CLI).
  virtual Status DrainOnce() = 0;
  // Prometheus text of every flow family (and the probe's own cost when
  // the source is a FlowProbe).
  virtual std::string RenderMetrics() const = 0;
  // Flows of the last drain, classified.
  virtual std::vector<TcpFlow> RecentFlows() const = 0;
};

struct LENS_EXPORT FlowWatchOptions {
  FlowProbeOptions probe;
  FlowPolicy policy = DefaultFlowPolicy();
  std::string proc_root = "/proc";
  // Called once the probes are attached (the watch has begun).
  std::function<void()> on_attached;
};

// Attaches the probe, waits `duration`, and returns every socket that moved
// data, opened or closed meanwhile, with totals over the watch, classified;
// sorted by bytes (sent + received), largest first. Errors as
// FlowProbe::Open.
LENS_EXPORT StatusOr<std::vector<TcpFlow>> WatchFlows(
    std::chrono::milliseconds duration, const FlowWatchOptions& options = {});

// {"flows":[{"saddr","sport","daddr","dport","bytes_sent","bytes_received",
// "segments_sent","segments_received","retransmits","rtt_us" (mean srtt;
// null without samples), "rtt_min_us","rtt_max_us","class","direction",
// "role","opened","closed","pid","comm","cgroup_id","container_id",
// "pod_namespace","pod_name"}]}; rtt min/max, pid, comm, cgroup_id and the
// container fields only where known. IPv4-mapped addresses print as IPv4.
LENS_EXPORT std::string FlowsJson(const std::vector<TcpFlow>& flows);

// Serves `monitor` on `http`: /metrics (flow metrics and the probe's cost),
// /flows (the last drain's busiest sockets first, ?limit=N in 1..100000,
// default 1000, in the REST envelope) and /healthz. `monitor` must outlive
// the server's handlers.
LENS_EXPORT void AddFlowRoutes(HttpServer& http, const FlowMonitor& monitor);

}  // namespace lens

#endif  // LENS_FLOW_H_
