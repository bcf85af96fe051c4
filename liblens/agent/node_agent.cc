// The sampling loop and snapshot publication.
#include "agent/node_agent.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "agent/metrics_render.h"
#include "agent/rest.h"
#include "agent/worker.h"
#include "core/metrics.h"
#include "lens/log.h"

namespace lens {

Status NodeAgentOptions::Validate() const {
  if (interval < std::chrono::milliseconds(100)) {
    return InvalidArgumentError("interval must be at least 100ms, got " +
                                std::to_string(interval.count()) + "ms");
  }
  if (node_facts_interval.count() < 0 || kubelet_interval.count() < 0 ||
      rdma_slow_counters_interval.count() < 0) {
    return InvalidArgumentError("collector intervals must not be negative");
  }
  if (roots.sysfs.empty() || roots.procfs.empty() || roots.dev.empty()) {
    return InvalidArgumentError(
        "sysfs, procfs and dev roots must not be empty");
  }
  if (!kubelet.url.empty() && kubelet.url.rfind("http://", 0) != 0 &&
      kubelet.url.rfind("https://", 0) != 0) {
    return InvalidArgumentError(
        "kubelet url must start with http:// or https://, got \"" +
        kubelet.url + "\"");
  }
  // TLS files are loaded once here so a wrong path or a key that does not
  // match its certificate stops start-up instead of failing every cycle.
  if (!kubelet.url.empty()) return kubelet.Validate();
  return OkStatus();
}

struct NodeAgent::Impl {
  NodeAgentOptions options;
  CollectorRegistry registry;

  std::mutex run_mu;                   // serialises cycles
  std::vector<CollectorState> states;  // GUARDED_BY(run_mu)
  std::vector<std::chrono::steady_clock::time_point>
      last_run;                                     // GUARDED_BY(run_mu)
  std::shared_ptr<NodeSnapshot> spare;              // GUARDED_BY(run_mu)
  uint64_t last_rescans = 0;                        // GUARDED_BY(run_mu)
  NodeAgent::InventoryListener inventory_listener;  // GUARDED_BY(run_mu)
  NodeAgent::CycleListener cycle_listener;          // GUARDED_BY(run_mu)
  NodeAgent::MetricsAppender metrics_appender;      // set before serving
  // One per collector after the first. Idle between cycles (RunCycle waits
  // for every task it posts).
  std::vector<std::unique_ptr<agent::Worker>> workers;

  mutable std::mutex snapshot_mu;
  std::shared_ptr<NodeSnapshot> current;  // GUARDED_BY(snapshot_mu)

  mutable std::mutex render_mu;
  mutable uint64_t rendered_cycle = ~uint64_t{0};  // GUARDED_BY(render_mu)
  mutable std::string rendered;                    // GUARDED_BY(render_mu)

  std::mutex loop_mu;
  std::condition_variable loop_cv;
  bool stopping = false;  // GUARDED_BY(loop_mu)
  std::thread loop;

  std::shared_ptr<NodeSnapshot> Current() const {
    std::lock_guard lock(snapshot_mu);
    return current;
  }

  // A snapshot object to fill: the spare one when no reader still holds it
  // (copy-assigning into it reuses its strings' and vectors' capacity).
  std::shared_ptr<NodeSnapshot> TakeSpare() {
    if (spare && spare.use_count() == 1) return std::move(spare);
    return std::make_shared<NodeSnapshot>();
  }

  // Runs collector `i` if it is due, recording its state. Called on the
  // collector's own worker (or the cycle's thread for the first one).
  void RunCollector(size_t i, NodeSnapshot* next, Status* result) {
    Collector& c = *registry.collectors()[i];
    CollectorState& state = states[i];
    const auto now = std::chrono::steady_clock::now();
    if (state.runs > 0 && c.min_interval().count() > 0 &&
        now - last_run[i] < c.min_interval()) {
      return;
    }
    bool rescanned = false;
    Status st = c.Collect(next, &rescanned);
    const auto end = std::chrono::steady_clock::now();
    last_run[i] = now;
    ++state.runs;
    if (rescanned) ++state.rescans;
    state.last_duration = end - now;
    state.last_run = next->time;
    if (!st.ok()) {
      ++state.failures;
      // Log once per change of error, not every cycle.
      if (state.last_ok || state.last_error != st.message()) {
        LENS_LOG(WARN)
                .Field("collector", state.name)
                .Field("error", st.message())
            << "collector failed";
      }
      state.last_error = st.message();
      *result = st.WithContext(state.name);
    } else {
      if (!state.last_ok && state.runs > 1) {
        LENS_LOG(INFO).Field("collector", state.name) << "collector recovered";
      }
      state.last_error.clear();
    }
    state.last_ok = st.ok();
  }

