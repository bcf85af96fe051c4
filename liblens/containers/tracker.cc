// ContainerTracker: applying containerd's lists and events to the records,
// and the public API. One events thread (subscribe, list, follow; reconnect and
// relist after any loss) and one maintenance thread (pod-resources polling and
// a periodic full relist that catches anything the subscription missed).
// Both apply changes under apply_mu_, so the listener sees one change at a
// time, in order.
#include "containers/tracker_impl.h"

namespace lens {

void ContainerTracker::Impl::ApplyList(
    const std::vector<RuntimeContainer>& list) {
  using T = ContainerEventType;
  using S = ContainerState;
  Timestamp now = Now();
  struct Change {
    ContainerEventType type;
    Timestamp at;
    ContainerRecord record;
  };
  std::vector<Change> changes;
  std::vector<ContainerRecord> all;
  {
    std::lock_guard lock(mu_);
    std::map<std::string, Entry> next;
    for (const RuntimeContainer& c : list) {
      Entry e{{}, ParseSpecOrEmpty(c)};
      e.record = containers::BuildRecord(c, e.spec, Context(), now);
      auto old = entries_.find(c.id);
      if (old == entries_.end()) {
        // Event times come from containerd and the kernel, never from now,
        // so a container seen again after a restart of the agent stores no
        // second create/start/exit. A start or exit whose time is unknown
        // is left to the snapshot's state.
        changes.push_back({T::kCreate, e.record.created_at, e.record});
        if (e.record.started_at) {
          changes.push_back({T::kStart, *e.record.started_at, e.record});
        }
        if (e.record.state == S::kExited && e.record.finished_at) {
          changes.push_back({T::kExit, *e.record.finished_at, e.record});
        }
      } else {
        if (!e.record.started_at) {
          e.record.started_at = old->second.record.started_at;
        }
        const std::optional<T> type =
            containers::DiffEventType(old->second.record, e.record);
        Timestamp at = now;
        if (type == T::kStart && e.record.started_at) at = *e.record.started_at;
        if (type == T::kExit && e.record.finished_at)
          at = *e.record.finished_at;
        if (type) changes.push_back({*type, at, e.record});
      }
      all.push_back(e.record);
      next.emplace(c.id, std::move(e));
    }
    for (auto& [id, old] : entries_) {
      if (next.count(id) != 0) continue;
      old.record.state = S::kDeleted;
      old.record.pid = 0;
      old.record.updated_at = now;
      changes.push_back({T::kDelete, now, old.record});
    }
    entries_ = std::move(next);
  }
  for (auto& c : changes) Emit(c.type, c.at, c.record);
  if (resync_listener_) resync_listener_(all);
}

StatusOr<Entry*> ContainerTracker::Impl::Fetch(const std::string& id) {
  LENS_ASSIGN_OR_RETURN(RuntimeContainer c, source_->Get(id));
  OciSpecFacts spec = ParseSpecOrEmpty(c);
  std::lock_guard lock(mu_);
  Entry& e = entries_[id];
  std::optional<Timestamp> started = e.record.started_at;
  e.spec = std::move(spec);
  e.record = containers::BuildRecord(c, e.spec, Context(), Now());
  e.record.started_at = started;
  return &e;
}

void ContainerTracker::Impl::ApplyEvent(const RuntimeEvent& e) {
  ++applied_events_;
  if (e.exec) return;  // an exec'd process: the container is unchanged
  using R = RuntimeTopic;
  using T = ContainerEventType;
  using S = ContainerState;
  const R t = e.topic;
  T type = T::kUnknown;
  Timestamp at = e.at;
  ContainerRecord record;
  if (t == R::kContainerCreate || t == R::kContainerUpdate) {
    auto entry = Fetch(e.container_id);
    if (!entry.ok()) return;  // already gone: its delete event follows
    type = t == R::kContainerCreate ? T::kCreate : T::kUpdate;
    std::lock_guard lock(mu_);
    record = (*entry)->record;
    if (t == R::kContainerCreate)
      at = record.created_at;  // as a list would say
  } else {
    std::unique_lock lock(mu_);
    auto it = entries_.find(e.container_id);
    if (it == entries_.end()) {
      if (t == R::kContainerDelete) return;
      lock.unlock();
      if (!Fetch(e.container_id).ok()) return;
      lock.lock();
      it = entries_.find(e.container_id);
      if (it == entries_.end()) return;
    }
    ContainerRecord& r = it->second.record;
    r.updated_at = e.at;
    switch (t) {
      case R::kContainerDelete:
        type = T::kDelete;
        r.state = S::kDeleted;
        r.pid = 0;
        break;
      case R::kTaskCreate:
        type = T::kTaskCreate;
        r.state = S::kCreated;
        r.pid = e.pid;
        break;
      case R::kTaskStart:
        // A list taken between the start and its event already reported
        // this start (same process): once is enough.
        if (r.state == S::kRunning && e.pid != 0 && r.pid == e.pid &&
            r.started_at) {
          return;
        }
        type = T::kStart;
        r.state = S::kRunning;
        r.pid = e.pid;
        r.started_at =
            containers::ProcessStartTime(options_.roots, e.pid).value_or(e.at);
        at = *r.started_at;
        r.exit_code.reset();
        r.finished_at.reset();
        break;
      case R::kTaskExit:
      case R::kTaskDelete:
        // A list taken between the exit and its event (the safety relist,
        // a reconnect) already reported this exit: once is enough.
        if (t == R::kTaskExit && r.state == S::kExited && r.finished_at) {
          return;
        }
        type = t == R::kTaskExit ? T::kExit : T::kTaskDelete;
        r.state = S::kExited;
        r.pid = 0;
        if (e.exit_status) r.exit_code = e.exit_status;
        if (e.exited_at) r.finished_at = e.exited_at;
        if (t == R::kTaskExit && r.finished_at) at = *r.finished_at;
        break;
      case R::kTaskOom:
        type = T::kOom;
        break;
      case R::kTaskPaused:
        if (r.state == S::kPaused) return;  // a list reported it already
        type = T::kPause;
        r.state = S::kPaused;
        break;
      case R::kTaskResumed:
        if (r.state != S::kPaused) return;  // a list reported it already
        type = T::kResume;
        r.state = S::kRunning;
        break;
      case R::kContainerCreate:
      case R::kContainerUpdate:
        return;  // handled above
    }
    record = r;
    if (t == R::kContainerDelete) entries_.erase(it);
  }
  Emit(type, at, record);
}

void ContainerTracker::Impl::Reresolve() {
  std::vector<ContainerRecord> changed;
  {
    std::lock_guard lock(mu_);
    for (auto& [id, e] : entries_) {
      auto devices = containers::ResolveDevices(e.record, e.spec, Context());
      ContainerRecord next = e.record;
      next.devices = std::move(devices);
      if (!containers::DiffEventType(e.record, next)) continue;
      next.updated_at = Now();
      e.record = next;
      changed.push_back(std::move(next));
    }
  }
  for (const ContainerRecord& r : changed)
    Emit(ContainerEventType::kUpdate, r.updated_at, r);
}

ContainerTracker::ContainerTracker(ContainerTrackerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

ContainerTracker::~ContainerTracker() { Stop(); }

void ContainerTracker::SetInventory(DeviceInventory inventory) {
  // Re-resolving happens on the tracker's thread: the caller (the node
  // agent's loop) must not wait for containerd.
  {
    std::lock_guard lock(impl_->mu_);
    impl_->inventory_ = std::move(inventory);
    impl_->reresolve_due_ = true;
  }
  impl_->wake_.notify_all();
}

void ContainerTracker::SetListener(Listener listener) {
  impl_->listener_ = std::move(listener);
}

void ContainerTracker::SetResyncListener(ResyncListener listener) {
  impl_->resync_listener_ = std::move(listener);
}

Status ContainerTracker::Start() {
  if (impl_->events_thread_.joinable()) return OkStatus();
  Impl& impl = *impl_;
  impl.RefreshAllocations();
  // The first list is synchronous, so a caller learns at once that
  // containerd is unreachable; the events thread lists again after it has
  // subscribed.
  auto list = impl.source_->List();
  if (list.ok()) {
    std::lock_guard apply(impl.apply_mu_);
    impl.ApplyList(*list);
  }
  {
    std::lock_guard lock(impl.mu_);
    impl.stopping_ = false;
  }
  impl.events_thread_ = std::thread([&impl] { impl.EventsLoop(); });
  impl.maintenance_thread_ = std::thread([&impl] { impl.MaintenanceLoop(); });
  return list.status();
}

void ContainerTracker::Stop() {
  {
    std::lock_guard lock(impl_->mu_);
    impl_->stopping_ = true;
    if (impl_->stream_ != nullptr) impl_->stream_->Cancel();
  }
  impl_->wake_.notify_all();
  if (impl_->events_thread_.joinable()) impl_->events_thread_.join();
  if (impl_->maintenance_thread_.joinable()) impl_->maintenance_thread_.join();
}

std::vector<ContainerRecord> ContainerTracker::Containers() const {
  std::lock_guard lock(impl_->mu_);
  std::vector<ContainerRecord> out;
  out.reserve(impl_->entries_.size());
  for (const auto& [id, e] : impl_->entries_) out.push_back(e.record);
  return out;
}

bool ContainerTracker::Connected() const { return impl_->connected_; }

uint64_t ContainerTracker::Reconnects() const { return impl_->reconnects_; }

StatusOr<std::vector<ContainerRecord>> ContainerTracker::ListOnce(
    const ContainerTrackerOptions& options, const DeviceInventory& inventory) {
  const ContainerTrackerOptions resolved = containers::ForRuntime(options);
  LENS_ASSIGN_OR_RETURN(auto list,
                        containers::NewRuntimeSource(resolved)->List());
  containers::PodAllocations allocations;
  struct stat st;
  if (!options.pod_resources_socket.empty() &&
      ::stat(options.pod_resources_socket.c_str(), &st) == 0) {
    containers::PodResourcesClient pr(options.pod_resources_socket,
                                      options.call_timeout);
    auto listed = pr.List();
    if (listed.ok()) allocations = containers::IndexAllocations(*listed);
  }
  containers::RecordContext ctx{&resolved, &inventory, &allocations};
  std::vector<ContainerRecord> out;
  for (const RuntimeContainer& c : list) {
    out.push_back(containers::BuildRecord(c, ParseSpecOrEmpty(c), ctx, Now()));
  }
  return out;
}

}  // namespace lens
