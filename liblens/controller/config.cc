// The `controller:` section (lens-controller): its keys, decoders and rules.
#include "controller/config.h"

#include "core/config_decode.h"

namespace lens {
namespace config {
namespace {

template <std::string ControllerConfigOptions::*field>
Status DecodeChecked(const Ctx& ctx, const YAML::Node& v,
                     const std::string& path, ControllerConfigOptions* out) {
  LENS_ASSIGN_OR_RETURN(out->*field, Scalar(ctx, v, path, "a string"));
  // The whole struct's rule for this key, located at the value.
  Status s = out->Validate();
  if (s.ok() || s.message().rfind(path.substr(path.rfind('.') + 1), 0) != 0) {
    return OkStatus();
  }
  return ctx.Error(v, path, s.message().substr(s.message().find(':') + 2));
}

constexpr FieldRule<ControllerConfigOptions> kControllerRules[] = {
    {"kubeconfig",
     FieldText<ControllerConfigOptions, &ControllerConfigOptions::kubeconfig>},
    {"context",
     FieldText<ControllerConfigOptions, &ControllerConfigOptions::context>},
    {"inCluster",
     FieldFlag<ControllerConfigOptions, &ControllerConfigOptions::in_cluster>},
    {"listenHttp", DecodeChecked<&ControllerConfigOptions::listen_http>},
    {"bearerTokenFile", FieldText<ControllerConfigOptions,
                                  &ControllerConfigOptions::bearer_token_file>},
    {"tlsCertFile", FieldText<ControllerConfigOptions,
                              &ControllerConfigOptions::tls_cert_file>},
    {"tlsKeyFile", FieldText<ControllerConfigOptions,
                             &ControllerConfigOptions::tls_key_file>},
    {"gpuResources", DecodeChecked<&ControllerConfigOptions::gpu_resources>},
    {"leaderElection", FieldFlag<ControllerConfigOptions,
                                 &ControllerConfigOptions::leader_election>},
    {"leaseNamespace",
     DecodeChecked<&ControllerConfigOptions::lease_namespace>},
    {"leaseName", DecodeChecked<&ControllerConfigOptions::lease_name>},
    {"identity",
     FieldText<ControllerConfigOptions, &ControllerConfigOptions::identity>},
};

}  // namespace

constinit const SectionSpec<ControllerConfigOptions> kControllerSection{
    "controller", kControllerRules};

}  // namespace config

Status ControllerConfigOptions::Validate() const {
  LENS_RETURN_IF_ERROR(config::ValidateListenAddress(listen_http, true)
                           .WithContext("listenHttp"));
  if (!kubeconfig.empty() && in_cluster) {
    return InvalidArgumentError(
        "kubeconfig: set either kubeconfig or inCluster, not both");
  }
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return InvalidArgumentError(
        "tlsCertFile and tlsKeyFile must be set together");
  }
  if (gpu_resources.empty()) {
    return InvalidArgumentError(
        "gpuResources: is empty (e.g. amd.com/gpu,nvidia.com/gpu)");
  }
  size_t start = 0;
  while (start <= gpu_resources.size()) {
    size_t comma = gpu_resources.find(',', start);
    if (comma == std::string::npos) comma = gpu_resources.size();
    const std::string_view item =
        std::string_view(gpu_resources).substr(start, comma - start);
    if (item.empty() || item.find(' ') != std::string_view::npos ||
        item.find('*') < item.size() - 1) {
      return InvalidArgumentError(
          "gpuResources: \"" + std::string(item) +
          "\" is not a resource name (domain/name, '*' only at the end)");
    }
    start = comma + 1;
  }
  if (!config::IsDnsName(lease_namespace, 63, false)) {
    return InvalidArgumentError("leaseNamespace: \"" + lease_namespace +
                                "\" is not a namespace name");
  }
  if (!config::IsDnsName(lease_name, 253, true)) {
    return InvalidArgumentError("leaseName: \"" + lease_name +
                                "\" is not a Lease name");
  }
  return OkStatus();
}

}  // namespace lens
