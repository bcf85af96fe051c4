// The controller's /metrics: Prometheus text from its stats.
#ifndef LENS_CLUSTER_CONTROLLER_METRICS_H_
#define LENS_CLUSTER_CONTROLLER_METRICS_H_

#include <cstdint>
#include <string>

#include "cluster/controller.h"

namespace lens::cluster {

// lens_controller_* families: leader state and transitions, readiness,
// per-resource lists, relists, watch restarts, events and API errors, the
// queue, rows written per table, errors, and flush (reconcile) durations.
std::string RenderControllerMetrics(const ControllerStats& stats,
                                    uint64_t leader_transitions);

}  // namespace lens::cluster

#endif  // LENS_CLUSTER_CONTROLLER_METRICS_H_
