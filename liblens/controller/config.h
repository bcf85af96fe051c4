// The `controller:` section of the configuration file: lens-controller.
// Owned here; registered in service/config.cc.
#ifndef LENS_CONTROLLER_CONFIG_H_
#define LENS_CONTROLLER_CONFIG_H_

#include <chrono>
#include <string>

#include "core/config_section.h"
#include "lens/status.h"

namespace lens {

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

namespace config {
extern const SectionSpec<ControllerConfigOptions> kControllerSection;
}  // namespace config

}  // namespace lens

#endif  // LENS_CONTROLLER_CONFIG_H_
