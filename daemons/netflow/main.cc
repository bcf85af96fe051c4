// lens-netflow: per-node TCP flow accounting with eBPF; /metrics (bounded:
// per class, direction and workload, top-K remotes), /flows (the last
// drain's sockets as JSON) and /healthz. Flows are attributed to pods and
// workloads through the container tracker (containerd), as in lens up.
// Flags and lifecycle only: the node service does the work.
#include "node_flags.h"
#include "run_daemon.h"
#include "service/node_service.h"

namespace {

// Bad options: 2. No privilege or kernel support, anything else: 1
// (docs/netflow.md).
int StartExit(const lens::Status& status, const char* name) {
  std::fprintf(stderr, "%s: %s\n", name, status.message().c_str());
  return status.code() == lens::StatusCode::kInvalidArgument ? 2 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  using lens::NodeService;
  using lens::NodeServiceOptions;
  return lens::cli::RunDaemon<NodeServiceOptions, NodeService>(
      argc, argv,
      {.name = "lens-netflow",
       .about = "lens-netflow: TCP flows of this node, counted with eBPF",
       .config_help = "YAML config file (netflow section; nodeExporter's "
                      "container keys; metrics.compatNames)",
       .flags = {lens::cli::kNetflowFlags, lens::cli::kContainerFlags},
       .options =
           [](const lens::Config& config) {
             return lens::NodeServiceOptionsFromConfig(
                 config, lens::kNodeFlows | lens::kNodeContainers);
           },
       .describe =
           [](lens::LogMessage& line, const lens::Config& config,
              const NodeServiceOptions&, NodeService& s) {
             line.Field("http", s.flows_url())
                 .Field("interval_ms", config.netflow.interval.count())
                 .Field("containers", s.containers() != nullptr);
           },
       .start_exit = &StartExit});
}
