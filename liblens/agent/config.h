// The `nodeExporter:` section of the configuration file: the node agent
// (lens-node-agent, `lens up`). Owned here; registered in service/config.cc.
#ifndef LENS_AGENT_CONFIG_H_
#define LENS_AGENT_CONFIG_H_

#include <chrono>
#include <string>

#include "core/config_section.h"
#include "lens/status.h"

namespace lens {

// `nodeExporter:` section: the node agent (lens-node-agent, `lens up`).
struct NodeExporterOptions {
  // `sysfsRoot`, `procfsRoot`, `devRoot`: where the host's /sys, /proc and /dev
  // are (e.g. /host/sys inside a container).
  std::string sysfs_root = "/sys";
  std::string procfs_root = "/proc";
  std::string dev_root = "/dev";
  // `listenAddress`: host:port of /metrics and the node REST API.
  std::string listen_address = "0.0.0.0:8989";
  // `interval`: sampling period, "5s", "500ms", "1m"; at least 100ms.
  std::chrono::milliseconds interval{5000};
  // `bearerTokenFile`: when set, every route but /healthz needs this token.
  std::string bearer_token_file;
  // `tlsCertFile`, `tlsKeyFile`: serve HTTPS (both or neither).
  std::string tls_cert_file;
  std::string tls_key_file;
  // `amdGpus`, `nvidiaGpus`, `rdma`: collectors to run.
  bool amd_gpus = true;
  bool nvidia_gpus = true;
  bool rdma = true;
  // `rdmaSlowCountersInterval`: how often each RDMA port's error and event
  // counters are read (traffic counters and port state: every cycle); at
  // least `interval`.
  std::chrono::milliseconds rdma_slow_counters_interval{30000};
  // `healthDegradedClearAfter`, `healthUnhealthyClearAfter`: how long a
  // device's degraded (unhealthy) evidence must stay quiet before it counts
  // as healthy again (docs/insights.md, device health); at least a minute.
  std::chrono::milliseconds health_degraded_clear_after{30 * 60 * 1000};
  std::chrono::milliseconds health_unhealthy_clear_after{60 * 60 * 1000};
  // `amdSmiPath`: amd-smi executable run (list + static, 10 s limit each)
  // after each GPU rescan to fill what sysfs lacks; empty: never run.
  std::string amd_smi_path;
  // `kubeletUrl` (empty: no kubelet collector), `kubeletTokenFile`,
  // `kubeletCaFile`, `kubeletInsecureSkipVerify`, and
  // `kubeletClientCertFile` + `kubeletClientKeyFile` (PEM, both or neither:
  // X.509 client authentication, as kubelets with --client-ca-file take).
  std::string kubelet_url;
  std::string kubelet_token_file;
  std::string kubelet_ca_file;
  bool kubelet_insecure_skip_verify = false;
  std::string kubelet_client_cert_file;
  std::string kubelet_client_key_file;
  // `containers`: track containers and their devices (containerd + kubelet
  // pod-resources); when the containerd socket is absent the tracker keeps
  // retrying in the background.
  bool containers = true;
  // `containerdSocket`, `containerdNamespace`, `podResourcesSocket` (empty:
  // not used).
  std::string containerd_socket = "/run/containerd/containerd.sock";
  std::string containerd_namespace = "k8s.io";
  // `containerRuntime`: containerd, docker or auto (containerd unless only
  // Docker's socket exists or cri-dockerd runs; lens/containers.h
  // ResolveContainerRuntime). `dockerSocket`: the Docker Engine API socket.
  std::string container_runtime = "auto";
  std::string docker_socket = "/var/run/docker.sock";
  std::string pod_resources_socket =
      "/var/lib/kubelet/pod-resources/kubelet.sock";
  // `jobsAddress`: gRPC target of lens-jobs ("lens-jobs:50051") to stream
  // container events to; empty: no stream. `jobsCaFile` turns on TLS;
  // `jobsBearerTokenFile` authenticates.
  std::string jobs_address;
  std::string jobs_ca_file;
  std::string jobs_bearer_token_file;

  // InvalidArgument naming the key.
  Status Validate() const;
};

namespace config {
extern const SectionSpec<NodeExporterOptions> kNodeExporterSection;
}  // namespace config

}  // namespace lens

#endif  // LENS_AGENT_CONFIG_H_
