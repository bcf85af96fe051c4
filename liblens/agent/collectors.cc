// The built-in collectors: GPU, RDMA, node facts, kubelet.
#include <algorithm>

#include "agent/node_agent.h"
#include "agent/worker.h"
#include "gpu/pci_numa.h"
#include "lens/kubelet.h"
#include "lens/log.h"
#include "lens/node.h"

namespace lens {

Collector::~Collector() = default;

Status CollectorRegistry::Add(std::unique_ptr<Collector> collector) {
  if (!collector)
    return InvalidArgumentError("collector registry: null collector");
  for (const auto& c : collectors_) {
    if (c->name() == collector->name()) {
      return InvalidArgumentError("collector registry: duplicate collector \"" +
                                  std::string(collector->name()) + "\"");
    }
  }
  collectors_.push_back(std::move(collector));
  return OkStatus();
}

namespace {

// When to re-read a device set token (a directory listing: ~80 us for an
// MI300X node's class/drm): before the first scan, after a failed sample, and
// otherwise at most every `interval` (0: every cycle).
class DeviceCheck {
 public:
  explicit DeviceCheck(std::chrono::milliseconds interval)
      : interval_(interval) {}
  bool Due() const {
    return force_ || interval_.count() == 0 ||
           std::chrono::steady_clock::now() - last_ >= interval_;
  }
  void Done() {
    last_ = std::chrono::steady_clock::now();
    force_ = false;
  }
  void Force() { force_ = true; }

 private:
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_;
  bool force_ = true;
};

// GPUs of several sources, concatenated in source order and renumbered.
class GpuCollector final : public Collector {
 public:
  GpuCollector(HostRoots roots, std::vector<std::unique_ptr<GpuSource>> sources,
               const GpuCollectorOptions& options)
      : roots_(std::move(roots)),
        check_(options.device_check_interval),
        amd_smi_(options.amd_smi) {
    for (auto& s : sources) {
      SourceState state;
      state.source = std::move(s);
      sources_.push_back(std::move(state));
    }
  }
  std::string_view name() const override { return "gpu"; }

  Status Collect(NodeSnapshot* next, bool* rescanned) override {
    bool changed = false;
    const bool check = check_.Due();
    for (SourceState& s : sources_) {
      if (!check && s.scanned) continue;
      StatusOr<std::string> token = s.source->DeviceSetToken();
      if (!s.scanned || !token.ok() || *token != s.token) {
        LENS_ASSIGN_OR_RETURN(s.infos, s.source->Scan());
        s.token = token.ok() ? *token : std::string();
        s.scanned = token.ok();
        changed = true;
      }
    }
    if (check) check_.Done();
    if (changed || next->gpus.empty() != AllEmpty()) Rebuild(next);
    *rescanned = changed;
    next->gpu_samples.resize(next->gpus.size());
    size_t offset = 0;
    Status first_error;
    for (SourceState& s : sources_) {
      if (s.infos.empty()) continue;
      Status st = s.source->Sample(&s.samples);
      if (!st.ok()) {
        s.scanned =
            false;  // rescan next cycle: the device set may have changed
        if (first_error.ok())
          first_error = st.WithContext(std::string(s.source->name()));
      }
      for (size_t i = 0;
           i < s.infos.size() && offset + i < next->gpu_samples.size(); ++i) {
        next->gpu_samples[offset + i] =
            i < s.samples.size() ? s.samples[i] : GpuSample{};
      }
      offset += s.infos.size();
    }
    return first_error;
  }

 private:
  struct SourceState {
    std::unique_ptr<GpuSource> source;
    bool scanned = false;
    std::string token;
    std::vector<GpuInfo> infos;
    std::vector<GpuSample> samples;
  };

  bool AllEmpty() const {
    return std::all_of(sources_.begin(), sources_.end(),
                       [](const SourceState& s) { return s.infos.empty(); });
  }

  void Rebuild(NodeSnapshot* next) {
    next->gpus.clear();
    for (const SourceState& s : sources_) {
      next->gpus.insert(next->gpus.end(), s.infos.begin(), s.infos.end());
    }
    for (size_t i = 0; i < next->gpus.size(); ++i) {
      next->gpus[i].index = static_cast<int>(i);
    }
    gpu::FillNumaNodes(roots_, &next->gpus);
    if (amd_smi_) ApplyAmdSmiInventory(&next->gpus);
    StatusOr<std::vector<DriMapping>> dri = ReadDriMapping(roots_);
    next->dri = dri.ok() ? std::move(*dri) : std::vector<DriMapping>{};
  }

