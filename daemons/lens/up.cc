// `lens up`: everything in one process on this machine (its flags and what
// it prints; the composition is lens::OneMachine, service/one_machine.h).
// The node
// service with all its parts: the node agent (GPU/RDMA/node probes, /metrics,
// node REST API) on 127.0.0.1:8989, container tracking (/pods) when a
// containerd socket is present, and TCP flows (eBPF, as root) on
// 127.0.0.1:8990, attributed to pods; with --kubeconfig, the controller
// (GPU pods, workloads and nodes from the API server into --database) with
// /readyz and /metrics on 127.0.0.1:8992; the scheduled jobs (allocation,
// consumers, node and device inventory, status, storage) against the local
// agent, into --database, with /jobs and /metrics on 127.0.0.1:8993; the
// telemetry processor on 127.0.0.1:8994 (remote write into the store's
// sample history, fluent-bit logs, and the training logs of --logs tailed
// into the store; this process's own GPU, RDMA and flow series are scraped
// into it too); and lens-api with the dashboard on 127.0.0.1:8080.
#include <cstdio>

#include "commands.h"
#include "core/process.h"
#include "lens/log.h"
#include "node_flags.h"
#include "service/one_machine.h"

namespace lens::cli {
namespace {

constexpr ConfigFlag kUpFlags[] = {
    {"--flows-listen", "netflow.listenAddress", ConfigFlag::kText,
     "host:port serving TCP flows (/metrics, /flows) (default "
     "127.0.0.1:8990)"},
    {"--kubeconfig", "controller.kubeconfig", ConfigFlag::kText,
     "also run the controller against this cluster (GPU pods, workloads and "
     "nodes into --database; /metrics on 127.0.0.1:8992)"},
    {"--context", "controller.context", ConfigFlag::kText,
     "the kubeconfig's context (default: its current-context)"},
    {"--controller-listen", "controller.listenHttp", ConfigFlag::kText,
     "host:port of the controller's /readyz and /metrics (default "
     "127.0.0.1:8992)"},
    {"--database", "database.url", ConfigFlag::kText,
     "the store of the controller and the jobs (default "
     "sqlite:///var/lib/lens/lens.db, or ~/.local/state/lens/lens.db when "
     "/var/lib/lens does not exist; also LENS_STORE_URL)"},
    {"--jobs-listen", "jobs.listenHttp", ConfigFlag::kText,
     "host:port of the jobs' /jobs and /metrics (default 127.0.0.1:8993)"},
    {"--api-listen", "api.listen", ConfigFlag::kText,
     "host:port of the dashboard and the REST API (default 127.0.0.1:8080)"},
    {"--telemetry-listen", "telemetry.listen", ConfigFlag::kText,
     "host:port of remote write (/api/v1/write) and logs (/v1/logs) into "
     "the store (default 127.0.0.1:8994)"},
};

void PrintServing(const NodeService& s, const NodeServiceOptions& o,
                  const Config& c) {
  const std::string url = s.url();
  auto snap = s.agent()->snapshot();
  std::printf(
      "lens up: node agent for %s serving on %s\n"
      "  %s/metrics  Prometheus metrics\n"
      "  %s/gpus  %s/cardMetrics  %s/rdma  %s/node  %s/driMapping\n"
      "  found %zu GPU(s), %zu RDMA device(s); sampling every %.1fs. Ctrl-C "
      "stops.\n",
      o.node_name.c_str(), url.c_str(), url.c_str(), url.c_str(), url.c_str(),
      url.c_str(), url.c_str(), url.c_str(), snap->gpus.size(),
      snap->rdma_devices.size(),
      std::chrono::duration<double>(o.agent->interval).count());
  if (s.containers() != nullptr) {
    std::printf("  %s/pods  containers (containerd at %s)\n", url.c_str(),
                c.node_exporter.containerd_socket.c_str());
  } else {
    std::printf("  container tracking off: no containerd socket at %s\n",
                c.node_exporter.containerd_socket.c_str());
  }
  if (s.flows() != nullptr) {
    std::printf("  %s/metrics  %s/flows  TCP flows (eBPF)\n",
                s.flows_url().c_str(), s.flows_url().c_str());
  } else {
    std::printf("  TCP flows off: %s\n", s.flows_status().message().c_str());
  }
}

}  // namespace

Command AddUp(CLI::App& app) {
  auto flags = std::make_shared<ConfigFlags>();
  CLI::App* cmd =
      app.add_subcommand("up", "Run Lens on this machine in the foreground");
  flags->AddFile(*cmd,
                 "YAML config file (nodeExporter, netflow, controller and "
                 "database sections)");
  flags->Add(*cmd, kNodeAgentFlags,
             {{"--listen",
               "host:port of the node agent (default 127.0.0.1:8989: this "
               "machine only)"}});
  flags->Add(*cmd, kContainerFlags);
  flags->Add(*cmd, kUpFlags);
  flags->Add(*cmd, kLoggingFlags);
  auto logs = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--logs", *logs,
                  "training log files to follow into the store (as `lens "
                  "parse-log --store` would store them; files still being "
                  "written and rotated too)");
  return [flags, logs]() {
    BlockShutdownSignals();
    // One workstation: not on the network unless asked.
    ConfigFlags f = *flags;
    f.Default("nodeExporter.listenAddress", "127.0.0.1:8989", "lens up");
    f.Default("netflow.listenAddress", "127.0.0.1:8990", "lens up");
    f.Default("controller.listenHttp", "127.0.0.1:8992", "lens up");
    f.Default("jobs.listenHttp", "127.0.0.1:8993", "lens up");
    f.Default("telemetry.listen", "127.0.0.1:8994", "lens up");
    f.Default("api.listen", "127.0.0.1:8080", "lens up");
    StatusOr<Config> config = f.Load();
    if (!config.ok()) {
      std::fprintf(stderr, "lens up: %s\n", config.status().message().c_str());
      return 2;
    }
    ConfigureLogging({config->logging.level, config->logging.format, {}, {}});
    auto plan = OneMachinePlan::FromConfig(*std::move(config), *logs);
    if (!plan.ok()) {
      std::fprintf(stderr, "lens up: %s\n", plan.status().message().c_str());
      return 2;
    }
    auto started = OneMachine::Start(*std::move(plan));
    if (!started.ok()) {
      std::fprintf(stderr, "lens up: %s\n", started.status().message().c_str());
      return started.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
    }
    OneMachine& up = **started;
    const Config& c = up.plan().config;
    PrintServing(up.node(), up.plan().node, c);
    if (JobsService* jobs = up.jobs()) {
      std::printf("  jobs into %s: %s/jobs  %s/metrics\n",
                  jobs->database().c_str(), jobs->http_url().c_str(),
                  jobs->http_url().c_str());
    } else {
      std::printf("  scheduled jobs off: %s\n",
                  up.jobs_off().message().c_str());
    }
    if (ControllerService* controller = up.controller()) {
      std::printf(
          "  controller: %s (%s) into %s\n"
          "  %s/readyz  %s/metrics  (`lens workloads --database URL` "
          "lists what it found)\n",
          controller->server().c_str(),
          up.plan().controller->connection.origin.c_str(),
          controller->database().c_str(), controller->http_url().c_str(),
          controller->http_url().c_str());
    }
    if (TelemetryService* telemetry = up.telemetry()) {
      const std::string url = telemetry->http_url();
      std::printf(
          "  telemetry into %s: %s/api/v1/write (remote write, kept as sample "
          "history)  %s/v1/logs (fluent-bit)  %s/metrics\n",
          telemetry->database().c_str(), url.c_str(), url.c_str(), url.c_str());
      for (const std::string& path : up.plan().logs) {
        std::printf("  following training log %s\n", path.c_str());
      }
    } else {
      std::printf("  telemetry off: %s\n",
                  up.telemetry_off().message().c_str());
    }
    const std::string api = up.api().http_url();
    std::printf("  REST API: %s/api/v1/  (docs: %s/api/v1/openapi.json)\n",
                api.c_str(), api.c_str());
    std::printf("lens up: dashboard at %s/\n", api.c_str());
    std::fflush(stdout);
    WaitForShutdownSignal();
    std::printf("lens up: stopping\n");
    up.Stop();
    return 0;
  };
}

}  // namespace lens::cli
