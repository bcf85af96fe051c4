// lens-controller: GPU pods, their workloads and the nodes from the
// Kubernetes API server into the store; /healthz, /readyz and /metrics over
// HTTP. Flags and lifecycle only: the controller service does the work.
#include "flags.h"
#include "run_daemon.h"
#include "service/controller_service.h"

int main(int argc, char** argv) {
  using lens::ControllerService;
  using lens::ControllerServiceOptions;
  // Bad flags, config, kubeconfig or token files: 2. Unreachable database,
  // a port that cannot be bound, anything else: 1.
  return lens::cli::RunDaemon<ControllerServiceOptions, ControllerService>(
      argc, argv,
      {.name = "lens-controller",
       .about = "lens-controller: GPU pods, workloads and nodes from the "
                "Kubernetes API server into the store",
       .config_help = "YAML config file (controller and database sections, "
                      "logging)",
       .flags = {lens::cli::kControllerFlags},
       .options = lens::ControllerServiceOptionsFromConfig,
       .describe =
           [](lens::LogMessage& line, const lens::Config&,
              const ControllerServiceOptions& o, ControllerService& s) {
             line.Field("server", s.server())
                 .Field("origin", o.connection.origin)
                 .Field("http", s.http_url())
                 .Field("database", s.database())
                 .Field("leader_election", o.leader_election)
                 .Field("identity", o.leader.identity);
           },
       .running = "running"});
}
