// What the logs path exports on /metrics: per workload the latest training
// values its logs printed (lens_training_*), the delay from a line's time to
// its arrival per node, and counters of what came in, was skipped, stored or
// failed. Rendered from this state with MetricWriter, so a workload's series
// end with the workload (Forget) or after a time without a record (Expire).
#ifndef LENS_TELEMETRY_LOG_METRICS_H_
#define LENS_TELEMETRY_LOG_METRICS_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/metrics.h"
#include "lens/model.h"
#include "lens/training.h"

namespace lens::telemetry {

// The workload labels of the lens_training_* gauges.
struct WorkloadLabels {
  std::string uid;
  std::string name;
  std::string kind;
  std::string namespace_name;
};

// Why a record was not parsed ("self", "no_kubernetes", "no_message",
// "no_workload").
enum class LogSkip : uint8_t { kSelf, kNoKubernetes, kNoMessage, kNoWorkload };
// What went wrong ("malformed": a request that was not JSON of the expected
// shape; "too_large": over a size or count limit; "truncated": a message cut
// to its limit; "store": a write that failed, to be retried; "dropped": rows
// given up on).
enum class LogError : uint8_t {
  kMalformed,
  kTooLarge,
  kTruncated,
  kStore,
  kDropped,
};
// Rows stored ("iteration", "event", "validation", "memory_report").
enum class LogStored : uint8_t { kIteration, kEvent, kValidation, kMemory };

// Thread-safe: counters are atomics, the rest is guarded by one mutex.
class LogMetrics {
 public:
  // At most `max_workloads` workloads have lens_training_* series (the
  // logs path's stream cap): a new one past it ends the series of the one
  // seen least recently, so distinct pods cannot grow /metrics without bound.
  LogMetrics(size_t max_nodes, size_t max_workloads);

  void CountRequest() { requests_.fetch_add(1, std::memory_order_relaxed); }
  void CountRecords(uint64_t n) {
    records_.fetch_add(n, std::memory_order_relaxed);
  }
  void CountLines(uint64_t n) {
    lines_.fetch_add(n, std::memory_order_relaxed);
  }
  void Count(LogSkip why, uint64_t n = 1) {
    skipped_[static_cast<size_t>(why)].fetch_add(n, std::memory_order_relaxed);
  }
  void Count(LogError what, uint64_t n = 1) {
    errors_[static_cast<size_t>(what)].fetch_add(n, std::memory_order_relaxed);
  }
  void Count(LogStored kind, uint64_t n) {
    stored_[static_cast<size_t>(kind)].fetch_add(n, std::memory_order_relaxed);
  }
  void SetStreams(size_t n) { streams_.store(n, std::memory_order_relaxed); }

  // The latency histogram of `node`, created on first use; stays valid as
  // long as this object. Past max_nodes nodes, new ones share node "".
  Histogram* Latency(std::string_view node);

  // Takes the latest value of each gauge field the records carry (in order;
  // a field a record lacks keeps its previous value). Records of a workload
  // forgotten less than the expiry ttl ago are ignored.
  void Update(const WorkloadLabels& workload,
              std::span<const IterationRecord> records, Timestamp now);
  // Ends the workload's series, and keeps them ended (late lines of the
  // workload do not bring them back) until Expire drops the mark.
  void Forget(std::string_view workload_uid, Timestamp now);
  // Ends the series of workloads without a record since `now - ttl`.
  void Expire(Timestamp now, std::chrono::microseconds ttl);

  uint64_t records() const { return records_.load(); }
  uint64_t lines() const { return lines_.load(); }
  uint64_t skipped(LogSkip why) const {
    return skipped_[static_cast<size_t>(why)].load();
  }
  uint64_t errors(LogError what) const {
    return errors_[static_cast<size_t>(what)].load();
  }
  uint64_t stored(LogStored kind) const {
    return stored_[static_cast<size_t>(kind)].load();
  }

  // Appends every family in the text exposition format.
  void Render(std::string* out) const;

 private:
  struct Latest {
    WorkloadLabels labels;
    std::optional<double> iteration, loss, tflops, tokens, step_seconds;
    Timestamp seen{};
  };

  const size_t max_nodes_;
  const size_t max_workloads_;
  std::atomic<uint64_t> requests_{0}, records_{0}, lines_{0};
  std::array<std::atomic<uint64_t>, 4> skipped_{};
  std::array<std::atomic<uint64_t>, 5> errors_{};
  std::array<std::atomic<uint64_t>, 4> stored_{};
  std::atomic<size_t> streams_{0};
  std::shared_ptr<const std::vector<double>> buckets_;

  mutable std::mutex mu_;
  std::map<std::string, Latest, std::less<>> workloads_;  // GUARDED_BY(mu_)
  std::map<std::string, Timestamp, std::less<>> ended_;   // GUARDED_BY(mu_)
  std::map<std::string, std::unique_ptr<Histogram>, std::less<>>
      latency_;  // GUARDED_BY(mu_)
};

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_LOG_METRICS_H_
