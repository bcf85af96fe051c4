// `lens up`: everything in one process on this machine. Today the node
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
#include <cstdlib>
#include <filesystem>

#include "commands.h"
#include "core/process.h"
#include "lens/log.h"
#include "node_flags.h"
#include "service/api_service.h"
#include "service/controller_service.h"
#include "service/jobs_service.h"
#include "service/node_service.h"
#include "service/telemetry_service.h"

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

// The store of one machine: the configured one, except that the built-in
// default (/var/lib/lens, where the packaged services keep it) becomes the
// user's state directory when /var/lib/lens does not exist, so `lens up`
// works for anyone, root or not, without setting up a directory first.
void UseStateDirWhenUnset(Config* c) {
  if (c->database.url != DatabaseOptions{}.url ||
      std::filesystem::is_directory("/var/lib/lens")) {
    return;
  }
  std::string dir;
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state) {
    dir = std::string(state) + "/lens";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    dir = std::string(home) + "/.local/state/lens";
  } else {
    return;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return;
  c->database.url = "sqlite://" + dir + "/lens.db";
  if (c->telemetry.queue_dir == TelemetryConfigOptions{}.queue_dir) {
    c->telemetry.queue_dir = dir + "/telemetry";
  }
}

// One token guards every surface of the process but /healthz: the token
// file given for the node agent (--bearer-token-file) is every service's
// unless the config names another for it.
void OneTokenForEverySurface(Config* c) {
  const std::string& token = c->node_exporter.bearer_token_file;
  if (token.empty()) return;
  for (std::string* file :
       {&c->netflow.bearer_token_file, &c->jobs.bearer_token_file,
        &c->controller.bearer_token_file, &c->telemetry.bearer_token_file,
        &c->api.bearer_token_file}) {
    if (file->empty()) *file = token;
  }
}

// This machine's GPU, RDMA and flow series into the telemetry path (and so
// into the sample history the dashboard draws), as a Prometheus scrape with
// a `node` label would bring them in a cluster.
Status ScrapeNode(const NodeService& node, const std::string& node_name,
                  std::chrono::milliseconds interval,
                  TelemetryService& telemetry) {
  if (const NodeAgent* agent = node.agent()) {
    LENS_RETURN_IF_ERROR(telemetry.processor().AddLocalScrape(
        {"node-agent",
         [agent] { return agent->RenderMetrics(); },
         {{"node", node_name}},
         {"lens_gpu_", "lens_rdma_"},
         interval}));
  }
  if (const FlowMonitor* flows = node.flows()) {
    LENS_RETURN_IF_ERROR(telemetry.processor().AddLocalScrape(
        {"netflow",
         [flows] { return flows->RenderMetrics(); },
         {{"node", node_name}},
         {"lens_tcp_flow_"},
         interval}));
  }
  return OkStatus();
}

// The telemetry processor of one machine: what is remote-written to it goes
// to the store's sample history (and to `forward` targets if configured);
// the --logs files are tailed into the store.
StatusOr<std::unique_ptr<TelemetryService>> StartUpTelemetry(
    const Config& config, const std::vector<std::string>& logs,
    const NodeService& node, const std::string& node_name,
    std::chrono::milliseconds interval) {
  Config c = config;
  c.telemetry.sample_history = true;
  c.telemetry.logs = true;
  // The history keeps the selected series only: the flows too, here.
  auto& prefixes = c.telemetry.series.metric_prefixes;
  if (!prefixes.empty()) prefixes.push_back("lens_tcp_flow_");
  LENS_ASSIGN_OR_RETURN(TelemetryServiceOptions o,
                        TelemetryServiceOptionsFromConfig(c));
  LENS_ASSIGN_OR_RETURN(auto service, TelemetryService::Start(o));
  LENS_RETURN_IF_ERROR(ScrapeNode(node, node_name, interval, *service));
  for (const std::string& path : logs) {
    Status st = service->processor().FollowLogFile(
        std::filesystem::absolute(path).lexically_normal().string());
    if (!st.ok()) return st;
  }
  return service;
}

