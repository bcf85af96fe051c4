// Controller: informers on pods and nodes feed a queue of the newest state
// per object; Run()'s thread drains it into the store in batches. See
// controller.h; owner chains are in controller_owners.cc.
#include "controller/controller.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "controller/controller_impl.h"
#include "controller/node_model.h"
#include "lens/log.h"
#include "lens/store.h"

namespace lens::controller {
namespace {

const KubeResource kPods{"", "v1", "pods", "Pod", true};
const KubeResource kNodes{"", "v1", "nodes", "Node", false};

}  // namespace

// Pod informer events: GPU pods only, decoded where they enter.
class Controller::Impl::PodHandler : public KubeEventHandler {
 public:
  explicit PodHandler(Impl* impl) : impl_(impl) {}
  void OnAdd(const KubeObject& o) override { Changed(o); }
  void OnUpdate(const KubeObject&, const KubeObject& o) override { Changed(o); }
  void OnDelete(const KubeObject& last, bool seen_gone) override {
    if (last.json.empty()) return;  // not a GPU pod: only metadata was kept
    auto view = impl_->Decode(last);
    if (!view) return;
    Timestamp at = Now();
    if (!seen_gone && view->deletion_at && *view->deletion_at < at) {
      at = *view->deletion_at;
    }
    impl_->Enqueue(PendingPod{std::move(*view), true, seen_gone, at, {}});
  }
  void OnSynced() override { impl_->PodsSynced(); }

 private:
  void Changed(const KubeObject& o) {
    auto view = impl_->Decode(o);
    if (view)
      impl_->Enqueue(PendingPod{std::move(*view), false, false, {}, {}});
  }
  Impl* impl_;
};

class Controller::Impl::NodeHandler : public KubeEventHandler {
 public:
  explicit NodeHandler(Impl* impl) : impl_(impl) {}
  void OnAdd(const KubeObject& o) override { Changed(o); }
  void OnUpdate(const KubeObject&, const KubeObject& o) override { Changed(o); }
  void OnDelete(const KubeObject& last, bool) override {
    auto node = DecodeNode(last.json, impl_->matcher);
    if (!node.ok()) return;
    node->status = "Deleted";
    impl_->EnqueueNode(std::move(*node));
  }
  void OnSynced() override { impl_->NodesSynced(); }

