// `lens up`: everything in one process on this machine. Today: the node agent
// (GPU/RDMA/node probes, /metrics, node REST API, and container tracking with
// /pods when a containerd socket is present), serving on 127.0.0.1:8989
// unless --listen says otherwise, and TCP flows (eBPF, as root) on
// 127.0.0.1:8990.
#include <sys/stat.h>

#include <cstdio>
#include <memory>

#include "../netflow/routes.h"
#include "../node-agent/flags.h"
#include "commands.h"
#include "lens/flow.h"
#include "lens/http.h"
#include "lens/log.h"
#include "lens/node_agent.h"
#include "lens/process.h"

namespace lens::cli {
namespace {

// TCP flows (eBPF) when this process may load them: served on 127.0.0.1:8990
// like lens-netflow, with pods named through the node agent's container
// tracker. Without root (or BTF), says why and goes on without them.
void StartFlows(const std::string& token_file, const ContainerTracker* tracker,
                std::unique_ptr<FlowMonitor>* monitor,
                std::unique_ptr<HttpServer>* http) {
  auto probe = FlowProbe::Open();
  if (!probe.ok()) {
    std::printf("  TCP flows off: %s\n", probe.status().message().c_str());
    return;
  }
  FlowMonitorOptions options;
  options.containers = tracker;
  auto m = FlowMonitor::Create(std::move(*probe), options);
  HttpServerOptions ho;
  ho.listen = "127.0.0.1:8990";
  if (!token_file.empty()) {  // the node agent's token guards this too
    auto token = ReadBearerTokenFile(token_file, "bearer token");
    if (!token.ok()) {
      std::printf("  TCP flows off: %s\n", token.status().message().c_str());
      return;
    }
    ho.bearer_token = *token;
  }
  auto server = HttpServer::Create(ho);
  Status st = m.ok() ? (*m)->Start() : m.status();
  if (st.ok() && server.ok()) {
    AddFlowRoutes(**server, **m);
    st = (*server)->Start();
  } else if (st.ok()) {
    st = server.status();
  }
  if (!st.ok()) {
    std::printf("  TCP flows off: %s\n", st.message().c_str());
    return;
  }
  std::printf("  %s/metrics  %s/flows  TCP flows (eBPF)\n",
              (*server)->url().c_str(), (*server)->url().c_str());
  *monitor = std::move(*m);
  *http = std::move(*server);
}

}  // namespace

Command AddUp(CLI::App& app) {
  auto flags = std::make_shared<NodeAgentFlags>();
  CLI::App* cmd =
      app.add_subcommand("up", "Run Lens on this machine in the foreground");
  flags->Register(*cmd);
  return [flags]() {
    BlockShutdownSignals();
    NodeAgentFlags f = *flags;
    if (!f.listen)
      f.listen = "127.0.0.1:8989";  // one workstation: not on the network
    StatusOr<Config> config = f.Apply();
    if (!config.ok()) {
      std::fprintf(stderr, "lens up: %s\n", config.status().message().c_str());
      return 2;
    }
    ConfigureLogging({config->logging.level, config->logging.format, {}, {}});
    // One machine: track containers only when containerd is here.
    NodeExporterOptions& ne = config->node_exporter;
    struct stat st;
    const bool containerd =
        ne.containers && ::stat(ne.containerd_socket.c_str(), &st) == 0;
    if (!containerd) ne.containers = false;
    auto options = NodeAgentServiceOptionsFromConfig(*config);
    if (!options.ok()) {
      std::fprintf(stderr, "lens up: %s\n", options.status().message().c_str());
      return 2;
    }
    auto service = NodeAgentService::Start(*options);
    if (!service.ok()) {
      std::fprintf(stderr, "lens up: %s\n", service.status().message().c_str());
      return 1;
    }
    const std::string url = (*service)->url();
    auto snap = (*service)->agent().snapshot();
    std::printf(
        "lens up: node agent for %s serving on %s\n"
        "  %s/metrics  Prometheus metrics\n"
        "  %s/gpus  %s/cardMetrics  %s/rdma  %s/node  %s/driMapping\n"
        "  found %zu GPU(s), %zu RDMA device(s); sampling every %.1fs. Ctrl-C "
        "stops.\n",
        options->agent.node_name.c_str(), url.c_str(), url.c_str(), url.c_str(),
        url.c_str(), url.c_str(), url.c_str(), url.c_str(), snap->gpus.size(),
        snap->rdma_devices.size(),
        std::chrono::duration<double>(options->agent.interval).count());
    if (containerd) {
      std::printf("  %s/pods  containers (containerd at %s)\n", url.c_str(),
                  ne.containerd_socket.c_str());
    } else {
      std::printf("  container tracking off: no containerd socket at %s\n",
                  ne.containerd_socket.c_str());
    }
    std::unique_ptr<FlowMonitor> flows;
    std::unique_ptr<HttpServer> flow_http;
    StartFlows(ne.bearer_token_file, (*service)->containers(), &flows,
               &flow_http);
    std::fflush(stdout);
    WaitForShutdownSignal();
    std::printf("lens up: stopping\n");
    if (flow_http) flow_http->Stop();
    if (flows) flows->Stop();
    (*service)->Stop();
    return 0;
  };
}

}  // namespace lens::cli
