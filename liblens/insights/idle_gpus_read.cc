// The idle-GPU histories from a Store (who held which GPU when) and a
// TimeSeriesSource (lens_gpu_utilization_ratio per node and GPU).
#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "insights/series_query.h"
#include "lens/insights.h"
#include "lens/store.h"
#include "lens/timeseries.h"

namespace lens {
namespace {

std::string HoldingDeviceKey(std::string_view node, std::string_view id) {
  std::string key(node);
  key.push_back('\0');
  key.append(id);
  return key;
}

std::string_view HoldingLabel(const SeriesSamples& s, std::string_view name) {
  for (const auto& [k, v] : s.labels) {
    if (k == name) return v;
  }
  return {};
}

}  // namespace

StatusOr<std::vector<GpuHolding>> ReadGpuHoldings(Store& store, Timestamp from,
                                                  Timestamp to) {
  // GPU index by (node, serial) and by (node, bus address): a container's
  // device key is the serial, or the address when the GPU has none.
  LENS_ASSIGN_OR_RETURN(std::vector<GpuDeviceRecord> gpus,
                        store.nodes().ListAllGpuDevices());
  std::unordered_map<std::string, const GpuDeviceRecord*> gpu_by_id;
  for (const GpuDeviceRecord& g : gpus) {
    if (!g.serial.empty()) gpu_by_id[HoldingDeviceKey(g.node, g.serial)] = &g;
    if (!g.bdf.empty()) gpu_by_id[HoldingDeviceKey(g.node, g.bdf)] = &g;
  }
  LENS_ASSIGN_OR_RETURN(std::vector<ContainerRecord> containers,
                        store.containers().ListLiveContainers(true, from));
  LENS_ASSIGN_OR_RETURN(std::vector<PodRecord> pods,
                        store.pods().ListLivePods(from));
  std::unordered_map<std::string, const PodRecord*> pod_by_uid;
  for (const PodRecord& p : pods) pod_by_uid[p.uid] = &p;
  std::map<std::string, std::string> workload_names;  // uid -> name
  std::vector<GpuHolding> out;
  for (const ContainerRecord& c : containers) {
    const Timestamp start = c.started_at.value_or(c.created_at);
    std::optional<Timestamp> end = c.finished_at;
    if (!end && (c.state == ContainerState::kExited ||
                 c.state == ContainerState::kDeleted)) {
      end = c.updated_at;  // ended without a recorded time: last seen
    }
    if (start > to || (end && *end < from)) continue;
    if (!c.started_at && c.state == ContainerState::kCreated) continue;
    const PodRecord* pod = nullptr;
    if (auto it = pod_by_uid.find(c.pod_uid); it != pod_by_uid.end()) {
      pod = it->second;
    }
    for (const ContainerDeviceRecord& d : c.devices) {
      if (d.kind != DeviceKind::kGpu) continue;
      auto it = gpu_by_id.find(HoldingDeviceKey(c.node, d.device_key));
      if (it == gpu_by_id.end() && !d.bdf.empty()) {
        it = gpu_by_id.find(HoldingDeviceKey(c.node, d.bdf));
      }
      if (it == gpu_by_id.end()) continue;  // not in the inventory
      GpuHolding h;
      h.node = c.node;
      h.gpu = std::to_string(it->second->gpu_index);
      h.serial = it->second->serial;
      h.container_id = c.container_id;
      h.pod_uid = c.pod_uid;
      h.pod_name = pod ? pod->name : c.pod_name;
      h.namespace_name = pod ? pod->namespace_name : c.pod_namespace;
      if (pod && !pod->owner_uid.empty()) {
        h.workload_uid = pod->owner_uid;
        auto [name, inserted] = workload_names.try_emplace(pod->owner_uid);
        if (inserted) {
          StatusOr<WorkloadRecord> w = store.pods().GetWorkload(pod->owner_uid);
          if (w.ok()) {
            name->second = w->name;
          } else if (w.status().code() != StatusCode::kNotFound) {
            return w.status();
          }
        }
        h.workload_name = name->second;
      }
      h.from = start;
      h.to = end;
      out.push_back(std::move(h));
    }
  }
  // By node, GPU index (as a number) and start.
  std::sort(out.begin(), out.end(),
            [](const GpuHolding& a, const GpuHolding& b) {
              if (a.node != b.node) return a.node < b.node;
              if (a.gpu.size() != b.gpu.size())
                return a.gpu.size() < b.gpu.size();
              if (a.gpu != b.gpu) return a.gpu < b.gpu;
              return a.from < b.from;
            });
  return out;
}

StatusOr<std::vector<GpuUtilizationSeries>> ReadGpuUtilization(
    TimeSeriesSource& source, Timestamp from, Timestamp to,
    std::chrono::milliseconds step, std::string_view node) {
  RangeQuery q =
      insights::SeriesQuery("lens_gpu_utilization_ratio", from, to, step);
  if (!node.empty()) q.matchers.emplace_back("node", std::string(node));
  LENS_ASSIGN_OR_RETURN(std::vector<SeriesSamples> series,
                        source.QueryRange(q));
  // One GPU can have several series (an agent restarted with another
  // instance label): merged, the larger value where both have a point.
  std::map<std::pair<std::string, std::string>, std::vector<SamplePoint>> by;
  for (SeriesSamples& s : series) {
    const std::string_view node = HoldingLabel(s, "node");
    const std::string_view gpu = HoldingLabel(s, "gpu");
    if (node.empty() || gpu.empty()) continue;
    std::vector<SamplePoint>& into = by[{std::string(node), std::string(gpu)}];
    if (into.empty()) {
      into = std::move(s.points);
      continue;
    }
    std::vector<SamplePoint> merged;
    merged.reserve(into.size() + s.points.size());
    size_t i = 0, j = 0;
    while (i < into.size() || j < s.points.size()) {
      if (j == s.points.size() ||
          (i < into.size() &&
           into[i].timestamp_ms < s.points[j].timestamp_ms)) {
        merged.push_back(into[i++]);
      } else if (i == into.size() ||
                 s.points[j].timestamp_ms < into[i].timestamp_ms) {
        merged.push_back(s.points[j++]);
      } else {
        SamplePoint p = into[i++];
        p.value = std::max(p.value, s.points[j++].value);
        merged.push_back(p);
      }
    }
    into = std::move(merged);
  }
  std::vector<GpuUtilizationSeries> out;
  out.reserve(by.size());
  for (auto& [key, points] : by) {
    out.push_back({key.first, key.second, std::move(points)});
  }
  return out;
}

}  // namespace lens
