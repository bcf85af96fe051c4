#include "telemetry/ownership_store.h"

#include <map>
#include <set>

namespace lens::telemetry {
namespace {

int64_t Ms(Timestamp t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             t.time_since_epoch())
      .count();
}

// The workloads the pods name, read once each: the open ones in one pass,
// the others one by one (few: they ended within the window).
StatusOr<std::map<std::string, WorkloadRecord>> ReadWorkloads(
    Store& store, const std::set<std::string>& uids) {
  std::map<std::string, WorkloadRecord> out;
  if (uids.empty()) return out;
  WorkloadQuery q;
  q.ended = false;
  q.sort.key = "name";
  q.page.page_size = 1000;
  for (q.page.page_num = 1;; ++q.page.page_num) {
    LENS_ASSIGN_OR_RETURN(Page<WorkloadRecord> page,
                          store.pods().ListWorkloads(q));
    for (WorkloadRecord& w : page.items) {
      if (uids.count(w.uid)) out.emplace(w.uid, std::move(w));
    }
    if (int64_t{q.page.page_num} * q.page.page_size >= page.total) break;
  }
  for (const std::string& uid : uids) {
    if (out.count(uid)) continue;
    auto w = store.pods().GetWorkload(uid);
    if (w.ok()) {
      out.emplace(uid, std::move(*w));
    } else if (w.status().code() != StatusCode::kNotFound) {
      return w.status();
    }
  }
  return out;
}

}  // namespace

StatusOr<std::shared_ptr<const OwnershipIndex>> BuildOwnershipIndex(
    Store& store, Timestamp now, std::chrono::milliseconds history) {
  const Timestamp since =
      now - std::chrono::duration_cast<std::chrono::microseconds>(history);
  LENS_ASSIGN_OR_RETURN(std::vector<PodRecord> pods,
                        store.pods().ListLivePods(since));
  LENS_ASSIGN_OR_RETURN(std::vector<ContainerRecord> containers,
                        store.containers().ListLiveContainers(true, since));
  LENS_ASSIGN_OR_RETURN(std::vector<GpuDeviceRecord> gpus,
                        store.nodes().ListAllGpuDevices());
  std::set<std::string> workload_uids;
  for (const PodRecord& p : pods) {
    if (!p.owner_uid.empty()) workload_uids.insert(p.owner_uid);
  }
  LENS_ASSIGN_OR_RETURN(auto workloads, ReadWorkloads(store, workload_uids));

  auto index = std::make_shared<OwnershipIndex>();
  std::map<std::string, std::shared_ptr<const Owner>> owner_of_pod;
  for (const PodRecord& p : pods) {
    auto owner = std::make_shared<Owner>();
    owner->pod_uid = p.uid;
    auto w = workloads.find(p.owner_uid);
    if (w != workloads.end()) {
      owner->workload_uid = w->second.uid;
      owner->workload_name = w->second.name;
      owner->workload_kind = w->second.kind;
      owner->workload_namespace = w->second.namespace_name;
    } else {  // no owner (or one never stored): the pod is its own workload
      owner->workload_uid = p.uid;
      owner->workload_name = p.name;
      owner->workload_kind = "Pod";
      owner->workload_namespace = p.namespace_name;
    }
    Holding h;
    h.from_ms = Ms(p.started_at.value_or(p.created_at));
    h.to_ms = p.ended_at  ? Ms(*p.ended_at)
              : p.deleted ? Ms(p.updated_at)
                          : kOpenEnd;
    h.owner = owner;
    index->AddPod(p.namespace_name, p.name, h);
    owner_of_pod[p.uid] = std::move(owner);
  }
  // Each GPU's identities on its node, to add a holding under all of them.
  std::map<std::pair<std::string, std::string>, const GpuDeviceRecord*> gpu_by;
  for (const GpuDeviceRecord& g : gpus) {
    for (const std::string* id : {&g.serial, &g.bdf, &g.uuid}) {
      if (!id->empty()) gpu_by[{g.node, *id}] = &g;
    }
  }
  for (const ContainerRecord& c : containers) {
    if (c.privileged) continue;  // sees every device, holds none
    auto owner = owner_of_pod.find(c.pod_uid);
    if (owner == owner_of_pod.end()) continue;  // not a GPU pod we know
    Holding h;
    h.from_ms = Ms(c.started_at.value_or(c.created_at));
    const bool ended = c.state == ContainerState::kExited ||
                       c.state == ContainerState::kDeleted;
    h.to_ms = c.finished_at ? Ms(*c.finished_at)
              : ended       ? Ms(c.updated_at)
                            : kOpenEnd;
    h.owner = owner->second;
    for (const ContainerDeviceRecord& d : c.devices) {
      if (d.kind != DeviceKind::kGpu) continue;
      std::set<std::string> ids = {d.device_key};
      if (!d.bdf.empty()) ids.insert(d.bdf);
      // By BDF first: the two dies of an MI250 share a board serial.
      auto g = gpu_by.end();
      if (!d.bdf.empty()) g = gpu_by.find({c.node, d.bdf});
      if (g == gpu_by.end()) g = gpu_by.find({c.node, d.device_key});
      if (g != gpu_by.end()) {
        for (const std::string* id :
             {&g->second->serial, &g->second->bdf, &g->second->uuid}) {
          if (!id->empty()) ids.insert(*id);
        }
        ids.insert("index:" + std::to_string(g->second->gpu_index));
      }
      for (const std::string& id : ids) index->AddDevice(c.node, id, h);
    }
  }
  index->Seal();
  return std::shared_ptr<const OwnershipIndex>(std::move(index));
}

}  // namespace lens::telemetry
