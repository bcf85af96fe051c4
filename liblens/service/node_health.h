// The node's device health (docs/insights.md, "Device health"): the agent's
// every cycle observed by a DeviceHealthTracker, served as metrics and as
// GET /health/devices, each transition logged. Internal to the service
// area.
#ifndef LENS_SERVICE_NODE_HEALTH_H_
#define LENS_SERVICE_NODE_HEALTH_H_

#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "agent/node_agent.h"
#include "lens/insights_health.h"
#include "lens/insights_placement.h"

namespace lens::service {

// Thread-safe.
class NodeDeviceHealth {
 public:
  static StatusOr<std::unique_ptr<NodeDeviceHealth>> Create(
      const DeviceHealthOptions& options);

  // One agent cycle; logs the transitions it caused.
  void Observe(const NodeSnapshot& snapshot);
  // lens_gpu_health, lens_rdma_port_health (0 healthy, 1 degraded, 2
  // unhealthy; devices still in their slot) and
  // lens_device_health_transitions_total.
  void RenderMetrics(std::string* out) const;
  // {"devices": [...], "transitions": [...]}: every device's state with its
  // cause, and the transitions after sequence `after` (all kept when unset).
  std::string Json(std::optional<uint64_t> after) const;

 private:
  explicit NodeDeviceHealth(std::unique_ptr<DeviceHealthTracker> tracker)
      : tracker_(std::move(tracker)) {}

  mutable std::mutex mu_;
  std::unique_ptr<DeviceHealthTracker> tracker_;  // GUARDED_BY(mu_)
  uint64_t logged_ = 0;                           // GUARDED_BY(mu_)
  // Transitions counted per kind (GPU, port) and new state.
  uint64_t transitions_[2][3] = {};  // GUARDED_BY(mu_)
};

// lens_pod_placement_issues{namespace, pod, issue}: the flags of the
// placement audit of `containers` (the running ones with GPUs) against the
// host under `roots`, one sample per pod and issue with flags. An audit
// that fails renders the family without samples.
void RenderPlacementMetrics(const HostRoots& roots,
                            std::span<const ContainerRecord> containers,
                            std::string* out);

}  // namespace lens::service

#endif  // LENS_SERVICE_NODE_HEALTH_H_
