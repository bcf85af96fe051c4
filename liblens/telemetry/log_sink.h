// One log stream's rows on their way to the store: batches queue in the
// order the stream's parser produced them and are written through one
// TrainingWriter, one batch at a time, so a run's rows map to the same
// stored run however many threads drain. Writes are idempotent upserts: a
// batch whose write failed stays first in the queue and is simply written
// again later.
#ifndef LENS_TELEMETRY_LOG_SINK_H_
#define LENS_TELEMETRY_LOG_SINK_H_

#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lens/status.h"
#include "lens/store.h"
#include "lens/training.h"
#include "telemetry/log_metrics.h"

namespace lens::telemetry {

// What a parser completed, not yet written.
struct LogBatch {
  std::vector<IterationRecord> records;
  std::vector<TrainingEvent> events;
  std::vector<ValidationRecord> validations;
  std::vector<MemoryReport> memory_reports;

  size_t rows() const {
    return records.size() + events.size() + validations.size() +
           memory_reports.size();
  }
};

// Thread-safe: the queue has its own short lock, so a slow write never
// blocks a caller that only queues.
class LogSink {
 public:
  // `store` and `metrics` must outlive the sink.
  LogSink(Store* store, std::string workload_uid, std::string source,
          LogMetrics* metrics, size_t max_queued_rows);

  // Moves `batch` (left empty) to the end of the queue. Past
  // max_queued_rows the oldest batches are dropped (counted as "dropped").
  void Enqueue(LogBatch* batch);
  bool HasQueued() const;

  // Writes the queued batches in order. A batch the store refuses as
  // invalid is dropped (counted); on any other failure the batch stays
  // first and Drain returns the error.
  Status Drain();

 private:
  Store* const store_;
  const std::string workload_uid_;
  const std::string source_;
  LogMetrics* const metrics_;
  const size_t max_queued_rows_;

  mutable std::mutex queue_mu_;
  std::deque<LogBatch> queue_;  // GUARDED_BY(queue_mu_)
  size_t queued_rows_ = 0;      // GUARDED_BY(queue_mu_)

  std::mutex write_mu_;                   // held while writing, in queue order
  std::optional<TrainingWriter> writer_;  // GUARDED_BY(write_mu_)
};

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_LOG_SINK_H_
