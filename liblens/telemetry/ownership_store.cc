#include "telemetry/ownership_store.h"

#include <algorithm>
#include <set>
#include <utility>

namespace lens::telemetry {
namespace {

int64_t Ms(Timestamp t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             t.time_since_epoch())
      .count();
}

// Reads a table's changes since `*mark` minus the margin, page after page
// (a full page is read again from its last write time), calling `apply` for
// each row; advances `*mark`, never past `now`: a writer whose clock runs
// ahead must not move the mark past the rows of the others. Returns the
// rows read.
template <typename T, typename Read, typename Apply>
StatusOr<uint64_t> Follow(Timestamp* mark, Timestamp now,
                          std::chrono::milliseconds margin, Read read,
                          Apply apply) {
  constexpr size_t kPage = 20000;
  Timestamp since =
      *mark - std::chrono::duration_cast<std::chrono::microseconds>(margin);
  uint64_t rows = 0;
  for (;;) {
    LENS_ASSIGN_OR_RETURN(Changes<T> changes, read(since, kPage));
    rows += changes.items.size();
    for (const T& item : changes.items) apply(item);
    if (changes.through > *mark) *mark = std::min(changes.through, now);
    if (changes.items.size() < kPage || changes.through <= since) break;
    since = changes.through;
  }
  return rows;
}

}  // namespace

OwnershipFeed::OwnershipFeed(Store* store, std::chrono::milliseconds history,
                             std::chrono::milliseconds margin)
    : store_(store),
      history_(history),
      margin_(margin),
      index_(std::make_shared<const OwnershipIndex>()) {}

void OwnershipFeed::Apply(const PodRecord& p) {
  Pod& pod = pods_[p.uid];
  pod.name = p.name;
  pod.namespace_name = p.namespace_name;
  pod.owner_uid = p.owner_uid;
  pod.from_ms = Ms(p.started_at.value_or(p.created_at));
  pod.to_ms = p.ended_at  ? Ms(*p.ended_at)
              : p.deleted ? Ms(p.updated_at)
                          : kOpenEnd;
}

void OwnershipFeed::Apply(const ContainerRecord& c) {
  if (c.privileged) {  // sees every device, holds none
    containers_.erase(c.container_id);
    return;
  }
  Container& out = containers_[c.container_id];
  out.node = c.node;
  out.pod_uid = c.pod_uid;
  out.from_ms = Ms(c.started_at.value_or(c.created_at));
  const bool ended =
      c.state == ContainerState::kExited || c.state == ContainerState::kDeleted;
  out.to_ms = c.finished_at ? Ms(*c.finished_at)
              : ended       ? Ms(c.updated_at)
                            : kOpenEnd;
  out.devices = c.devices;
}

void OwnershipFeed::Apply(const WorkloadRecord& w) {
  if (w.ended_at && ended_reported_.emplace(w.uid, now_).second) {
    std::lock_guard lock(stats_mu_);
    ended_.push_back(w.uid);
  }
  Owner& o = workloads_[w.uid];
  o.workload_uid = w.uid;
  o.workload_name = w.name;
  o.workload_kind = w.kind;
  o.workload_namespace = w.namespace_name;
}

void OwnershipFeed::Apply(const GpuDeviceRecord& g) {
  gpus_[{g.node, g.gpu_index}] = {g.serial, g.bdf, g.uuid};
}

Status OwnershipFeed::Load(Timestamp now) {
  const Timestamp since =
      now - std::chrono::duration_cast<std::chrono::microseconds>(history_);
  LENS_ASSIGN_OR_RETURN(std::vector<PodRecord> pods,
                        store_->pods().ListLivePods(since));
  LENS_ASSIGN_OR_RETURN(std::vector<ContainerRecord> containers,
                        store_->containers().ListLiveContainers(true, since));
  LENS_ASSIGN_OR_RETURN(std::vector<GpuDeviceRecord> gpus,
                        store_->nodes().ListAllGpuDevices());
  WorkloadQuery q;
  q.ended = false;
  q.sort.key = "name";
  q.page.page_size = 1000;
  for (q.page.page_num = 1;; ++q.page.page_num) {
    LENS_ASSIGN_OR_RETURN(Page<WorkloadRecord> page,
                          store_->pods().ListWorkloads(q));
    for (const WorkloadRecord& w : page.items) Apply(w);
    if (int64_t{q.page.page_num} * q.page.page_size >= page.total) break;
  }
  for (const PodRecord& p : pods) Apply(p);
  for (const ContainerRecord& c : containers) Apply(c);
  for (const GpuDeviceRecord& g : gpus) Apply(g);
  std::lock_guard lock(stats_mu_);
  stats_.rows_read += pods.size() + containers.size() + gpus.size();
  return OkStatus();
}

