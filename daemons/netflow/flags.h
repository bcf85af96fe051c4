// Flags of lens-netflow: the config file's `netflow:` section (and
// `metrics.compatNames`, `logging`), LENS_* variables, then these flags, parsed
// once into typed options.
#ifndef LENS_DAEMONS_NETFLOW_FLAGS_H_
#define LENS_DAEMONS_NETFLOW_FLAGS_H_

#include <CLI/CLI.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "lens/config.h"
#include "lens/flow.h"
#include "lens/flow_policy.h"
#include "lens/http.h"
#include "lens/log.h"
#include "lens/status.h"

namespace lens::cli {

// What lens-netflow runs with. Plain value.
struct NetflowRun {
  FlowProbeOptions probe;
  FlowMonitorOptions monitor;
  HttpServerOptions http;  // /metrics, /flows, /healthz
  LoggingOptions logging;
};

struct NetflowFlags {
  std::string config_file;
  std::optional<std::string> listen, policy, bearer_token_file, tls_cert,
      tls_key, procfs_root, log_level;
  std::optional<double> interval_seconds;
  std::optional<int> top_remote, max_flows;
  std::optional<double> bpf_stats_window_seconds, bpf_stats_period_seconds;
  bool compat_names = false;

  void Register(CLI::App& app) {
    app.add_option("--config", config_file,
                   "YAML config file (netflow section; metrics.compatNames)")
        ->check(CLI::ExistingFile);
    app.add_option("--listen", listen,
                   "host:port serving /metrics, /flows and /healthz "
                   "(default 0.0.0.0:8990)");
    app.add_option("--policy", policy,
                   "endpoint classes (YAML: internalHosts, k8sPod, k8sSvc, "
                   "dns, docker, localhost); default: private ranges");
    app.add_option("--interval", interval_seconds,
                   "seconds between drains of the kernel's flow table "
                   "(default 5)")
        ->check(CLI::Range(0.1, 3600.0));
    app.add_option("--top-remote", top_remote,
                   "remote endpoints exported by address; the rest are "
                   "\"other\" (default 20)")
        ->check(CLI::Range(0, 1000));
    app.add_option("--max-flows", max_flows,
                   "capacity of the in-kernel flow table in sockets "
                   "(default 65536)")
        ->check(CLI::Range(1024, 4 << 20));
    app.add_option("--bpf-stats-window", bpf_stats_window_seconds,
                   "seconds of every --bpf-stats-period the kernel's "
                   "host-wide BPF statistics are on to measure the probe's "
                   "cost (default 1; 0: never)")
        ->check(CLI::Range(0.0, 86400.0));
    app.add_option("--bpf-stats-period", bpf_stats_period_seconds,
                   "seconds (default 20); equal to the window: always on")
        ->check(CLI::Range(0.001, 86400.0));
    app.add_flag("--compat-names", compat_names,
                 "also export the original platform's metric names "
                 "(primus_lens_network_*)");
    app.add_option("--procfs-root", procfs_root,
                   "host /proc: listening sockets, process cgroups "
                   "(default /proc)");
    app.add_option("--bearer-token-file", bearer_token_file,
                   "require this bearer token on every route but /healthz");
    app.add_option("--tls-cert", tls_cert,
                   "serve HTTPS with this PEM certificate");
    app.add_option("--tls-key", tls_key, "PEM private key of --tls-cert");
    app.add_option("--log-level", log_level, "debug | info | warn | error");
  }

  StatusOr<NetflowRun> Apply() const {
    StatusOr<Config> loaded = config_file.empty() ? ParseConfig("", "defaults")
                                                  : LoadConfigFile(config_file);
    if (!loaded.ok()) return loaded.status();
    Config c = std::move(*loaded);
    NetflowOptions& n = c.netflow;
    if (listen) n.listen_address = *listen;
    if (policy) n.policy_file = *policy;
    if (interval_seconds) {
      n.interval = std::chrono::milliseconds(
          static_cast<int64_t>(*interval_seconds * 1000));
    }
    if (top_remote) n.top_remote = *top_remote;
    if (max_flows) n.max_flows = *max_flows;
    auto ms = [](double seconds) {
      return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
    };
    if (bpf_stats_window_seconds) {
      n.bpf_stats_window = ms(*bpf_stats_window_seconds);
    }
    if (bpf_stats_period_seconds) {
      n.bpf_stats_period = ms(*bpf_stats_period_seconds);
    }
    if (procfs_root) n.procfs_root = *procfs_root;
    if (bearer_token_file) n.bearer_token_file = *bearer_token_file;
    if (tls_cert) n.tls_cert_file = *tls_cert;
    if (tls_key) n.tls_key_file = *tls_key;
    if (compat_names) c.metrics.compat_names = true;
    if (log_level) {
      StatusOr<LogLevel> level = ParseLogLevel(*log_level);
      if (!level.ok()) return level.status().WithContext("--log-level");
      c.logging.level = *level;
    }
    LENS_RETURN_IF_ERROR(c.Validate());
    return ToRun(c);
  }

 private:
  static StatusOr<NetflowRun> ToRun(const Config& c) {
    const NetflowOptions& n = c.netflow;
    NetflowRun o;
    o.logging = c.logging;
    if (!n.policy_file.empty()) {
      StatusOr<FlowPolicy> p = LoadFlowPolicy(n.policy_file);
      // A missing or unreadable policy is a configuration error (exit 2).
      if (!p.ok())
        return InvalidArgumentError("policy: " + p.status().message());
      o.monitor.policy = std::move(*p);
    }
    o.probe.max_flows = static_cast<uint32_t>(n.max_flows);
    o.probe.kernel_stats = n.bpf_stats_window.count() > 0;
    o.probe.kernel_stats_window = n.bpf_stats_window;
    o.probe.kernel_stats_period = n.bpf_stats_period;
    o.monitor.drain_interval = n.interval;
    o.monitor.top_remote = static_cast<size_t>(n.top_remote);
    o.monitor.compat_metrics = c.metrics.compat_names;
    o.monitor.proc_root = n.procfs_root;
    o.http.listen = n.listen_address;
    if (!n.bearer_token_file.empty()) {
      LENS_ASSIGN_OR_RETURN(
          o.http.bearer_token,
          ReadBearerTokenFile(n.bearer_token_file, "bearer token file"));
    }
    o.http.tls_cert_file = n.tls_cert_file;
    o.http.tls_key_file = n.tls_key_file;
    LENS_RETURN_IF_ERROR(o.http.Validate());
    return o;
  }
};

}  // namespace lens::cli

#endif  // LENS_DAEMONS_NETFLOW_FLAGS_H_
