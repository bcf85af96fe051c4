// Enrichment of remote-write series in flight: a selected series that
// identifies a pod (namespace + pod labels) or a device (node + GPU index,
// serial, BDF or UUID labels; node + RDMA device name) gains workload_uid,
// workload_name, workload_kind, workload_namespace and pod_uid, from the owner
// that held it at each sample's own timestamp. Samples with different owners go
// to separate series (split where the owner changed); samples with none keep
// the series as it came. Labels are added in place and kept sorted; nothing
// is copied unless asked (compat_names: also the original's
// `workload_<name>` copy of each enriched series).
#ifndef LENS_TELEMETRY_ENRICH_H_
#define LENS_TELEMETRY_ENRICH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "telemetry/ownership.h"
#include "telemetry/remote_write.h"

namespace lens::telemetry {

struct EnrichOptions {
  // Metric-name prefixes of the series looked at (empty: all); the others
  // pass through untouched.
  std::vector<std::string> metric_prefixes = {
      "DCGM_FI_", "gpu_", "lens_gpu_", "amd_", "rdma_", "lens_rdma_"};
  // Label names that carry each identity, tried in order (the exporters':
  // dcgm-exporter, AMD device-metrics-exporter, kube-state-metrics, Lens).
  std::vector<std::string> namespace_labels = {"namespace",
                                               "exported_namespace"};
  std::vector<std::string> pod_labels = {"pod", "exported_pod"};
  std::vector<std::string> node_labels = {"node", "Hostname", "hostname"};
  std::vector<std::string> gpu_index_labels = {"gpu", "gpu_id"};
  std::vector<std::string> gpu_serial_labels = {"serial_number", "serial"};
  std::vector<std::string> gpu_bdf_labels = {"pci_bus_id", "bdf"};
  std::vector<std::string> gpu_uuid_labels = {"UUID", "uuid"};
  // An RDMA device's name (mlx5_0): the index holds it as "rdma:<name>".
  std::vector<std::string> rdma_device_labels = {"rdma_device", "device"};
  bool compat_names = false;
};

// What one request's enrichment did.
struct EnrichStats {
  uint64_t series_in = 0;
  uint64_t samples_in = 0;
  uint64_t samples_enriched = 0;  // got workload labels
  uint64_t series_split = 0;      // series whose samples had several owners
  uint64_t series_out = 0;
};

// Enriches `request` into `out` (appended; Finish() it to send) against
// `index` (samples with no owner there pass unchanged). Not thread-safe per
// object; one per worker.
class Enricher {
 public:
  explicit Enricher(EnrichOptions options);
  EnrichStats Enrich(const RemoteWriteRequest& request,
                     const OwnershipIndex& index, RemoteWriteEncoder* out);

 private:
  EnrichOptions options_;
  // Scratch reused across series.
  std::vector<const Owner*> owners_;
  std::vector<WireLabel> labels_;
  std::string compat_name_;
  std::string bdf_;
};

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_ENRICH_H_
