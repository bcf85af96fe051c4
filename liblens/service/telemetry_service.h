// lens-telemetry composed once: the store, the telemetry processor
// (telemetry/telemetry.h) and its HTTP routes, from one options struct and that
// struct from the config (`telemetry:`, `database:`, `logging:`).
//
//   POST /api/v1/write, /prometheus   Prometheus remote write 1.0
//   POST /v1/logs, /logs              fluent-bit http output (json,
//                                     json_lines)
//   GET  /pods/cache                  the ownership index
//   GET  /pods/workload/cache         each pod's workload
//   GET  /metrics, /healthz, /readyz
//
//   auto config = lens::LoadConfig(path, {.overrides = flags});
//   auto options = lens::TelemetryServiceOptionsFromConfig(*config);
//   auto service = lens::TelemetryService::Start(*options);
//   ...
//   (*service)->Stop();
#ifndef LENS_SERVICE_TELEMETRY_SERVICE_H_
#define LENS_SERVICE_TELEMETRY_SERVICE_H_

#include <memory>
#include <string>

#include "http/http.h"
#include "lens/status.h"
#include "service/config.h"
#include "telemetry/telemetry.h"

namespace lens {

class Store;

// What a TelemetryService runs. Plain value.
struct TelemetryServiceOptions {
  std::string database_url;  // Store::Open's URL
  HttpServerOptions http;    // max_body_bytes follows telemetry's
  TelemetryOptions telemetry;

  // InvalidArgument naming the field.
  Status Validate() const;
};

// From the config's `telemetry:` and `database:` sections. Reads the bearer
// token files (errors name the key and the file, never a token).
StatusOr<TelemetryServiceOptions> TelemetryServiceOptionsFromConfig(
    const Config& config);

// Adds the telemetry routes to `server` (lens up serves them next to its
// own); `processor` outlives the server.
void AddTelemetryRoutes(TelemetryProcessor* processor, HttpServer* server);

// The running service. Thread-safe.
class TelemetryService {
 public:
  // Opens the store (migrating it), the processor with its queues, then
  // serves HTTP. Errors: InvalidArgument (options, TLS files), the store's
  // errors (the URL named with its password redacted), the queue
  // directories' errors, Unavailable (cannot listen; names the address).
  static StatusOr<std::unique_ptr<TelemetryService>> Start(
      const TelemetryServiceOptions& options);
  ~TelemetryService();  // stops
  TelemetryService(const TelemetryService&) = delete;
  TelemetryService& operator=(const TelemetryService&) = delete;

  // Stops HTTP (in-flight requests finish), then the processor (queued
  // samples stay on disk, buffered log records are stored). Idempotent.
  void Stop();

  TelemetryProcessor& processor();
  std::string http_url() const;
  std::string database() const;  // the store's target, password redacted

 private:
  TelemetryService();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens

#endif  // LENS_SERVICE_TELEMETRY_SERVICE_H_
