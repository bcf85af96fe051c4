// The node agent: one sampling loop over explicitly registered collectors,
// publishing an immutable NodeSnapshot per cycle that /metrics and the node
// REST API read.
//
//   lens::NodeAgentOptions options;             // roots, interval, ...
//   lens::CollectorRegistry collectors = lens::DefaultNodeCollectors(options);
//   lens::NodeAgent agent(options, std::move(collectors));
//   lens::Status st = agent.RunOnce();          // one cycle (tests, probes)
//   st = agent.Start();                         // the loop, on its own thread
//   std::string text = agent.RenderMetrics();   // Prometheus text
//   agent.Stop();
//
// Static inventory (Scan) is read once and again only when a source's device
// set token changes; every cycle only samples (kept-open files, no process
// forked).
#ifndef LENS_AGENT_NODE_AGENT_H_
#define LENS_AGENT_NODE_AGENT_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/http.h"
#include "lens/amd_smi.h"
#include "lens/gpu.h"
#include "lens/host.h"
#include "lens/kubelet.h"
#include "lens/node.h"
#include "lens/rdma.h"
#include "lens/status.h"

namespace lens {

// How the last runs of one collector went.
struct CollectorState {
  std::string name;
  uint64_t runs = 0;
  uint64_t failures = 0;
  uint64_t rescans = 0;  // inventory re-reads after a device set change
  bool last_ok = false;
  std::string last_error;  // empty after a success
  std::chrono::nanoseconds last_duration{0};
  std::chrono::system_clock::time_point last_run;
};

// What the agent knows at one moment. Plain value; published as
// std::shared_ptr<const NodeSnapshot> (never modified once published).
struct NodeSnapshot {
  uint64_t cycle = 0;
  std::chrono::system_clock::time_point time;
  std::string node_name;
  // GPUs of every source, renumbered 0..; gpu_samples[i] belongs to gpus[i].
  std::vector<GpuInfo> gpus;
  std::vector<GpuSample> gpu_samples;
  std::vector<DriMapping> dri;
  // RDMA devices; rdma_ports holds one entry per port of every device, in
  // device order.
  std::vector<RdmaDevice> rdma_devices;
  std::vector<RdmaPortCounters> rdma_ports;
  std::optional<NodeFacts> facts;
  std::optional<NodeEphemeralStorage> ephemeral_storage;
  std::optional<GpuAllocation> gpu_allocation;
  std::vector<CollectorState> collectors;
};

// One source of node state. Collect() is never called concurrently with
// itself, but the collectors of one cycle run side by side on their own
// threads: each must update only its own part of `next`, which
// holds the previous cycle's values on entry (so a collector that keeps its
// part when nothing changed does nothing). A failure is recorded in the
// collector's state and logged once by the agent; the part keeps its previous
// values.
class Collector {
 public:
  virtual ~Collector();
  // Stable, short: "gpu", "rdma", "node", "kubelet".
  virtual std::string_view name() const = 0;
  // The collector runs at most this often (0: every cycle), for sources that
  // are expensive or change slowly (kubelet, node facts).
  virtual std::chrono::milliseconds min_interval() const { return {}; }
  // Returns true in *rescanned when it re-read its static inventory.
  virtual Status Collect(NodeSnapshot* next, bool* rescanned) = 0;
};

// The collectors an agent runs, in order. Built by the caller; nothing
// registers itself.
class CollectorRegistry {
 public:
  CollectorRegistry() = default;
  CollectorRegistry(CollectorRegistry&&) = default;
  CollectorRegistry& operator=(CollectorRegistry&&) = default;
  // InvalidArgument for null or a duplicate name.
  Status Add(std::unique_ptr<Collector> collector);
  size_t size() const { return collectors_.size(); }
  std::vector<std::unique_ptr<Collector>>& collectors() { return collectors_; }

