// lens-tuner composed once: the tuning spec (tuner/tuner.h) checked and
// applied every interval, with /metrics and /healthz over HTTP, from one
// options struct and that struct from the config (`tuner:`).
//
//   GET /metrics   lens_tuner_* (docs/tuner.md), lens_http_*
//   GET /healthz   public
//
//   auto config = lens::LoadConfig(path, {.overrides = flags});
//   auto options = lens::TunerServiceOptionsFromConfig(*config);
//   auto service = lens::TunerService::Start(*options);
//   ...
//   (*service)->Stop();
#ifndef LENS_SERVICE_TUNER_SERVICE_H_
#define LENS_SERVICE_TUNER_SERVICE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "http/http.h"
#include "lens/status.h"
#include "service/config.h"
#include "tuner/tuner.h"

namespace lens {

// What a TunerService runs. Plain value.
struct TunerServiceOptions {
  TuningSpec spec;
  // Between checks; at least 1s.
  std::chrono::milliseconds interval{30000};
  HttpServerOptions http;  // /healthz public, /metrics

  // InvalidArgument naming the field.
  Status Validate() const;
};

// From the config's `tuner:` section. Reads the bearer token file (errors
// name the key and the file, never the token).
StatusOr<TunerServiceOptions> TunerServiceOptionsFromConfig(
    const Config& config);

// What one check found and did.
struct TuningCheck {
  size_t settings = 0;  // in the plan
  size_t drifted = 0;   // in sync at the previous check, not at this one
  size_t applied = 0;   // written successfully
  size_t errors = 0;    // unreadable settings and failed writes
};

// The running service. Thread-safe.
class TunerService {
 public:
  // Checks and applies once (a failed write is logged and counted, not
  // fatal: the next check tries again), then serves HTTP and checks every
  // interval on its own thread. Errors: InvalidArgument (options, TLS
  // files), Unavailable (cannot listen; names the address).
  static StatusOr<std::unique_ptr<TunerService>> Start(
      const TunerServiceOptions& options);
  ~TunerService();  // stops
  TunerService(const TunerService&) = delete;
  TunerService& operator=(const TunerService&) = delete;

  // Checks now, outside the schedule: plans, logs each drifted setting
  // (kind, key, desired, found) and applies what differs. Checks never
  // overlap.
  TuningCheck CheckNow();

  // Stops the checks and HTTP. Idempotent.
  void Stop();

  std::string http_url() const;

 private:
  TunerService();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens

#endif  // LENS_SERVICE_TUNER_SERVICE_H_
