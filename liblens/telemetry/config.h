// The `telemetry:` section of the configuration file: lens-telemetry.
// Owned here; registered in service/config.cc.
#ifndef LENS_TELEMETRY_CONFIG_H_
#define LENS_TELEMETRY_CONFIG_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/config_section.h"
#include "lens/status.h"

namespace lens {

// Which remote-write series lens-telemetry looks at, and the label names
// that carry each identity, tried in order (the exporters': dcgm-exporter,
// AMD device-metrics-exporter, kube-state-metrics, Lens). Held by the
// `telemetry:` section and by lens::TelemetryOptions.
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

// `telemetry:` section: lens-telemetry (docs/telemetry.md). Lists are YAML
// lists or comma-separated text.
struct TelemetryConfigOptions {
  // `listen`: host:port of remote write, logs, the caches, /metrics.
  // `bearerTokenFile`: required on every route but /healthz and /readyz.
  // `tlsCertFile`, `tlsKeyFile`: HTTPS.
  std::string listen = "0.0.0.0:8994";
  std::string bearer_token_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  // `maxRequestBytes`: the largest request body (compressed); the snappy
  // length a remote-write body may declare is 8 times that. Sizes are bytes
  // or with a unit: 32MiB, 1GiB.
  uint64_t max_request_bytes = uint64_t{8} << 20;
  // `forward`: remote-write URLs the enriched samples go to; their bearer
  // token (`forwardTokenFile`), CA (`forwardCaFile`),
  // `forwardInsecureSkipTlsVerify`, `forwardTimeout` per request.
  std::vector<std::string> forward;
  std::string forward_token_file;
  std::string forward_ca_file;
  bool forward_insecure_skip_tls_verify = false;
  std::chrono::milliseconds forward_timeout{10000};
  // `queueDir`: the on-disk forward queues; `queueMaxBytes` each;
  // `queueFsync`: fsync every append.
  std::string queue_dir = "/var/lib/lens/telemetry";
  uint64_t queue_max_bytes = uint64_t{1} << 30;
  bool queue_fsync = false;
  // Enrichment: the series looked at and their identity labels (the keys
  // metricPrefixes, namespaceLabels, podLabels, nodeLabels,
  // gpuIndexLabels, gpuSerialLabels, gpuBdfLabels, gpuUuidLabels,
  // rdmaDeviceLabels), `compatNames`.
  SeriesIdentityLabels series;
  bool compat_names = false;
  // `ownershipRefresh`, `ownershipHistory`: how often the ownership index
  // follows the store, and how long ended owners stay in it.
  std::chrono::milliseconds ownership_refresh{5000};
  std::chrono::milliseconds ownership_history{std::chrono::hours(24)};
  // `sampleHistory`: keep the selected series in the store (one machine);
  // `sampleResolution`, `sampleRetention`, `sampleMaxSeries`.
  bool sample_history = false;
  std::chrono::milliseconds sample_resolution{15000};
  std::chrono::milliseconds sample_retention{std::chrono::hours(24 * 7)};
  int sample_max_series = 100000;
  // `logs`: the logs path; `selfPodPrefixes`: pods whose logs are skipped.
  bool logs = true;
  std::vector<std::string> self_pod_prefixes = {"lens-telemetry"};

  // InvalidArgument naming the key.
  Status Validate() const;
};

namespace config {
extern const SectionSpec<TelemetryConfigOptions> kTelemetrySection;
}  // namespace config

}  // namespace lens

#endif  // LENS_TELEMETRY_CONFIG_H_