// The jobs of one machine: this node's agent, the controller's cluster (if
// any) for the storage scan, one replica (no election), and the container
// event server on a loopback port of its own.
StatusOr<JobsServiceOptions> UpJobsOptions(const Config& config,
                                           const std::string& node_name,
                                           const NodeService& node) {
  Config c = config;
  c.jobs.listen_grpc = "127.0.0.1:0";
  c.jobs.kubeconfig = config.controller.kubeconfig;
  c.jobs.context = config.controller.context;
  c.jobs.leader_election = false;
  c.jobs.agent_token_file = config.node_exporter.bearer_token_file;
  c.jobs.agents = node.agent() ? node_name + "=" + node.url() : "";
  return JobsServiceOptionsFromConfig(c);
}

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
    UseStateDirWhenUnset(&*config);
    OneTokenForEverySurface(&*config);
    auto options = NodeServiceOptionsFromConfig(
        *config, kNodeAgent | kNodeContainers | kNodeFlows | kNodeOnOneMachine);
    if (!options.ok()) {
      std::fprintf(stderr, "lens up: %s\n", options.status().message().c_str());
      return 2;
    }
    // The controller, when there is a cluster to watch: one replica, so no
    // election.
    std::optional<ControllerServiceOptions> controller_options;
    if (!config->controller.kubeconfig.empty()) {
      auto co = ControllerServiceOptionsFromConfig(*config);
      if (!co.ok()) {
        std::fprintf(stderr, "lens up: %s\n", co.status().message().c_str());
        return 2;
      }
      co->leader_election = false;
      controller_options = std::move(*co);
    }
    auto service = NodeService::Start(*options);
    if (!service.ok()) {
      std::fprintf(stderr, "lens up: %s\n", service.status().message().c_str());
      return 1;
    }
    std::unique_ptr<ControllerService> controller;
    if (controller_options) {
      auto started = ControllerService::Start(*controller_options);
      if (!started.ok()) {
        std::fprintf(stderr, "lens up: controller: %s\n",
                     started.status().message().c_str());
        (*service)->Stop();
        return 1;
      }
      controller = std::move(*started);
    }
    // The jobs need a writable store; without one the rest still runs.
    std::unique_ptr<JobsService> jobs;
    auto jobs_options = UpJobsOptions(*config, options->node_name, **service);
    if (jobs_options.ok()) {
      auto started = JobsService::Start(*jobs_options);
      if (started.ok()) {
        jobs = std::move(*started);
      } else {
        jobs_options = started.status();
      }
    }
    auto telemetry = StartUpTelemetry(
        *config, *logs, **service, options->node_name,
        std::max<std::chrono::milliseconds>(options->agent->interval,
                                            std::chrono::seconds(5)));
    if (!telemetry.ok() && !logs->empty()) {
      std::fprintf(stderr, "lens up: telemetry: %s\n",
                   telemetry.status().message().c_str());
      if (jobs) jobs->Stop();
      if (controller) controller->Stop();
      (*service)->Stop();
      return telemetry.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
    }
    // The dashboard and the API over the same store (its sample history for
    // the time series).
    auto api_options = ApiServiceOptionsFromConfig(*config);
    auto api =
        api_options.ok()
            ? ApiService::Start(*api_options)
            : StatusOr<std::unique_ptr<ApiService>>(api_options.status());
    if (!api.ok()) {
      std::fprintf(stderr, "lens up: api: %s\n",
                   api.status().message().c_str());
      if (telemetry.ok()) (*telemetry)->Stop();
      if (jobs) jobs->Stop();
      if (controller) controller->Stop();
      (*service)->Stop();
      return api.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
    }
    PrintServing(**service, *options, *config);
    if (jobs) {
      std::printf("  jobs into %s: %s/jobs  %s/metrics\n",
                  jobs->database().c_str(), jobs->http_url().c_str(),
                  jobs->http_url().c_str());
    } else {
      std::printf("  scheduled jobs off: %s\n",
                  jobs_options.status().message().c_str());
    }
    if (controller) {
      std::printf(
          "  controller: %s (%s) into %s\n"
          "  %s/readyz  %s/metrics  (`lens workloads --database URL` "
          "lists what it found)\n",
          controller->server().c_str(),
          controller_options->connection.origin.c_str(),
          controller->database().c_str(), controller->http_url().c_str(),
          controller->http_url().c_str());
    }
    if (telemetry.ok()) {
      const std::string url = (*telemetry)->http_url();
      std::printf(
          "  telemetry into %s: %s/api/v1/write (remote write, kept as sample "
          "history)  %s/v1/logs (fluent-bit)  %s/metrics\n",
          (*telemetry)->database().c_str(), url.c_str(), url.c_str(),
          url.c_str());
      for (const std::string& path : *logs) {
        std::printf("  following training log %s\n", path.c_str());
      }
    } else {
      std::printf("  telemetry off: %s\n",
                  telemetry.status().message().c_str());
    }
    std::printf("  REST API: %s/api/v1/  (docs: %s/api/v1/openapi.json)\n",
                (*api)->http_url().c_str(), (*api)->http_url().c_str());
    std::printf("lens up: dashboard at %s/\n", (*api)->http_url().c_str());
    std::fflush(stdout);
    WaitForShutdownSignal();
    std::printf("lens up: stopping\n");
    (*api)->Stop();
    if (telemetry.ok()) (*telemetry)->Stop();
    if (jobs) jobs->Stop();
    if (controller) controller->Stop();
    (*service)->Stop();
    return 0;
  };
}

}  // namespace lens::cli
