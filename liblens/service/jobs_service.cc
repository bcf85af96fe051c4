// lens-jobs composed once: the store, the container event server, the
// Kubernetes client with its leader elector, the scheduled jobs and the HTTP
// routes, from one options struct.
#include "service/jobs_service.h"

#include "lens/store.h"
#include "service/service_host.h"

namespace lens {

Status JobsServiceOptions::Validate() const {
  if (database_url.empty()) return InvalidArgumentError("database: empty URL");
  LENS_RETURN_IF_ERROR(http.Validate().WithContext("http"));
  if (events.max_streams < 1)
    return InvalidArgumentError("events.max_streams: must be at least 1");
  if (scheduled_jobs) LENS_RETURN_IF_ERROR(jobs.Validate().WithContext("jobs"));
  if (!kube.server.empty() && leader_election && leader.identity.empty()) {
    return InvalidArgumentError("jobs: leader election needs an identity");
  }
  return OkStatus();
}

StatusOr<JobsServiceOptions> JobsServiceOptionsFromConfig(
    const Config& config) {
  LENS_RETURN_IF_ERROR(config.jobs.Validate().WithContext("jobs"));
  LENS_RETURN_IF_ERROR(config.database.Validate().WithContext("database"));
  const JobsOptions& j = config.jobs;
  JobsServiceOptions o;
  o.database_url = config.database.url;
  LENS_ASSIGN_OR_RETURN(o.http, service::ServiceHttpOptions(
                                    "jobs", j.listen_http, j.bearer_token_file,
                                    j.tls_cert_file, j.tls_key_file));
  o.events.listen = j.listen_grpc;
  o.events.bearer_token = o.http.bearer_token;
  o.events.tls_cert_file = j.tls_cert_file;
  o.events.tls_key_file = j.tls_key_file;
  o.events.max_streams = j.max_agent_streams;
  if (!j.node_tokens_file.empty()) {
    LENS_ASSIGN_OR_RETURN(
        o.events.node_tokens,
        ReadNodeTokensFile(j.node_tokens_file, "jobs.nodeTokensFile"));
  }
  o.events.accept_shared_token = j.accept_shared_agent_token;
  o.events.max_queued_bytes = static_cast<size_t>(j.max_queue_bytes);
  o.events.max_snapshot_bytes = static_cast<size_t>(j.max_snapshot_bytes);
  o.scheduled_jobs = j.scheduled_jobs;
  if (j.in_cluster) {
    LENS_ASSIGN_OR_RETURN(o.kube, InClusterConnection());
  } else if (!j.kubeconfig.empty()) {
    LENS_ASSIGN_OR_RETURN(o.kube, LoadKubeconfig(j.kubeconfig, j.context));
  }
  o.leader_election = j.leader_election;
  o.leader = service::ServiceLeaderOptions(j.lease_namespace, j.lease_name,
                                           j.identity, "lens-jobs");
  o.jobs = j.scheduled;
  if (!j.agent_token_file.empty()) {
    LENS_ASSIGN_OR_RETURN(
        o.jobs.agent_token,
        ReadBearerTokenFile(j.agent_token_file, "jobs.agentTokenFile"));
  }
  LENS_RETURN_IF_ERROR(o.Validate());
  return o;
}

struct JobsService::Impl {
  std::unique_ptr<Store> store;
  std::unique_ptr<ContainerEventServer> events;
  std::unique_ptr<KubeClient> client;
  std::unique_ptr<ScheduledJobs> jobs;
  std::unique_ptr<service::ServiceHost> host;  // stops before the rest goes
};

JobsService::JobsService() : impl_(std::make_unique<Impl>()) {}
JobsService::~JobsService() { Stop(); }

StatusOr<std::unique_ptr<JobsService>> JobsService::Start(
    const JobsServiceOptions& options) {
  LENS_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<JobsService> service(new JobsService());
  Impl& s = *service->impl_;
  LENS_ASSIGN_OR_RETURN(s.store, Store::Open(options.database_url));
  s.events =
      std::make_unique<ContainerEventServer>(options.events, s.store.get());
  LENS_RETURN_IF_ERROR(s.events->Start().WithContext("container event server"));
  Impl* impl = &s;
  service::ServiceHost::Options host;
  host.http = options.http;
  // Ready once the store is open and the event server listens: always, here.
  host.metrics = [impl] {
    std::string out = impl->events->RenderMetrics();
    if (impl->jobs) out += impl->jobs->RenderMetrics();
    return out;
  };
  if (options.scheduled_jobs) {
    if (!options.kube.server.empty()) {
      LENS_ASSIGN_OR_RETURN(s.client, KubeClient::Create(options.kube));
      if (options.leader_election) {
        host.leader_client = s.client.get();
        host.leader = options.leader;
      }
    }
    LENS_ASSIGN_OR_RETURN(
        s.jobs,
        ScheduledJobs::Create(options.jobs, s.store.get(), s.client.get()));
  }
  LENS_ASSIGN_OR_RETURN(s.host, service::ServiceHost::Create(std::move(host)));
  s.host->AddStop([impl] { impl->events->Stop(); });
  if (s.jobs) s.host->AddStop([impl] { impl->jobs->Stop(); });
  s.host->http().Handle(
      "GET", "/jobs", [impl](const HttpRequest&, HttpResponse* r) {
        if (!impl->jobs) {
          RespondError(404, "the scheduled jobs are off (jobs.scheduledJobs)",
                       r);
          return;
        }
        RespondData(impl->jobs->StatusJson(), r);
      });
  LENS_RETURN_IF_ERROR(s.host->Start());
  if (s.jobs) s.jobs->Start([impl] { return impl->host->Leading(); });
  return service;
}

void JobsService::Stop() {
  if (impl_->host) {
    impl_->host->Stop();
  } else if (impl_->events) {
    impl_->events->Stop();  // started before the host could be made
  }
}

Status JobsService::RunJob(std::string_view name) {
  if (!impl_->jobs) {
    return FailedPreconditionError("the scheduled jobs are off");
  }
  return impl_->jobs->RunOnce(name);
}

bool JobsService::IsLeader() const { return impl_->host->Leading(); }
int JobsService::grpc_port() const { return impl_->events->port(); }
std::string JobsService::http_url() const { return impl_->host->url(); }
std::string JobsService::database() const { return impl_->store->target(); }

}  // namespace lens