Status OwnershipFeed::ReadChanges(Timestamp now) {
  uint64_t rows = 0;
  LENS_ASSIGN_OR_RETURN(uint64_t n,
                        Follow<PodRecord>(
                            &pods_mark_, now, margin_,
                            [&](Timestamp since, size_t limit) {
                              return store_->pods().ListPodsWrittenSince(since,
                                                                         limit);
                            },
                            [&](const PodRecord& p) { Apply(p); }));
  rows += n;
  LENS_ASSIGN_OR_RETURN(
      n, Follow<WorkloadRecord>(
             &workloads_mark_, now, margin_,
             [&](Timestamp since, size_t limit) {
               return store_->pods().ListWorkloadsWrittenSince(since, limit);
             },
             [&](const WorkloadRecord& w) {
               missing_workloads_.erase(w.uid);
               Apply(w);
             }));
  rows += n;
  LENS_ASSIGN_OR_RETURN(
      n, Follow<ContainerRecord>(
             &containers_mark_, now, margin_,
             [&](Timestamp since, size_t limit) {
               return store_->containers().ListContainersWrittenSince(
                   since, true, limit);
             },
             [&](const ContainerRecord& c) { Apply(c); }));
  rows += n;
  LENS_ASSIGN_OR_RETURN(
      n, Follow<GpuDeviceRecord>(
             &gpus_mark_, now, margin_,
             [&](Timestamp since, size_t limit) {
               return store_->nodes().ListGpuDevicesWrittenSince(since, limit);
             },
             [&](const GpuDeviceRecord& g) { Apply(g); }));
  rows += n;
  std::lock_guard lock(stats_mu_);
  stats_.rows_read += rows;
  return OkStatus();
}

// A pod naming a workload the feeds have not brought (written before the
// window, or a pod read before its workload): read once; one never stored
// is remembered as missing until the workload feed brings it.
Status OwnershipFeed::FetchMissingWorkloads() {
  for (const auto& [uid, pod] : pods_) {
    if (pod.owner_uid.empty() || workloads_.count(pod.owner_uid) ||
        missing_workloads_.count(pod.owner_uid)) {
      continue;
    }
    auto w = store_->pods().GetWorkload(pod.owner_uid);
    if (w.ok()) {
      Apply(*w);
    } else if (w.status().code() == StatusCode::kNotFound) {
      missing_workloads_.insert(pod.owner_uid);
    } else {
      return w.status();
    }
  }
  return OkStatus();
}

void OwnershipFeed::Prune(Timestamp now) {
  const int64_t before = Ms(now) - history_.count();
  std::erase_if(pods_, [&](const auto& e) { return e.second.to_ms < before; });
  std::erase_if(containers_,
                [&](const auto& e) { return e.second.to_ms < before; });
  std::set<std::string> used;
  for (const auto& [uid, pod] : pods_) used.insert(pod.owner_uid);
  std::erase_if(workloads_,
                [&](const auto& e) { return !used.count(e.first); });
  std::erase_if(missing_workloads_,
                [&](const std::string& uid) { return !used.count(uid); });
  const Timestamp forget =
      now - std::chrono::duration_cast<std::chrono::microseconds>(
                std::max<std::chrono::milliseconds>(std::chrono::minutes(10),
                                                    margin_ * 2));
  std::erase_if(ended_reported_,
                [&](const auto& e) { return e.second < forget; });
}

