// The TelemetryProcessor behind liblens/telemetry/telemetry.h: the metrics path
// (decode, enrich by the ownership feed's index, queue to every forwarder,
// the store's sample history), the logs path (LogIngest) and the threads
// that keep them going.
#ifndef LENS_TELEMETRY_PROCESSOR_H_
#define LENS_TELEMETRY_PROCESSOR_H_

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/metrics.h"
#include "lens/store.h"
#include "telemetry/enrich.h"
#include "telemetry/forwarder.h"
#include "telemetry/local_scrape.h"
#include "telemetry/log_tail.h"
#include "telemetry/logs.h"
#include "telemetry/ownership_store.h"
#include "telemetry/remote_write.h"
#include "telemetry/telemetry.h"

namespace lens::telemetry {

EnrichOptions EnrichOptionsOf(const TelemetryOptions& options);

class Processor final : public TelemetryProcessor {
 public:
  Processor(const TelemetryOptions& options, Store* store);
  ~Processor() override;
  Status Open();  // the forwarders and their queues, the log ingest

  Status Start() override;
  void Stop() override;
  IngestResult WriteRemote(std::string_view body,
                           std::string_view content_type) override;
  IngestResult IngestLogs(std::string_view body, LogBodyFormat format,
                          Timestamp received_at) override;
  Status FollowLogFile(const std::string& path,
                       const std::string& workload_uid) override;
  Status AddLocalScrape(LocalScrapeTarget target) override;
  Status RefreshOwnership() override;
  std::string PodsCacheJson(size_t limit) const override;
  std::string WorkloadCacheJson(size_t limit) const override;
  std::string RenderMetrics() const override;

 private:
  // Scratch of one request (decoded request, enricher, encoder), pooled so
  // a steady stream reuses its memory.
  struct Worker {
    explicit Worker(const EnrichOptions& o) : enricher(o) {}
    RemoteWriteRequest request;
    RemoteWriteRequest enriched;  // the sample history's read of the output
    Enricher enricher;
    RemoteWriteEncoder encoder;
    std::vector<MetricSample> history;
    std::vector<size_t> history_series;  // first sample of each series
  };
  std::unique_ptr<Worker> TakeWorker();
  void GiveBack(std::unique_ptr<Worker> worker);
  Status AppendHistory(Worker& w);
  void RefreshLoop();
  void Count(int http_status, const char* kind);
  void Drop(const char* reason, uint64_t samples);

  const TelemetryOptions options_;
  const EnrichOptions enrich_;
  RemoteWriteLimits limits_;
  Store* store_;
  OwnershipFeed feed_;
  std::vector<std::unique_ptr<Forwarder>> forwarders_;
  std::unique_ptr<LogIngest> logs_;
  std::unique_ptr<LogFileTailer> tailer_;  // with the first FollowLogFile
  std::mutex tailer_mu_;
  std::unique_ptr<LocalScraper> scraper_;  // made in Open()

  std::mutex pool_mu_;
  std::vector<std::unique_ptr<Worker>> pool_;  // GUARDED_BY(pool_mu_)
  std::mutex history_mu_;  // one history writer at a time (one transaction)
  std::atomic<int64_t> last_history_error_ms_{0};  // logged at most every 10 s
  std::atomic<int64_t> last_history_full_ms_{0};   // logged at most every 60 s
  // Held while a request checks every forward queue and enqueues in each.
  std::mutex enqueue_mu_;
  // Uncompressed bytes of the requests being decoded now (declared sizes).
  std::atomic<size_t> decoding_bytes_{0};

  std::mutex run_mu_;
  std::condition_variable run_cv_;
  bool running_ = false;   // GUARDED_BY(run_mu_)
  bool stopping_ = false;  // GUARDED_BY(run_mu_)
  std::thread refresher_;
  std::mutex refresh_mu_;  // one refresh at a time (thread or caller)

  Registry metrics_;
  CounterFamily* requests_ = nullptr;  // {kind, code}
  CounterFamily* dropped_ = nullptr;   // {reason}
  std::shared_ptr<Counter> samples_in_, samples_enriched_, series_split_,
      bytes_in_, history_samples_, history_failures_, history_evicted_;
  std::shared_ptr<Histogram> ingest_seconds_;
};

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_PROCESSOR_H_
