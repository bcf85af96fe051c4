// The node daemons' flags (lens-node-agent, lens-netflow, `lens up`) as
// config keys. Defaults are the config's (docs/node-agent.md,
// docs/netflow.md).
#ifndef LENS_DAEMONS_COMMON_NODE_FLAGS_H_
#define LENS_DAEMONS_COMMON_NODE_FLAGS_H_

#include "config_flags.h"

namespace lens::cli {

using F = ConfigFlag;

// The node agent: probes, the node REST API and its port.
inline constexpr ConfigFlag kNodeAgentFlags[] = {
    {"--sysfs-root", "nodeExporter.sysfsRoot", F::kText,
     "host /sys (default /sys)"},
    {"--procfs-root", "nodeExporter.procfsRoot", F::kText,
     "host /proc (default /proc)"},
    {"--dev-root", "nodeExporter.devRoot", F::kText,
     "host /dev (default /dev)"},
    {"--listen", "nodeExporter.listenAddress", F::kText,
     "host:port to serve on (default 0.0.0.0:8989)"},
    {"--interval", "nodeExporter.interval", F::kSeconds,
     "sampling interval in seconds (default 5; at least 0.1)"},
    {"--bearer-token-file", "nodeExporter.bearerTokenFile", F::kText,
     "require this bearer token on every route but /healthz"},
    {"--tls-cert", "nodeExporter.tlsCertFile", F::kText,
     "serve HTTPS with this PEM certificate"},
    {"--tls-key", "nodeExporter.tlsKeyFile", F::kText,
     "PEM private key of --tls-cert"},
    {"--compat-names", "metrics.compatNames", F::kSetTrue,
     "also export the original platform's metric names (gpu_utilization, "
     "primus_lens_network_*, ...)"},
    {"--kubelet-url", "nodeExporter.kubeletUrl", F::kText,
     "kubelet for ephemeral storage and GPU allocation, e.g. "
     "https://127.0.0.1:10250"},
    {"--kubelet-token-file", "nodeExporter.kubeletTokenFile", F::kText,
     "bearer token for the kubelet"},
    {"--kubelet-ca-file", "nodeExporter.kubeletCaFile", F::kText,
     "CA bundle of the kubelet's certificate"},
    {"--kubelet-insecure-skip-verify", "nodeExporter.kubeletInsecureSkipVerify",
     F::kSetTrue, "do not verify the kubelet's certificate"},
    {"--kubelet-client-cert-file", "nodeExporter.kubeletClientCertFile",
     F::kText, "PEM client certificate for the kubelet (X.509 auth)"},
    {"--kubelet-client-key-file", "nodeExporter.kubeletClientKeyFile", F::kText,
     "PEM private key of --kubelet-client-cert-file"},
    {"--no-nvml", "nodeExporter.nvidiaGpus", F::kSetFalse, "do not load NVML"},
    {"--amd-smi", "nodeExporter.amdSmiPath", F::kText,
     "run this amd-smi (list, static) after each GPU rescan to fill what "
     "sysfs lacks; never per cycle"},
    {"--pod-resources-socket", "nodeExporter.podResourcesSocket", F::kText,
     "kubelet pod-resources socket (default "
     "/var/lib/kubelet/pod-resources/kubelet.sock; empty: off)"},
    {"--jobs-address", "nodeExporter.jobsAddress", F::kText,
     "stream container events to lens-jobs at host:port"},
    {"--jobs-ca-file", "nodeExporter.jobsCaFile", F::kText,
     "CA of lens-jobs's certificate (turns on TLS)"},
    {"--jobs-token-file", "nodeExporter.jobsBearerTokenFile", F::kText,
     "bearer token for lens-jobs"},
};

// Container tracking: /pods, devices per container, pods of flows.
inline constexpr ConfigFlag kContainerFlags[] = {
    {"--no-containers", "nodeExporter.containers", F::kSetFalse,
     "do not track containers (containerd or Docker, pod-resources)"},
    {"--container-runtime", "nodeExporter.containerRuntime", F::kText,
     "containerd, docker or auto (default: containerd unless only Docker's "
     "socket exists or cri-dockerd runs)"},
    {"--docker-socket", "nodeExporter.dockerSocket", F::kText,
     "the Docker Engine API's socket (default /var/run/docker.sock)"},
    {"--containerd-socket", "nodeExporter.containerdSocket", F::kText,
     "containerd's socket (default /run/containerd/containerd.sock)"},
    {"--containerd-namespace", "nodeExporter.containerdNamespace", F::kText,
     "containerd namespace of the kubelet's containers (default k8s.io)"},
};

// TCP flows with eBPF and their port.
inline constexpr ConfigFlag kNetflowFlags[] = {
    {"--listen", "netflow.listenAddress", F::kText,
     "host:port serving /metrics, /flows and /healthz (default "
     "0.0.0.0:8990)"},
    {"--policy", "netflow.policyFile", F::kText,
     "endpoint classes (YAML: internalHosts, k8sPod, k8sSvc, dns, docker, "
     "localhost); default: private ranges"},
    {"--interval", "netflow.interval", F::kSeconds,
     "seconds between drains of the kernel's flow table (default 5; at least "
     "0.1)"},
    {"--top-remote", "netflow.topRemote", F::kText,
     "remote endpoints exported by address; the rest are \"other\" (default "
     "20, at most 1000)"},
    {"--max-flows", "netflow.maxFlows", F::kText,
     "capacity of the in-kernel flow table in sockets (default 65536; "
     "1024..4194304)"},
    {"--bpf-stats-window", "netflow.bpfStatsWindow", F::kSeconds,
     "seconds of every --bpf-stats-period the kernel's host-wide BPF "
     "statistics are on to measure the probe's cost (default 1; 0: never)"},
    {"--bpf-stats-period", "netflow.bpfStatsPeriod", F::kSeconds,
     "seconds (default 20); equal to the window: always on"},
    {"--compat-names", "metrics.compatNames", F::kSetTrue,
     "also export the original platform's metric names "
     "(primus_lens_network_*)"},
    {"--procfs-root", "netflow.procfsRoot", F::kText,
     "host /proc: listening sockets, process cgroups (default /proc)"},
    {"--bearer-token-file", "netflow.bearerTokenFile", F::kText,
     "require this bearer token on every route but /healthz"},
    {"--tls-cert", "netflow.tlsCertFile", F::kText,
     "serve HTTPS with this PEM certificate"},
    {"--tls-key", "netflow.tlsKeyFile", F::kText,
     "PEM private key of --tls-cert"},
};

}  // namespace lens::cli

#endif  // LENS_DAEMONS_COMMON_NODE_FLAGS_H_
