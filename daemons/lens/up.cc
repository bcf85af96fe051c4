// `lens up`: everything in one process on this machine. Today the node
// service with all its parts: the node agent (GPU/RDMA/node probes, /metrics,
// node REST API) on 127.0.0.1:8989, container tracking (/pods) when a
// containerd socket is present, and TCP flows (eBPF, as root) on
// 127.0.0.1:8990, attributed to pods.
#include <cstdio>

#include "commands.h"
#include "lens/log.h"
#include "lens/node_service.h"
#include "lens/process.h"
#include "node_flags.h"

namespace lens::cli {
namespace {

constexpr ConfigFlag kUpFlags[] = {
    {"--flows-listen", "netflow.listenAddress", ConfigFlag::kText,
     "host:port serving TCP flows (/metrics, /flows) (default "
     "127.0.0.1:8990)"},
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
  flags->AddFile(*cmd, "YAML config file (nodeExporter and netflow sections)");
  flags->Add(*cmd, kNodeAgentFlags,
             {{"--listen",
               "host:port of the node agent (default 127.0.0.1:8989: this "
               "machine only)"}});
  flags->Add(*cmd, kContainerFlags);
  flags->Add(*cmd, kUpFlags);
  flags->Add(*cmd, kLoggingFlags);
  return [flags]() {
    BlockShutdownSignals();
    // One workstation: not on the network unless asked.
    ConfigFlags f = *flags;
    f.Default("nodeExporter.listenAddress", "127.0.0.1:8989", "lens up");
    f.Default("netflow.listenAddress", "127.0.0.1:8990", "lens up");
    StatusOr<Config> config = f.Load();
    if (!config.ok()) {
      std::fprintf(stderr, "lens up: %s\n", config.status().message().c_str());
      return 2;
    }
    ConfigureLogging({config->logging.level, config->logging.format, {}, {}});
    auto options = NodeServiceOptionsFromConfig(
        *config, kNodeAgent | kNodeContainers | kNodeFlows | kNodeOnOneMachine);
    if (!options.ok()) {
      std::fprintf(stderr, "lens up: %s\n", options.status().message().c_str());
      return 2;
    }
    auto service = NodeService::Start(*options);
    if (!service.ok()) {
      std::fprintf(stderr, "lens up: %s\n", service.status().message().c_str());
      return 1;
    }
    PrintServing(**service, *options, *config);
    std::fflush(stdout);
    WaitForShutdownSignal();
    std::printf("lens up: stopping\n");
    (*service)->Stop();
    return 0;
  };
}

}  // namespace lens::cli
