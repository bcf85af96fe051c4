// lens-node-agent: the per-node DaemonSet. GPU/RDMA/node probes every
// interval, /metrics and the node REST API, container tracking (/pods) and
// the container event stream to lens-jobs. Flags and lifecycle only: the
// node service does the work.
#include <cstdio>

#include "cli_exit.h"
#include "core/process.h"
#include "lens/log.h"
#include "lens/version.h"
#include "node_flags.h"
#include "service/node_service.h"

int main(int argc, char** argv) {
  lens::BlockShutdownSignals();
  CLI::App app{
      "lens-node-agent: GPU, RDMA and node metrics and inventory of this node"};
  app.set_version_flag("--version", std::string(lens::Version()));
  lens::cli::ConfigFlags flags;
  flags.AddFile(app, "YAML config file (nodeExporter section)");
  flags.Add(app, lens::cli::kNodeAgentFlags);
  flags.Add(app, lens::cli::kContainerFlags);
  flags.Add(app, lens::cli::kLoggingFlags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return lens::cli::UsageExit(app, e, "lens-node-agent");
  }
  auto config = flags.Load();
  auto options = config.ok()
                     ? lens::NodeServiceOptionsFromConfig(
                           *config, lens::kNodeAgent | lens::kNodeContainers)
                     : config.status();
  if (!options.ok()) {
    std::fprintf(stderr, "lens-node-agent: %s\n",
                 options.status().message().c_str());
    return 2;
  }
  lens::ConfigureLogging(
      {config->logging.level, config->logging.format, {}, {}});
  auto service = lens::NodeService::Start(*options);
  if (!service.ok()) {
    std::fprintf(stderr, "lens-node-agent: %s\n",
                 service.status().message().c_str());
    return 1;
  }
  LENS_LOG(INFO)
          .Field("url", (*service)->url())
          .Field("node", options->node_name)
      << "lens-node-agent serving";
  const int sig = lens::WaitForShutdownSignal();
  LENS_LOG(INFO).Field("signal", sig) << "lens-node-agent stopping";
  (*service)->Stop();
  return 0;
}
