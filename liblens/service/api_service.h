// lens-api composed once: the store, the time-series source (a PromQL
// server, or the store's sample history), the REST API (api/api.h) and the
// dashboard (web/dashboard.h) on one HTTP server, from one options struct
// and that struct from the config (`api:`, `database:`).
//
//   GET /api/v1/...          the REST API (docs/api.md)
//   GET /, /static/...       the dashboard (public: it holds no data)
//   GET /metrics, /healthz, /readyz
//
//   auto config = lens::LoadConfig(path, {.overrides = flags});
//   auto options = lens::ApiServiceOptionsFromConfig(*config);
//   auto service = lens::ApiService::Start(*options);
//   ...
//   (*service)->Stop();
#ifndef LENS_SERVICE_API_SERVICE_H_
#define LENS_SERVICE_API_SERVICE_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "api/api.h"
#include "http/http.h"
#include "lens/status.h"
#include "lens/timeseries.h"
#include "service/config.h"

namespace lens {

// What an ApiService runs. Plain value.
struct ApiServiceOptions {
  std::string database_url;  // Store::Open's URL
  HttpServerOptions http;    // the dashboard's paths are added as public
  ApiOptions api;
  bool dashboard = true;
  // The PromQL server time series come from; none: the store's sample
  // history.
  std::optional<PromQlSourceOptions> promql;
  // The other clusters served for `cluster=` (lens-multicluster's
  // directory); none: only api.cluster.
  std::optional<ClusterDirectoryOptions> clusters;

  // InvalidArgument naming the field.
  Status Validate() const;
};

// From the config's `api:` and `database:` sections. Reads the bearer token
// files (errors name the key and the file, never a token).
StatusOr<ApiServiceOptions> ApiServiceOptionsFromConfig(const Config& config);

// The running service. Thread-safe.
class ApiService {
 public:
  // Opens the store (migrating it) and the time-series source, then serves
  // HTTP. Errors: InvalidArgument (options, TLS files), the store's errors
  // (the URL named with its password redacted), Unavailable (cannot listen;
  // names the address).
  static StatusOr<std::unique_ptr<ApiService>> Start(
      const ApiServiceOptions& options);
  ~ApiService();  // stops
  ApiService(const ApiService&) = delete;
  ApiService& operator=(const ApiService&) = delete;

  // Stops HTTP; in-flight requests finish. Idempotent.
  void Stop();

  std::string http_url() const;
  std::string database() const;             // the store's target, redacted
  std::string_view series_backend() const;  // "promql" or "sample-history"

 private:
  ApiService();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens

#endif  // LENS_SERVICE_API_SERVICE_H_
