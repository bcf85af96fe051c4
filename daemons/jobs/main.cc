// lens-jobs: receives container events from the node agents (gRPC) and
// stores them, and runs the scheduled jobs (allocation, consumers, node and
// device info, workload and pod status, storage); /metrics, /healthz,
// /readyz and /jobs over HTTP. Flags and lifecycle only: the jobs service
// does the work.
#include "flags.h"
#include "run_daemon.h"
#include "service/jobs_service.h"

int main(int argc, char** argv) {
  using lens::JobsService;
  using lens::JobsServiceOptions;
  // Bad flags, config, token or TLS files: 2. Unreachable database, a port
  // that cannot be bound, anything else: 1.
  return lens::cli::RunDaemon<JobsServiceOptions, JobsService>(
      argc, argv,
      {.name = "lens-jobs",
       .about = "lens-jobs: stores the node agents' container events and runs "
                "the scheduled jobs",
       .config_help = "YAML config file (jobs and database sections, logging)",
       .flags = {lens::cli::kJobsFlags},
       .options = lens::JobsServiceOptionsFromConfig,
       .describe = [](lens::LogMessage& line, const lens::Config&,
                      const JobsServiceOptions& o, JobsService& s) {
         line.Field("grpc", o.events.listen)
             .Field("grpc_port", s.grpc_port())
             .Field("http", s.http_url())
             .Field("database", s.database());
       }});
}
