// lens-api: the REST API and the dashboard over the store, with time series
// from a PromQL server or the store's sample history. Flags and lifecycle
// only: the API service does the work.
#include <cstdio>

#include "cli_exit.h"
#include "core/process.h"
#include "flags.h"
#include "lens/log.h"
#include "lens/version.h"
#include "service/api_service.h"

int main(int argc, char** argv) {
  lens::BlockShutdownSignals();
  CLI::App app{"lens-api: the Lens REST API and dashboard"};
  app.set_version_flag("--version", std::string(lens::Version()));
  lens::cli::ConfigFlags flags;
  flags.AddFile(app, "YAML config file (api and database sections, logging)");
  flags.Add(app, lens::cli::kApiFlags);
  flags.Add(app, lens::cli::kLoggingFlags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return lens::cli::UsageExit(app, e, "lens-api");
  }
  // Bad flags, config, token or TLS files: 2. Unreachable database, a port
  // that cannot be used, anything else: 1.
  auto config = flags.Load();
  auto options = config.ok() ? lens::ApiServiceOptionsFromConfig(*config)
                             : config.status();
  if (!options.ok()) {
    std::fprintf(stderr, "lens-api: %s\n", options.status().message().c_str());
    return 2;
  }
  lens::ConfigureLogging(
      {config->logging.level, config->logging.format, {}, {}});
  auto service = lens::ApiService::Start(*options);
  if (!service.ok()) {
    return lens::cli::StartFailureExit(service.status(), "lens-api");
  }
  LENS_LOG(INFO)
          .Field("http", (*service)->http_url())
          .Field("cluster", options->api.cluster)
          .Field("series", (*service)->series_backend())
          .Field("dashboard", options->dashboard)
          .Field("database", (*service)->database())
      << "lens-api serving";
  const int sig = lens::WaitForShutdownSignal();
  LENS_LOG(INFO).Field("signal", sig) << "lens-api stopping";
  (*service)->Stop();
  return 0;
}
