// lens-telemetry: Prometheus remote write in, each selected series enriched
// with the workload that held its pod or device at each sample's time, out
// to remote-write receivers through an on-disk queue; fluent-bit's training
// logs into the store. Flags and lifecycle only: the telemetry service does
// the work.
#include <cstdio>

#include "cli_exit.h"
#include "core/process.h"
#include "flags.h"
#include "lens/log.h"
#include "lens/version.h"
#include "service/telemetry_service.h"

int main(int argc, char** argv) {
  lens::BlockShutdownSignals();
  CLI::App app{
      "lens-telemetry: enriches remote-write series with their workloads and "
      "stores training logs"};
  app.set_version_flag("--version", std::string(lens::Version()));
  lens::cli::ConfigFlags flags;
  flags.AddFile(app,
                "YAML config file (telemetry and database sections, logging)");
  flags.Add(app, lens::cli::kTelemetryFlags);
  flags.Add(app, lens::cli::kLoggingFlags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return lens::cli::UsageExit(app, e, "lens-telemetry");
  }
  // Bad flags, config, token or TLS files: 2. Unreachable database, a queue
  // directory or port that cannot be used, anything else: 1.
  auto config = flags.Load();
  auto options = config.ok() ? lens::TelemetryServiceOptionsFromConfig(*config)
                             : config.status();
  if (!options.ok()) {
    std::fprintf(stderr, "lens-telemetry: %s\n",
                 options.status().message().c_str());
    return 2;
  }
  lens::ConfigureLogging(
      {config->logging.level, config->logging.format, {}, {}});
  auto service = lens::TelemetryService::Start(*options);
  if (!service.ok()) {
    return lens::cli::StartFailureExit(service.status(), "lens-telemetry");
  }
  LENS_LOG(INFO)
          .Field("http", (*service)->http_url())
          .Field("forward_targets", options->telemetry.forward.size())
          .Field("sample_history", options->telemetry.sample_history)
          .Field("database", (*service)->database())
      << "lens-telemetry serving";
  const int sig = lens::WaitForShutdownSignal();
  LENS_LOG(INFO).Field("signal", sig) << "lens-telemetry stopping";
  (*service)->Stop();
  return 0;
}
