// `lens up`'s composition (one_machine.h): the parts started in order over
// one store, one token, one machine.
#include "service/one_machine.h"

#include <cstdlib>
#include <filesystem>

namespace lens {
namespace {

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
  if (c->telemetry.processor.queue_dir == TelemetryOptions{}.queue_dir) {
    c->telemetry.processor.queue_dir = dir + "/telemetry";
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
  c.telemetry.processor.sample_history = true;
  c.telemetry.processor.logs = true;
  // The history keeps the selected series only: the flows too, here.
  auto& prefixes = c.telemetry.processor.series.metric_prefixes;
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
  c.jobs.scheduled.agents.clear();
  if (node.agent()) c.jobs.scheduled.agents.push_back({node_name, node.url()});
  return JobsServiceOptionsFromConfig(c);
}

}  // namespace

StatusOr<OneMachinePlan> OneMachinePlan::FromConfig(
    Config config, std::vector<std::string> logs) {
  UseStateDirWhenUnset(&config);
  OneTokenForEverySurface(&config);
  OneMachinePlan plan;
  LENS_ASSIGN_OR_RETURN(
      plan.node,
      NodeServiceOptionsFromConfig(config, kNodeAgent | kNodeContainers |
                                               kNodeFlows | kNodeOnOneMachine));
  // The controller, when there is a cluster to watch: one replica, so no
  // election.
  if (!config.controller.kubeconfig.empty()) {
    LENS_ASSIGN_OR_RETURN(ControllerServiceOptions co,
                          ControllerServiceOptionsFromConfig(config));
    co.leader_election = false;
    plan.controller = std::move(co);
  }
  plan.config = std::move(config);
  plan.logs = std::move(logs);
  return plan;
}

StatusOr<std::unique_ptr<OneMachine>> OneMachine::Start(OneMachinePlan plan) {
  std::unique_ptr<OneMachine> up(new OneMachine(std::move(plan)));
  const OneMachinePlan& p = up->plan_;
  LENS_ASSIGN_OR_RETURN(up->node_, NodeService::Start(p.node));
  if (p.controller) {
    auto started = ControllerService::Start(*p.controller);
    if (!started.ok()) return started.status().WithContext("controller");
    up->controller_ = std::move(*started);
  }
  // The jobs need a writable store; without one the rest still runs.
  auto jobs_options = UpJobsOptions(p.config, p.node.node_name, *up->node_);
  auto jobs =
      jobs_options.ok()
          ? JobsService::Start(*jobs_options)
          : StatusOr<std::unique_ptr<JobsService>>(jobs_options.status());
  if (jobs.ok()) {
    up->jobs_ = std::move(*jobs);
  } else {
    up->jobs_off_ = jobs.status();
  }
  auto telemetry =
      StartUpTelemetry(p.config, p.logs, *up->node_, p.node.node_name,
                       std::max<std::chrono::milliseconds>(
                           p.node.agent->interval, std::chrono::seconds(5)));
  if (telemetry.ok()) {
    up->telemetry_ = std::move(*telemetry);
  } else if (!p.logs.empty()) {
    return telemetry.status().WithContext("telemetry");
  } else {
    up->telemetry_off_ = telemetry.status();
  }
  // The dashboard and the API over the same store (its sample history for
  // the time series).
  auto api_options = ApiServiceOptionsFromConfig(p.config);
  auto api = api_options.ok()
                 ? ApiService::Start(*api_options)
                 : StatusOr<std::unique_ptr<ApiService>>(api_options.status());
  if (!api.ok()) return api.status().WithContext("api");
  up->api_ = std::move(*api);
  return up;
}

OneMachine::~OneMachine() { Stop(); }

void OneMachine::Stop() {
  if (api_) api_->Stop();
  if (telemetry_) telemetry_->Stop();
  if (jobs_) jobs_->Stop();
  if (controller_) controller_->Stop();
  if (node_) node_->Stop();
}

}  // namespace lens
