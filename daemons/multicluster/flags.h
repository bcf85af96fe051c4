// The flags of lens-multicluster as config keys (`multiCluster:`); defaults
// are the config's (docs/multicluster.md).
#ifndef LENS_DAEMONS_MULTICLUSTER_FLAGS_H_
#define LENS_DAEMONS_MULTICLUSTER_FLAGS_H_

#include "config_flags.h"

namespace lens::cli {

inline constexpr ConfigFlag kMultiClusterFlags[] = {
    {"--kubeconfig", "multiCluster.kubeconfig", ConfigFlag::kText,
     "the home cluster's API server and credentials from this kubeconfig "
     "file"},
    {"--context", "multiCluster.context", ConfigFlag::kText,
     "the kubeconfig's context to use (default: its current-context)"},
    {"--in-cluster", "multiCluster.inCluster", ConfigFlag::kSetTrue,
     "the home cluster is the one of the pod's service account"},
    {"--namespace", "multiCluster.namespace", ConfigFlag::kText,
     "namespace of the clusters and output Secrets (default lens)"},
    {"--clusters-secret", "multiCluster.clustersSecret", ConfigFlag::kText,
     "the Secret listing the member clusters' kubeconfigs (default "
     "lens-clusters)"},
    {"--output-secret", "multiCluster.outputSecret", ConfigFlag::kText,
     "the Secret the directory is published into, key clusters.yaml "
     "(default lens-clusters-config)"},
    {"--refresh", "multiCluster.refresh", ConfigFlag::kSeconds,
     "seconds between reads of every member (default 30; at least 1)"},
    {"--listen", "multiCluster.listenAddress", ConfigFlag::kText,
     "host:port serving /healthz, /readyz and /metrics (default "
     "0.0.0.0:8996; port 0 picks a free one)"},
    {"--bearer-token-file", "multiCluster.bearerTokenFile", ConfigFlag::kText,
     "require this bearer token on /metrics"},
    {"--tls-cert", "multiCluster.tlsCertFile", ConfigFlag::kText,
     "serve HTTPS with this PEM certificate"},
    {"--tls-key", "multiCluster.tlsKeyFile", ConfigFlag::kText,
     "PEM private key of --tls-cert"},
    {"--no-leader-election", "multiCluster.leaderElection",
     ConfigFlag::kSetFalse,
     "always publish (a single replica; two would overwrite each other)"},
    {"--identity", "multiCluster.identity", ConfigFlag::kText,
     "this replica's name on the Lease (default $POD_NAME or the host "
     "name, plus the pid)"},
};

}  // namespace lens::cli

#endif  // LENS_DAEMONS_MULTICLUSTER_FLAGS_H_
