// lens-controller: GPU pods, their workloads and the nodes from the
// Kubernetes API server into the store; /healthz, /readyz and /metrics over
// HTTP. Flags and lifecycle only: the controller service does the work.
#include <cstdio>

#include "cli_exit.h"
#include "core/process.h"
#include "flags.h"
#include "lens/log.h"
#include "lens/version.h"
#include "service/controller_service.h"

int main(int argc, char** argv) {
  lens::BlockShutdownSignals();
  CLI::App app{
      "lens-controller: GPU pods, workloads and nodes from the Kubernetes "
      "API server into the store"};
  app.set_version_flag("--version", std::string(lens::Version()));
  lens::cli::ConfigFlags flags;
  flags.AddFile(app,
                "YAML config file (controller and database sections, "
                "logging)");
  flags.Add(app, lens::cli::kControllerFlags);
  flags.Add(app, lens::cli::kLoggingFlags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return lens::cli::UsageExit(app, e, "lens-controller");
  }
  // Bad flags, config, kubeconfig or token files: 2. Unreachable database,
  // a port that cannot be bound, anything else: 1.
  auto config = flags.Load();
  auto options = config.ok() ? lens::ControllerServiceOptionsFromConfig(*config)
                             : config.status();
  if (!options.ok()) {
    std::fprintf(stderr, "lens-controller: %s\n",
                 options.status().message().c_str());
    return 2;
  }
  lens::ConfigureLogging(
      {config->logging.level, config->logging.format, {}, {}});
  auto service = lens::ControllerService::Start(*options);
  if (!service.ok()) {
    return lens::cli::StartFailureExit(service.status(), "lens-controller");
  }
  LENS_LOG(INFO)
          .Field("server", (*service)->server())
          .Field("origin", options->connection.origin)
          .Field("http", (*service)->http_url())
          .Field("database", (*service)->database())
          .Field("leader_election", options->leader_election)
          .Field("identity", options->leader.identity)
      << "lens-controller running";
  const int sig = lens::WaitForShutdownSignal();
  LENS_LOG(INFO).Field("signal", sig) << "lens-controller stopping";
  (*service)->Stop();
  return 0;
}
