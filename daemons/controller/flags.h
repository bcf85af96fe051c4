// The flags of lens-controller as config keys (`controller:`, `database:`);
// defaults are the config's (docs/controller.md).
#ifndef LENS_DAEMONS_CONTROLLER_FLAGS_H_
#define LENS_DAEMONS_CONTROLLER_FLAGS_H_

#include "config_flags.h"

namespace lens::cli {

inline constexpr ConfigFlag kControllerFlags[] = {
    {"--kubeconfig", "controller.kubeconfig", ConfigFlag::kText,
     "the API server and credentials from this kubeconfig file"},
    {"--context", "controller.context", ConfigFlag::kText,
     "the kubeconfig's context to use (default: its current-context)"},
    {"--in-cluster", "controller.inCluster", ConfigFlag::kSetTrue,
     "the API server and credentials of the pod's service account"},
    {"--listen", "controller.listenHttp", ConfigFlag::kText,
     "host:port serving /healthz, /readyz and /metrics (default "
     "0.0.0.0:8992)"},
    {"--database", "database.url", ConfigFlag::kText,
     "store URL: sqlite:///path.db or postgresql://... (default "
     "sqlite:///var/lib/lens/lens.db; also LENS_STORE_URL)"},
    {"--bearer-token-file", "controller.bearerTokenFile", ConfigFlag::kText,
     "require this bearer token on /metrics"},
    {"--tls-cert", "controller.tlsCertFile", ConfigFlag::kText,
     "serve HTTPS with this PEM certificate"},
    {"--tls-key", "controller.tlsKeyFile", ConfigFlag::kText,
     "PEM private key of --tls-cert"},
    {"--gpu-resources", "controller.gpuResources", ConfigFlag::kText,
     "comma-separated extended resources that count as GPUs (default "
     "amd.com/gpu,nvidia.com/gpu,nvidia.com/mig-*)"},
    {"--no-leader-election", "controller.leaderElection", ConfigFlag::kSetFalse,
     "write without electing a leader (one replica only)"},
    {"--lease-namespace", "controller.leaseNamespace", ConfigFlag::kText,
     "namespace of the leader Lease (default lens)"},
    {"--identity", "controller.identity", ConfigFlag::kText,
     "this replica's name in the Lease (default $POD_NAME or the host name, "
     "with the pid)"},
};

}  // namespace lens::cli

#endif  // LENS_DAEMONS_CONTROLLER_FLAGS_H_
