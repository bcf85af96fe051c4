// The `multiCluster:` section: its keys, decoders, each key's rule checked
// where it is decoded so errors point at the file line, and
// MultiClusterOptions::Validate for the rules across keys.
#include "multicluster/config.h"

#include "core/config_decode.h"

namespace lens {
namespace {

using M = MultiClusterOptions;

Status CheckName(std::string_view key, const std::string& value, bool label) {
  if (config::IsDnsName(value, label ? 63 : 253, !label)) return OkStatus();
  return InvalidArgumentError(
      std::string(key) + ": \"" + value + "\" is not a " +
      (label ? "namespace name (a DNS label)" : "Kubernetes object name"));
}

}  // namespace

namespace config {
namespace {

constexpr FieldRule<M> kMultiClusterRules[] = {
    {"listenAddress", FieldChecked<M, FieldText<M, &M::listen_address>>},
    {"kubeconfig", FieldChecked<M, FieldText<M, &M::kubeconfig>>},
    {"context", FieldText<M, &M::context>},
    {"inCluster", FieldFlag<M, &M::in_cluster>},
    {"namespace", FieldChecked<M, FieldText<M, &M::namespace_name>>},
    {"clustersSecret", FieldChecked<M, FieldText<M, &M::clusters_secret>>},
    {"storageSecret", FieldChecked<M, FieldText<M, &M::storage_secret>>},
    {"storageNamespace", FieldChecked<M, FieldText<M, &M::storage_namespace>>},
    {"outputSecret", FieldChecked<M, FieldText<M, &M::output_secret>>},
    {"refresh", FieldChecked<M, FieldDuration<M, &M::refresh>>},
    {"requestTimeout", FieldChecked<M, FieldDuration<M, &M::request_timeout>>},
    {"leaderElection", FieldFlag<M, &M::leader_election>},
    {"leaseNamespace", FieldChecked<M, FieldText<M, &M::lease_namespace>>},
    {"leaseName", FieldChecked<M, FieldText<M, &M::lease_name>>},
    {"identity", FieldText<M, &M::identity>},
    {"bearerTokenFile", FieldText<M, &M::bearer_token_file>},
    {"tlsCertFile", FieldText<M, &M::tls_cert_file>},
    {"tlsKeyFile", FieldText<M, &M::tls_key_file>},
};

}  // namespace

constinit const SectionSpec<MultiClusterOptions> kMultiClusterSection{
    "multiCluster", kMultiClusterRules};

}  // namespace config

Status MultiClusterOptions::Validate() const {
  LENS_RETURN_IF_ERROR(config::ValidateListenAddress(listen_address, true)
                           .WithContext("listenAddress"));
  if (!kubeconfig.empty() && in_cluster) {
    return InvalidArgumentError(
        "kubeconfig: set either kubeconfig or inCluster, not both");
  }
  LENS_RETURN_IF_ERROR(CheckName("namespace", namespace_name, true));
  LENS_RETURN_IF_ERROR(CheckName("clustersSecret", clusters_secret, false));
  LENS_RETURN_IF_ERROR(CheckName("storageSecret", storage_secret, false));
  LENS_RETURN_IF_ERROR(CheckName("storageNamespace", storage_namespace, true));
  LENS_RETURN_IF_ERROR(CheckName("outputSecret", output_secret, false));
  // Publishing into the Secret it reads would replace the kubeconfigs.
  if (output_secret == clusters_secret) {
    return InvalidArgumentError(
        "outputSecret: must differ from clustersSecret (\"" + clusters_secret +
        "\")");
  }
  if (refresh < std::chrono::seconds(1)) {
    return InvalidArgumentError("refresh: must be at least 1s");
  }
  if (request_timeout < std::chrono::milliseconds(100)) {
    return InvalidArgumentError("requestTimeout: must be at least 100ms");
  }
  LENS_RETURN_IF_ERROR(CheckName("leaseNamespace", lease_namespace, true));
  LENS_RETURN_IF_ERROR(CheckName("leaseName", lease_name, false));
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return InvalidArgumentError(
        "tlsCertFile and tlsKeyFile must be set together");
  }
  return OkStatus();
}

}  // namespace lens
