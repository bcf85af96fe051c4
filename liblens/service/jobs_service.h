// lens-jobs composed once: the container event server (gRPC, the node agents
// stream into the store; every replica), the scheduled jobs (jobs/jobs.h;
// on the replica holding the Lease when a cluster is configured), and
// /metrics, /healthz, /readyz and /jobs over HTTP, built from one options
// struct and that struct from the config (`jobs:`, `database:`,
// `logging:`).
//
//   auto config = lens::LoadConfig(path, {.overrides = flags});
//   auto options = lens::JobsServiceOptionsFromConfig(*config);
//   auto service = lens::JobsService::Start(*options);
//   ...
//   (*service)->Stop();
#ifndef LENS_SERVICE_JOBS_SERVICE_H_
#define LENS_SERVICE_JOBS_SERVICE_H_

#include <memory>
#include <string>

#include "container_events/container_events.h"
#include "http/http.h"
#include "lens/kube.h"
#include "lens/status.h"
#include "scheduled/jobs.h"
#include "service/config.h"

namespace lens {

// What a JobsService runs. Plain value.
struct JobsServiceOptions {
  std::string database_url;  // Store::Open's URL
  ContainerEventServerOptions events;
  HttpServerOptions http;  // /metrics, /healthz, /readyz, /jobs
  // The scheduled jobs; off: the event server only.
  bool scheduled_jobs = true;
  ScheduledJobsOptions jobs;
  // The API server (no server: no cluster; the jobs always run here).
  KubeConnection kube;
  bool leader_election = true;  // with an API server
  KubeLeaderOptions leader;     // Lease "lens-jobs" by default

  // InvalidArgument naming the field.
  Status Validate() const;
};

// From the config's `jobs:` and `database:` sections. Reads the bearer token
// files and the kubeconfig (errors name the key and the file, never a
// token).
StatusOr<JobsServiceOptions> JobsServiceOptionsFromConfig(const Config& config);

// The running service. Thread-safe.
class JobsService {
 public:
  // Opens the store (migrating it), starts the event server, then serves
  // HTTP. Errors: InvalidArgument (options, TLS files), the store's errors
  // (the URL named with its password redacted), Unavailable (cannot listen;
  // names the address).
  static StatusOr<std::unique_ptr<JobsService>> Start(
      const JobsServiceOptions& options);
  ~JobsService();  // stops
  JobsService(const JobsService&) = delete;
  JobsService& operator=(const JobsService&) = delete;

  // Stops HTTP, then the event server (open streams end with UNAVAILABLE;
  // queued messages are written). Idempotent.
  void Stop();

  // Runs one scheduled job now (see ScheduledJobs::RunOnce);
  // FailedPrecondition when the jobs are off.
  Status RunJob(std::string_view name);
  // Whether this replica runs the jobs now.
  bool IsLeader() const;

  int grpc_port() const;
  std::string http_url() const;
  std::string database() const;  // the store's target, password redacted

 private:
  JobsService();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens

#endif  // LENS_SERVICE_JOBS_SERVICE_H_