 private:
  void Changed(const KubeObject& o) {
    auto node = DecodeNode(o.json, impl_->matcher);
    if (!node.ok()) {
      impl_->CountDecodeError(node.status());
      return;
    }
    impl_->EnqueueNode(std::move(*node));
  }
  Impl* impl_;
};

Controller::Impl::Impl(KubeClient* c, Store* s, ControllerOptions o,
                       std::function<bool()> leader)
    : client(c),
      store(s),
      options(std::move(o)),
      is_leader(std::move(leader)),
      matcher(options.gpu_resources),
      discovery(c),
      pod_handler(std::make_unique<PodHandler>(this)),
      node_handler(std::make_unique<NodeHandler>(this)) {
  auto informer_options = [&](const KubeResource& r) {
    KubeInformerOptions io;
    io.resource = r;
    io.page_size = options.page_size;
    io.initial_backoff = options.initial_backoff;
    io.max_backoff = options.max_backoff;
    io.min_watch_timeout = options.min_watch_timeout;
    io.max_watch_timeout = options.max_watch_timeout;
    return io;
  };
  KubeInformerOptions pods = informer_options(kPods);
  // Only GPU pods keep their JSON: a pod without GPUs costs its metadata.
  pods.keep_json = [this](std::string_view json) {
    return MayRequestGpus(json, matcher);
  };
  pod_informer =
      std::make_unique<KubeInformer>(client, pods, pod_handler.get());
  node_informer = std::make_unique<KubeInformer>(
      client, informer_options(kNodes), node_handler.get());
}

Controller::Impl::~Impl() = default;

std::optional<PodView> Controller::Impl::Decode(const KubeObject& o) {
  if (o.json.empty() || !MayRequestGpus(o.json, matcher)) return std::nullopt;
  auto view = DecodePod(o.json, matcher);
  if (!view.ok()) {
    CountDecodeError(view.status());
    return std::nullopt;
  }
  if (view->requests.gpus <= 0) return std::nullopt;
  return std::move(*view);
}

void Controller::Impl::CountDecodeError(const Status& status) {
  std::lock_guard<std::mutex> lock(mu);
  ++stats.decode_errors;
  stats.last_error = status.message();
  LENS_LOG(WARN).Field("error", status.message())
      << "skipping an object the controller cannot decode";
}

void Controller::Impl::Enqueue(PendingPod pod) {
  std::lock_guard<std::mutex> lock(mu);
  const std::string uid = pod.view.uid;
  auto it = pending_pods.find(uid);
  if (it == pending_pods.end()) {
    pending_pods.emplace(uid, std::move(pod));
  } else if (!it->second.gone || pod.gone) {
    it->second = std::move(pod);  // the newest state wins; a deletion stays
  }
  if (pending_pods.size() >= options.batch_size) wake.notify_all();
}

void Controller::Impl::EnqueueNode(NodeRecord node) {
  std::lock_guard<std::mutex> lock(mu);
  const std::string name = node.name;
  pending_nodes[name] = std::move(node);
}

void Controller::Impl::PodsSynced() {
  std::lock_guard<std::mutex> lock(mu);
  pods_synced = true;
  reconcile_needed = true;  // each (re)list: close what vanished meanwhile
  wake.notify_all();
}

void Controller::Impl::NodesSynced() {
  std::lock_guard<std::mutex> lock(mu);
  nodes_synced = true;
}

bool Controller::Impl::Leading() const { return !is_leader || is_leader(); }

// Everything the informers hold, queued again: after this replica becomes
// leader, what the previous one wrote may be stale.
void Controller::Impl::QueueEverything() {
  for (const KubeObject& o : pod_informer->List()) {
    if (auto view = Decode(o)) {
      Enqueue(PendingPod{std::move(*view), false, false, {}, {}});
    }
  }
  for (const KubeObject& o : node_informer->List()) {
    auto node = DecodeNode(o.json, matcher);
    if (node.ok()) EnqueueNode(std::move(*node));
  }
  // What this replica wrote or read before is stale: another leader may
  // have written since (the writer thread owns these maps).
  written_nodes.clear();
  written_pods.clear();
  known.clear();
  std::lock_guard<std::mutex> lock(mu);
  reconciled = false;  // not ready until this leader has reconciled
  if (pods_synced) reconcile_needed = true;
}

// Store rows of pods still open that the API server no longer has: closed
// as seen gone now.
Status Controller::Impl::ReconcileGone() {
  PodQuery q;
  q.deleted = false;
  q.page.page_size = 1000;
  std::vector<PodRecord> gone;
  for (int32_t page = 1;; ++page) {
    q.page.page_num = page;
    LENS_ASSIGN_OR_RETURN(Page<PodRecord> rows, store->pods().ListPods(q));
    for (PodRecord& r : rows.items) {
      if (!pod_informer->GetByUid(r.uid).ok()) gone.push_back(std::move(r));
    }
    if (static_cast<int64_t>(page) * q.page.page_size >= rows.total) break;
  }
  const Timestamp now = Now();
  uint64_t closed = 0;
  for (const PodRecord& r : gone) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (pending_pods.count(r.uid)) continue;  // a watch event has it
    }
    ++closed;
    PodView v;
    v.uid = r.uid;
    v.namespace_name = r.namespace_name;
    v.name = r.name;
    v.node = r.node;
    v.phase = r.phase.empty() ? "Unknown" : r.phase;
    v.ip = r.ip;
    v.labels = r.labels;
    v.created_at = r.created_at;
    v.started_at = r.started_at;
    v.ended_at = r.ended_at;
    v.restarts = r.restarts;
    v.requests.gpus = r.gpu_allocated;
    PendingPod p{std::move(v), true, true, now, {}};
    p.top_owner_uid = r.owner_uid;
    Enqueue(std::move(p));
  }
  std::lock_guard<std::mutex> lock(mu);
  stats.pods_seen_gone += closed;
  return OkStatus();
}

