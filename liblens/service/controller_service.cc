// lens-controller composed once: store, client, elector, controller and the
// HTTP routes, from one options struct.
#include "service/controller_service.h"

#include "controller/controller.h"
#include "controller/controller_metrics.h"
#include "lens/store.h"
#include "service/service_host.h"

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
  LENS_ASSIGN_OR_RETURN(
      o.http, service::ServiceHttpOptions("controller", c.listen_http,
                                          c.bearer_token_file, c.tls_cert_file,
                                          c.tls_key_file));
  o.gpu_resources = SplitCommas(c.gpu_resources);
  o.leader_election = c.leader_election;
  o.leader = service::ServiceLeaderOptions(c.lease_namespace, c.lease_name,
                                           c.identity, "lens-controller");
  LENS_RETURN_IF_ERROR(o.Validate());
  return o;
}

struct ControllerService::Impl {
  ControllerServiceOptions options;
  std::unique_ptr<Store> store;
  std::unique_ptr<KubeClient> client;
  std::unique_ptr<controller::Controller> controller;
  std::unique_ptr<service::ServiceHost> host;  // stops before the rest goes
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
  Impl* impl = &s;
  service::ServiceHost::Options host;
  host.http = options.http;
  host.ready = [impl] {
    return impl->controller->Ready()
               ? OkStatus()
               : UnavailableError("not synced with the API server yet");
  };
  host.metrics = [impl] {
    return controller::RenderControllerMetrics(
        impl->controller->Stats(), impl->host->leader_transitions());
  };
  if (options.leader_election) {
    host.leader_client = s.client.get();
    host.leader = options.leader;
  }
  LENS_ASSIGN_OR_RETURN(s.host, service::ServiceHost::Create(std::move(host)));
  controller::ControllerOptions co;
  co.gpu_resources = options.gpu_resources;
  s.controller = std::make_unique<controller::Controller>(
      s.client.get(), s.store.get(), co,
      options.leader_election
          ? std::function<bool()>([impl] { return impl->host->Leading(); })
          : std::function<bool()>());
  controller::Controller* controller = s.controller.get();
  s.host->AddThread(
      "controller", [controller] { return controller->Run(); },
      [controller] { controller->Stop(); });
  LENS_RETURN_IF_ERROR(s.host->Start());
  return service;
}

void ControllerService::Stop() {
  if (impl_->host) impl_->host->Stop();
}

bool ControllerService::Ready() const { return impl_->controller->Ready(); }
bool ControllerService::IsLeader() const { return impl_->host->Leading(); }
std::string ControllerService::http_url() const { return impl_->host->url(); }
std::string ControllerService::database() const {
  return impl_->store->target();
}
std::string ControllerService::server() const {
  return impl_->client->server();
}

}  // namespace lens
