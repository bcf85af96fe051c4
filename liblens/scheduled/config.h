// The `jobs:` section of the configuration file: lens-jobs (the container
// event server and the scheduled jobs). Owned here; registered in
// service/config.cc.
#ifndef LENS_SCHEDULED_CONFIG_H_
#define LENS_SCHEDULED_CONFIG_H_

#include <string>

#include "core/config_section.h"
#include "lens/status.h"
#include "scheduled/jobs.h"

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
  // `agentTokenFile`: the agents' bearer token (read into
  // scheduled.agent_token when the service is built).
  std::string agent_token_file;
  // The jobs themselves, decoded into the jobs' own options (their defaults
  // are those of ScheduledJobsOptions, spelled once, in scheduled/jobs.h):
  // `agents` ("node=url" items, comma-separated, or a YAML list; empty: the
  // pods matching `agentSelector` in `agentNamespace`, at their pod IP and
  // `agentPort` over `agentScheme`), `agentCaFile`, `agentTlsServerName`,
  // `agentInsecureSkipTlsVerify`, `agentTimeout` (per request),
  // `<job>Interval` (how often each job runs; a run may take 90% of it),
  // `storageMounts` ("name=kind:/path" items) and `compatNames` (also the
  // original's metric names).
  ScheduledJobsOptions scheduled;

  // InvalidArgument naming the key. Beyond the jobs' own rules, the file
  // holds intervals and the agents' timeout to at least 100ms.
  Status Validate() const;
};

namespace config {
extern const SectionSpec<JobsOptions> kJobsSection;
}  // namespace config

}  // namespace lens

#endif  // LENS_SCHEDULED_CONFIG_H_