  // Runs amd-smi's inventory commands once per rescan (never per cycle).
  void ApplyAmdSmiInventory(std::vector<GpuInfo>* gpus) {
    const bool any_amd = std::any_of(
        gpus->begin(), gpus->end(),
        [](const GpuInfo& g) { return g.vendor == GpuVendor::kAmd; });
    if (!any_amd) return;
    AmdSmiRunOptions run = *amd_smi_;
    run.commands = {AmdSmiCommand::kList, AmdSmiCommand::kStatic};
    StatusOr<std::vector<AmdSmiGpu>> smi = RunAmdSmi(run);
    StatusOr<size_t> applied =
        smi.ok() ? ApplyAmdSmi(*smi, gpus, nullptr) : smi.status();
    if (!applied.ok()) {
      LENS_LOG(WARN).Field("error", applied.status().message())
          << "amd-smi inventory not used; sysfs values stand";
    } else {
      LENS_LOG(DEBUG).Field("gpus", *applied) << "amd-smi inventory applied";
    }
  }

  HostRoots roots_;
  DeviceCheck check_;
  std::optional<AmdSmiRunOptions> amd_smi_;
  std::vector<SourceState> sources_;
};

class RdmaCollector final : public Collector {
 public:
  RdmaCollector(const HostRoots& roots,
                std::chrono::milliseconds device_check_interval,
                const RdmaReaderOptions& reader)
      : reader_(roots, reader), check_(device_check_interval) {}
  std::string_view name() const override { return "rdma"; }

  Status Collect(NodeSnapshot* next, bool* rescanned) override {
    *rescanned = false;
    if (!scanned_ || check_.Due()) {
      StatusOr<std::string> token = reader_.DeviceSetToken();
      check_.Done();
      if (!scanned_ || !token.ok() || *token != token_) {
        LENS_ASSIGN_OR_RETURN(next->rdma_devices, reader_.Scan());
        token_ = token.ok() ? *token : std::string();
        scanned_ = token.ok();
        *rescanned = true;
      }
    }
    if (next->rdma_devices.empty()) {
      next->rdma_ports.clear();
      return OkStatus();
    }
    Status st = SampleSharded(&next->rdma_ports);
    if (!st.ok()) {
      scanned_ = false;
      check_.Force();
    }
    return st;
  }

 private:
  // A port's ~50 counter files cost one read each (~0.6 us on a VM, far more
  // on real HCAs where counters/ reads go to firmware), so a large HCA set is
  // read in up to kMaxShards ranges side by side (more shards only added
  // thread overhead on the 2-vCPU test machine).
  static constexpr size_t kMaxShards = 2;
  static constexpr size_t kPortsPerShard = 4;

  Status SampleSharded(std::vector<RdmaPortCounters>* out) {
    const size_t ports = reader_.port_count();
    const size_t shards =
        std::clamp<size_t>(ports / kPortsPerShard, 1, kMaxShards);
    if (shards == 1) return reader_.Sample(out);
    out->resize(ports);
    while (helpers_.size() < shards - 1)
      helpers_.push_back(std::make_unique<agent::Worker>());
    std::vector<Status> results(shards);
    auto range = [&](size_t k) {
      return std::pair(ports * k / shards, ports * (k + 1) / shards);
    };
    for (size_t k = 1; k < shards; ++k) {
      helpers_[k - 1]->Post([&, k] {
        auto [b, e] = range(k);
        results[k] = reader_.SamplePorts(b, e, out);
      });
    }
    auto [b, e] = range(0);
    results[0] = reader_.SamplePorts(b, e, out);
    for (size_t k = 1; k < shards; ++k) helpers_[k - 1]->Wait();
    // Like Sample(): a failure only when nothing could be read; a shard that
    // read nothing (a device gone) makes the next cycle look at the device set.
    size_t failed = 0;
    for (const Status& r : results) failed += r.ok() ? 0 : 1;
    if (failed == shards) return results[0];
    if (failed > 0) check_.Force();
    return OkStatus();
  }

  RdmaReader reader_;
  DeviceCheck check_;
  std::vector<std::unique_ptr<agent::Worker>> helpers_;
  bool scanned_ = false;
  std::string token_;
};

class NodeFactsCollector final : public Collector {
 public:
  NodeFactsCollector(HostRoots roots, std::chrono::milliseconds interval)
      : roots_(std::move(roots)), interval_(interval) {}
  std::string_view name() const override { return "node"; }
  std::chrono::milliseconds min_interval() const override { return interval_; }
  Status Collect(NodeSnapshot* next, bool* rescanned) override {
    *rescanned = false;
    LENS_ASSIGN_OR_RETURN(NodeFacts facts, ReadNodeFacts(roots_));
    next->facts = std::move(facts);
    return OkStatus();
  }

