// The extender's decisions: pure functions of a pod's request and a node's
// view, so they are tested without a server or a store.
#ifndef LENS_EXAMPLES_SCHEDULER_EXTENDER_POLICY_H_
#define LENS_EXAMPLES_SCHEDULER_EXTENDER_POLICY_H_

#include <cstdint>
#include <string>

#include "cluster_view.h"

namespace extender {

struct PodRequest {
  int64_t gpus = 0;   // amd.com/gpu + nvidia.com/gpu
  bool rdma = false;  // any rdma/* resource
};

struct Verdict {
  bool fits = true;
  std::string reason;  // why not, for the scheduler's event
};

// A node fails when a free GPU is unhealthy (the device plugin, which does
// not know Lens's health, could hand it to the pod), when fewer healthy
// GPUs are free than the pod needs, or when the pod needs RDMA and no port
// is healthy. A node Lens does not know (`node` null) and a pod without GPUs
// or RDMA are not judged: they fit.
Verdict Filter(const PodRequest& pod, const NodeView* node);

// The kube-scheduler extender scale, 0..10 (MaxExtenderPriority): 10 when
// the pod's GPUs can all come from one NUMA node that also has a healthy
// RDMA port (a pod without RDMA: one NUMA node), less in proportion to the
// share that can; -2 when a free GPU is degraded, -5 with straggler
// evidence. 0 for a node Lens does not know and for a pod without GPUs.
int64_t Score(const PodRequest& pod, const NodeView* node);

}  // namespace extender

#endif  // LENS_EXAMPLES_SCHEDULER_EXTENDER_POLICY_H_
