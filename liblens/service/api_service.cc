// lens-api composed once: the store, the time-series source, the REST API
// and the dashboard on one HTTP server, from one options struct.
#include "service/api_service.h"

#include "core/metric_writer.h"
#include "core/metrics.h"
#include "lens/log.h"
#include "lens/store.h"
#include "service/insight_metrics.h"
#include "service/readiness.h"
#include "service/service_host.h"
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
  // Reads the store and the series, and /metrics reads it: stopped by the
  // host, and declared between them so that it goes before the store and
  // after the server in any case.
  service::InsightGauges insights;
  std::unique_ptr<ApiClusters> clusters;  // outlives the server
  // Checks the store on a thread of its own; /readyz reads the result.
  std::unique_ptr<service::Readiness> readiness;
  std::unique_ptr<service::ServiceHost> host;  // stops before the rest goes
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
  // Ready while the store answers: a load balancer sends no one to a
  // replica whose database is gone. The query runs on the checker's thread
  // every 5 s; a check that hangs reads as not ready after 15 s.
  s.readiness = std::make_unique<service::Readiness>(
      [store = s.store.get()]() -> Status {
        auto schema = store->GetSchemaStatus();
        return schema.ok() ? OkStatus() : schema.status().WithContext("store");
      },
      std::chrono::seconds(5), std::chrono::seconds(15));
  Impl* impl = &s;
  const std::string cluster = options.api.cluster;
  service::ServiceHost::Options host;
  host.http = options.http;
  host.http.metrics = &s.metrics;
  if (options.dashboard) {
    for (std::string& path : DashboardPublicPaths()) {
      host.http.public_paths.push_back(std::move(path));
    }
  }
  host.ready = [impl] { return impl->readiness->State(); };
  host.metrics = [impl, cluster] {
    return RenderServiceMetrics(cluster, impl->series->backend(),
                                *impl->store) +
           impl->insights.Render() + impl->metrics.Render();
  };
  LENS_ASSIGN_OR_RETURN(s.host, service::ServiceHost::Create(std::move(host)));
  s.host->AddStop([impl] { impl->insights.Stop(); });  // before the store
  s.host->AddStop([impl] { impl->readiness->Stop(); });
  ApiOptions api = options.api;
  if (options.clusters) {
    s.clusters = NewClusterDirectoryFile(*options.clusters);
    api.clusters = s.clusters.get();
  }
  LENS_RETURN_IF_ERROR(
      AddApiRoutes(s.store.get(), s.series.get(), api, &s.host->http()));
  if (options.dashboard) AddDashboardRoutes(&s.host->http());
  s.readiness->CheckNow();
  s.readiness->Start();
  LENS_RETURN_IF_ERROR(s.host->Start());
  LENS_RETURN_IF_ERROR(s.insights.Start(s.store.get(), s.series.get()));
  return service;
}

void ApiService::Stop() {
  if (impl_->host) impl_->host->Stop();
  if (impl_->readiness) impl_->readiness->Stop();  // idempotent
  impl_->insights.Stop();
}

std::string ApiService::http_url() const { return impl_->host->url(); }
std::string ApiService::database() const { return impl_->store->target(); }
std::string_view ApiService::series_backend() const {
  return impl_->series->backend();
}

}  // namespace lens
