// lens-node-agent: the per-node DaemonSet. GPU/RDMA/node probes every
// interval, /metrics and the node REST API. Flags and lifecycle only.
#include <cstdio>

#include "flags.h"
#include "lens/log.h"
#include "lens/node_agent.h"
#include "lens/process.h"
#include "lens/version.h"

int main(int argc, char** argv) {
  lens::BlockShutdownSignals();
  CLI::App app{
      "lens-node-agent: GPU, RDMA and node metrics and inventory of this node"};
  app.set_version_flag("--version", std::string(lens::Version()));
  lens::cli::NodeAgentFlags flags;
  flags.Register(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  lens::StatusOr<lens::Config> config = flags.Apply();
  if (!config.ok()) {
    std::fprintf(stderr, "lens-node-agent: %s\n",
                 config.status().message().c_str());
    return 2;
  }
  lens::ConfigureLogging(
      {config->logging.level, config->logging.format, {}, {}});
  auto options = lens::NodeAgentServiceOptionsFromConfig(*config);
  if (!options.ok()) {
    std::fprintf(stderr, "lens-node-agent: %s\n",
                 options.status().message().c_str());
    return 2;
  }
  auto service = lens::NodeAgentService::Start(*options);
  if (!service.ok()) {
    std::fprintf(stderr, "lens-node-agent: %s\n",
                 service.status().message().c_str());
    return 1;
  }
  LENS_LOG(INFO)
          .Field("url", (*service)->url())
          .Field("node", options->agent.node_name)
      << "lens-node-agent serving";
  const int sig = lens::WaitForShutdownSignal();
  LENS_LOG(INFO).Field("signal", sig) << "lens-node-agent stopping";
  (*service)->Stop();
  return 0;
}