std::shared_ptr<const OwnershipIndex> OwnershipFeed::Build() const {
  auto index = std::make_shared<OwnershipIndex>();
  std::map<std::string, std::shared_ptr<const Owner>> owner_of_pod;
  for (const auto& [uid, p] : pods_) {
    auto owner = std::make_shared<Owner>();
    auto w = workloads_.find(p.owner_uid);
    if (w != workloads_.end()) {
      *owner = w->second;
    } else {  // no owner (or one never stored): the pod is its own workload
      owner->workload_uid = uid;
      owner->workload_name = p.name;
      owner->workload_kind = "Pod";
      owner->workload_namespace = p.namespace_name;
    }
    owner->pod_uid = uid;
    index->AddPod(p.namespace_name, p.name, {p.from_ms, p.to_ms, owner});
    owner_of_pod[uid] = std::move(owner);
  }
  // Each GPU's identities on its node, to add a holding under all of them.
  std::map<std::pair<std::string, std::string>, std::pair<const Gpu*, int32_t>>
      gpu_by;
  for (const auto& [key, g] : gpus_) {
    for (const std::string* id : {&g.serial, &g.bdf, &g.uuid}) {
      if (!id->empty()) gpu_by[{key.first, *id}] = {&g, key.second};
    }
  }
  for (const auto& [id, c] : containers_) {
    auto owner = owner_of_pod.find(c.pod_uid);
    if (owner == owner_of_pod.end()) continue;  // not a pod we know
    const Holding h{c.from_ms, c.to_ms, owner->second};
    for (const ContainerDeviceRecord& d : c.devices) {
      if (d.kind == DeviceKind::kRdma) {
        index->AddDevice(c.node, "rdma:" + d.device_key, h);
        continue;
      }
      if (d.kind != DeviceKind::kGpu) continue;
      std::set<std::string> ids = {d.device_key};
      if (!d.bdf.empty()) ids.insert(d.bdf);
      // By BDF first: the two dies of an MI250 share a board serial.
      auto g = gpu_by.end();
      if (!d.bdf.empty()) g = gpu_by.find({c.node, d.bdf});
      if (g == gpu_by.end()) g = gpu_by.find({c.node, d.device_key});
      if (g != gpu_by.end()) {
        const Gpu& gpu = *g->second.first;
        for (const std::string* alias : {&gpu.serial, &gpu.bdf, &gpu.uuid}) {
          if (!alias->empty()) ids.insert(*alias);
        }
        ids.insert("index:" + std::to_string(g->second.second));
      }
      for (const std::string& alias : ids) index->AddDevice(c.node, alias, h);
    }
  }
  index->Seal();
  return index;
}

Status OwnershipFeed::Refresh(Timestamp now) {
  const auto started = std::chrono::steady_clock::now();
  now_ = now;
  Status st;
  if (!loaded_) {
    // The marks start where the load's reads were; the margin covers rows
    // committed while it ran.
    pods_mark_ = containers_mark_ = workloads_mark_ = gpus_mark_ = now;
    st = Load(now);
    loaded_ = st.ok();
  } else {
    st = ReadChanges(now);
  }
  if (st.ok()) st = FetchMissingWorkloads();
  if (st.ok()) {
    Prune(now);
    index_.store(Build(), std::memory_order_release);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  std::lock_guard lock(stats_mu_);
  ++stats_.refreshes;
  stats_.last_refresh_seconds = seconds;
  if (!st.ok()) {
    ++stats_.failures;
    return st;
  }
  stats_.last_success = now;
  stats_.pods = pods_.size();
  stats_.containers = containers_.size();
  stats_.workloads = workloads_.size();
  return OkStatus();
}

std::vector<std::string> OwnershipFeed::TakeEndedWorkloads() {
  std::lock_guard lock(stats_mu_);
  return std::exchange(ended_, {});
}

OwnershipFeedStats OwnershipFeed::stats() const {
  std::lock_guard lock(stats_mu_);
  return stats_;
}

StatusOr<std::shared_ptr<const OwnershipIndex>> BuildOwnershipIndex(
    Store& store, Timestamp now, std::chrono::milliseconds history) {
  OwnershipFeed feed(&store, history);
  LENS_RETURN_IF_ERROR(feed.Refresh(now));
  return feed.Current();
}

}  // namespace lens::telemetry
