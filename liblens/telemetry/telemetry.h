// The telemetry processor (lens-telemetry's work, without its HTTP server):
// Prometheus remote-write requests in, each selected series enriched with
// the workload that held its pod or device at each sample's own timestamp,
// forwarded to remote-write receivers through a bounded on-disk queue (a
// sample acknowledged to the sender is never lost, even if the process is
// killed) and, on one machine, kept in the store's sample history; and the
// training logs fluent-bit ships, parsed per container into the store's
// training records. docs/telemetry.md describes both paths.
//
//   lens::TelemetryOptions options;
//   options.forward.push_back({.url = "http://vm:8428/api/v1/write"});
//   auto processor = lens::TelemetryProcessor::Create(options, store.get());
//   (*processor)->Start();
//   lens::IngestResult r = (*processor)->WriteRemote(body);  // r.http_status
//   ...
//   (*processor)->Stop();
#ifndef LENS_TELEMETRY_TELEMETRY_H_
#define LENS_TELEMETRY_TELEMETRY_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lens/model.h"
#include "lens/status.h"
#include "telemetry/series_labels.h"

namespace lens {

class Store;

// A remote-write receiver (VictoriaMetrics' /api/v1/write, Prometheus'
// /api/v1/write with --web.enable-remote-write-receiver).
struct TelemetryForwardTarget {
  std::string url;
  std::string bearer_token;  // sent as Authorization: Bearer
  std::string ca_file;       // PEM CA of an https URL (empty: the system's)
  bool insecure_skip_tls_verify = false;
  std::chrono::milliseconds timeout{10000};  // per request
};

struct TelemetryOptions {
  // ---- ingest ----
  // A request body over max_body_bytes, or whose snappy header declares more
  // than max_uncompressed_bytes, is refused before anything is allocated.
  // Requests decode one after another once their declared sizes together
  // would pass max_uncompressed_bytes: the rest get 503 with Retry-After, so
  // concurrent requests never hold more than that decompressed at once.
  size_t max_body_bytes = size_t{8} << 20;
  size_t max_uncompressed_bytes = size_t{32} << 20;
  size_t max_labels_per_series = 1024;

  // ---- enrichment ----
  // The series looked at and the label names of each identity.
  SeriesIdentityLabels series;
  // Also emit the original's workload_<name> copy of each enriched series.
  bool compat_names = false;
  // How often the ownership index follows the store's changes, and how long
  // ended pods and containers stay in it (samples arriving late still find
  // the owner of their time).
  std::chrono::milliseconds ownership_refresh{5000};
  std::chrono::milliseconds ownership_history{std::chrono::hours(24)};

  // ---- forwarding ----
  std::vector<TelemetryForwardTarget> forward;
  // One queue directory per target under queue_dir; each holds at most
  // queue_max_bytes (then requests get 503 with Retry-After). queue_fsync:
  // fsync every append (survives power loss, not only a killed process).
  std::string queue_dir = "/var/lib/lens/telemetry";
  uint64_t queue_max_bytes = uint64_t{1} << 30;
  bool queue_fsync = false;

  // ---- the store's sample history (one machine, no VictoriaMetrics) ----
  // Enriched samples of the selected series, one point per series per
  // resolution, kept for retention, at most max_series series.
  bool sample_history = false;
  std::chrono::milliseconds sample_resolution{15000};
  std::chrono::milliseconds sample_retention{std::chrono::hours(24 * 7)};
  size_t sample_max_series = 100000;

  // ---- logs ----
  bool logs = true;
  // Log records of pods whose name starts with one of these are skipped
  // (the processor's own logs).
  std::vector<std::string> self_pod_prefixes = {"lens-telemetry"};