 private:
  std::vector<std::unique_ptr<Collector>> collectors_;
};

// Knobs of the GPU collector.
struct GpuCollectorOptions {
  // The device set token of each source is re-read at most this often (0:
  // every cycle), and always right after a failed sample; a changed token
  // triggers a rescan.
  std::chrono::milliseconds device_check_interval{};
  // When set, amd-smi (`list` and `static`, each within its time limit) runs
  // after every rescan, never per cycle, and fills only the inventory fields
  // sysfs left empty (ApplyAmdSmi). A failure is logged and the sysfs
  // inventory is used as it is.
  std::optional<AmdSmiRunOptions> amd_smi;
};

// Built-in collectors.
// GPUs of `sources` (AMD sysfs, NVML, ...), plus the DRI mapping.
std::unique_ptr<Collector> NewGpuCollector(
    const HostRoots& roots, std::vector<std::unique_ptr<GpuSource>> sources,
    const GpuCollectorOptions& options = {});
// The device set of class/infiniband is re-read as for GPUs; `reader` says
// how often each port's slow counters are read (in cycles).
std::unique_ptr<Collector> NewRdmaCollector(
    const HostRoots& roots,
    std::chrono::milliseconds device_check_interval = {},
    const RdmaReaderOptions& reader = {});
std::unique_ptr<Collector> NewNodeFactsCollector(
    const HostRoots& roots, std::chrono::milliseconds interval);
// Ephemeral storage (/stats/summary) and GPU allocation (/pods) from the
// kubelet.
std::unique_ptr<Collector> NewKubeletCollector(
    const KubeletOptions& kubelet, std::chrono::milliseconds interval);

struct NodeAgentOptions {
  HostRoots roots;
  std::string node_name;  // $NODE_NAME; defaults to the hostname
  std::string node_ip;    // $NODE_IP; informational
  std::chrono::milliseconds interval{5000};
  // How often the GPU and RDMA collectors look for added or removed devices
  // (a directory listing); a failed sample always triggers a look.
  std::chrono::milliseconds device_check_interval{30000};
  // amd-smi executable to enrich the AMD inventory after each rescan; empty:
  // amd-smi is never run.
  std::string amd_smi_path;
  std::chrono::milliseconds amd_smi_timeout{10000};
  // Also export the original platform's metric names.
  bool compat_names = false;
  bool amd_gpus = true;
  bool nvidia_gpus = true;  // NVML, when libnvidia-ml.so.1 loads
  bool rdma = true;
  // RDMA error and event counters (counters/ but the traffic ones, and
  // hw_counters/) are read about this often per port: every
  // round(rdma_slow_counters_interval / interval) cycles, at least every
  // cycle, the ports staggered (RdmaReaderOptions). Traffic counters and
  // port state are read every cycle.
  std::chrono::milliseconds rdma_slow_counters_interval{30000};
  std::chrono::milliseconds node_facts_interval{60000};
  // Kubelet collector: on when kubelet.url is set.
  KubeletOptions kubelet;
  std::chrono::milliseconds kubelet_interval{30000};

  // InvalidArgument naming the field (interval below 100 ms, ...).
  Status Validate() const;
};

// The collectors `options` asks for: gpu (AMD sysfs and/or NVML), rdma, node,
// and kubelet when configured. NVML that cannot load is left out silently
// (no NVIDIA driver); anything else goes in.
CollectorRegistry DefaultNodeCollectors(const NodeAgentOptions& options);

// Thread-safe: snapshot()/RenderMetrics()/handlers from any thread;
// RunOnce() and the loop are serialised internally.
class NodeAgent {
 public:
  NodeAgent(NodeAgentOptions options, CollectorRegistry collectors);
  ~NodeAgent();  // stops the loop
  NodeAgent(const NodeAgent&) = delete;
  NodeAgent& operator=(const NodeAgent&) = delete;

  // Runs every due collector once and publishes a new snapshot. Returns the
  // first collector error (the snapshot is published anyway).
  Status RunOnce();
  // Runs RunOnce() every `interval` on a background thread, the first cycle
  // immediately. FailedPrecondition when already running.
  Status Start();
  // Stops and joins the loop; idempotent.
  void Stop();

  // The latest snapshot (an empty one before the first cycle).
  std::shared_ptr<const NodeSnapshot> snapshot() const;
  // Prometheus text exposition of the latest snapshot plus the agent's own
  // metrics; cached per cycle.
  std::string RenderMetrics() const;
  // Adds /metrics, /healthz, /gpus, /gpuDriverVersion, /cardMetrics,
  // /driMapping, /rdma, /node and /report (what lens-jobs reads) to `server`.
  void RegisterRoutes(HttpServer& server);
  // Called on the loop's thread after the first cycle and after every cycle
  // in which a collector re-read its inventory (devices added or removed),
  // with that cycle's snapshot. Set before Start(); must not block for long.
  using InventoryListener = std::function<void(const NodeSnapshot&)>;
  void SetInventoryListener(InventoryListener listener);
  // Called on the loop's thread after every cycle, with its snapshot (the
  // node service feeds its device health tracker). Set before Start();
  // must not block for long.
  using CycleListener = std::function<void(const NodeSnapshot&)>;
  void SetCycleListener(CycleListener listener);
  // Appends more metric families to every /metrics answer, after the
  // agent's own (rendered on each scrape, not cached). Set before the HTTP
  // server starts.
  using MetricsAppender = std::function<void(std::string* out)>;
  void SetMetricsAppender(MetricsAppender appender);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens

#endif  // LENS_AGENT_NODE_AGENT_H_
