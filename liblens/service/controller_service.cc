// lens-controller composed once: store, client, elector, controller and the
// HTTP routes, from one options struct.
#include "service/controller_service.h"

#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <thread>

#include "cluster/controller.h"
#include "cluster/controller_metrics.h"
#include "core/metrics.h"
#include "lens/log.h"
#include "lens/store.h"

namespace lens {
namespace {

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

}  // namespace

Status ControllerServiceOptions::Validate() const {
  if (database_url.empty()) return InvalidArgumentError("database: empty URL");
  if (connection.server.empty()) {
    return InvalidArgumentError(
        "controller: no API server (set kubeconfig or inCluster)");
  }
  LENS_RETURN_IF_ERROR(http.Validate().WithContext("http"));
  if (gpu_resources.empty()) {
    return InvalidArgumentError("controller: no GPU resources to look for");
  }
  if (leader_election && leader.identity.empty()) {
    return InvalidArgumentError(
        "controller: leader election needs an identity");
  }
  return OkStatus();
}

StatusOr<ControllerServiceOptions> ControllerServiceOptionsFromConfig(
    const Config& config) {
  const ControllerConfigOptions& c = config.controller;
  LENS_RETURN_IF_ERROR(c.Validate().WithContext("controller"));
  LENS_RETURN_IF_ERROR(config.database.Validate().WithContext("database"));
  ControllerServiceOptions o;
  o.database_url = config.database.url;
  if (c.in_cluster) {
    LENS_ASSIGN_OR_RETURN(o.connection, InClusterConnection());
  } else if (!c.kubeconfig.empty()) {
    LENS_ASSIGN_OR_RETURN(o.connection,
                          LoadKubeconfig(c.kubeconfig, c.context));
  } else {
    return InvalidArgumentError(
        "controller: no API server: set controller.kubeconfig (--kubeconfig) "
        "or controller.inCluster (--in-cluster)");
  }
  std::string token;
  if (!c.bearer_token_file.empty()) {
    LENS_ASSIGN_OR_RETURN(
        token,
        ReadBearerTokenFile(c.bearer_token_file, "controller.bearerTokenFile"));
  }
  o.http.listen = c.listen_http;
  o.http.bearer_token = token;
  o.http.public_paths = {"/healthz", "/readyz"};
  o.http.priority_paths = {"/metrics", "/healthz", "/readyz"};
  o.http.tls_cert_file = c.tls_cert_file;
  o.http.tls_key_file = c.tls_key_file;
  o.gpu_resources = SplitCommas(c.gpu_resources);
  o.leader_election = c.leader_election;
  o.leader.namespace_name = c.lease_namespace;
  o.leader.lease_name = c.lease_name;
  o.leader.identity = c.identity.empty()
                          ? DefaultLeaderIdentity("lens-controller")
                          : c.identity;
  LENS_RETURN_IF_ERROR(o.Validate());
  return o;
}

struct ControllerService::Impl {
  ControllerServiceOptions options;
  std::unique_ptr<Store> store;
  std::unique_ptr<KubeClient> client;
  std::unique_ptr<KubeLeaderElector> elector;
  std::unique_ptr<cluster::Controller> controller;
  std::unique_ptr<HttpServer> http;
  std::thread elector_thread;
  std::thread controller_thread;
  std::mutex stop_mu;
  bool stopped = false;  // GUARDED_BY(stop_mu)

  bool Leading() const { return !elector || elector->IsLeader(); }
};

ControllerService::ControllerService() : impl_(std::make_unique<Impl>()) {}
ControllerService::~ControllerService() { Stop(); }

StatusOr<std::unique_ptr<ControllerService>> ControllerService::Start(
    const ControllerServiceOptions& options) {
  LENS_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<ControllerService> service(new ControllerService());
  Impl& s = *service->impl_;
  s.options = options;
  LENS_ASSIGN_OR_RETURN(s.store, Store::Open(options.database_url));
  LENS_ASSIGN_OR_RETURN(s.client,
                        KubeClient::Create(options.connection, options.client));
  if (options.leader_election) {
    s.elector =
        std::make_unique<KubeLeaderElector>(s.client.get(), options.leader);
  }
  cluster::ControllerOptions co;
  co.gpu_resources = options.gpu_resources;
  Impl* impl = &s;
  s.controller = std::make_unique<cluster::Controller>(
      s.client.get(), s.store.get(), co,
      options.leader_election
          ? std::function<bool()>([impl] { return impl->elector->IsLeader(); })
          : std::function<bool()>());
  LENS_ASSIGN_OR_RETURN(s.http, HttpServer::Create(options.http));
  s.http->Handle("GET", "/healthz", [](const HttpRequest&, HttpResponse* r) {
    r->content_type = "text/plain";
    r->body = "ok\n";
  });
  s.http->Handle("GET", "/readyz", [impl](const HttpRequest&, HttpResponse* r) {
    r->content_type = "text/plain";
    const bool ready = impl->controller->Ready();
    r->status = ready ? 200 : 503;
    r->body = ready ? "ok\n" : "not synced with the API server yet\n";
  });
  s.http->Handle("GET", "/metrics",
                 [impl](const HttpRequest&, HttpResponse* r) {
                   r->content_type = std::string(kPrometheusTextContentType);
                   r->body = cluster::RenderControllerMetrics(
                       impl->controller->Stats(),
                       impl->elector ? impl->elector->transitions() : 0);
                   impl->http->RenderMetrics(&r->body);
                 });
  LENS_RETURN_IF_ERROR(s.http->Start());
  if (s.elector) {
    s.elector_thread = std::thread([impl] {
      Status st = impl->elector->Run();
      if (!st.ok()) {
        LENS_LOG(ERROR).Field("error", st.message()) << "leader election";
      }
    });
  }
  s.controller_thread = std::thread([impl] {
    Status st = impl->controller->Run();
    if (!st.ok()) {
      LENS_LOG(ERROR).Field("error", st.message()) << "controller";
    }
  });
  return service;
}

void ControllerService::Stop() {
  std::lock_guard lock(impl_->stop_mu);
  if (impl_->stopped) return;
  impl_->stopped = true;
  if (impl_->http) impl_->http->Stop();
  if (impl_->controller) impl_->controller->Stop();
  if (impl_->controller_thread.joinable()) impl_->controller_thread.join();
  if (impl_->elector) impl_->elector->Stop();
  if (impl_->elector_thread.joinable()) impl_->elector_thread.join();
}

bool ControllerService::Ready() const { return impl_->controller->Ready(); }
bool ControllerService::IsLeader() const { return impl_->Leading(); }
std::string ControllerService::http_url() const { return impl_->http->url(); }
std::string ControllerService::database() const {
  return impl_->store->target();
}
std::string ControllerService::server() const {
  return impl_->client->server();
}

}  // namespace lens
