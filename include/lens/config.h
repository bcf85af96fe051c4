// The product's configuration file: one YAML document parsed once into typed,
// validated option structs, one struct per component section.
//
//   logging:
//     level: info            # debug | info | warn | error
//     format: json           # text | json
//   metrics:
//     compatNames: true      # also export the original platform's metric names
//     listenAddress: ":9400" # empty: serve /metrics on httpPort
//   httpPort: 8989
//
//   nodeExporter:            # lens-node-agent (docs/node-agent.md)
//     interval: 5s
//     kubeletUrl: https://127.0.0.1:10250
//
//   netflow:                 # lens-netflow (docs/netflow.md)
//     policyFile: /etc/lens/netflow-policy.yaml
//
//   jobs:                    # lens-jobs (docs/jobs.md, docs/containers.md)
//     listenGrpc: 0.0.0.0:50051
//   controller:              # lens-controller (docs/controller.md)
//     inCluster: true
//   database:
//     url: sqlite:///var/lib/lens/lens.db
//   tuner:                   # lens-tuner (docs/tuner.md)
//     sysctls:
//       vm.max_map_count: 262144
//     limits:
//       - {item: nofile, value: 131072}
//   multiCluster:            # lens-multicluster (docs/multicluster.md)
//     inCluster: true
//
// Any other section is rejected as an unknown key. To add a section:
// a struct with defaults and `Status Validate() const`, a member in Config, a
// decoder in liblens/core (config_<section>.cc) and its row in config.cc's
// section table; every key of it can then be set from the environment.
//
// Precedence: built-in defaults < file < LENS_* environment variables <
// daemon flags (ConfigLoadOptions::overrides). Every key has a variable:
// "LENS_" plus its path in upper snake case: logging.level ->
// LENS_LOGGING_LEVEL, metrics.compatNames -> LENS_METRICS_COMPAT_NAMES,
// httpPort -> LENS_HTTP_PORT, jobs.listenGrpc -> LENS_JOBS_LISTEN_GRPC; one
// exception, database.url -> LENS_STORE_URL (as `lens db` reads it). Values
// from the environment are named in errors with passwords redacted.
//
// All functions here are thread-safe (they share no state); the structs are
// plain values.
#ifndef LENS_CONFIG_H_
#define LENS_CONFIG_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lens/export.h"
#include "lens/log.h"
#include "lens/status.h"

namespace lens {

// `logging:` section.
struct LENS_EXPORT LoggingOptions {
  LogLevel level = LogLevel::kInfo;
  LogFormat format = LogFormat::kText;

  // Always OK today (both fields are enums checked while parsing); kept for
  // uniformity.
  Status Validate() const;
};

// `metrics:` section.
struct LENS_EXPORT MetricsOptions {
  // `compatNames`: also export series under the original platform's metric
  // names (gpu_utilization, rdma_stat_*, ...) so existing dashboards keep
  // working.
  bool compat_names = false;
  // `listenAddress`: "host:port", ":port" (all interfaces) or "[v6addr]:port"
  // for a separate metrics listener; empty means /metrics is served on the main
  // HTTP port.
  std::string listen_address;

