// The container tracker's threads: the events thread (subscribe, list,
// follow; reconnect and relist after any loss) and the maintenance thread
// (pod-resources polling and the periodic relist).
#include "containers/tracker_impl.h"

namespace lens {

bool ContainerTracker::Impl::SleepFor(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  wake_.wait_for(lock, d, [&] { return stopping_; });
  return !stopping_;
}

void ContainerTracker::Impl::RefreshAllocations() {
  if (options_.pod_resources_socket.empty()) return;
  struct stat st;
  if (::stat(options_.pod_resources_socket.c_str(), &st) != 0) return;
  containers::PodResourcesClient client(options_.pod_resources_socket,
                                        options_.call_timeout);
  auto listed = client.List();
  if (!listed.ok()) {
    LENS_LOG(WARN).Field("error", listed.status())
        << "pod-resources unavailable; keeping the last allocations";
    return;
  }
  containers::PodAllocations next = containers::IndexAllocations(*listed);
  {
    std::lock_guard lock(mu_);
    if (next == allocations_) return;
    allocations_ = std::move(next);
  }
  std::lock_guard apply(apply_mu_);
  Reresolve();
}

void ContainerTracker::Impl::EventsLoop() {
  auto backoff = options_.reconnect_min;
  bool first = true;
  bool lost = false;  // a failed attempt or an ended stream since Start()
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    // Subscribe before listing, so nothing between the two is missed (and
    // a relist soon after covers a subscription containerd registered late).
    auto stream = source_->Subscribe();
    StatusOr<std::vector<RuntimeContainer>> list =
        stream.ok() ? source_->List()
                    : StatusOr<std::vector<RuntimeContainer>>(stream.status());
    if (!list.ok()) {
      lost = true;
      if (first) {
        LENS_LOG(WARN).Field("error", list.status())
            << source_->Describe() << " unavailable; retrying";
        first = false;
      }
      if (!SleepFor(backoff)) return;
      backoff = std::min(backoff * 2, options_.reconnect_max);
      continue;
    }
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      stream_ = stream->get();
      relist_at_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    }
    if (lost) ++reconnects_;
    lost = true;  // whatever ends the stream below is a loss
    {
      std::lock_guard apply(apply_mu_);
      ApplyList(*list);
    }
    connected_ = true;
    first = true;
    const auto connected_at = std::chrono::steady_clock::now();
    RuntimeEvent event;
    while ((*stream)->Next(&event)) {
      std::lock_guard apply(apply_mu_);
      ApplyEvent(event);
    }
    connected_ = false;
    {
      std::lock_guard lock(mu_);
      stream_ = nullptr;
      if (stopping_) return;
    }
    LENS_LOG(WARN).Field("error", (*stream)->Finish())
        << source_->Describe() << ": event stream ended; reconnecting";
    // A stream that ends at once must not turn into a hot loop of lists.
    if (std::chrono::steady_clock::now() - connected_at <
        std::chrono::seconds(10)) {
      if (!SleepFor(backoff)) return;
      backoff = std::min(backoff * 2, options_.reconnect_max);
    } else {
      backoff = options_.reconnect_min;
    }
  }
}

void ContainerTracker::Impl::MaintenanceLoop() {
  auto next_allocations = std::chrono::steady_clock::now();
  while (true) {
    bool reresolve = false;
    bool relist = false;
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, std::chrono::seconds(1),
                     [&] { return stopping_ || reresolve_due_; });
      if (stopping_) return;
      reresolve = std::exchange(reresolve_due_, false);
      relist = connected_ && std::chrono::steady_clock::now() >= relist_at_;
      if (relist)
        relist_at_ = std::chrono::steady_clock::now() + kRelistInterval;
    }
    if (reresolve) {
      std::lock_guard apply(apply_mu_);
      Reresolve();
    }
    if (std::chrono::steady_clock::now() >= next_allocations) {
      next_allocations =
          std::chrono::steady_clock::now() + options_.pod_resources_interval;
      RefreshAllocations();
    }
    if (relist) Relist();
  }
}

void ContainerTracker::Impl::Relist() {
  uint64_t applied_before;
  {
    std::lock_guard apply(apply_mu_);
    applied_before = applied_events_;
  }
  auto list = source_->List();
  if (!list.ok()) return;  // the events thread reconnects
  std::lock_guard apply(apply_mu_);
  if (applied_events_ != applied_before) {
    // Events arrived while listing: the list may be older than the state.
    std::lock_guard lock(mu_);
    relist_at_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    return;
  }
  ApplyList(*list);
}

}  // namespace lens
