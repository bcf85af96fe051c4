// Flags of the node agent, shared by lens-node-agent and `lens up`: each flag
// overrides one key of the config file's nodeExporter section.
#ifndef LENS_DAEMONS_NODE_AGENT_FLAGS_H_
#define LENS_DAEMONS_NODE_AGENT_FLAGS_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "lens/config.h"

namespace lens::cli {

struct NodeAgentFlags {
  std::string config_file;
  std::optional<std::string> sysfs_root, procfs_root, dev_root, listen,
      bearer_token_file, tls_cert, tls_key, amd_smi, kubelet_url,
      kubelet_token_file, kubelet_ca_file, log_level, containerd_socket,
      containerd_namespace, pod_resources_socket, jobs_address, jobs_ca_file,
      jobs_token_file;
  std::optional<double> interval_seconds;
  bool compat_names = false;
  bool kubelet_insecure = false;
  bool no_nvml = false;
  bool no_containers = false;

  void Register(CLI::App& app) {
    app.add_option("--config", config_file,
                   "YAML config file (nodeExporter section)")
        ->check(CLI::ExistingFile);
    app.add_option("--sysfs-root", sysfs_root, "host /sys (default /sys)");
    app.add_option("--procfs-root", procfs_root, "host /proc (default /proc)");
    app.add_option("--dev-root", dev_root, "host /dev (default /dev)");
    app.add_option("--listen", listen,
                   "host:port to serve on (default 0.0.0.0:8989)");
    app.add_option("--interval", interval_seconds,
                   "sampling interval in seconds (default 5)")
        ->check(CLI::Range(0.1, 3600.0));
    app.add_option("--bearer-token-file", bearer_token_file,
                   "require this bearer token on every route but /healthz");
    app.add_option("--tls-cert", tls_cert,
                   "serve HTTPS with this PEM certificate");
    app.add_option("--tls-key", tls_key, "PEM private key of --tls-cert");
    app.add_flag("--compat-names", compat_names,
                 "also export the original platform's metric names "
                 "(gpu_utilization, ...)");
    app.add_option("--kubelet-url", kubelet_url,
                   "kubelet for ephemeral storage and GPU allocation, e.g. "
                   "https://127.0.0.1:10250");
    app.add_option("--kubelet-token-file", kubelet_token_file,
                   "bearer token for the kubelet");
    app.add_option("--kubelet-ca-file", kubelet_ca_file,
                   "CA bundle of the kubelet's certificate");
    app.add_flag("--kubelet-insecure-skip-verify", kubelet_insecure,
                 "do not verify the kubelet's certificate");
    app.add_flag("--no-nvml", no_nvml, "do not load NVML");
    app.add_option("--amd-smi", amd_smi,
                   "run this amd-smi (list, static) after each GPU rescan to "
                   "fill what sysfs "
                   "lacks; never per cycle");
    app.add_option("--log-level", log_level, "debug | info | warn | error");
    app.add_flag("--no-containers", no_containers,
                 "do not track containers (containerd, pod-resources)");
    app.add_option(
        "--containerd-socket", containerd_socket,
        "containerd's socket (default /run/containerd/containerd.sock)");
    app.add_option("--containerd-namespace", containerd_namespace,
                   "containerd namespace of the kubelet's containers "
                   "(default k8s.io)");
    app.add_option("--pod-resources-socket", pod_resources_socket,
                   "kubelet pod-resources socket (default "
                   "/var/lib/kubelet/pod-resources/kubelet.sock; empty: off)");
    app.add_option("--jobs-address", jobs_address,
                   "stream container events to lens-jobs at host:port");
    app.add_option("--jobs-ca-file", jobs_ca_file,
                   "CA of lens-jobs's certificate (turns on TLS)");
    app.add_option("--jobs-token-file", jobs_token_file,
                   "bearer token for lens-jobs");
  }

  // Loads the config file (or the defaults plus LENS_* variables) and applies
  // the flags on top.
  StatusOr<Config> Apply() const {
    StatusOr<Config> loaded = config_file.empty() ? ParseConfig("", "defaults")
                                                  : LoadConfigFile(config_file);
    if (!loaded.ok()) return loaded.status();
    Config c = std::move(*loaded);
    NodeExporterOptions& n = c.node_exporter;
    if (sysfs_root) n.sysfs_root = *sysfs_root;
    if (procfs_root) n.procfs_root = *procfs_root;
    if (dev_root) n.dev_root = *dev_root;
    if (listen) n.listen_address = *listen;
    if (interval_seconds) {
      n.interval = std::chrono::milliseconds(
          static_cast<int64_t>(*interval_seconds * 1000));
    }
    if (bearer_token_file) n.bearer_token_file = *bearer_token_file;
    if (tls_cert) n.tls_cert_file = *tls_cert;
    if (tls_key) n.tls_key_file = *tls_key;
    if (compat_names) c.metrics.compat_names = true;
    if (kubelet_url) n.kubelet_url = *kubelet_url;
    if (kubelet_token_file) n.kubelet_token_file = *kubelet_token_file;
    if (kubelet_ca_file) n.kubelet_ca_file = *kubelet_ca_file;
    if (kubelet_insecure) n.kubelet_insecure_skip_verify = true;
    if (no_nvml) n.nvidia_gpus = false;
    if (amd_smi) n.amd_smi_path = *amd_smi;
    if (no_containers) n.containers = false;
    if (containerd_socket) n.containerd_socket = *containerd_socket;
    if (containerd_namespace) n.containerd_namespace = *containerd_namespace;
    if (pod_resources_socket) n.pod_resources_socket = *pod_resources_socket;
    if (jobs_address) n.jobs_address = *jobs_address;
    if (jobs_ca_file) n.jobs_ca_file = *jobs_ca_file;
    if (jobs_token_file) n.jobs_bearer_token_file = *jobs_token_file;
    if (log_level) {
      StatusOr<LogLevel> level = ParseLogLevel(*log_level);
      if (!level.ok()) return level.status().WithContext("--log-level");
      c.logging.level = *level;
    }
    LENS_RETURN_IF_ERROR(c.Validate());
    return c;
  }
};

}  // namespace lens::cli

#endif  // LENS_DAEMONS_NODE_AGENT_FLAGS_H_
