#include "policy.h"

#include <algorithm>
#include <map>

namespace extender {
namespace {

bool Healthy(lens::DeviceHealth h) { return h == lens::DeviceHealth::kHealthy; }

}  // namespace

Verdict Filter(const PodRequest& pod, const NodeView* node) {
  if (node == nullptr || (pod.gpus == 0 && !pod.rdma)) return {};
  int64_t free_healthy = 0;
  for (const GpuView& g : node->gpus) {
    if (g.held) continue;
    if (g.health == lens::DeviceHealth::kUnhealthy) {
      return {false, "free GPU " + std::to_string(g.index) + " (" + g.key +
                         ") is unhealthy and could be assigned to the pod"};
    }
    if (Healthy(g.health)) ++free_healthy;
  }
  if (free_healthy < pod.gpus) {
    return {false, std::to_string(free_healthy) +
                       " healthy GPUs free, the pod needs " +
                       std::to_string(pod.gpus)};
  }
  if (pod.rdma &&
      std::none_of(node->ports.begin(), node->ports.end(),
                   [](const PortView& p) { return Healthy(p.health); })) {
    return {false, "no healthy RDMA port"};
  }
  return {};
}

int64_t Score(const PodRequest& pod, const NodeView* node) {
  if (node == nullptr || pod.gpus == 0) return 0;
  std::map<int, int64_t> free_by_numa;
  bool degraded = false;
  for (const GpuView& g : node->gpus) {
    if (g.held) continue;
    if (Healthy(g.health)) {
      ++free_by_numa[g.numa_node];
    } else {
      degraded = true;
    }
  }
  int64_t best = 0;  // the pod's GPUs one NUMA node (with a NIC) can give
  for (const auto& entry : free_by_numa) {
    const int numa = entry.first;
    const int64_t count = entry.second;
    const bool nic = std::any_of(
        node->ports.begin(), node->ports.end(), [&](const PortView& p) {
          return Healthy(p.health) && p.numa_node == numa;
        });
    if (numa >= 0 && (nic || !pod.rdma)) best = std::max(best, count);
  }
  int64_t score = 10 * std::min(best, pod.gpus) / pod.gpus;
  if (degraded) score -= 2;
  if (!node->straggler.empty()) score -= 5;
  return std::clamp<int64_t>(score, 0, 10);
}

}  // namespace extender