Controller::Controller(KubeClient* client, Store* store,
                       ControllerOptions options,
                       std::function<bool()> is_leader)
    : impl_(std::make_unique<Impl>(client, store, std::move(options),
                                   std::move(is_leader))) {}

Controller::~Controller() { Stop(); }

Status Controller::Run() {
  Impl& s = *impl_;
  if (s.options.batch_size == 0 || s.options.flush_interval.count() <= 0) {
    return InvalidArgumentError(
        "controller: batch size and flush interval must be positive");
  }
  if (s.options.owner_depth < 1) {
    return InvalidArgumentError("controller: owner depth must be at least 1");
  }
  std::thread pods([&] { (void)s.pod_informer->Run(); });
  std::thread nodes([&] { (void)s.node_informer->Run(); });
  bool was_leader = false;
  std::unique_lock<std::mutex> lock(s.mu);
  while (!s.stop) {
    // A full queue wakes the writer early, unless a failed write is still
    // backing off (retry_after belongs to this thread).
    s.wake.wait_for(lock, s.options.flush_interval, [&] {
      return s.stop || (s.pending_pods.size() >= s.options.batch_size &&
                        std::chrono::steady_clock::now() >= s.retry_after);
    });
    if (s.stop) break;
    lock.unlock();
    const bool leading = s.Leading();
    {
      std::lock_guard<std::mutex> l(s.mu);
      s.stats.leader = leading;
      ++s.stats.turns;
    }
    if (leading && !was_leader) s.QueueEverything();
    was_leader = leading;
    if (!leading) {
      lock.lock();
      // The leader writes them. Deletions are kept a while: if this replica
      // was leader and only missed a renewal, they are written with their
      // own times when it leads again (the informer no longer has them).
      const Timestamp now =
          std::chrono::time_point_cast<std::chrono::microseconds>(
              std::chrono::system_clock::now());
      for (auto it = s.pending_pods.begin(); it != s.pending_pods.end();) {
        const bool keep =
            it->second.gone && !it->second.seen_gone &&
            now - it->second.gone_at < s.options.follower_keeps_deletions;
        it = keep ? std::next(it) : s.pending_pods.erase(it);
      }
      s.pending_nodes.clear();
      continue;
    }
    const auto started = std::chrono::steady_clock::now();
    bool reconcile = false;
    if (started >= s.retry_after) {  // not while the store is failing
      std::lock_guard<std::mutex> l(s.mu);
      reconcile = s.reconcile_needed;
      s.reconcile_needed = false;
    }
    if (reconcile) {
      Status st = s.ReconcileGone();
      if (!st.ok()) {
        s.RecordWriteError(st);
        std::lock_guard<std::mutex> l(s.mu);
        s.reconcile_needed = true;
      } else {
        std::lock_guard<std::mutex> l(s.mu);
        s.reconciled = true;
      }
    }
    s.Flush();
    s.ResyncWorkloads();
    const double seconds = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - started)
                               .count();
    lock.lock();
    ++s.stats.flushes;
    s.stats.flush_seconds_total += seconds;
    s.stats.last_flush_seconds = seconds;
  }
  lock.unlock();
  s.pod_informer->Stop();
  s.node_informer->Stop();
  pods.join();
  nodes.join();
  // What is queued is written on the way out, while still leading: one
  // more attempt, whatever the backoff.
  s.retry_after = {};
  if (s.Leading()) s.Flush();
  return OkStatus();
}

void Controller::Stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->wake.notify_all();
}

ControllerStats Controller::Stats() const {
  ControllerStats out;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    out = impl_->stats;
    out.queue_depth = impl_->pending_pods.size() + impl_->pending_nodes.size();
    out.ready = impl_->pods_synced && impl_->nodes_synced &&
                (impl_->reconciled || !impl_->Leading());
  }
  out.pods = impl_->pod_informer->Stats();
  out.nodes = impl_->node_informer->Stats();
  return out;
}

bool Controller::Ready() const { return Stats().ready; }

}  // namespace lens::controller
