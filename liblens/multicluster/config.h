// The `multiCluster:` section of the configuration file: lens-multicluster.
// Owned here; registered in service/config.cc.
#ifndef LENS_MULTICLUSTER_CONFIG_H_
#define LENS_MULTICLUSTER_CONFIG_H_

#include <chrono>
#include <string>

#include "core/config_section.h"
#include "lens/status.h"

namespace lens {

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

namespace config {
extern const SectionSpec<MultiClusterOptions> kMultiClusterSection;
}  // namespace config

}  // namespace lens

#endif  // LENS_MULTICLUSTER_CONFIG_H_
