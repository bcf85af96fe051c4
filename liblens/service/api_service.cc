// lens-api composed once: the store, the time-series source, the REST API
// and the dashboard on one HTTP server, from one options struct.
#include "service/api_service.h"

#include <mutex>

#include "core/metric_writer.h"
#include "core/metrics.h"
#include "lens/log.h"
#include "lens/store.h"
#include "service/insight_metrics.h"
#include "service/readiness.h"
#include "web/dashboard.h"

namespace lens {
namespace {

// What /metrics says about the service: which cluster and backend it
// serves, and how its store connection fares.
std::string RenderServiceMetrics(std::string_view cluster,
                                 std::string_view backend, const Store& store) {
  const StoreStats stats = store.stats();
  std::string out;
  MetricWriter w(&out);
  w.Family("lens_api_info",
           "The cluster lens-api serves and where its time series come from.",
           "gauge");
  w.Sample({{"cluster", cluster}, {"series_backend", backend}}, 1);
  w.Family("lens_api_store_retries_total",
           "Store transactions run again after a lost connection.", "counter");
  w.Sample({}, static_cast<double>(stats.retries));
  w.Family("lens_api_store_reconnects_total",
           "Store connections dropped as broken.", "counter");
  w.Sample({}, static_cast<double>(stats.reconnects));
  return out;
}

}  // namespace

struct ApiService::Impl {
  Registry metrics;  // the HTTP server's requests; outlives it
  std::unique_ptr<Store> store;
  std::unique_ptr<TimeSeriesSource> series;
  // Reads the store and the series, and /metrics reads it: stopped in
  // Stop(), and declared between them so that it goes before the store and
  // after the server in any case.
  service::InsightGauges insights;
  std::unique_ptr<ApiClusters> clusters;  // outlives the server
  // Checks the store on a thread of its own; /readyz reads the result.
  std::unique_ptr<service::Readiness> readiness;
  std::unique_ptr<HttpServer> http;
  std::mutex stop_mu;
  bool stopped = false;  // GUARDED_BY(stop_mu)
};

ApiService::ApiService() : impl_(std::make_unique<Impl>()) {}
ApiService::~ApiService() { Stop(); }

StatusOr<std::unique_ptr<ApiService>> ApiService::Start(
    const ApiServiceOptions& options) {
  LENS_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<ApiService> service(new ApiService());
  Impl& s = *service->impl_;
  LENS_ASSIGN_OR_RETURN(s.store, Store::Open(options.database_url));
  if (options.promql) {
    LENS_ASSIGN_OR_RETURN(s.series, NewPromQlSource(*options.promql));
  } else {
    s.series = NewSampleHistorySource(s.store.get());
  }
  HttpServerOptions http = options.http;
  http.metrics = &s.metrics;
  if (options.dashboard) {
    for (std::string& path : DashboardPublicPaths()) {
      http.public_paths.push_back(std::move(path));
    }
  }
  LENS_ASSIGN_OR_RETURN(s.http, HttpServer::Create(http));
  ApiOptions api = options.api;
  if (options.clusters) {
    s.clusters = NewClusterDirectoryFile(*options.clusters);
    api.clusters = s.clusters.get();
  }
  LENS_RETURN_IF_ERROR(
      AddApiRoutes(s.store.get(), s.series.get(), api, s.http.get()));
  if (options.dashboard) AddDashboardRoutes(s.http.get());
  Impl* impl = &s;
  const std::string cluster = options.api.cluster;
  s.http->Handle("GET", "/metrics",
                 [impl, cluster](const HttpRequest&, HttpResponse* r) {
                   r->content_type = std::string(kPrometheusTextContentType);
                   r->body = RenderServiceMetrics(
                       cluster, impl->series->backend(), *impl->store);
                   r->body += impl->insights.Render();
                   r->body += impl->metrics.Render();
                 });
  s.http->Handle("GET", "/healthz", [](const HttpRequest&, HttpResponse* r) {
    r->content_type = "text/plain";
    r->body = "ok\n";
  });
  // Ready while the store answers: a load balancer sends no one to a
  // replica whose database is gone. The query runs on the checker's thread
  // every 5 s; a check that hangs reads as not ready after 15 s.
  s.readiness = std::make_unique<service::Readiness>(
      [store = s.store.get()]() -> Status {
        auto schema = store->GetSchemaStatus();
        return schema.ok() ? OkStatus() : schema.status().WithContext("store");
      },
      std::chrono::seconds(5), std::chrono::seconds(15));
  s.http->Handle("GET", "/readyz", [impl](const HttpRequest&, HttpResponse* r) {
    impl->readiness->Respond(r);
  });
  s.readiness->CheckNow();
  s.readiness->Start();
  LENS_RETURN_IF_ERROR(s.http->Start());
  LENS_RETURN_IF_ERROR(s.insights.Start(s.store.get(), s.series.get()));
  return service;
}

void ApiService::Stop() {
  std::lock_guard lock(impl_->stop_mu);
  if (impl_->stopped) return;
  impl_->stopped = true;
  if (impl_->http) impl_->http->Stop();
  if (impl_->readiness) impl_->readiness->Stop();
  impl_->insights.Stop();  // before the store and the series go
}

std::string ApiService::http_url() const { return impl_->http->url(); }
std::string ApiService::database() const { return impl_->store->target(); }
std::string_view ApiService::series_backend() const {
  return impl_->series->backend();
}

}  // namespace lens
