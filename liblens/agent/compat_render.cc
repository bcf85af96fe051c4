// The original platform's metric names, for dashboards built on them. Values
// keep the original's units (percentages); RDMA counters keep their names
// (rdma_stat_<counter>{device,port}) but are typed as counters.
#include <charconv>
#include <map>

#include "agent/metrics_render.h"
#include "core/metric_writer.h"

namespace lens::agent {
namespace {

std::string PortText(int port) { return std::to_string(port); }

// rdma_stat_<counter> with any character outside [a-zA-Z0-9_] replaced by '_'.
std::string RdmaStatName(std::string_view counter) {
  std::string name = "rdma_stat_";
  for (char c : counter) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9');
    name.push_back(ok ? c : '_');
  }
  return name;
}

void RenderGpuCompat(const NodeSnapshot& s, MetricWriter& w) {
  w.Family("gpu_utilization",
           "GPU utilization percentage (compatibility name).", "gauge");
  const size_t n = std::min(s.gpus.size(), s.gpu_samples.size());
  for (size_t i = 0; i < n; ++i) {
    if (!s.gpu_samples[i].utilization_ratio) continue;
    std::string id = std::to_string(s.gpus[i].index);
    w.Sample({{"gpu_id", id}}, *s.gpu_samples[i].utilization_ratio * 100);
  }
  if (s.gpu_allocation && !s.gpus.empty()) {
    w.Family("node_k8s_gpu_allocation_rate",
             "Percentage of the node's GPUs allocated by Kubernetes "
             "(compatibility name).",
             "gauge");
    w.Sample({}, 100.0 * static_cast<double>(s.gpu_allocation->allocated) /
                     s.gpus.size());
  }
}

void RenderRdmaCompat(const NodeSnapshot& s, MetricWriter& w) {
  // counter name -> (port entry, value); std::map keeps families sorted.
  std::map<std::string_view,
           std::vector<std::pair<const RdmaPortCounters*, uint64_t>>>
      by_name;
  for (const RdmaPortCounters& p : s.rdma_ports) {
    for (const RdmaCounter& c : p.counters)
      by_name[c.name].emplace_back(&p, c.value);
  }
  for (const auto& [counter, values] : by_name) {
    const std::string name = RdmaStatName(counter);
    w.Family(name, "RDMA port counter (compatibility name).", "counter");
    for (const auto& [port, value] : values) {
      w.Sample({{"device", port->device}, {"port", PortText(port->port)}},
               static_cast<double>(value));
    }
  }
}

void RenderStorageCompat(const NodeSnapshot& s, MetricWriter& w) {
  if (!s.ephemeral_storage) return;
  const NodeEphemeralStorage& e = *s.ephemeral_storage;
  const std::string& node = e.node_name.empty() ? s.node_name : e.node_name;
  w.Family("pod_ephemeral_storage_usage_bytes",
           "Ephemeral storage used by a pod (compatibility name).", "gauge");
  for (const PodEphemeralStorage& p : e.pods) {
    if (!p.used_bytes) continue;
    w.Sample({{"namespace", p.namespace_name}, {"pod", p.name}, {"node", node}},
             static_cast<double>(*p.used_bytes));
  }
  struct Field {
    std::string_view name;
    const std::optional<uint64_t>& value;
  };
  const Field fields[] = {
      {"node_ephemeral_storage_usage_bytes", e.used_bytes},
      {"node_ephemeral_storage_available_bytes", e.available_bytes},
      {"node_ephemeral_storage_capacity_bytes", e.capacity_bytes}};
  for (const Field& f : fields) {
    if (!f.value) continue;
    w.Family(f.name, "Node ephemeral storage (compatibility name).", "gauge");
    w.Sample({{"node", node}}, static_cast<double>(*f.value));
  }
  if (e.used_bytes && e.capacity_bytes && *e.capacity_bytes > 0) {
    w.Family("node_ephemeral_storage_usage_percent",
             "Node ephemeral storage used, percent of capacity (compatibility "
             "name).",
             "gauge");
    w.Sample({{"node", node}}, 100.0 * static_cast<double>(*e.used_bytes) /
                                   static_cast<double>(*e.capacity_bytes));
  }
}

}  // namespace

void RenderCompatMetrics(const NodeSnapshot& snapshot, std::string* out) {
  MetricWriter w(out);
  RenderGpuCompat(snapshot, w);
  RenderRdmaCompat(snapshot, w);
  RenderStorageCompat(snapshot, w);
}

}  // namespace lens::agent
