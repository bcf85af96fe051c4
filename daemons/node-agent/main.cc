// lens-node-agent: the per-node DaemonSet. GPU/RDMA/node probes every
// interval, /metrics and the node REST API, container tracking (/pods) and
// the container event stream to lens-jobs. Flags and lifecycle only: the
// node service does the work.
#include "node_flags.h"
#include "run_daemon.h"
#include "service/node_service.h"

namespace {

// Any start failure (no sysfs, a port in use): 1.
int StartExit(const lens::Status& status, const char* name) {
  std::fprintf(stderr, "%s: %s\n", name, status.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using lens::NodeService;
  using lens::NodeServiceOptions;
  return lens::cli::RunDaemon<NodeServiceOptions, NodeService>(
      argc, argv,
      {.name = "lens-node-agent",
       .about = "lens-node-agent: GPU, RDMA and node metrics and inventory of "
                "this node",
       .config_help = "YAML config file (nodeExporter section)",
       .flags = {lens::cli::kNodeAgentFlags, lens::cli::kContainerFlags},
       .options =
           [](const lens::Config& config) {
             return lens::NodeServiceOptionsFromConfig(
                 config, lens::kNodeAgent | lens::kNodeContainers);
           },
       .describe =
           [](lens::LogMessage& line, const lens::Config&,
              const NodeServiceOptions& o, NodeService& s) {
             line.Field("url", s.url()).Field("node", o.node_name);
           },
       .start_exit = &StartExit});
}
