// A workload's GPUs (what its pods' containers hold, resolved against the
// node's GPU inventory) and its pods' lifecycle events, for the workload
// detail.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "api/api_json.h"
#include "api/routes.h"

namespace lens::api {
namespace {

// The store's page limit: a workload's pods rarely run more containers.
constexpr int32_t kContainersPerPod = 1000;

}  // namespace

Status WriteWorkloadGpus(const ApiContext& ctx,
                         const std::vector<PodRecord>& pods, JsonWriter& w) {
  std::map<std::string, std::vector<GpuDeviceRecord>> inventory;  // by node
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  w.StartArray();
  for (const PodRecord& pod : pods) {
    ContainerQuery q;
    q.pod_uid = pod.uid;
    q.page.page_size = kContainersPerPod;
    LENS_ASSIGN_OR_RETURN(Page<ContainerRecord> containers,
                          ctx.store->containers().ListContainers(q));
    for (const ContainerRecord& c : containers.items) {
      // A privileged container sees every GPU and holds none (the ownership
      // rules of docs/containers.md).
      if (c.privileged) continue;
      for (const ContainerDeviceRecord& d : c.devices) {
        if (d.kind != DeviceKind::kGpu) continue;
        if (!seen.emplace(c.node, d.device_key, c.container_id).second) {
          continue;
        }
        auto [it, fresh] = inventory.try_emplace(c.node);
        if (fresh) {
          LENS_ASSIGN_OR_RETURN(it->second,
                                ctx.store->nodes().ListGpuDevices(c.node));
        }
        const GpuDeviceRecord* gpu = nullptr;
        for (const GpuDeviceRecord& g : it->second) {
          if (g.serial == d.device_key || (!d.bdf.empty() && g.bdf == d.bdf) ||
              g.bdf == d.device_key) {
            gpu = &g;
          }
        }
        w.StartObject();
        Str(w, "node", c.node);
        w.Key("gpuIndex");
        if (gpu != nullptr) {
          w.Int(gpu->gpu_index);
        } else {
          w.Null();
        }
        Str(w, "serial", gpu != nullptr ? gpu->serial : d.device_key);
        Str(w, "bdf", gpu != nullptr ? gpu->bdf : d.bdf);
        Str(w, "model", gpu != nullptr ? gpu->model : "");
        Str(w, "pod", pod.name);
        Str(w, "container", c.container_name);
        Str(w, "containerState", ToString(c.state));
        w.EndObject();
      }
    }
  }
  w.EndArray();
  return OkStatus();
}

Status WriteWorkloadLifecycle(const ApiContext& ctx,
                              const std::vector<PodRecord>& pods,
                              JsonWriter& w) {
  std::vector<std::pair<PodEventRecord, const PodRecord*>> events;
  for (const PodRecord& pod : pods) {
    LENS_ASSIGN_OR_RETURN(std::vector<PodEventRecord> of,
                          ctx.store->pods().ListPodEvents(pod.uid));
    for (PodEventRecord& e : of) events.emplace_back(std::move(e), &pod);
  }
  std::stable_sort(
      events.begin(), events.end(),
      [](const auto& a, const auto& b) { return a.first.at < b.first.at; });
  w.StartArray();
  for (const auto& [e, pod] : events) {
    w.StartObject();
    Time(w, "at", e.at);
    Str(w, "pod", pod->name);
    Str(w, "type", e.event_type);
    Str(w, "phase", e.phase);
    Int(w, "restartCount", e.restart_count);
    w.EndObject();
  }
  w.EndArray();
  return OkStatus();
}

}  // namespace lens::api
