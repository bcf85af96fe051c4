// The flags of lens-jobs as config keys (`jobs:`, `database:`); defaults are
// the config's (docs/containers.md).
#ifndef LENS_DAEMONS_JOBS_FLAGS_H_
#define LENS_DAEMONS_JOBS_FLAGS_H_

#include "config_flags.h"

namespace lens::cli {

inline constexpr ConfigFlag kJobsFlags[] = {
    {"--listen-grpc", "jobs.listenGrpc", ConfigFlag::kText,
     "host:port of the container event server (default 0.0.0.0:50051; port "
     "0 picks a free one)"},
    {"--listen-http", "jobs.listenHttp", ConfigFlag::kText,
     "host:port serving /metrics, /healthz, /readyz and /jobs (default "
     "0.0.0.0:8993)"},
    {"--database", "database.url", ConfigFlag::kText,
     "store URL: sqlite:///path.db or postgresql://... (default "
     "sqlite:///var/lib/lens/lens.db; also LENS_STORE_URL)"},
    {"--bearer-token-file", "jobs.bearerTokenFile", ConfigFlag::kText,
     "require this bearer token from node agents and on every HTTP route "
     "but /healthz and /readyz"},
    {"--tls-cert", "jobs.tlsCertFile", ConfigFlag::kText,
     "serve gRPC and HTTP over TLS with this PEM certificate"},
    {"--tls-key", "jobs.tlsKeyFile", ConfigFlag::kText,
     "PEM private key of --tls-cert"},
    {"--max-agent-streams", "jobs.maxAgentStreams", ConfigFlag::kText,
     "node agents streaming at once (default 2048); more are refused"},
    {"--node-tokens-file", "jobs.nodeTokensFile", ConfigFlag::kText,
     "per-node tokens of the event stream, one \"NODE TOKEN\" line each: "
     "a node agent may speak only for its own node"},
    {"--kubeconfig", "jobs.kubeconfig", ConfigFlag::kText,
     "the API server from this kubeconfig file (leader election, node agent "
     "discovery, storage scan); none: no cluster"},
    {"--context", "jobs.context", ConfigFlag::kText,
     "the kubeconfig's context to use (default: its current-context)"},
    {"--in-cluster", "jobs.inCluster", ConfigFlag::kSetTrue,
     "the API server and credentials of the pod's service account"},
    {"--no-leader-election", "jobs.leaderElection", ConfigFlag::kSetFalse,
     "run the jobs without electing a leader (one replica only)"},
    {"--lease-namespace", "jobs.leaseNamespace", ConfigFlag::kText,
     "namespace of the leader Lease lens-jobs (default lens)"},
    {"--identity", "jobs.identity", ConfigFlag::kText,
     "this replica's name in the Lease (default $POD_NAME or the host name, "
     "with the pid)"},
    {"--no-scheduled-jobs", "jobs.scheduledJobs", ConfigFlag::kSetFalse,
     "serve the container event stream only"},
    {"--agents", "jobs.agents", ConfigFlag::kText,
     "node agents as node=url,node=url (default: the pods of "
     "--agent-selector)"},
    {"--agent-selector", "jobs.agentSelector", ConfigFlag::kText,
     "label selector of the node agent pods (default "
     "app.kubernetes.io/name=lens-node-agent)"},
    {"--agent-token-file", "jobs.agentTokenFile", ConfigFlag::kText,
     "bearer token the node agents require"},
    {"--storage-mounts", "jobs.storageMounts", ConfigFlag::kText,
     "mount points the storage scan reports, as name=kind:/path,..."},
    {"--compat-names", "jobs.compatNames", ConfigFlag::kSetTrue,
     "also export the original's metric names (gpu_allocation_rate, ...)"},
};

}  // namespace lens::cli

#endif  // LENS_DAEMONS_JOBS_FLAGS_H_
