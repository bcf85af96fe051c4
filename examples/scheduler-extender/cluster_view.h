// What the extender knows about each node, read from the Lens store and a
// time-series source through the installed SDK only.
#ifndef LENS_EXAMPLES_SCHEDULER_EXTENDER_CLUSTER_VIEW_H_
#define LENS_EXAMPLES_SCHEDULER_EXTENDER_CLUSTER_VIEW_H_

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lens/insights_health.h"
#include "lens/status.h"
#include "lens/store.h"
#include "lens/timeseries.h"

namespace extender {

struct GpuView {
  int index = 0;
  std::string key;     // serial, else PCI address: what containers hold
  int numa_node = -1;  // -1: unknown
  lens::DeviceHealth health = lens::DeviceHealth::kHealthy;
  bool held = false;  // by a live container
};

struct PortView {
  std::string device;  // "mlx5_0"
  int port = 1;
  int numa_node = -1;
  lens::DeviceHealth health = lens::DeviceHealth::kHealthy;
};

struct NodeView {
  std::string name;
  std::vector<GpuView> gpus;    // by index
  std::vector<PortView> ports;  // every port with a health series
  // Why the node is suspected of slowing a job down ("" when it is not):
  // the straggler analysis of the workloads running now.
  std::string straggler;
};

struct ViewOptions {
  // How far back health states and straggler evidence are read.
  std::chrono::minutes window{30};
  std::chrono::seconds step{60};
};

// The view of every node the store knows, at `now`. Health comes from the
// agents' lens_gpu_health / lens_rdma_port_health series (the state at the
// end of the window; a device without a series counts as healthy), holders
// from the store's live containers, stragglers from FindWorkloadStragglers
// over each open workload. Errors: the store's or the source's.
lens::StatusOr<std::map<std::string, NodeView>> ReadClusterView(
    lens::Store& store, lens::TimeSeriesSource& series, lens::Timestamp now,
    const ViewOptions& options = {});

}  // namespace extender

#endif  // LENS_EXAMPLES_SCHEDULER_EXTENDER_CLUSTER_VIEW_H_
