// GPU allocation: per node and for the cluster, the GPUs that bound,
// running-or-pending pods hold (each pod once, by its effective request)
// over the GPUs the nodes can allocate; and its history in the store.
#include "scheduled/jobs_impl.h"

namespace lens::scheduled {
namespace {

// A node's point is written when its numbers change, and at least this
// often, so the history holds the whole curve at a bounded row count.
constexpr auto kNodePointEvery = std::chrono::minutes(10);

}  // namespace

Status JobsImpl::RunAllocation(SteadyTime) {
  LENS_ASSIGN_OR_RETURN(std::vector<NodeRecord> nodes, ReadNodes(*store_));
  LENS_ASSIGN_OR_RETURN(std::vector<PodRecord> pods, ReadActivePods(*store_));
  Allocation a;
  a.at = NowUs();
  for (const NodeRecord& n : nodes) {
    a.nodes[n.name].allocatable = n.gpu_allocatable;
  }
  for (const PodRecord& p : pods) {
    a.nodes[p.node].allocated += p.gpu_allocated;
  }
  for (const auto& [name, n] : a.nodes) {
    a.cluster.allocated += n.allocated;
    a.cluster.allocatable += n.allocatable;
  }
  std::vector<GpuAllocationRecord> points;
  points.push_back({"", a.at, a.cluster.allocated, a.cluster.allocatable});
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, n] : a.nodes) {
      if (n.allocatable == 0 && n.allocated == 0) continue;
      auto last = history_points_.find(name);
      if (last != history_points_.end() &&
          last->second.gpus_allocated == n.allocated &&
          last->second.gpus_allocatable == n.allocatable &&
          a.at - last->second.at < kNodePointEvery) {
        continue;
      }
      points.push_back({name, a.at, n.allocated, n.allocatable});
    }
  }
  LENS_RETURN_IF_ERROR(store_->nodes().AddGpuAllocation(
      points, a.at - std::chrono::duration_cast<std::chrono::microseconds>(
                         options_.allocation_history)));
  std::lock_guard lock(mu_);
  for (const GpuAllocationRecord& p : points) {
    if (!p.node.empty()) history_points_[p.node] = p;
  }
  allocation_ = std::move(a);
  return OkStatus();
}

}  // namespace lens::scheduled
