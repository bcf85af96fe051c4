// lens-netflow: per-node TCP flow accounting with eBPF; /metrics (bounded:
// per class, direction and workload, top-K remotes), /flows (the last
// drain's sockets as JSON) and /healthz. Flows are attributed to pods and
// workloads through the container tracker (containerd), as in lens up.
// Flags and lifecycle only: the node service does the work.
#include <cstdio>

#include "cli_exit.h"
#include "core/process.h"
#include "lens/log.h"
#include "lens/version.h"
#include "node_flags.h"
#include "service/node_service.h"

int main(int argc, char** argv) {
  lens::BlockShutdownSignals();
  CLI::App app{"lens-netflow: TCP flows of this node, counted with eBPF"};
  app.set_version_flag("--version", std::string(lens::Version()));
  lens::cli::ConfigFlags flags;
  flags.AddFile(app,
                "YAML config file (netflow section; nodeExporter's container "
                "keys; metrics.compatNames)");
  flags.Add(app, lens::cli::kNetflowFlags);
  flags.Add(app, lens::cli::kContainerFlags);
  flags.Add(app, lens::cli::kLoggingFlags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return lens::cli::UsageExit(app, e, "lens-netflow");
  }
  // Bad flags or config: 2. No privilege or kernel support, anything else: 1.
  auto config = flags.Load();
  auto options = config.ok()
                     ? lens::NodeServiceOptionsFromConfig(
                           *config, lens::kNodeFlows | lens::kNodeContainers)
                     : config.status();
  if (!options.ok()) {
    std::fprintf(stderr, "lens-netflow: %s\n",
                 options.status().message().c_str());
    return 2;
  }
  lens::ConfigureLogging(
      {config->logging.level, config->logging.format, {}, {}});
  auto service = lens::NodeService::Start(*options);
  if (!service.ok()) {
    std::fprintf(stderr, "lens-netflow: %s\n",
                 service.status().message().c_str());
    return service.status().code() == lens::StatusCode::kInvalidArgument ? 2
                                                                         : 1;
  }
  LENS_LOG(INFO)
          .Field("http", (*service)->flows_url())
          .Field("interval_ms", config->netflow.interval.count())
          .Field("containers", (*service)->containers() != nullptr)
      << "lens-netflow serving";
  const int sig = lens::WaitForShutdownSignal();
  LENS_LOG(INFO).Field("signal", sig) << "lens-netflow stopping";
  (*service)->Stop();
  return 0;
}