  // InvalidArgument naming the field.
  Status Validate() const;
};

// What a request's answer is: the HTTP status (204, 400, 413, 415, 429,
// 503), a message for an error, and Retry-After seconds for 429/503.
struct IngestResult {
  int http_status = 204;
  std::string message;
  int retry_after_seconds = 0;
};

// fluent-bit's http output formats.
enum class LogBodyFormat : uint8_t { kJson, kJsonLines };

// Metrics of this process scraped like a Prometheus target and written
// through the same path as a remote-write request (enriched, into the
// sample history and the forward targets): `lens up` feeds its node
// agent's and flow monitor's series this way.
struct LocalScrapeTarget {
  std::string job;  // names the target in logs and metrics
  // The target's metrics in the Prometheus text format; called on the
  // scrape thread, so it must be thread-safe and outlive the processor's
  // Stop().
  std::function<std::string()> render;
  // Added to every series (as a scrape's relabelling would): node="gpu-1".
  std::vector<std::pair<std::string, std::string>> labels;
  // The families kept, by metric-name prefix (empty: all).
  std::vector<std::string> metric_prefixes;
  std::chrono::milliseconds interval{15000};  // >= 100ms
};

// Thread-safe: WriteRemote and IngestLogs from any number of threads.
class TelemetryProcessor {
 public:
  // `store` outlives the processor. Opens (and recovers) the forward queues.
  // Errors: InvalidArgument (options), the queue directories' errors.
  static StatusOr<std::unique_ptr<TelemetryProcessor>> Create(
      const TelemetryOptions& options, Store* store);
  virtual ~TelemetryProcessor();

  // Loads the ownership index (failure: a warning, retried every refresh;
  // series pass through unenriched meanwhile), then starts the refresh,
  // forwarding, history and log-flush threads.
  virtual Status Start() = 0;
  // Stops the threads: queued requests stay on disk for the next start,
  // buffered log records are stored. Idempotent.
  virtual void Stop() = 0;

  // One remote-write request body (snappy block of a WriteRequest). 204
  // once it is in every forward queue (and the history); 400 for a payload
  // that must not be retried (the message says what and where); 413 over
  // the size limits; 415 for remote write 2.0; 503 with Retry-After when a
  // forward queue is full; 500 when the store fails.
  virtual IngestResult WriteRemote(std::string_view body,
                                   std::string_view content_type = {}) = 0;
  // One fluent-bit http output body. 204 when every record was taken; 400
  // for a malformed body (nothing from it is stored).
  virtual IngestResult IngestLogs(std::string_view body, LogBodyFormat format,
                                  Timestamp received_at) = 0;

  // Tails a training log file (one being written and rotated too) into the
  // logs path, as `lens parse-log --store` would store it: the workload is
  // `workload_uid` (empty: the file's absolute path). FailedPrecondition
  // when the logs path is off; InvalidArgument for an empty path.
  virtual Status FollowLogFile(const std::string& path,
                               const std::string& workload_uid = {}) = 0;

  // Scrapes `target` every target.interval from now until Stop() (the
  // first scrape at once), each scrape one WriteRemote of its selected
  // samples at the scrape's time. InvalidArgument for a target without
  // render, job or with an interval under 100ms; failed scrapes are logged
  // and counted (lens_telemetry_local_scrapes_total{job,result}).
  virtual Status AddLocalScrape(LocalScrapeTarget target) = 0;

  // Follows the store's changes now (tests; the refresh thread does it on
  // its own).
  virtual Status RefreshOwnership() = 0;
  // The ownership caches as JSON (GET /pods/cache: pods by namespace and
  // name, devices by node and identity, with their holdings; GET
  // /pods/workload/cache: each pod's workload), at most `limit` entries.
  virtual std::string PodsCacheJson(size_t limit) const = 0;
  virtual std::string WorkloadCacheJson(size_t limit) const = 0;
  // The processor's metrics in the Prometheus text format.
  virtual std::string RenderMetrics() const = 0;
};

}  // namespace lens

#endif  // LENS_TELEMETRY_TELEMETRY_H_
