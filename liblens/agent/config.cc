// The `nodeExporter:` section: its keys, decoders and rules.
#include "agent/config.h"

#include "core/config_decode.h"

namespace lens {
namespace config {
namespace {

using N = NodeExporterOptions;
constexpr FieldRule<N> kNodeExporterRules[] = {
    {"sysfsRoot", FieldText<N, &N::sysfs_root>},
    {"procfsRoot", FieldText<N, &N::procfs_root>},
    {"devRoot", FieldText<N, &N::dev_root>},
    {"listenAddress", FieldListen<N, &N::listen_address>},
    {"interval", FieldDuration<N, &N::interval>},
    {"bearerTokenFile", FieldText<N, &N::bearer_token_file>},
    {"tlsCertFile", FieldText<N, &N::tls_cert_file>},
    {"tlsKeyFile", FieldText<N, &N::tls_key_file>},
    {"amdGpus", FieldFlag<N, &N::amd_gpus>},
    {"nvidiaGpus", FieldFlag<N, &N::nvidia_gpus>},
    {"rdma", FieldFlag<N, &N::rdma>},
    {"rdmaSlowCountersInterval",
     FieldDuration<N, &N::rdma_slow_counters_interval>},
    {"healthDegradedClearAfter",
     FieldDuration<N, &N::health_degraded_clear_after>},
    {"healthUnhealthyClearAfter",
     FieldDuration<N, &N::health_unhealthy_clear_after>},
    {"amdSmiPath", FieldText<N, &N::amd_smi_path>},
    {"kubeletUrl", FieldText<N, &N::kubelet_url>},
    {"kubeletTokenFile", FieldText<N, &N::kubelet_token_file>},
    {"kubeletCaFile", FieldText<N, &N::kubelet_ca_file>},
    {"kubeletInsecureSkipVerify",
     FieldFlag<N, &N::kubelet_insecure_skip_verify>},
    {"kubeletClientCertFile", FieldText<N, &N::kubelet_client_cert_file>},
    {"kubeletClientKeyFile", FieldText<N, &N::kubelet_client_key_file>},
    {"containers", FieldFlag<N, &N::containers>},
    {"containerdSocket", FieldText<N, &N::containerd_socket>},
    {"containerdNamespace", FieldText<N, &N::containerd_namespace>},
    {"containerRuntime", FieldText<N, &N::container_runtime>},
    {"dockerSocket", FieldText<N, &N::docker_socket>},
    {"podResourcesSocket", FieldText<N, &N::pod_resources_socket>},
    {"jobsAddress", FieldText<N, &N::jobs_address>},
    {"jobsCaFile", FieldText<N, &N::jobs_ca_file>},
    {"jobsBearerTokenFile", FieldText<N, &N::jobs_bearer_token_file>},
};

}  // namespace

constinit const SectionSpec<NodeExporterOptions> kNodeExporterSection{
    "nodeExporter", kNodeExporterRules};

}  // namespace config

Status NodeExporterOptions::Validate() const {
  if (sysfs_root.empty() || procfs_root.empty() || dev_root.empty()) {
    return InvalidArgumentError(
        "sysfsRoot, procfsRoot and devRoot must not be empty");
  }
  LENS_RETURN_IF_ERROR(config::ValidateListenAddress(listen_address, true)
                           .WithContext("listenAddress"));
  if (interval < std::chrono::milliseconds(100)) {
    return InvalidArgumentError("interval: must be at least 100ms");
  }
  if (rdma_slow_counters_interval < interval) {
    return InvalidArgumentError(
        "rdmaSlowCountersInterval: must be at least interval");
  }
  if (health_degraded_clear_after < std::chrono::minutes(1) ||
      health_unhealthy_clear_after < std::chrono::minutes(1)) {
    return InvalidArgumentError(
        "healthDegradedClearAfter and healthUnhealthyClearAfter: must be at "
        "least 1m");
  }
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return InvalidArgumentError(
        "tlsCertFile and tlsKeyFile must be set together");
  }
  if (!kubelet_url.empty() && kubelet_url.rfind("http://", 0) != 0 &&
      kubelet_url.rfind("https://", 0) != 0) {
    return InvalidArgumentError(
        "kubeletUrl: must start with http:// or https://");
  }
  if (kubelet_client_cert_file.empty() != kubelet_client_key_file.empty()) {
    return InvalidArgumentError(
        "kubeletClientCertFile and kubeletClientKeyFile must be set together");
  }
  if (containers &&
      (containerd_socket.empty() || containerd_namespace.empty())) {
    return InvalidArgumentError(
        "containerdSocket and containerdNamespace must not be empty while "
        "containers is on");
  }
  if (container_runtime != "containerd" && container_runtime != "docker" &&
      container_runtime != "auto") {
    return InvalidArgumentError("containerRuntime: '" + container_runtime +
                                "' is not containerd, docker or auto");
  }
  if (containers && container_runtime != "containerd" &&
      docker_socket.empty()) {
    return InvalidArgumentError(
        "dockerSocket must not be empty while "
        "containers is on with containerRuntime " +
        container_runtime);
  }
  return OkStatus();
}

}  // namespace lens
