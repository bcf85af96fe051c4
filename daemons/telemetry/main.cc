// lens-telemetry: Prometheus remote write in, each selected series enriched
// with the workload that held its pod or device at each sample's time, out
// to remote-write receivers through an on-disk queue; fluent-bit's training
// logs into the store. Flags and lifecycle only: the telemetry service does
// the work.
#include "flags.h"
#include "run_daemon.h"
#include "service/telemetry_service.h"

int main(int argc, char** argv) {
  using lens::TelemetryService;
  using lens::TelemetryServiceOptions;
  // Bad flags, config, token or TLS files: 2. Unreachable database, a queue
  // directory or port that cannot be used, anything else: 1.
  return lens::cli::RunDaemon<TelemetryServiceOptions, TelemetryService>(
      argc, argv,
      {.name = "lens-telemetry",
       .about = "lens-telemetry: enriches remote-write series with their "
                "workloads and stores training logs",
       .config_help =
           "YAML config file (telemetry and database sections, logging)",
       .flags = {lens::cli::kTelemetryFlags},
       .options = lens::TelemetryServiceOptionsFromConfig,
       .describe = [](lens::LogMessage& line, const lens::Config&,
                      const TelemetryServiceOptions& o, TelemetryService& s) {
         line.Field("http", s.http_url())
             .Field("forward_targets", o.telemetry.forward.size())
             .Field("sample_history", o.telemetry.sample_history)
             .Field("database", s.database());
       }});
}
