// The `jobs:` section of the configuration file: lens-jobs (the container
// event server and the scheduled jobs). Owned here; registered in
// service/config.cc.
#ifndef LENS_SCHEDULED_CONFIG_H_
#define LENS_SCHEDULED_CONFIG_H_

#include <array>
#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/config_section.h"
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

namespace config {
extern const SectionSpec<JobsOptions> kJobsSection;
}  // namespace config

}  // namespace lens

#endif  // LENS_SCHEDULED_CONFIG_H_
