// lens-jobs: receives container events from the node agents (gRPC) and
// stores them, and runs the scheduled jobs (allocation, consumers, node and
// device info, workload and pod status, storage); /metrics, /healthz,
// /readyz and /jobs over HTTP. Flags and lifecycle only: the jobs service
// does the work.
#include <cstdio>

#include "cli_exit.h"
#include "core/process.h"
#include "flags.h"
#include "lens/log.h"
#include "lens/version.h"
#include "service/jobs_service.h"

int main(int argc, char** argv) {
  lens::BlockShutdownSignals();
  CLI::App app{
      "lens-jobs: stores the node agents' container events and runs the "
      "scheduled jobs"};
  app.set_version_flag("--version", std::string(lens::Version()));
  lens::cli::ConfigFlags flags;
  flags.AddFile(app, "YAML config file (jobs and database sections, logging)");
  flags.Add(app, lens::cli::kJobsFlags);
  flags.Add(app, lens::cli::kLoggingFlags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return lens::cli::UsageExit(app, e, "lens-jobs");
  }
  // Bad flags, config, token or TLS files: 2. Unreachable database, a port
  // that cannot be bound, anything else: 1.
  auto config = flags.Load();
  auto options = config.ok() ? lens::JobsServiceOptionsFromConfig(*config)
                             : config.status();
  if (!options.ok()) {
    std::fprintf(stderr, "lens-jobs: %s\n", options.status().message().c_str());
    return 2;
  }
  lens::ConfigureLogging(
      {config->logging.level, config->logging.format, {}, {}});
  auto service = lens::JobsService::Start(*options);
  if (!service.ok()) {
    return lens::cli::StartFailureExit(service.status(), "lens-jobs");
  }
  LENS_LOG(INFO)
          .Field("grpc", options->events.listen)
          .Field("grpc_port", (*service)->grpc_port())
          .Field("http", (*service)->http_url())
          .Field("database", (*service)->database())
      << "lens-jobs serving";
  const int sig = lens::WaitForShutdownSignal();
  LENS_LOG(INFO).Field("signal", sig) << "lens-jobs stopping";
  (*service)->Stop();
  return 0;
}
