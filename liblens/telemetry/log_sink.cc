#include "telemetry/log_sink.h"

namespace lens::telemetry {

LogSink::LogSink(Store* store, std::string workload_uid, std::string source,
                 LogMetrics* metrics, size_t max_queued_rows)
    : store_(store),
      workload_uid_(std::move(workload_uid)),
      source_(std::move(source)),
      metrics_(metrics),
      max_queued_rows_(max_queued_rows) {}

void LogSink::Enqueue(LogBatch* batch) {
  const size_t rows = batch->rows();
  if (rows == 0) return;
  std::lock_guard lock(queue_mu_);
  queue_.push_back(std::move(*batch));
  *batch = LogBatch();
  queued_rows_ += rows;
  while (queued_rows_ > max_queued_rows_ && queue_.size() > 1) {
    const size_t dropped = queue_.front().rows();
    queue_.pop_front();
    queued_rows_ -= dropped;
    metrics_->Count(LogError::kDropped, dropped);
  }
}

bool LogSink::HasQueued() const {
  std::lock_guard lock(queue_mu_);
  return !queue_.empty();
}

Status LogSink::Drain() {
  std::lock_guard write(write_mu_);
  while (true) {
    LogBatch batch;
    {
      std::lock_guard lock(queue_mu_);
      if (queue_.empty()) return OkStatus();
      batch = std::move(queue_.front());
      queue_.pop_front();
      queued_rows_ -= batch.rows();
    }
    if (!writer_) {
      auto w = store_->training().OpenWriter(workload_uid_, source_);
      if (!w.ok()) {  // a uid or source the store refuses: never writable
        metrics_->Count(LogError::kStore);
        metrics_->Count(LogError::kDropped, batch.rows());
        continue;
      }
      writer_.emplace(std::move(*w));
    }
    Status st = writer_->Write(TrainingBatch{
        batch.records, batch.events, batch.validations, batch.memory_reports});
    if (st.ok()) {
      metrics_->Count(LogStored::kIteration, batch.records.size());
      metrics_->Count(LogStored::kEvent, batch.events.size());
      metrics_->Count(LogStored::kValidation, batch.validations.size());
      metrics_->Count(LogStored::kMemory, batch.memory_reports.size());
      continue;
    }
    metrics_->Count(LogError::kStore);
    if (st.code() == StatusCode::kInvalidArgument) {
      metrics_->Count(LogError::kDropped, batch.rows());
      continue;
    }
    std::lock_guard lock(queue_mu_);
    queued_rows_ += batch.rows();
    queue_.push_front(std::move(batch));
    return Status(st.code(),
                  "store training rows of " + source_ + ": " + st.message());
  }
}

}  // namespace lens::telemetry
