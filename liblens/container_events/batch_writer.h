// The one thread of a ContainerEventServer that writes to the store: agent
// messages from every stream go into one bounded queue and are written in
// batches, in arrival order, then acknowledged to their streams.
#ifndef LENS_CONTAINER_EVENTS_BATCH_WRITER_H_
#define LENS_CONTAINER_EVENTS_BATCH_WRITER_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "container_events/server_metrics.h"
#include "lens/containers.h"
#include "lens/store.h"

namespace lens::container_events {

// What the writer tells a stream. Called from the writer thread; must not
// block.
class AckSink {
 public:
  virtual ~AckSink() = default;
  // Every queued message of the stream up to `sequence` is done: stored, or
  // dropped as invalid (resending it would not help).
  virtual void Handled(uint64_t sequence) = 0;
  // Storing failed: the stream must end (the agent resends what is unacked).
  virtual void Fail(std::string_view why) = 0;
  virtual bool failed() const = 0;
};

// One agent message, already converted.
struct BatchItem {
  std::shared_ptr<AckSink> stream;
  std::string node;
  uint64_t sequence = 0;
  bool is_snapshot = false;
  ContainerChange change;                 // an event
  std::vector<ContainerRecord> snapshot;  // a snapshot ...
  Timestamp snapshot_at{};                // ... and when it was taken
  size_t bytes = 0;  // wire bytes of the message(s) it came from
  std::chrono::steady_clock::time_point received{};
};

// Thread-safe: Push from any thread. `repo` and `metrics` must outlive it.
// The queue holds at most `max_queued` items and `max_queued_bytes` bytes
// (BatchItem::bytes); one item over the byte bound is admitted alone.
class BatchWriter {
 public:
  BatchWriter(ContainerRepository* repo, ServerMetrics* metrics,
              size_t max_batch, size_t max_queued, size_t max_queued_bytes);
  ~BatchWriter();  // Stop()s
  BatchWriter(const BatchWriter&) = delete;
  BatchWriter& operator=(const BatchWriter&) = delete;

  void Start();
  // Queues `item`, waiting while the queue is full in items or bytes
  // (backpressure reaches the agents through gRPC flow control). False, with
  // nothing queued, when the writer stops or `give_up` returns true while
  // waiting.
  bool Push(BatchItem item, const std::function<bool()>& give_up);
  // Writes what is queued (once; after a store failure the rest is dropped,
  // unacked), then joins the thread. Idempotent.
  void Stop();

 private:
  // A segment is a run of events, possibly ended by one snapshot: the
  // snapshot's "mark the rest deleted" must come after the events before it
  // and before the events after it.
  using Segment = std::span<const BatchItem>;
  void Run();
  bool WriteBatch(std::vector<BatchItem>& batch);  // false: store failure
  Status WriteSegment(Segment segment);
  // After a validation error: each message alone, bad ones dropped.
  Status WriteOneByOne(Segment segment);
  Status WriteSnapshotOneByOne(const BatchItem& item);
  Status MarkMissing(const BatchItem& item);
  void Drop(const BatchItem& item, const Status& why);
  void Acknowledge(Segment segment);
  void FailStreams(Segment rest, const Status& why);

  ContainerRepository* const repo_;
  ServerMetrics* const metrics_;
  const size_t max_batch_;
  const size_t max_queued_;
  const size_t max_queued_bytes_;

  std::mutex mu_;
  std::condition_variable has_items_;  // writer waits
  std::condition_variable has_space_;  // Push waits
  std::deque<BatchItem> queue_;        // GUARDED_BY(mu_)
  size_t queued_bytes_ = 0;            // GUARDED_BY(mu_)
  bool stopping_ = false;              // GUARDED_BY(mu_)
  bool started_ = false;               // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace lens::container_events

#endif  // LENS_CONTAINER_EVENTS_BATCH_WRITER_H_
