// GPU consumers: per top-level workload (or pod without an owner), the GPUs
// its active pods hold, how many pods, and the utilisation of exactly the
// GPUs its containers hold (the store's container -> device ownership
// joined with the node agents' samples). A privileged container sees every
// device but holds none: its devices are never attributed.
#include <set>

#include "scheduled/jobs_impl.h"

namespace lens::scheduled {
namespace {

// The utilisation of the GPU a container's device row names in `report`:
// by its BDF when the row has one (the two dies of an MI250 share a board
// serial), else by serial, BDF or UUID in its key.
std::optional<double> Utilization(const AgentReport& report,
                                  const ContainerDeviceRecord& device) {
  const std::string& key = device.device_key;
  for (const AgentGpu& g : report.gpus) {
    const GpuDeviceRecord& d = g.device;
    const bool match = !device.bdf.empty()
                           ? d.bdf == device.bdf
                           : (!d.serial.empty() && d.serial == key) ||
                                 (!d.bdf.empty() && d.bdf == key) ||
                                 (!d.uuid.empty() && d.uuid == key);
    if (match) return g.utilization_ratio;
  }
  return std::nullopt;
}

}  // namespace

Status JobsImpl::RunConsumers(SteadyTime deadline) {
  LENS_ASSIGN_OR_RETURN(std::vector<PodRecord> pods, ReadActivePods(*store_));
  LENS_ASSIGN_OR_RETURN(std::vector<ContainerRecord> containers,
                        store_->containers().ListLiveContainers(true));
  std::erase_if(containers, [](const ContainerRecord& c) {
    return c.state != ContainerState::kRunning;
  });
  std::vector<AgentView> views = agents_.Views();
  if (views.empty()) views = RefreshAgents(deadline, nullptr);
  std::map<std::string, const AgentReport*> reports;
  for (const AgentView& v : views) {
    if (v.report) reports[v.node] = &*v.report;
  }
  std::map<std::string, std::vector<const ContainerRecord*>> by_pod;
  for (const ContainerRecord& c : containers) {
    if (!c.privileged && !c.pod_uid.empty()) by_pod[c.pod_uid].push_back(&c);
  }

  std::map<std::string, Consumer> consumers;
  std::map<std::string, std::set<std::pair<std::string, std::string>>> held;
  std::vector<std::string> unnamed;
  {
    std::lock_guard lock(mu_);
    for (const PodRecord& p : pods) {
      if (p.gpu_allocated <= 0) continue;
      const std::string& uid = p.owner_uid.empty() ? p.uid : p.owner_uid;
      Consumer& c = consumers[uid];
      if (c.uid.empty()) {
        c.uid = uid;
        if (p.owner_uid.empty()) {
          c.kind = "Pod";
          c.name = p.name;
          c.namespace_name = p.namespace_name;
        } else if (auto it = workload_names_.find(uid);
                   it != workload_names_.end()) {
          c.kind = it->second.kind;
          c.name = it->second.name;
          c.namespace_name = it->second.namespace_name;
        } else {
          unnamed.push_back(uid);
          c.namespace_name = p.namespace_name;
        }
      }
      c.gpus += p.gpu_allocated;
      ++c.pods;
      auto cs = by_pod.find(p.uid);
      if (cs == by_pod.end()) continue;
      for (const ContainerRecord* ct : cs->second) {
        for (const ContainerDeviceRecord& d : ct->devices) {
          if (d.kind == DeviceKind::kGpu) {
            held[uid].insert({ct->node, d.device_key});
          }
        }
      }
    }
  }
  // Names of workloads seen for the first time (they never change): the
  // open workloads in one read, then any other one by one.
  if (!unnamed.empty()) {
    WorkloadQuery q;
    q.ended = false;
    q.sort.key = "name";
    q.page.page_size = 1000;
    std::map<std::string, Consumer> open;
    for (q.page.page_num = 1;; ++q.page.page_num) {
      LENS_ASSIGN_OR_RETURN(Page<WorkloadRecord> page,
                            store_->pods().ListWorkloads(q));
      for (const WorkloadRecord& w : page.items) {
        Consumer& c = open[w.uid];
        c.kind = w.kind;
        c.name = w.name;
        c.namespace_name = w.namespace_name;
      }
      if (int64_t{q.page.page_num} * q.page.page_size >= page.total) break;
    }
    for (const std::string& uid : unnamed) {
      auto it = open.find(uid);
      if (it == open.end()) {
        auto w = store_->pods().GetWorkload(uid);
        if (!w.ok() && w.status().code() != StatusCode::kNotFound) {
          return w.status();
        }
        if (!w.ok()) continue;
        it = open.emplace(uid, Consumer{}).first;
        it->second.kind = w->kind;
        it->second.name = w->name;
        it->second.namespace_name = w->namespace_name;
      }
      Consumer& c = consumers[uid];
      c.kind = it->second.kind;
      c.name = it->second.name;
      c.namespace_name = it->second.namespace_name;
      std::lock_guard lock(mu_);
      workload_names_[uid] = it->second;
    }
  }
  // Utilisation of the GPUs held, by (node, device key).
  std::map<std::pair<std::string, std::string>, ContainerDeviceRecord> devices;
  for (const auto& [pod, cs] : by_pod) {
    for (const ContainerRecord* ct : cs) {
      for (const ContainerDeviceRecord& d : ct->devices) {
        if (d.kind == DeviceKind::kGpu) devices[{ct->node, d.device_key}] = d;
      }
    }
  }
  for (auto& [uid, c] : consumers) {
    double sum = 0;
    for (const auto& key : held[uid]) {
      auto r = reports.find(key.first);
      if (r == reports.end()) continue;
      if (auto u = Utilization(*r->second, devices[key])) {
        sum += *u;
        ++c.gpus_measured;
      }
    }
    if (c.gpus_measured > 0) c.utilization_ratio = sum / c.gpus_measured;
  }
  std::vector<Consumer> out;
  for (auto& [uid, c] : consumers) out.push_back(std::move(c));
  std::lock_guard lock(mu_);
  // Names of workloads that hold nothing any more are forgotten: the cache
  // stays the size of the current consumers.
  std::erase_if(workload_names_, [&](const auto& entry) {
    return !consumers.count(entry.first);
  });
  consumers_ = std::move(out);
  consumers_known_ = true;
  return OkStatus();
}

}  // namespace lens::scheduled