  // InvalidArgument if listen_address is not empty and not host:port with
  // port 1..65535.
  Status Validate() const;
};

// `nodeExporter:` section: the node agent (lens-node-agent, `lens up`).
struct LENS_EXPORT NodeExporterOptions {
  // `sysfsRoot`, `procfsRoot`, `devRoot`: where the host's /sys, /proc and /dev
  // are (e.g. /host/sys inside a container).
  std::string sysfs_root = "/sys";
  std::string procfs_root = "/proc";
  std::string dev_root = "/dev";
  // `listenAddress`: host:port of /metrics and the node REST API.
  std::string listen_address = "0.0.0.0:8989";
  // `interval`: sampling period, "5s", "500ms", "1m"; at least 100ms.
  std::chrono::milliseconds interval{5000};
  // `bearerTokenFile`: when set, every route but /healthz needs this token.
  std::string bearer_token_file;
  // `tlsCertFile`, `tlsKeyFile`: serve HTTPS (both or neither).
  std::string tls_cert_file;
  std::string tls_key_file;
  // `amdGpus`, `nvidiaGpus`, `rdma`: collectors to run.
  bool amd_gpus = true;
  bool nvidia_gpus = true;
  bool rdma = true;
  // `amdSmiPath`: amd-smi executable run (list + static, 10 s limit each)
  // after each GPU rescan to fill what sysfs lacks; empty: never run.
  std::string amd_smi_path;
  // `kubeletUrl` (empty: no kubelet collector), `kubeletTokenFile`,
  // `kubeletCaFile`, `kubeletInsecureSkipVerify`.
  std::string kubelet_url;
  std::string kubelet_token_file;
  std::string kubelet_ca_file;
  bool kubelet_insecure_skip_verify = false;
  // `containers`: track containers and their devices (containerd + kubelet
  // pod-resources); when the containerd socket is absent the tracker keeps
  // retrying in the background.
  bool containers = true;
  // `containerdSocket`, `containerdNamespace`, `podResourcesSocket` (empty:
  // not used).
  std::string containerd_socket = "/run/containerd/containerd.sock";
  std::string containerd_namespace = "k8s.io";
  std::string pod_resources_socket =
      "/var/lib/kubelet/pod-resources/kubelet.sock";
  // `jobsAddress`: gRPC target of lens-jobs ("lens-jobs:50051") to stream
  // container events to; empty: no stream. `jobsCaFile` turns on TLS;
  // `jobsBearerTokenFile` authenticates.
  std::string jobs_address;
  std::string jobs_ca_file;
  std::string jobs_bearer_token_file;

  // InvalidArgument naming the key.
  Status Validate() const;
};

// `netflow:` section: the TCP flow daemon (lens-netflow).
struct LENS_EXPORT NetflowOptions {
  // `listenAddress`: host:port of /metrics, /flows and /healthz.
  std::string listen_address = "0.0.0.0:8990";
  // `interval`: how often the kernel's flow table is drained; >= 100ms.
  std::chrono::milliseconds interval{5000};
  // `policyFile`: endpoint classes (lens/flow_policy.h); empty: the default
  // policy (private ranges, docker's bridge, resolv.conf's DNS servers).
  std::string policy_file;
  // `topRemote`: remote addresses exported by name (0..1000); the rest are
  // "other".
  int top_remote = 20;
  // `maxFlows`: capacity of the in-kernel flow table (1024..4194304).
  int max_flows = 65536;
  // `bpfStatsWindow` of every `bpfStatsPeriod`: when the kernel's host-wide
  // BPF run-time statistics are on to measure the probe's own cost
  // (FlowProbeOptions::kernel_stats_window); window 0: never;
  // window == period: always.
  std::chrono::milliseconds bpf_stats_window{1000};
  std::chrono::milliseconds bpf_stats_period{20000};
  // `procfsRoot`: host /proc (listening sockets, process cgroups).
  std::string procfs_root = "/proc";
  // `bearerTokenFile`, `tlsCertFile`, `tlsKeyFile`: as nodeExporter's.
  std::string bearer_token_file;
  std::string tls_cert_file;
  std::string tls_key_file;

  // InvalidArgument naming the key.
  Status Validate() const;
};

// `jobs:` section: lens-jobs (the container event server and the scheduled
// jobs).
struct LENS_EXPORT JobsOptions {
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
  // `agentInsecureSkipTlsVerify`; `agentTimeout` per request.
  std::string agent_token_file;
  std::string agent_ca_file;
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
struct LENS_EXPORT ControllerConfigOptions {
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
struct LENS_EXPORT SeriesIdentityLabels {
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
struct LENS_EXPORT TelemetryConfigOptions {
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
  uint64_t max_request_bytes = uint64_t{32} << 20;
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
struct LENS_EXPORT ApiConfigOptions {
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
  // (lens/cluster_directory.h; a Secret mounted as a file), re-read when it
  // changes; every cluster in it is served for `cluster=<name>`. Empty: only
  // `cluster`.
  std::string clusters_file;

