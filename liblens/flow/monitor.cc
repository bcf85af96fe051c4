// FlowMonitor: the drain loop around a FlowSource, with classification,
// attribution and the bounded metric state.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/metric_writer.h"
#include "flow/attribution.h"
#include "flow/classify.h"
#include "flow/flow_metrics.h"
#include "lens/containers.h"
#include "lens/flow.h"
#include "lens/log.h"

namespace lens {
namespace {

class FlowMonitorImpl final : public FlowMonitor {
 public:
  FlowMonitorImpl(std::unique_ptr<FlowSource> source,
                  std::unique_ptr<FlowClassifier> classifier,
                  FlowMonitorOptions options)
      : source_(std::move(source)),
        probe_(dynamic_cast<FlowProbe*>(source_.get())),
        classifier_(std::move(classifier)),
        options_(std::move(options)),
        attribution_(Provider(options_.containers), options_.proc_root),
        metrics_(options_.top_remote, options_.compat_metrics) {}
  ~FlowMonitorImpl() override { Stop(); }

  Status Start() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (thread_.joinable()) return OkStatus();
    stopping_ = false;
    thread_ = std::thread([this] { Loop(); });
    return OkStatus();
  }

  void Stop() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!thread_.joinable()) return;
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
    (void)DrainOnce();  // what accumulated since the last tick
  }

  Status DrainOnce() override;
  std::string RenderMetrics() const override;
  std::vector<TcpFlow> RecentFlows() const override {
    std::lock_guard<std::mutex> lock(state_mu_);
    return recent_;
  }

 private:
  static flow::Attribution::Provider Provider(const ContainerTracker* t) {
    if (!t) return {};
    return [t] { return t->Containers(); };
  }
  void Loop();
  void RenderProbe(std::string* out) const;

  std::unique_ptr<FlowSource> source_;
  FlowProbe* probe_;  // source_ when it is the eBPF probe
  std::unique_ptr<FlowClassifier> classifier_;
  FlowMonitorOptions options_;

  std::mutex mu_;  // guards thread_, stopping_
  std::condition_variable cv_;
  std::thread thread_;
  bool stopping_ = false;

  // Serialises drains (source_, attribution_) and source Stats().
  mutable std::mutex drain_mu_;
  flow::Attribution attribution_;  // GUARDED_BY(drain_mu_)

  mutable std::mutex state_mu_;
  flow::FlowMetrics metrics_;    // GUARDED_BY(state_mu_)
  std::vector<TcpFlow> recent_;  // GUARDED_BY(state_mu_)
  uint64_t drain_errors_ = 0;    // GUARDED_BY(state_mu_)
};

void FlowMonitorImpl::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, options_.drain_interval, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    (void)DrainOnce();
    lock.lock();
  }
}

Status FlowMonitorImpl::DrainOnce() {
  std::lock_guard<std::mutex> drain_lock(drain_mu_);
  StatusOr<std::vector<TcpFlow>> flows = source_->Drain();
  if (!flows.ok()) {
    LENS_LOG(WARN).Field("error", flows.status()) << "flow drain failed";
    std::lock_guard<std::mutex> lock(state_mu_);
    ++drain_errors_;
    return flows.status();
  }
  StatusOr<ListeningSockets> listeners =
      ListeningSockets::Read(options_.proc_root);
  attribution_.Refresh();
  for (TcpFlow& f : *flows) {
    flow::ClassifyFlow(*classifier_, listeners.ok() ? &*listeners : nullptr,
                       &f);
    attribution_.Attribute(&f);
  }
  std::lock_guard<std::mutex> lock(state_mu_);
  metrics_.Update(*flows, std::chrono::steady_clock::now());
  recent_ = std::move(*flows);
  return OkStatus();
}

std::string FlowMonitorImpl::RenderMetrics() const {
  std::string out;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    metrics_.Render(&out);
    MetricWriter w(&out);
    w.Family("lens_netflow_drain_errors_total",
             "Drains of the flow source that failed.", "counter");
    w.Sample({}, static_cast<double>(drain_errors_));
  }
  if (probe_) RenderProbe(&out);
  return out;
}

// The probe's own cost and health.
void FlowMonitorImpl::RenderProbe(std::string* out) const {
  FlowProbeStats s;
  {
    std::lock_guard<std::mutex> lock(drain_mu_);
    s = probe_->Stats();
  }
  MetricWriter w(out);
  w.Family("lens_netflow_bpf_stats_sampled_seconds_total",
           "Time the kernel's BPF run-time statistics were on (sampled "
           "windows); the program counters below cover only this time.",
           "counter");
  w.Sample({}, static_cast<double>(s.kernel_stats_sampled_ns) / 1e9);
  w.Family("lens_netflow_bpf_program_runs_total",
           "Runs of each eBPF program while BPF statistics were on.",
           "counter");
  for (const auto& p : s.programs) {
    w.Sample({{"program", p.name}}, static_cast<double>(p.run_count));
  }
  w.Family("lens_netflow_bpf_program_run_seconds_total",
           "CPU time in each eBPF program while BPF statistics were on.",
           "counter");
  for (const auto& p : s.programs) {
    w.Sample({{"program", p.name}}, static_cast<double>(p.run_time_ns) / 1e9);
  }
  const std::pair<const char*, uint64_t> counters[] = {
      {"lens_netflow_ringbuf_events_total", s.events_received},
      {"lens_netflow_ringbuf_dropped_total", s.events_dropped},
      {"lens_netflow_flows_evicted_total", s.flows_evicted},
      {"lens_netflow_drains_total", s.drains},
  };
  for (const auto& [name, value] : counters) {
    w.Family(name, "Flow probe health (see docs/netflow.md).", "counter");
    w.Sample({}, static_cast<double>(value));
  }
  w.Family("lens_netflow_flow_map_entries",
           "Sockets in the in-kernel flow table at the last drain.", "gauge");
  w.Sample({}, s.map_entries);
  w.Family("lens_netflow_flow_map_capacity",
           "Capacity of the in-kernel flow table.", "gauge");
  w.Sample({}, s.map_capacity);
}

}  // namespace

StatusOr<std::unique_ptr<FlowMonitor>> FlowMonitor::Create(
    std::unique_ptr<FlowSource> source, FlowMonitorOptions options) {
  if (!source) return InvalidArgumentError("FlowMonitor: no flow source");
  if (options.drain_interval.count() <= 0) {
    return InvalidArgumentError("FlowMonitor: drain_interval must be positive");
  }
  LENS_ASSIGN_OR_RETURN(std::unique_ptr<FlowClassifier> classifier,
                        FlowClassifier::Create(options.policy));
  return std::unique_ptr<FlowMonitor>(new FlowMonitorImpl(
      std::move(source), std::move(classifier), std::move(options)));
}

}  // namespace lens
