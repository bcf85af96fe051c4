// NodeServiceOptionsFromConfig: the config's sections -> the parts' options.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "lens/flow_policy.h"
#include "service/node_service.h"

namespace lens {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

// A served port: listen address, TLS and the bearer token (read here, so a
// missing token file fails at start, naming `token_key`).
StatusOr<HttpServerOptions> Http(const std::string& listen,
                                 const std::string& tls_cert,
                                 const std::string& tls_key,
                                 const std::string& token_file,
                                 const std::string& token_key) {
  HttpServerOptions h;
  h.listen = listen;
  h.tls_cert_file = tls_cert;
  h.tls_key_file = tls_key;
  if (!token_file.empty()) {
    LENS_ASSIGN_OR_RETURN(h.bearer_token,
                          ReadBearerTokenFile(token_file, token_key));
  }
  LENS_RETURN_IF_ERROR(h.Validate());
  return h;
}

StatusOr<NodeAgentOptions> AgentOptions(const Config& config) {
  const NodeExporterOptions& ne = config.node_exporter;
  NodeAgentOptions a;
  a.node_ip = Env("NODE_IP");
  a.interval = ne.interval;
  a.compat_names = config.metrics.compat_names;
  a.amd_gpus = ne.amd_gpus;
  a.nvidia_gpus = ne.nvidia_gpus;
  a.rdma = ne.rdma;
  a.rdma_slow_counters_interval = ne.rdma_slow_counters_interval;
  a.amd_smi_path = ne.amd_smi_path;
  a.kubelet.url = ne.kubelet_url;
  a.kubelet.token_file = ne.kubelet_token_file;
  a.kubelet.ca_file = ne.kubelet_ca_file;
  a.kubelet.insecure_skip_verify = ne.kubelet_insecure_skip_verify;
  a.kubelet.client_cert_file = ne.kubelet_client_cert_file;
  a.kubelet.client_key_file = ne.kubelet_client_key_file;
  return a;
}

StatusOr<NodeFlowOptions> FlowOptions(const Config& config) {
  const NetflowOptions& n = config.netflow;
  NodeFlowOptions o;
  if (!n.policy_file.empty()) {
    StatusOr<FlowPolicy> p = LoadFlowPolicy(n.policy_file);
    if (!p.ok()) {  // a configuration error, whatever the cause
      return InvalidArgumentError("netflow.policyFile: " +
                                  p.status().message());
    }
    o.monitor.policy = std::move(*p);
  }
  o.probe.max_flows = static_cast<uint32_t>(n.max_flows);
  o.probe.kernel_stats = n.bpf_stats_window.count() > 0;
  o.probe.kernel_stats_window = n.bpf_stats_window;
  o.probe.kernel_stats_period = n.bpf_stats_period;
  o.monitor.drain_interval = n.interval;
  o.monitor.top_remote = static_cast<size_t>(n.top_remote);
  o.monitor.compat_metrics = config.metrics.compat_names;
  o.monitor.proc_root = n.procfs_root;
  LENS_ASSIGN_OR_RETURN(o.http,
                        Http(n.listen_address, n.tls_cert_file, n.tls_key_file,
                             n.bearer_token_file, "netflow.bearerTokenFile"));
  return o;
}

// A host root the agent reads must exist: a typo would otherwise look like
// a node without GPUs.
Status CheckRoot(const std::string& path, const char* key) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return InvalidArgumentError(
        std::string(key) + ": " + path + " is not a directory (the host's " +
        (std::string(key).find("sysfs") != std::string::npos ? "/sys"
                                                             : "/proc") +
        "; in a container, mount it and point here)");
  }
  return OkStatus();
}

}  // namespace

StatusOr<NodeServiceOptions> NodeServiceOptionsFromConfig(const Config& in,
                                                          unsigned parts) {
  LENS_RETURN_IF_ERROR(in.Validate());
  Config config = in;
  if (parts & kNodeOnOneMachine) {
    if (config.netflow.bearer_token_file.empty()) {
      config.netflow.bearer_token_file = config.node_exporter.bearer_token_file;
    }
    // On by default only where a runtime the config allows is there.
    const NodeExporterOptions& n = config.node_exporter;
    struct stat st;
    const bool containerd = n.container_runtime != "docker" &&
                            ::stat(n.containerd_socket.c_str(), &st) == 0;
    const bool docker = n.container_runtime != "containerd" &&
                        ::stat(n.docker_socket.c_str(), &st) == 0;
    if (!containerd && !docker) config.node_exporter.containers = false;
  }
  const NodeExporterOptions& ne = config.node_exporter;
  NodeServiceOptions out;
  out.node_name = Env("NODE_NAME");
  if (out.node_name.empty()) out.node_name = HostName();
  out.roots = HostRoots{ne.sysfs_root, ne.procfs_root, ne.dev_root};
  // lens-netflow names the host's /proc once (netflow.procfsRoot, its
  // --procfs-root): its tracker reads process start times there too.
  if (!(parts & kNodeAgent) && (parts & kNodeFlows))
    out.roots.procfs = config.netflow.procfs_root;
  if (parts & kNodeAgent) {
    LENS_RETURN_IF_ERROR(CheckRoot(ne.sysfs_root, "nodeExporter.sysfsRoot"));
    LENS_RETURN_IF_ERROR(CheckRoot(ne.procfs_root, "nodeExporter.procfsRoot"));
    LENS_ASSIGN_OR_RETURN(out.agent, AgentOptions(config));
    out.health.degraded_clear_after =
        std::chrono::duration_cast<std::chrono::seconds>(
            ne.health_degraded_clear_after);
    out.health.unhealthy_clear_after =
        std::chrono::duration_cast<std::chrono::seconds>(
            ne.health_unhealthy_clear_after);
    LENS_ASSIGN_OR_RETURN(
        out.agent_http,
        Http(ne.listen_address, ne.tls_cert_file, ne.tls_key_file,
             ne.bearer_token_file, "nodeExporter.bearerTokenFile"));
  }
  if ((parts & kNodeContainers) && ne.containers) {
    ContainerTrackerOptions& t = out.containers.emplace();
    t.containerd_socket = ne.containerd_socket;
    t.containerd_namespace = ne.containerd_namespace;
    auto runtime = ParseContainerRuntime(ne.container_runtime);
    if (!runtime.ok()) {
      return runtime.status().WithContext("nodeExporter.containerRuntime");
    }
    t.runtime = *runtime;
    t.docker_socket = ne.docker_socket;
    // Devices are resolved against the agent's inventory: without the agent
    // the kubelet's device list has nothing to add.
    t.pod_resources_socket = out.agent ? ne.pod_resources_socket : "";
    if (out.agent && !ne.jobs_address.empty()) {
      ContainerEventSenderOptions& e = out.events.emplace();
      e.target = ne.jobs_address;
      e.tls_ca_file = ne.jobs_ca_file;
      if (!ne.jobs_bearer_token_file.empty()) {
        LENS_ASSIGN_OR_RETURN(
            e.bearer_token,
            ReadBearerTokenFile(ne.jobs_bearer_token_file,
                                "nodeExporter.jobsBearerTokenFile"));
      }
    }
  }
  if (parts & kNodeFlows) {
    LENS_ASSIGN_OR_RETURN(out.flows, FlowOptions(config));
    if (parts & kNodeOnOneMachine) out.flows->required = false;
  }
  LENS_RETURN_IF_ERROR(out.Validate());
  return out;
}

}  // namespace lens