  // InvalidArgument naming the key.
  Status Validate() const;
};

// `database:` section: the store of the cluster daemons and `lens db`.
struct LENS_EXPORT DatabaseOptions {
  // `url`: sqlite:///path.db or postgresql://user@host:5432/db (a password
  // belongs in the environment: LENS_STORE_URL).
  std::string url = "sqlite:///var/lib/lens/lens.db";

  // InvalidArgument naming the key (never a password).
  Status Validate() const;
};

// One entry of `tuner.limits`: a pam_limits line (limits.conf(5)).
struct LENS_EXPORT TunerLimit {
  enum class Type { kSoft, kHard, kBoth };
  // `domain`: a user, @group, %group, uid range or "*" (everyone).
  std::string domain = "*";
  // `type`: soft | hard | both (written as "-").
  Type type = Type::kBoth;
  // `item`: nofile | memlock | nproc | stack | core.
  std::string item;
  // `value`: a decimal integer (KiB for memlock, stack and core) or
  // "unlimited" (not for nofile).
  std::string value;
};

// "soft", "hard" or "both".
LENS_EXPORT std::string_view TunerLimitTypeName(TunerLimit::Type type);

// `tuner:` section: lens-tuner, declarative kernel and limits tuning
// (docs/tuner.md).
struct LENS_EXPORT TunerOptions {
  // `listenAddress`: host:port of /metrics and /healthz.
  std::string listen_address = "0.0.0.0:8995";
  // `interval`: how often the node is checked (and drift re-applied); >= 1s.
  std::chrono::milliseconds interval{30000};
  // `procRoot`, `etcRoot`: the host's /proc and /etc (e.g. /host/proc in a
  // container).
  std::string proc_root = "/proc";
  std::string etc_root = "/etc";
  // `persist`: also write <etcRoot>/sysctl.d/90-lens.conf so the sysctls
  // survive a reboot.
  bool persist = true;
  // `sysctls`: dotted key -> value; only keys of the known table
  // (docs/tuner.md), each within its range. Values are kept canonical
  // (integers as the kernel prints them, several separated by one space).
  // From a flag or variable: "key=value,key=value".
  std::map<std::string, std::string> sysctls;
  // `limits`: a list of {domain, type, item, value}; from a flag or
  // variable: comma-separated "item=value" or "domain type item value".
  std::vector<TunerLimit> limits;
  // `bearerTokenFile`: required on every route but /healthz.
  // `tlsCertFile`, `tlsKeyFile`: HTTPS.
  std::string bearer_token_file;
  std::string tls_cert_file;
  std::string tls_key_file;

  // InvalidArgument naming the key: "sysctls: unknown key \"vm.max_map_cont\"
  // (did you mean vm.max_map_count?)", "limits: nofile: ...".
  Status Validate() const;
};

// `multiCluster:` section: lens-multicluster, the per-cluster storage
// config of every member cluster gathered into one Secret
// (docs/multicluster.md).
struct LENS_EXPORT MultiClusterOptions {
  // `listenAddress`: host:port of /healthz, /readyz and /metrics.
  std::string listen_address = "0.0.0.0:8996";
  // `kubeconfig`, `context`, `inCluster`: the home cluster (where the
  // Secrets below live), as for `controller:`. Exactly one of the two.
  std::string kubeconfig;
  std::string context;
  bool in_cluster = false;
  // `namespace`: of `clustersSecret` (each data key a member's name, each
  // value its kubeconfig) and `outputSecret` (key clusters.yaml, the
  // directory lens-api reads), in the home cluster; must differ.
  std::string namespace_name = "lens";
  std::string clusters_secret = "lens-clusters";
  std::string output_secret = "lens-clusters-config";
  // `storageSecret` in `storageNamespace`: in each member, its databaseUrl,
  // prometheusUrl and prometheusToken.
  std::string storage_secret = "lens-storage";
  std::string storage_namespace = "lens";
  // `refresh`: how often every member is read (>= 1s); `requestTimeout`:
  // the limit of one request to any API server (>= 100ms).
  std::chrono::milliseconds refresh{30000};
  std::chrono::milliseconds request_timeout{10000};
  // `leaderElection`, `leaseNamespace`, `leaseName`, `identity`: as for
  // `controller:`; only the leader writes the output Secret.
  bool leader_election = true;
  std::string lease_namespace = "lens";
  std::string lease_name = "lens-multicluster";
  std::string identity;
  // `bearerTokenFile`: required on every route but /healthz and /readyz.
  // `tlsCertFile`, `tlsKeyFile`: HTTPS.
  std::string bearer_token_file;
  std::string tls_cert_file;
  std::string tls_key_file;

