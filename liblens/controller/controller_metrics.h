// The controller's /metrics: Prometheus text from its stats.
#ifndef LENS_CONTROLLER_CONTROLLER_METRICS_H_
#define LENS_CONTROLLER_CONTROLLER_METRICS_H_

#include <cstdint>
#include <string>

#include "controller/controller.h"

namespace lens::controller {

// lens_controller_* families: leader state and transitions, readiness,
// per-resource lists, relists, watch restarts, events and API errors, the
// queue, rows written per table, errors, and flush (reconcile) durations.
std::string RenderControllerMetrics(const ControllerStats& stats,
                                    uint64_t leader_transitions);

}  // namespace lens::controller

#endif  // LENS_CONTROLLER_CONTROLLER_METRICS_H_
