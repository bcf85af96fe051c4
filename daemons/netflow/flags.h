// Flags of lens-netflow, parsed once into typed options.
#ifndef LENS_DAEMONS_NETFLOW_FLAGS_H_
#define LENS_DAEMONS_NETFLOW_FLAGS_H_

#include <CLI/CLI.hpp>
#include <chrono>
#include <string>

#include "lens/flow.h"
#include "lens/flow_policy.h"
#include "lens/http.h"
#include "lens/log.h"
#include "lens/status.h"

namespace lens::cli {

// What lens-netflow runs with. Plain value.
struct NetflowOptions {
  FlowProbeOptions probe;
  FlowMonitorOptions monitor;
  HttpServerOptions http;  // /metrics, /flows, /healthz
  LogLevel log_level = LogLevel::kInfo;
};

struct NetflowFlags {
  std::string listen = "0.0.0.0:8990";
  std::string policy;
  std::string bearer_token_file, tls_cert, tls_key;
  double interval_seconds = 5;
  size_t top_remote = 20;
  uint32_t max_flows = 65536;
  bool compat_names = false;
  std::string procfs_root = "/proc";
  std::string log_level = "info";

  void Register(CLI::App& app) {
    app.add_option("--listen", listen,
                   "host:port serving /metrics, /flows and /healthz")
        ->capture_default_str();
    app.add_option("--policy", policy,
                   "endpoint classes (YAML: internalHosts, k8sPod, k8sSvc, "
                   "dns, docker, localhost); default: private ranges");
    app.add_option("--interval", interval_seconds,
                   "seconds between drains of the kernel's flow table")
        ->check(CLI::Range(0.1, 3600.0))
        ->capture_default_str();
    app.add_option("--top-remote", top_remote,
                   "remote endpoints exported by address; the rest are "
                   "\"other\"")
        ->check(CLI::Range(0, 1000))
        ->capture_default_str();
    app.add_option("--max-flows", max_flows,
                   "capacity of the in-kernel flow table (sockets)")
        ->check(CLI::Range(1024, 4 << 20))
        ->capture_default_str();
    app.add_flag("--compat-names", compat_names,
                 "also export the original platform's metric names "
                 "(primus_lens_network_*)");
    app.add_option("--procfs-root", procfs_root,
                   "host /proc (listening sockets, process cgroups)")
        ->capture_default_str();
    app.add_option("--bearer-token-file", bearer_token_file,
                   "require this bearer token on every route but /healthz");
    app.add_option("--tls-cert", tls_cert,
                   "serve HTTPS with this PEM certificate");
    app.add_option("--tls-key", tls_key, "PEM private key of --tls-cert");
    app.add_option("--log-level", log_level, "debug | info | warn | error")
        ->capture_default_str();
  }

  StatusOr<NetflowOptions> Apply() const {
    NetflowOptions o;
    StatusOr<LogLevel> level = ParseLogLevel(log_level);
    if (!level.ok()) return level.status().WithContext("--log-level");
    o.log_level = *level;
    if (!policy.empty()) {
      StatusOr<FlowPolicy> p = LoadFlowPolicy(policy);
      if (!p.ok()) return p.status().WithContext("--policy");
      o.monitor.policy = std::move(*p);
    }
    o.probe.max_flows = max_flows;
    o.monitor.drain_interval = std::chrono::milliseconds(
        static_cast<int64_t>(interval_seconds * 1000));
    o.monitor.top_remote = top_remote;
    o.monitor.compat_metrics = compat_names;
    o.monitor.proc_root = procfs_root;
    o.http.listen = listen;
    if (!bearer_token_file.empty()) {
      LENS_ASSIGN_OR_RETURN(
          o.http.bearer_token,
          ReadBearerTokenFile(bearer_token_file, "--bearer-token-file"));
    }
    o.http.tls_cert_file = tls_cert;
    o.http.tls_key_file = tls_key;
    LENS_RETURN_IF_ERROR(o.http.Validate());
    return o;
  }
};

}  // namespace lens::cli

#endif  // LENS_DAEMONS_NETFLOW_FLAGS_H_
