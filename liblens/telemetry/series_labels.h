// The series lens-telemetry enriches and the labels that name each
// identity in them.
#ifndef LENS_TELEMETRY_SERIES_LABELS_H_
#define LENS_TELEMETRY_SERIES_LABELS_H_

#include <string>
#include <vector>

namespace lens {

// Which remote-write series lens-telemetry looks at, and the label names
// that carry each identity, tried in order (the exporters': dcgm-exporter,
// AMD device-metrics-exporter, kube-state-metrics, Lens). Held by
// lens::TelemetryOptions (the `telemetry:` section decodes into it).
struct SeriesIdentityLabels {
  // Metric-name prefixes of the series looked at (empty: every series); the
  // others pass through untouched.
  std::vector<std::string> metric_prefixes = {
      "DCGM_FI_", "gpu_", "lens_gpu_", "amd_", "rdma_", "lens_rdma_"};
  std::vector<std::string> namespace_labels = {"namespace",
                                               "exported_namespace"};
  std::vector<std::string> pod_labels = {"pod", "exported_pod"};
  std::vector<std::string> node_labels = {"node", "Hostname", "hostname"};
  std::vector<std::string> gpu_index_labels = {"gpu", "gpu_id"};
  std::vector<std::string> gpu_serial_labels = {"serial_number", "serial"};
  std::vector<std::string> gpu_bdf_labels = {"pci_bus_id", "bdf"};
  std::vector<std::string> gpu_uuid_labels = {"UUID", "uuid"};
  // An RDMA device's name (mlx5_0).
  std::vector<std::string> rdma_device_labels = {"rdma_device", "device"};
};

}  // namespace lens

#endif  // LENS_TELEMETRY_SERIES_LABELS_H_