  Status RunCycle() {
    std::lock_guard lock(run_mu);
    std::shared_ptr<NodeSnapshot> prev = Current();
    std::shared_ptr<NodeSnapshot> next = TakeSpare();
    *next = *prev;
    next->cycle = prev->cycle + 1;
    next->time = std::chrono::system_clock::now();
    // Collectors touch disjoint parts of `next` and their own state, so they
    // run side by side: the first on this thread, the others on workers.
    const size_t n = registry.size();
    std::vector<Status> results(n);
    for (size_t i = 1; i < n; ++i) {
      workers[i - 1]->Post([this, i, &next, &results] {
        RunCollector(i, next.get(), &results[i]);
      });
    }
    if (n > 0) RunCollector(0, next.get(), &results[0]);
    for (size_t i = 1; i < n; ++i) workers[i - 1]->Wait();
    Status first_error;
    for (const Status& st : results) {
      if (!st.ok()) {
        first_error = st;
        break;
      }
    }
    next->collectors = states;
    uint64_t rescans = 0;
    for (const CollectorState& s : states) rescans += s.rescans;
    const bool inventory_changed = next->cycle == 1 || rescans != last_rescans;
    last_rescans = rescans;
    std::shared_ptr<const NodeSnapshot> published = next;
    {
      std::lock_guard slock(snapshot_mu);
      current = std::move(next);
    }
    spare = std::move(prev);
    if (inventory_changed && inventory_listener) inventory_listener(*published);
    if (cycle_listener) cycle_listener(*published);
    return first_error;
  }
};

NodeAgent::NodeAgent(NodeAgentOptions options, CollectorRegistry collectors)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->registry = std::move(collectors);
  for (const auto& c : impl_->registry.collectors()) {
    CollectorState state;
    state.name = std::string(c->name());
    impl_->states.push_back(std::move(state));
  }
  impl_->last_run.resize(impl_->states.size());
  for (size_t i = 1; i < impl_->states.size(); ++i) {
    impl_->workers.push_back(std::make_unique<agent::Worker>());
  }
  impl_->current = std::make_shared<NodeSnapshot>();
  impl_->current->node_name = impl_->options.node_name;
  impl_->current->collectors = impl_->states;
}

NodeAgent::~NodeAgent() { Stop(); }

Status NodeAgent::RunOnce() { return impl_->RunCycle(); }

Status NodeAgent::Start() {
  std::lock_guard lock(impl_->loop_mu);
  if (impl_->loop.joinable())
    return FailedPreconditionError("node agent already running");
  impl_->stopping = false;
  impl_->loop = std::thread([impl = impl_.get()] {
    auto next = std::chrono::steady_clock::now();
    for (;;) {
      (void)impl
          ->RunCycle();  // failures are logged and kept in the collector states
      next += impl->options.interval;
      const auto now = std::chrono::steady_clock::now();
      if (next < now) next = now;  // a slow cycle does not cause a burst
      std::unique_lock lock(impl->loop_mu);
      if (impl->loop_cv.wait_until(lock, next,
                                   [impl] { return impl->stopping; }))
        return;
    }
  });
  return OkStatus();
}

void NodeAgent::Stop() {
  std::thread loop;
  {
    std::lock_guard lock(impl_->loop_mu);
    impl_->stopping = true;
    loop = std::move(impl_->loop);
  }
  impl_->loop_cv.notify_all();
  if (loop.joinable()) loop.join();
}

std::shared_ptr<const NodeSnapshot> NodeAgent::snapshot() const {
  return impl_->Current();
}

std::string NodeAgent::RenderMetrics() const {
  std::shared_ptr<const NodeSnapshot> snap = impl_->Current();
  std::lock_guard lock(impl_->render_mu);
  if (impl_->rendered_cycle != snap->cycle) {
    impl_->rendered.clear();
    agent::RenderLensMetrics(*snap, &impl_->rendered);
    if (impl_->options.compat_names)
      agent::RenderCompatMetrics(*snap, &impl_->rendered);
    impl_->rendered_cycle = snap->cycle;
  }
  if (!impl_->metrics_appender) return impl_->rendered;
  std::string out = impl_->rendered;
  impl_->metrics_appender(&out);
  return out;
}

void NodeAgent::SetCycleListener(CycleListener listener) {
  std::lock_guard lock(impl_->run_mu);
  impl_->cycle_listener = std::move(listener);
}

void NodeAgent::SetMetricsAppender(MetricsAppender appender) {
  impl_->metrics_appender = std::move(appender);
}

void NodeAgent::SetInventoryListener(InventoryListener listener) {
  std::lock_guard lock(impl_->run_mu);
  impl_->inventory_listener = std::move(listener);
}

void NodeAgent::RegisterRoutes(HttpServer& server) {
  agent::RegisterNodeRoutes(*this, server);
}

}  // namespace lens
