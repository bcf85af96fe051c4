// The container tracker's state and threads (tracker.cc applies lists and
// events; tracker_loops.cc runs the events and maintenance threads).
// Internal to the containers area.
#ifndef LENS_CONTAINERS_TRACKER_IMPL_H_
#define LENS_CONTAINERS_TRACKER_IMPL_H_

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "containers/container_record.h"
#include "containers/containerd/containerd_client.h"
#include "containers/oci_spec.h"
#include "containers/pod_resources.h"
#include "containers/runtime_source.h"
#include "lens/containers.h"
#include "lens/log.h"

namespace lens {
namespace tracker_internal {

using containers::OciSpecFacts;
using containers::RuntimeContainer;
using containers::RuntimeEvent;
using containers::RuntimeTopic;

// A full relist this often, besides the one after every reconnect.
constexpr std::chrono::seconds kRelistInterval{60};

inline Timestamp Now() {
  return std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
}

inline OciSpecFacts ParseSpecOrEmpty(const RuntimeContainer& c) {
  auto spec = containers::ParseOciSpec(c.spec_json);
  if (!spec.ok()) {
    LENS_LOG(WARN).Field("container", c.id).Field("error", spec.status())
        << "OCI spec unreadable; devices from the spec are unknown";
    return {};
  }
  return *std::move(spec);
}

struct Entry {
  ContainerRecord record;
  OciSpecFacts spec;
};

}  // namespace tracker_internal

using namespace tracker_internal;  // NOLINT: this area's own helpers

class ContainerTracker::Impl {
 public:
  explicit Impl(ContainerTrackerOptions options)
      : options_(containers::ForRuntime(std::move(options))),
        source_(containers::NewRuntimeSource(options_)) {}

  ContainerTrackerOptions options_;  // runtime resolved (never kAuto)
  std::unique_ptr<containers::RuntimeSource> source_;
  Listener listener_;
  ResyncListener resync_listener_;

  // Serialises applying and emitting changes (events thread, maintenance).
  std::mutex apply_mu_;
  mutable std::mutex mu_;
  DeviceInventory inventory_;                         // GUARDED_BY(mu_)
  containers::PodAllocations allocations_;            // GUARDED_BY(mu_)
  std::map<std::string, Entry> entries_;              // GUARDED_BY(mu_)
  containers::RuntimeEventStream* stream_ = nullptr;  // GUARDED_BY(mu_)
  std::condition_variable wake_;                      // with mu_
  bool stopping_ = false;                             // GUARDED_BY(mu_)
  bool reresolve_due_ = false;                        // GUARDED_BY(mu_)
  // When the next safety relist runs: soon after each (re)subscription,
  // since containerd may register a subscriber only after the list that
  // follows it, then every kRelistInterval.
  std::chrono::steady_clock::time_point relist_at_;  // GUARDED_BY(mu_)
  uint64_t applied_events_ = 0;                      // GUARDED_BY(apply_mu_)

  std::atomic<bool> connected_{false};
  std::atomic<uint64_t> reconnects_{0};
  std::thread events_thread_;
  std::thread maintenance_thread_;

  containers::RecordContext Context() const {
    return {&options_, &inventory_, &allocations_};
  }

  void Emit(ContainerEventType type, Timestamp at,
            const ContainerRecord& record, std::string detail = "{}") {
    if (!listener_) return;
    ContainerChange change;
    change.event.container_id = record.container_id;
    change.event.node = options_.node;
    change.event.event_type = type;
    change.event.at = at;
    change.event.detail_json = std::move(detail);
    change.container = record;
    listener_(change);
  }

  // Replaces the whole view with `list`, emitting what changed.
  void ApplyList(const std::vector<RuntimeContainer>& list);
  void ApplyEvent(const RuntimeEvent& e);
  void Reresolve();
  StatusOr<Entry*> Fetch(const std::string& id);
  void EventsLoop();
  void MaintenanceLoop();
  // A full list applied only if no event arrived while it was taken.
  void Relist();
  bool SleepFor(std::chrono::milliseconds d);
  void RefreshAllocations();
};

}  // namespace lens

#endif  // LENS_CONTAINERS_TRACKER_IMPL_H_