 private:
  HostRoots roots_;
  std::chrono::milliseconds interval_;
};

class KubeletCollector final : public Collector {
 public:
  KubeletCollector(KubeletOptions options, std::chrono::milliseconds interval)
      : options_(std::move(options)), interval_(interval) {}
  std::string_view name() const override { return "kubelet"; }
  std::chrono::milliseconds min_interval() const override { return interval_; }
  Status Collect(NodeSnapshot* next, bool* rescanned) override {
    *rescanned = false;
    Status storage = CollectStorage(next);
    Status allocation = CollectAllocation(next);
    return storage.ok() ? allocation : storage;
  }

 private:
  Status CollectStorage(NodeSnapshot* next) {
    LENS_ASSIGN_OR_RETURN(std::string body,
                          KubeletGet(options_, "/stats/summary"));
    LENS_ASSIGN_OR_RETURN(NodeEphemeralStorage storage,
                          ParseKubeletStatsSummary(body));
    next->ephemeral_storage = std::move(storage);
    return OkStatus();
  }
  Status CollectAllocation(NodeSnapshot* next) {
    LENS_ASSIGN_OR_RETURN(std::string body, KubeletGet(options_, "/pods"));
    LENS_ASSIGN_OR_RETURN(GpuAllocation allocation,
                          ParseKubeletPodsGpuAllocation(body));
    next->gpu_allocation = allocation;
    return OkStatus();
  }

  KubeletOptions options_;
  std::chrono::milliseconds interval_;
};

}  // namespace

std::unique_ptr<Collector> NewGpuCollector(
    const HostRoots& roots, std::vector<std::unique_ptr<GpuSource>> sources,
    const GpuCollectorOptions& options) {
  return std::make_unique<GpuCollector>(roots, std::move(sources), options);
}

std::unique_ptr<Collector> NewRdmaCollector(
    const HostRoots& roots, std::chrono::milliseconds device_check_interval,
    const RdmaReaderOptions& reader) {
  return std::make_unique<RdmaCollector>(roots, device_check_interval, reader);
}

std::unique_ptr<Collector> NewNodeFactsCollector(
    const HostRoots& roots, std::chrono::milliseconds interval) {
  return std::make_unique<NodeFactsCollector>(roots, interval);
}

std::unique_ptr<Collector> NewKubeletCollector(
    const KubeletOptions& kubelet, std::chrono::milliseconds interval) {
  return std::make_unique<KubeletCollector>(kubelet, interval);
}

CollectorRegistry DefaultNodeCollectors(const NodeAgentOptions& options) {
  CollectorRegistry registry;
  std::vector<std::unique_ptr<GpuSource>> sources;
  if (options.amd_gpus) sources.push_back(NewAmdGpuSysfsSource(options.roots));
  if (options.nvidia_gpus) {
    StatusOr<std::unique_ptr<GpuSource>> nvml = NewNvmlGpuSource();
    if (nvml.ok()) {
      sources.push_back(std::move(*nvml));
    } else {
      LENS_LOG(DEBUG).Field("reason", nvml.status().message())
          << "NVML not used";
    }
  }
  // Names are unique here, so Add cannot fail.
  if (!sources.empty()) {
    GpuCollectorOptions gpu_options;
    gpu_options.device_check_interval = options.device_check_interval;
    if (!options.amd_smi_path.empty()) {
      gpu_options.amd_smi.emplace();
      gpu_options.amd_smi->executable = options.amd_smi_path;
      gpu_options.amd_smi->timeout = options.amd_smi_timeout;
    }
    (void)registry.Add(
        NewGpuCollector(options.roots, std::move(sources), gpu_options));
  }
  if (options.rdma) {
    RdmaReaderOptions reader;
    const auto cycle = std::max<int64_t>(options.interval.count(), 1);
    reader.slow_counter_stride = static_cast<int>(std::clamp<int64_t>(
        (options.rdma_slow_counters_interval.count() + cycle / 2) / cycle, 1,
        1 << 20));
    (void)registry.Add(
        NewRdmaCollector(options.roots, options.device_check_interval, reader));
  }
  (void)registry.Add(
      NewNodeFactsCollector(options.roots, options.node_facts_interval));
  if (!options.kubelet.url.empty()) {
    (void)registry.Add(
        NewKubeletCollector(options.kubelet, options.kubelet_interval));
  }
  return registry;
}

}  // namespace lens
