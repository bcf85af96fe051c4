// lens-multicluster's options from the config: the `multiCluster:`
// section, the home kubeconfig and the token file read.
#include <algorithm>

#include "lens/kube.h"
#include "service/multicluster_service.h"
#include "service/service_host.h"

namespace lens {

Status MultiClusterServiceOptions::Validate() const {
  if (home.server.empty()) {
    return InvalidArgumentError(
        "multiCluster: no home API server (set kubeconfig or inCluster)");
  }
  if (namespace_name.empty() || clusters_secret.empty() ||
      output_secret.empty() || members.storage_namespace.empty() ||
      members.storage_secret.empty()) {
    return InvalidArgumentError(
        "multiCluster: a namespace or Secret name is empty");
  }
  if (clusters_secret == output_secret) {
    return InvalidArgumentError(
        "multiCluster: outputSecret must differ from clustersSecret");
  }
  if (refresh < std::chrono::milliseconds(50)) {
    return InvalidArgumentError("multiCluster: refresh: at least 50ms");
  }
  if (leader_election && leader.identity.empty()) {
    return InvalidArgumentError(
        "multiCluster: leader election needs an identity");
  }
  LENS_RETURN_IF_ERROR(http.Validate().WithContext("http"));
  return OkStatus();
}

StatusOr<MultiClusterServiceOptions> MultiClusterServiceOptionsFromConfig(
    const Config& config) {
  const MultiClusterOptions& c = config.multi_cluster;
  LENS_RETURN_IF_ERROR(c.Validate().WithContext("multiCluster"));
  MultiClusterServiceOptions o;
  if (c.in_cluster) {
    LENS_ASSIGN_OR_RETURN(o.home, InClusterConnection());
  } else if (!c.kubeconfig.empty()) {
    StatusOr<KubeConnection> home = LoadKubeconfig(c.kubeconfig, c.context);
    if (!home.ok()) return home.status().WithContext("multiCluster.kubeconfig");
    o.home = std::move(*home);
  } else {
    return InvalidArgumentError(
        "multiCluster: no home API server: set multiCluster.kubeconfig "
        "(--kubeconfig) or multiCluster.inCluster (--in-cluster)");
  }
  o.client.request_timeout = c.request_timeout;
  o.client.connect_timeout =
      std::min(c.request_timeout, o.client.connect_timeout);
  o.client.user_agent = "lens-multicluster";
  o.namespace_name = c.namespace_name;
  o.clusters_secret = c.clusters_secret;
  o.output_secret = c.output_secret;
  o.members.storage_namespace = c.storage_namespace;
  o.members.storage_secret = c.storage_secret;
  o.refresh = c.refresh;
  o.leader_election = c.leader_election;
  o.leader = service::ServiceLeaderOptions(c.lease_namespace, c.lease_name,
                                           c.identity, "lens-multicluster");
  LENS_ASSIGN_OR_RETURN(
      o.http, service::ServiceHttpOptions("multiCluster", c.listen_address,
                                          c.bearer_token_file, c.tls_cert_file,
                                          c.tls_key_file));
  // Prometheus and the kubelet's probes: nothing else calls it.
  o.http.threads = 1;
  // One address cannot take every slot from the scraper: a fraction each.
  o.http.max_connections = 256;
  o.http.max_connections_per_peer = 32;
  LENS_RETURN_IF_ERROR(o.Validate());
  return o;
}

}  // namespace lens
