// lens-jobs composed once: the store, the container event server and the
// HTTP routes, from one options struct.
#include "lens/jobs_service.h"

#include <mutex>

#include "lens/log.h"
#include "lens/metrics.h"
#include "lens/store.h"

namespace lens {

Status JobsServiceOptions::Validate() const {
  if (database_url.empty()) return InvalidArgumentError("database: empty URL");
  LENS_RETURN_IF_ERROR(http.Validate().WithContext("http"));
  if (events.max_streams < 1)
    return InvalidArgumentError("events.max_streams: must be at least 1");
  return OkStatus();
}

StatusOr<JobsServiceOptions> JobsServiceOptionsFromConfig(
    const Config& config) {
  LENS_RETURN_IF_ERROR(config.jobs.Validate().WithContext("jobs"));
  LENS_RETURN_IF_ERROR(config.database.Validate().WithContext("database"));
  const JobsOptions& j = config.jobs;
  JobsServiceOptions o;
  o.database_url = config.database.url;
  std::string token;
  if (!j.bearer_token_file.empty()) {
    LENS_ASSIGN_OR_RETURN(token, ReadBearerTokenFile(j.bearer_token_file,
                                                     "jobs.bearerTokenFile"));
  }
  o.events.listen = j.listen_grpc;
  o.events.bearer_token = token;
  o.events.tls_cert_file = j.tls_cert_file;
  o.events.tls_key_file = j.tls_key_file;
  o.events.max_streams = j.max_agent_streams;
  o.http.listen = j.listen_http;
  o.http.bearer_token = token;
  o.http.tls_cert_file = j.tls_cert_file;
  o.http.tls_key_file = j.tls_key_file;
  LENS_RETURN_IF_ERROR(o.Validate());
  return o;
}

struct JobsService::Impl {
  std::unique_ptr<Store> store;
  std::unique_ptr<ContainerEventServer> events;
  std::unique_ptr<HttpServer> http;
  std::mutex stop_mu;
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
  LENS_ASSIGN_OR_RETURN(s.http, HttpServer::Create(options.http));
  const ContainerEventServer* events = s.events.get();
  s.http->Handle("GET", "/metrics",
                 [events](const HttpRequest&, HttpResponse* r) {
                   r->content_type = std::string(kPrometheusTextContentType);
                   r->body = events->RenderMetrics();
                 });
  s.http->Handle("GET", "/healthz", [](const HttpRequest&, HttpResponse* r) {
    r->content_type = "text/plain";
    r->body = "ok\n";
  });
  LENS_RETURN_IF_ERROR(s.http->Start());
  return service;
}

void JobsService::Stop() {
  std::lock_guard lock(impl_->stop_mu);
  if (impl_->http) impl_->http->Stop();
  if (impl_->events) impl_->events->Stop();
}

int JobsService::grpc_port() const { return impl_->events->port(); }
std::string JobsService::http_url() const { return impl_->http->url(); }
std::string JobsService::database() const { return impl_->store->target(); }

}  // namespace lens
