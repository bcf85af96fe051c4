// Forwards enriched remote-write requests to one receiver through a disk
// queue, so that a request acknowledged to its sender is delivered even if
// the process is killed, with bounded disk and backpressure (Enqueue fails
// with ResourceExhausted when the queue is full) instead of growth.
//
// One thread per target takes the oldest record and POSTs it (one record per
// request: snappy bodies cannot be concatenated). The record is committed
// (removed) only once the receiver accepted it (2xx) or rejected it for good
// (any other 4xx, and 1xx/3xx: dropped, counted as "rejected"), so order is
// kept. Connection errors, 5xx and 429 are retried with a jittered
// exponential backoff (initial_backoff doubling to max_backoff; a 429 waits
// at least its Retry-After seconds). Failures are logged with the status and
// the start of the response body, at most one line per failure_log_interval.
// Delivery is at least once: a record sent but not committed before a crash
// (or a Stop() during its POST) is sent again after the restart.
#ifndef LENS_TELEMETRY_FORWARDER_H_
#define LENS_TELEMETRY_FORWARDER_H_

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <thread>

#include "core/metrics.h"
#include "lens/status.h"
#include "telemetry/disk_queue.h"
#include "telemetry/remote_write_client.h"

namespace lens::telemetry {

struct ForwarderOptions {
  ForwardTarget target;
  // The target's queue lives in queue_dir/<ForwardTargetName(target)>.
  std::string queue_dir;
  DiskQueueOptions queue;  // its dir is set from queue_dir
  std::chrono::milliseconds initial_backoff{250};
  std::chrono::milliseconds max_backoff{30000};
  std::chrono::milliseconds max_retry_after{300000};  // caps Retry-After
  std::chrono::milliseconds failure_log_interval{10000};

  // InvalidArgument naming the field.
  Status Validate() const;
};

// Why a POST failed; the `reason` label of the failure metrics.
enum class ForwardFailure : int {
  kHttp5xx = 0,  // retried
  kHttp429,      // retried
  kRejected,     // other 4xx: the record is dropped
  kConnection,   // no response (refused, timeout, TLS): retried
  kUnexpected,   // 1xx, 3xx (a redirect is not followed): retried, so a
                 // misconfigured URL never empties the queue
};
inline constexpr int kForwardFailureCount = 5;
// "http_5xx", "http_429", "rejected", "connection", "unexpected".
std::string_view ForwardFailureName(ForwardFailure failure);

// Counters since Create(), and the queue now. A plain value.
struct ForwarderStats {
  std::string target;     // ForwardTargetName
  uint64_t requests = 0;  // POSTs, retries included
  uint64_t records = 0;   // accepted by the receiver
  uint64_t samples = 0;   // in accepted records (as given to Enqueue)
  uint64_t retries = 0;
  std::array<uint64_t, kForwardFailureCount> failures{};  // by ForwardFailure
  uint64_t dropped_records = 0;                           // rejected
  uint64_t dropped_samples = 0;
  uint64_t max_queue_bytes = 0;
  DiskQueueStats queue;
  HistogramSnapshot send_seconds;  // every POST that got a response or error
};

// Thread safety: Enqueue() and Stats() from any thread; Start() and Stop()
// from one controlling thread.
class Forwarder {
 public:
  // Opens (and recovers) the target's queue; sending starts with Start().
  // Errors: InvalidArgument (options, target URL, CA file, headers), the
  // queue's (FailedPrecondition: another process forwards from it).
  static StatusOr<std::unique_ptr<Forwarder>> Create(ForwarderOptions options);
  ~Forwarder();  // stops; what is queued stays on disk for the next start
  Forwarder(const Forwarder&) = delete;
  Forwarder& operator=(const Forwarder&) = delete;

  // Queues one remote-write body (snappy-compressed) carrying `samples`
  // samples; OK means it will be delivered even if the process dies now.
  // ResourceExhausted when the queue is full (answer the sender with 429 or
  // 503 so it retries later); InvalidArgument (empty or over max_bytes); I/O
  // errors.
  Status Enqueue(std::string_view body, uint64_t samples);

  // True when a body of `bytes` would fit in the queue now (a hint: other
  // threads may fill it first; Enqueue decides).
  bool HasRoom(size_t bytes) const { return queue_->HasRoom(bytes); }

  // Starts the sending thread (no-op when running).
  void Start();
  // Stops sending, interrupting a backoff wait or a POST in flight (within
  // about a second), and joins the thread. Idempotent; Start() may follow.
  void Stop();

  ForwarderStats Stats() const;
  // This forwarder's metrics alone (RenderForwarderMetrics of one); with
  // several forwarders use RenderForwarderMetrics, which writes each family
  // once.
  void RenderMetrics(std::string* out) const;
  const std::string& name() const { return name_; }

 private:
  Forwarder(std::string name, ForwarderOptions options,
            std::unique_ptr<RemoteWriteClient> client,
            std::unique_ptr<DiskQueue> queue);
  void Run();
  // Sends until accepted or rejected (true), or stopped (false).
  bool Deliver(const QueueRecord& record);
  // Waits `delay` unless stopped first; false when stopped.
  bool Sleep(std::chrono::milliseconds delay);
  void LogFailure(ForwardFailure failure, const PostResult& result);

  const std::string name_;
  const ForwarderOptions options_;
  const std::unique_ptr<RemoteWriteClient> client_;  // the sending thread's
  const std::unique_ptr<DiskQueue> queue_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable wake_;  // with mu_: Sleep() ends early on stop
  std::minstd_rand rng_;          // the sending thread's
  std::chrono::steady_clock::time_point last_log_{};  // the sending thread's
  uint64_t unlogged_ = 0;                             // the sending thread's
  std::atomic<uint64_t> requests_{0}, records_{0}, samples_{0}, retries_{0};
  std::array<std::atomic<uint64_t>, kForwardFailureCount> failures_{};
  std::atomic<uint64_t> dropped_records_{0}, dropped_samples_{0};
  Histogram send_seconds_;
};

// Appends the metrics of `forwarders` (text format 0.0.4), family by family,
// a `target` label on each series: lens_telemetry_forward_{requests,
// records,samples,retries,failures,dropped_records,dropped_samples}_total,
// lens_telemetry_forward_queue_{bytes,max_bytes,records,
// oldest_age_seconds}, lens_telemetry_forward_queue_refused_total and the
// lens_telemetry_forward_send_duration_seconds histogram.
void RenderForwarderMetrics(std::span<const Forwarder* const> forwarders,
                            std::string* out);

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_FORWARDER_H_
