// The service skeleton (service_host.h).
#include "service/service_host.h"

#include <mutex>
#include <thread>
#include <vector>

#include "core/metrics.h"
#include "lens/log.h"

namespace lens::service {

// A thread of the service's, or (no `run`) a stop callback alone.
struct ServiceHost::Part {
  std::string what;
  std::function<Status()> run;
  std::function<void()> stop;
  std::thread thread;
};

struct ServiceHost::State {
  std::vector<Part> parts;  // in order of adding
  std::thread elector;
  std::mutex stop_mu;
  bool stopped = false;  // GUARDED_BY(stop_mu)
};

ServiceHost::ServiceHost(Options options)
    : options_(std::move(options)), state_(std::make_unique<State>()) {}

ServiceHost::~ServiceHost() { Stop(); }

StatusOr<std::unique_ptr<ServiceHost>> ServiceHost::Create(Options options) {
  std::unique_ptr<ServiceHost> host(new ServiceHost(std::move(options)));
  LENS_ASSIGN_OR_RETURN(host->http_, HttpServer::Create(host->options_.http));
  if (host->options_.leader_client) {
    host->elector_ = std::make_unique<KubeLeaderElector>(
        host->options_.leader_client, host->options_.leader);
  }
  ServiceHost* self = host.get();
  HttpServer& http = *host->http_;
  http.Handle("GET", "/healthz", [](const HttpRequest&, HttpResponse* r) {
    r->content_type = "text/plain";
    r->body = "ok\n";
  });
  http.Handle("GET", "/readyz", [self](const HttpRequest&, HttpResponse* r) {
    r->content_type = "text/plain";
    const Status ready =
        self->options_.ready ? self->options_.ready() : OkStatus();
    r->status = ready.ok() ? 200 : 503;
    r->body = ready.ok() ? "ok\n" : ready.message() + "\n";
  });
  http.Handle("GET", "/metrics", [self](const HttpRequest&, HttpResponse* r) {
    r->content_type = std::string(kPrometheusTextContentType);
    if (self->options_.metrics) r->body = self->options_.metrics();
    self->http_->RenderMetrics(&r->body);
  });
  return host;
}

void ServiceHost::AddThread(std::string what, std::function<Status()> run,
                            std::function<void()> stop) {
  state_->parts.push_back(
      {std::move(what), std::move(run), std::move(stop), std::thread()});
}

void ServiceHost::AddStop(std::function<void()> stop) {
  state_->parts.push_back({"", nullptr, std::move(stop), std::thread()});
}

Status ServiceHost::Start() {
  LENS_RETURN_IF_ERROR(http_->Start());
  if (elector_) {
    state_->elector = std::thread([elector = elector_.get()] {
      const Status st = elector->Run();
      if (!st.ok()) {
        LENS_LOG(ERROR).Field("error", st.message()) << "leader election";
      }
    });
  }
  for (Part& part : state_->parts) {
    if (!part.run) continue;
    part.thread = std::thread([&part] {
      const Status st = part.run();
      if (!st.ok()) LENS_LOG(ERROR).Field("error", st.message()) << part.what;
    });
  }
  return OkStatus();
}

void ServiceHost::Stop() {
  std::lock_guard lock(state_->stop_mu);
  if (state_->stopped) return;
  state_->stopped = true;
  if (http_) http_->Stop();
  for (auto it = state_->parts.rbegin(); it != state_->parts.rend(); ++it) {
    if (it->stop) it->stop();
    if (it->thread.joinable()) it->thread.join();
  }
  if (elector_) elector_->Stop();
  if (state_->elector.joinable()) state_->elector.join();
}

bool ServiceHost::Leading() const { return !elector_ || elector_->IsLeader(); }

uint64_t ServiceHost::leader_transitions() const {
  return elector_ ? elector_->transitions() : 0;
}

StatusOr<HttpServerOptions> ServiceHttpOptions(
    std::string_view section, const std::string& listen,
    const std::string& token_file, const std::string& tls_cert_file,
    const std::string& tls_key_file) {
  HttpServerOptions o;
  if (!token_file.empty()) {
    LENS_ASSIGN_OR_RETURN(
        o.bearer_token,
        ReadBearerTokenFile(token_file,
                            std::string(section) + ".bearerTokenFile"));
  }
  o.listen = listen;
  o.public_paths = {"/healthz", "/readyz"};
  o.priority_paths = {"/metrics", "/healthz", "/readyz"};
  o.tls_cert_file = tls_cert_file;
  o.tls_key_file = tls_key_file;
  return o;
}

KubeLeaderOptions ServiceLeaderOptions(const std::string& lease_namespace,
                                       const std::string& lease_name,
                                       const std::string& identity,
                                       std::string_view fallback) {
  KubeLeaderOptions o;
  o.namespace_name = lease_namespace;
  o.lease_name = lease_name;
  o.identity = identity.empty() ? DefaultLeaderIdentity(fallback) : identity;
  return o;
}

}  // namespace lens::service
