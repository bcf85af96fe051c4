// The `nodeExporter:` section.
#include "core/config_node_exporter.h"

#include <charconv>

#include "core/config.h"

namespace lens::config {
namespace {

template <std::string NodeExporterOptions::*field>
Status DecodeString(const Ctx& ctx, const YAML::Node& v,
                    const std::string& path, NodeExporterOptions* out) {
  LENS_ASSIGN_OR_RETURN(out->*field, Scalar(ctx, v, path, "a string"));
  return OkStatus();
}

template <bool NodeExporterOptions::*field>
Status DecodeFlag(const Ctx& ctx, const YAML::Node& v, const std::string& path,
                  NodeExporterOptions* out) {
  LENS_ASSIGN_OR_RETURN(out->*field, DecodeBool(ctx, v, path));
  return OkStatus();
}

Status DecodeInterval(const Ctx& ctx, const YAML::Node& v,
                      const std::string& path, NodeExporterOptions* out) {
  LENS_ASSIGN_OR_RETURN(std::string text, Scalar(ctx, v, path, "a duration"));
  StatusOr<std::chrono::milliseconds> d = ParseDuration(text);
  if (!d.ok()) return ctx.Error(v, path, d.status().message());
  out->interval = *d;
  return OkStatus();
}

template <std::chrono::milliseconds NodeExporterOptions::*field>
Status DecodeDuration(const Ctx& ctx, const YAML::Node& v,
                      const std::string& path, NodeExporterOptions* out) {
  LENS_ASSIGN_OR_RETURN(std::string text, Scalar(ctx, v, path, "a duration"));
  StatusOr<std::chrono::milliseconds> d = ParseDuration(text);
  if (!d.ok()) return ctx.Error(v, path, d.status().message());
  out->*field = *d;
  return OkStatus();
}

Status DecodeListen(const Ctx& ctx, const YAML::Node& v,
                    const std::string& path, NodeExporterOptions* out) {
  LENS_ASSIGN_OR_RETURN(out->listen_address, Scalar(ctx, v, path, "a string"));
  Status s =
      ValidateListenAddress(out->listen_address, /*allow_any_port=*/true);
  return s.ok() ? s : ctx.Error(v, path, s.message());
}

using N = NodeExporterOptions;
constexpr FieldRule<N> kNodeExporterRules[] = {
    {"sysfsRoot", DecodeString<&N::sysfs_root>},
    {"procfsRoot", DecodeString<&N::procfs_root>},
    {"devRoot", DecodeString<&N::dev_root>},
    {"listenAddress", DecodeListen},
    {"interval", DecodeInterval},
    {"bearerTokenFile", DecodeString<&N::bearer_token_file>},
    {"tlsCertFile", DecodeString<&N::tls_cert_file>},
    {"tlsKeyFile", DecodeString<&N::tls_key_file>},
    {"amdGpus", DecodeFlag<&N::amd_gpus>},
    {"nvidiaGpus", DecodeFlag<&N::nvidia_gpus>},
    {"rdma", DecodeFlag<&N::rdma>},
    {"rdmaSlowCountersInterval",
     DecodeDuration<&N::rdma_slow_counters_interval>},
    {"healthDegradedClearAfter",
     DecodeDuration<&N::health_degraded_clear_after>},
    {"healthUnhealthyClearAfter",
     DecodeDuration<&N::health_unhealthy_clear_after>},
    {"amdSmiPath", DecodeString<&N::amd_smi_path>},
    {"kubeletUrl", DecodeString<&N::kubelet_url>},
    {"kubeletTokenFile", DecodeString<&N::kubelet_token_file>},
    {"kubeletCaFile", DecodeString<&N::kubelet_ca_file>},
    {"kubeletInsecureSkipVerify", DecodeFlag<&N::kubelet_insecure_skip_verify>},
    {"kubeletClientCertFile", DecodeString<&N::kubelet_client_cert_file>},
    {"kubeletClientKeyFile", DecodeString<&N::kubelet_client_key_file>},
    {"containers", DecodeFlag<&N::containers>},
    {"containerdSocket", DecodeString<&N::containerd_socket>},
    {"containerdNamespace", DecodeString<&N::containerd_namespace>},
    {"containerRuntime", DecodeString<&N::container_runtime>},
    {"dockerSocket", DecodeString<&N::docker_socket>},
    {"podResourcesSocket", DecodeString<&N::pod_resources_socket>},
    {"jobsAddress", DecodeString<&N::jobs_address>},
    {"jobsCaFile", DecodeString<&N::jobs_ca_file>},
    {"jobsBearerTokenFile", DecodeString<&N::jobs_bearer_token_file>},
};

}  // namespace

Status DecodeNodeExporter(const Ctx& ctx, const YAML::Node& node,
                          const std::string& path, NodeExporterOptions* out) {
  return DecodeMap<NodeExporterOptions>(ctx, node, path, kNodeExporterRules,
                                        out);
}

std::vector<std::string_view> NodeExporterKeys() {
  return KeysOf(kNodeExporterRules);
}

}  // namespace lens::config

namespace lens {

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