  // InvalidArgument naming the key.
  Status Validate() const;
};

// The whole configuration file. Plain value; copy freely.
struct LENS_EXPORT Config {
  LoggingOptions logging;
  MetricsOptions metrics;
  NodeExporterOptions node_exporter;
  NetflowOptions netflow;
  JobsOptions jobs;
  ControllerConfigOptions controller;
  TelemetryConfigOptions telemetry;
  ApiConfigOptions api;
  DatabaseOptions database;
  TunerOptions tuner;
  MultiClusterOptions multi_cluster;
  // `httpPort`: the daemon's HTTP port, 1..65535; unset means the daemon's own
  // default.
  std::optional<int> http_port;

  // Validates every section; the first error names its section
  // ("metrics.listenAddress: ...").
  Status Validate() const;
};

// One key's value from the command line: a daemon's flag names the key it
// sets, and the value goes through the same decoder and checks as the file's.
struct ConfigOverride {
  std::string path;    // "nodeExporter.listenAddress" (section.key or key)
  std::string value;   // as it would be written in the file: "0.0.0.0:8989"
  std::string origin;  // how errors name it: "--listen"
};

// Knobs of the loader (tests inject an environment; daemons use the defaults).
struct ConfigLoadOptions {
  // Files larger than this are rejected with ResourceExhausted before parsing.
  uint64_t max_file_bytes = uint64_t{1} << 20;  // 1 MiB
  // Looks up an environment variable; empty function: the process environment
  // (getenv).
  std::function<std::optional<std::string>(const std::string& name)> getenv;
  // Applied after the LENS_* variables, in order (the command line wins).
  // Errors name them: "--interval=0.01: nodeExporter.interval: ...".
  std::vector<ConfigOverride> overrides;
};

// Reads and parses the YAML file at `path`, applies LENS_* environment
// overrides, validates. Errors: NotFound (no such file, message names the
// path), PermissionDenied, ResourceExhausted (file larger than max_file_bytes),
// InvalidArgument for bad content:
// "<path>:<line>:<column>: <key path>: <problem>", e.g.
// "/etc/lens.yaml:3:3: logging.levle: unknown key" or
// "/etc/lens.yaml:7:11: httpPort: expected an integer, got \"eighty\"".
// Values that came from the environment are reported as "LENS_HTTP_PORT=...:
// httpPort: ...".
LENS_EXPORT StatusOr<Config> LoadConfigFile(
    const std::string& path, const ConfigLoadOptions& options = {});

// What every daemon loads: the file at `path` (the defaults when empty), then
// LENS_* variables, then options.overrides (its flags), each value decoded
// and checked once, by the same rules.
LENS_EXPORT StatusOr<Config> LoadConfig(const std::string& path,
                                        const ConfigLoadOptions& options = {});

// As LoadConfigFile, from YAML text already in memory; `source_name` prefixes
// error locations. Empty text gives the defaults (plus environment overrides).
LENS_EXPORT StatusOr<Config> ParseConfig(std::string_view yaml,
                                         std::string_view source_name,
                                         const ConfigLoadOptions& options = {});

}  // namespace lens

#endif  // LENS_CONFIG_H_
