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
#ifndef LENS_CORE_CONFIG_H_
#define LENS_CORE_CONFIG_H_

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

#include "core/config_cluster.h"
#include "lens/log.h"
#include "lens/status.h"

namespace lens {

// `logging:` section.
struct LoggingOptions {
  LogLevel level = LogLevel::kInfo;
  LogFormat format = LogFormat::kText;

  // Always OK today (both fields are enums checked while parsing); kept for
  // uniformity.
  Status Validate() const;
};

// `metrics:` section.
struct MetricsOptions {
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
struct NodeExporterOptions {
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
  // `rdmaSlowCountersInterval`: how often each RDMA port's error and event
  // counters are read (traffic counters and port state: every cycle); at
  // least `interval`.
  std::chrono::milliseconds rdma_slow_counters_interval{30000};
  // `healthDegradedClearAfter`, `healthUnhealthyClearAfter`: how long a
  // device's degraded (unhealthy) evidence must stay quiet before it counts
  // as healthy again (docs/insights.md, device health); at least a minute.
  std::chrono::milliseconds health_degraded_clear_after{30 * 60 * 1000};
  std::chrono::milliseconds health_unhealthy_clear_after{60 * 60 * 1000};
  // `amdSmiPath`: amd-smi executable run (list + static, 10 s limit each)
  // after each GPU rescan to fill what sysfs lacks; empty: never run.
  std::string amd_smi_path;
  // `kubeletUrl` (empty: no kubelet collector), `kubeletTokenFile`,
  // `kubeletCaFile`, `kubeletInsecureSkipVerify`, and
  // `kubeletClientCertFile` + `kubeletClientKeyFile` (PEM, both or neither:
  // X.509 client authentication, as kubelets with --client-ca-file take).
  std::string kubelet_url;
  std::string kubelet_token_file;
  std::string kubelet_ca_file;
  bool kubelet_insecure_skip_verify = false;
  std::string kubelet_client_cert_file;
  std::string kubelet_client_key_file;
  // `containers`: track containers and their devices (containerd + kubelet
  // pod-resources); when the containerd socket is absent the tracker keeps
  // retrying in the background.
  bool containers = true;
  // `containerdSocket`, `containerdNamespace`, `podResourcesSocket` (empty:
  // not used).
  std::string containerd_socket = "/run/containerd/containerd.sock";
  std::string containerd_namespace = "k8s.io";
  // `containerRuntime`: containerd, docker or auto (containerd unless only
  // Docker's socket exists or cri-dockerd runs; lens/containers.h
  // ResolveContainerRuntime). `dockerSocket`: the Docker Engine API socket.
  std::string container_runtime = "auto";
  std::string docker_socket = "/var/run/docker.sock";
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
struct NetflowOptions {
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

// `database:` section: the store of the cluster daemons and `lens db`.
struct DatabaseOptions {
  // `url`: sqlite:///path.db or postgresql://user@host:5432/db (a password
  // belongs in the environment: LENS_STORE_URL).
  std::string url = "sqlite:///var/lib/lens/lens.db";

  // InvalidArgument naming the key (never a password).
  Status Validate() const;
};

// One entry of `tuner.limits`: a pam_limits line (limits.conf(5)).
struct TunerLimit {
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
std::string_view TunerLimitTypeName(TunerLimit::Type type);

// `tuner:` section: lens-tuner, declarative kernel and limits tuning
// (docs/tuner.md).
struct TunerOptions {
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
struct MultiClusterOptions {
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
struct Config {
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
StatusOr<Config> LoadConfigFile(const std::string& path,
                                const ConfigLoadOptions& options = {});

// What every daemon loads: the file at `path` (the defaults when empty), then
// LENS_* variables, then options.overrides (its flags), each value decoded
// and checked once, by the same rules.
StatusOr<Config> LoadConfig(const std::string& path,
                            const ConfigLoadOptions& options = {});

// As LoadConfigFile, from YAML text already in memory; `source_name` prefixes
// error locations. Empty text gives the defaults (plus environment overrides).
StatusOr<Config> ParseConfig(std::string_view yaml,
                             std::string_view source_name,
                             const ConfigLoadOptions& options = {});

}  // namespace lens

#endif  // LENS_CORE_CONFIG_H_
