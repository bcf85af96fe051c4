// lens-api: the REST API and the dashboard over the store, with time series
// from a PromQL server or the store's sample history. Flags and lifecycle
// only: the API service does the work.
#include "flags.h"
#include "run_daemon.h"
#include "service/api_service.h"

int main(int argc, char** argv) {
  using lens::ApiService;
  using lens::ApiServiceOptions;
  // Bad flags, config, token or TLS files: 2. Unreachable database, a port
  // that cannot be used, anything else: 1.
  return lens::cli::RunDaemon<ApiServiceOptions, ApiService>(
      argc, argv,
      {.name = "lens-api",
       .about = "lens-api: the Lens REST API and dashboard",
       .config_help = "YAML config file (api and database sections, logging)",
       .flags = {lens::cli::kApiFlags},
       .options = lens::ApiServiceOptionsFromConfig,
       .describe = [](lens::LogMessage& line, const lens::Config&,
                      const ApiServiceOptions& o, ApiService& s) {
         line.Field("http", s.http_url())
             .Field("cluster", o.api.cluster)
             .Field("series", s.series_backend())
             .Field("dashboard", o.dashboard)
             .Field("database", s.database());
       }});
}
