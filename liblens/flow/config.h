// The `netflow:` section of the configuration file: the TCP flow daemon
// (lens-netflow). Owned here; registered in service/config.cc.
#ifndef LENS_FLOW_CONFIG_H_
#define LENS_FLOW_CONFIG_H_

#include <chrono>
#include <string>

#include "core/config_section.h"
#include "lens/status.h"

namespace lens {

// `netflow:` section: the TCP flow daemon (lens-netflow).
struct NetflowOptions {
  // `listenAddress`: host:port of /metrics, /flows and /healthz.
  std::string listen_address = "0.0.0.0:8990";
  // `interval`: how often the kernel's flow table is drained; >= 100ms.
  std::chrono::milliseconds interval{5000};
  // `policyFile`: endpoint classes (lens/flow_policy.h); empty: the default
  // policy (private ranges, docker's bridge, resolv.conf's DNS servers).
  std::string policy_file;
  // `topRemote`: remote addresses exported by name (0..1000); the rest are
  // "other".
  int top_remote = 20;
  // `maxFlows`: capacity of the in-kernel flow table (1024..4194304).
  int max_flows = 65536;
  // `bpfStatsWindow` of every `bpfStatsPeriod`: when the kernel's host-wide
  // BPF run-time statistics are on to measure the probe's own cost
  // (FlowProbeOptions::kernel_stats_window); window 0: never;
  // window == period: always.
  std::chrono::milliseconds bpf_stats_window{1000};
  std::chrono::milliseconds bpf_stats_period{20000};
  // `procfsRoot`: host /proc (listening sockets, process cgroups).
  std::string procfs_root = "/proc";
  // `bearerTokenFile`, `tlsCertFile`, `tlsKeyFile`: as nodeExporter's.
  std::string bearer_token_file;
  std::string tls_cert_file;
  std::string tls_key_file;

  // InvalidArgument naming the key.
  Status Validate() const;
};

namespace config {
extern const SectionSpec<NetflowOptions> kNetflowSection;
}  // namespace config

}  // namespace lens

#endif  // LENS_FLOW_CONFIG_H_
