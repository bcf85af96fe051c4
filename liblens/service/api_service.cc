// lens-api composed once: the store, the time-series source, the REST API
// and the dashboard on one HTTP server, from one options struct.
#include "lens/api_service.h"

#include <mutex>

#include "core/metric_writer.h"
#include "lens/dashboard.h"
#include "lens/insights.h"
#include "lens/log.h"
#include "lens/metrics.h"
#include "lens/store.h"

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

// lens_gpu_idle_allocated per workload: GPUs held by a running container and
// idle (under 5%) for 30 minutes up to now, from the last 40 minutes of
// holdings and utilisation. Computed at most once a minute, on a scrape.
class IdleGpuGauge {
 public:
  std::string Render(Store& store, TimeSeriesSource& series) {
    std::lock_guard lock(mu_);
    const Timestamp now =
        std::chrono::time_point_cast<std::chrono::microseconds>(
            std::chrono::system_clock::now());
    if (now - computed_at_ >= std::chrono::minutes(1)) {
      computed_at_ = now;
      Status st = Compute(store, series, now);
      if (!st.ok()) {
        ++errors_;
        LENS_LOG(WARN).Field("error", st.message())
            << "idle allocated GPUs not computed";
      }
    }
    std::string out;
    MetricWriter w(&out);
    w.Family("lens_gpu_idle_allocated",
             "GPUs held by a running container of the workload whose "
             "utilisation stayed under 5% for the last 30 minutes.",
             "gauge");
    for (const IdleGpuWorkload& wl : workloads_) {
      w.Sample({{"namespace", wl.namespace_name},
                {"workload", wl.workload_name},
                {"workload_uid", wl.workload_uid}},
               wl.idle_gpus_now);
    }
    w.Family("lens_gpu_idle_allocated_errors_total",
             "Times lens_gpu_idle_allocated could not be computed (the store "
             "or the time series failed; the last values stay).",
             "counter");
    w.Sample({}, static_cast<double>(errors_));
    return out;
  }

 private:
  Status Compute(Store& store, TimeSeriesSource& series, Timestamp now) {
    IdleGpuOptions options;
    options.now = now;
    const Timestamp from = now - options.window - std::chrono::minutes(10);
    LENS_ASSIGN_OR_RETURN(std::vector<GpuHolding> holdings,
                          ReadGpuHoldings(store, from, now));
    LENS_ASSIGN_OR_RETURN(
        std::vector<GpuUtilizationSeries> utilization,
        ReadGpuUtilization(series, from, now, std::chrono::seconds(30)));
    LENS_ASSIGN_OR_RETURN(
        std::vector<IdleGpuEpisode> episodes,
        FindIdleAllocatedGpus(holdings, utilization, options));
    std::vector<IdleGpuWorkload> all = IdleGpusByWorkload(episodes);
    workloads_.clear();
    for (IdleGpuWorkload& wl : all) {
      if (wl.idle_gpus_now > 0) workloads_.push_back(std::move(wl));
    }
    return OkStatus();
  }

  std::mutex mu_;
  Timestamp computed_at_{};                 // GUARDED_BY(mu_)
  std::vector<IdleGpuWorkload> workloads_;  // GUARDED_BY(mu_)
  uint64_t errors_ = 0;                     // GUARDED_BY(mu_)
};

}  // namespace

struct ApiService::Impl {
  IdleGpuGauge idle_gpus;
  Registry metrics;  // the HTTP server's requests; outlives it
  std::unique_ptr<Store> store;
  std::unique_ptr<TimeSeriesSource> series;
  std::unique_ptr<ApiClusters> clusters;  // outlives the server
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
  s.http->Handle(
      "GET", "/metrics", [impl, cluster](const HttpRequest&, HttpResponse* r) {
        r->content_type = std::string(kPrometheusTextContentType);
        r->body = RenderServiceMetrics(cluster, impl->series->backend(),
                                       *impl->store);
        r->body += impl->idle_gpus.Render(*impl->store, *impl->series);
        r->body += impl->metrics.Render();
      });
  s.http->Handle("GET", "/healthz", [](const HttpRequest&, HttpResponse* r) {
    r->content_type = "text/plain";
    r->body = "ok\n";
  });
  // Ready while the store answers: a load balancer sends no one to a
  // replica whose database is gone.
  s.http->Handle("GET", "/readyz", [impl](const HttpRequest&, HttpResponse* r) {
    r->content_type = "text/plain";
    auto schema = impl->store->GetSchemaStatus();
    if (!schema.ok()) {
      r->status = 503;
      r->body = "store: " + schema.status().message() + "\n";
      return;
    }
    r->body = "ok\n";
  });
  LENS_RETURN_IF_ERROR(s.http->Start());
  return service;
}

void ApiService::Stop() {
  std::lock_guard lock(impl_->stop_mu);
  if (impl_->stopped) return;
  impl_->stopped = true;
  if (impl_->http) impl_->http->Stop();
}

std::string ApiService::http_url() const { return impl_->http->url(); }
std::string ApiService::database() const { return impl_->store->target(); }
std::string_view ApiService::series_backend() const {
  return impl_->series->backend();
}

}  // namespace lens
