// The configuration file's cluster-side sections (jobs, controller,
// telemetry, api): option structs held by lens::Config (core/config.h, which
// includes this header and documents the file, its precedence and its
// environment variables).
#ifndef LENS_CORE_CONFIG_CLUSTER_H_
#define LENS_CORE_CONFIG_CLUSTER_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lens/status.h"

namespace lens {

// `jobs:` section: lens-jobs (the container event server and the scheduled
// jobs).
struct JobsOptions {
  // `listenGrpc`: host:port of the container event server (node agents).
  std::string listen_grpc = "0.0.0.0:50051";
  // `listenHttp`: host:port of /metrics, /healthz, /readyz and /jobs.
  std::string listen_http = "0.0.0.0:8993";
  // `bearerTokenFile`: required from node agents and on every HTTP route but
  // /healthz. `tlsCertFile`, `tlsKeyFile`: gRPC and HTTP over TLS.
  std::string bearer_token_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  // `maxAgentStreams`: node agents streaming at once (1..65536); more are
  // refused with RESOURCE_EXHAUSTED.
  int max_agent_streams = 2048;
  // `nodeTokensFile`: per-node identity on the event stream, one
  // "NODE TOKEN" line per node (ReadNodeTokensFile); each agent then sends
  // its node's token and may speak only for that node. With it set, the
  // shared `bearerTokenFile` token opens no stream unless
  // `acceptSharedAgentToken` (a migration aid: any node again).
  std::string node_tokens_file;
  bool accept_shared_agent_token = false;
  // `maxQueueBytes`: bytes of agent messages queued for the store writer
  // (1 MiB..1 GiB; full: the agents are held back, nothing is dropped).
  // `maxSnapshotBytes`: largest snapshot one agent may send in parts
  // (1 MiB..1 GiB). Plain byte counts.
  int max_queue_bytes = 64 << 20;
  int max_snapshot_bytes = 64 << 20;

  // The scheduled jobs (docs/jobs.md). `scheduledJobs`: run them (false:
  // the event server only).
  bool scheduled_jobs = true;
  // `kubeconfig`, `context`, `inCluster`: the API server (leader election,
  // finding the node agents, the storage scan); neither: no cluster, this
  // replica always runs the jobs. `leaderElection` on the Lease
  // `leaseNamespace`/`leaseName`; `identity` names this replica.
  std::string kubeconfig;
  std::string context;
  bool in_cluster = false;
  bool leader_election = true;
  std::string lease_namespace = "lens";
  std::string lease_name = "lens-jobs";
  std::string identity;
  // `agents`: the node agents as "node=url" items, comma-separated (or a
  // YAML list of them); empty: the pods matching `agentSelector` in
  // `agentNamespace`, at their pod IP and `agentPort` over `agentScheme`.
  std::string agents;
  std::string agent_namespace = "lens";
  std::string agent_selector = "app.kubernetes.io/name=lens-node-agent";
  int agent_port = 8989;
  std::string agent_scheme = "http";
  // `agentTokenFile`: the agents' bearer token; `agentCaFile`: their CA;
  // `agentTlsServerName`: the name their certificate holds, verified in
  // place of the pod IP; `agentInsecureSkipTlsVerify`; `agentTimeout` per
  // request.
  std::string agent_token_file;
  std::string agent_ca_file;
  std::string agent_tls_server_name;
  bool agent_insecure_skip_tls_verify = false;
  std::chrono::milliseconds agent_timeout{5000};
  // `<job>Interval`: how often each job runs (a run may take 90% of it).
  std::chrono::milliseconds gpu_allocation_interval{30000};
  std::chrono::milliseconds gpu_consumers_interval{30000};
  std::chrono::milliseconds node_info_interval{10000};
  std::chrono::milliseconds device_info_interval{10000};
  std::chrono::milliseconds workload_status_interval{20000};
  std::chrono::milliseconds pod_status_interval{5000};
  std::chrono::milliseconds storage_scan_interval{60000};
  // `storageMounts`: "name=kind:/path" items, comma-separated (or a list).
  std::string storage_mounts;
  // `compatNames`: also the original's metric names.
  bool compat_names = false;

  // The items of `agents` as (node, url), of `storageMounts` as (name,
  // kind, path). InvalidArgument naming the key and the item.
  static StatusOr<std::vector<std::pair<std::string, std::string>>>
  ParseAgentList(std::string_view text);
  static StatusOr<std::vector<std::array<std::string, 3>>> ParseStorageMounts(
      std::string_view text);

  // InvalidArgument naming the key.
  Status Validate() const;
};

// `controller:` section: lens-controller (docs/controller.md).
struct ControllerConfigOptions {
  // `kubeconfig`, `context`: the API server from a kubeconfig file (its
  // current context when `context` is empty). `inCluster`: from the pod's
  // service account instead. Exactly one of the two.
  std::string kubeconfig;
  std::string context;
  bool in_cluster = false;
  // `listenHttp`: host:port of /healthz, /readyz and /metrics.
  std::string listen_http = "0.0.0.0:8992";
  // `bearerTokenFile`: required on every HTTP route but /healthz and
  // /readyz. `tlsCertFile`, `tlsKeyFile`: HTTPS.
  std::string bearer_token_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  // `gpuResources`: comma-separated extended resources that count as GPUs;
  // a trailing '*' matches a prefix.
  std::string gpu_resources = "amd.com/gpu,nvidia.com/gpu,nvidia.com/mig-*";
  // `leaderElection`: replicas elect one writer on the Lease
  // `leaseNamespace`/`leaseName`; `identity` names this replica (default:
  // $POD_NAME, else the host name, plus the process id).
  bool leader_election = true;
  std::string lease_namespace = "lens";
  std::string lease_name = "lens-controller";
  std::string identity;

  // InvalidArgument naming the key.
  Status Validate() const;
};

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

// `api:` section: lens-api, the REST API and the dashboard (docs/api.md).
struct ApiConfigOptions {
  // `listen`: host:port of /api/v1, the dashboard at /, /metrics.
  // `bearerTokenFile`: required on /api/v1 and /metrics (the dashboard's
  // page and assets hold no data and stay public). `tlsCertFile`,
  // `tlsKeyFile`: HTTPS.
  std::string listen = "0.0.0.0:8080";
  std::string bearer_token_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  // `cluster`: the name this API answers `cluster=` for.
  std::string cluster = "default";
  // `dashboard`: serve the dashboard at /.
  bool dashboard = true;
  // `prometheusUrl`: where time series come from, a PromQL server
  // (VictoriaMetrics or Prometheus); empty: the store's sample history.
  // `prometheusTokenFile`, `prometheusCaFile`, `prometheusTimeout`.
  std::string prometheus_url;
  std::string prometheus_token_file;
  std::string prometheus_ca_file;
  std::chrono::milliseconds prometheus_timeout{10000};
  // `clustersFile`: the cluster directory lens-multicluster publishes
  // (core/cluster_directory.h; a Secret mounted as a file), re-read when it
  // changes; every cluster in it is served for `cluster=<name>`. Empty: only
  // `cluster`.
  std::string clusters_file;

  // InvalidArgument naming the key.
  Status Validate() const;
};

}  // namespace lens

#endif  // LENS_CORE_CONFIG_CLUSTER_H_
