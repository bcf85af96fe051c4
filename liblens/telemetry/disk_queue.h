// A bounded, crash-safe FIFO of byte blobs in a directory: the remote-write
// bodies the telemetry processor has acknowledged to a sender and not yet
// delivered to a receiver.
//
// Layout of the directory:
//   00000000000000000001.seg  segments (a monotone 20-digit sequence number)
//   cursor                    the committed read position (two CRC'd slots)
//   lock                      flock()ed while open: one process per directory
// A record is a 24-byte header (little-endian: CRC32C of the rest of the
// record, payload length, sample count, append time in Unix milliseconds)
// and the payload. Records are appended to the last segment; a new segment
// starts when the last would grow past segment_bytes.
//
// Durability: Append() has write() the whole record before it returns, so an
// acknowledged record survives the death of the process (SIGKILL, a crash:
// the page cache belongs to the kernel). Surviving power loss as well takes
// `fsync`: an fdatasync() per append, under the appenders' lock, so appends
// then run at the disk's sync rate (sync_every = N: one per N appends, up
// to N-1 acknowledged records lost with the power).
//
// Delivery is at least once: after a restart, every record after the last
// committed cursor is delivered again, including records that were sent but
// not yet committed.
//
// Recovery on Open(): a record cut short at the end of a segment (a crash in
// the middle of write()) is detected by its length or CRC, logged and
// truncated away, never returned as data; segments wholly before the cursor
// (consumed, not yet deleted) are deleted. Records damaged elsewhere (power
// loss without sync) are found by their CRC when read: logged, skipped and
// counted in corrupt_bytes.
//
// Costs: Append and Stats are O(1), Peek O(records returned), Commit
// O(segments freed); nothing scans the queue except Open().
#ifndef LENS_TELEMETRY_DISK_QUEUE_H_
#define LENS_TELEMETRY_DISK_QUEUE_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"
#include "telemetry/disk_queue_file.h"

namespace lens::telemetry {

struct DiskQueueOptions {
  std::string dir;  // created (with its parents) when missing
  // Most bytes queued and not yet committed, headers included; an Append
  // that would go past it fails with ResourceExhausted. The files can hold
  // up to one segment more (the committed part of the oldest segment).
  uint64_t max_bytes = uint64_t{1} << 30;
  uint64_t segment_bytes = uint64_t{8} << 20;
  // Off: records survive the process's death, not power loss. On:
  // fdatasync() after every sync_every appends, and the cursor file and the
  // directory after every change.
  bool fsync = false;
  uint32_t sync_every = 1;

  // InvalidArgument naming the field.
  Status Validate() const;
};

// A place in the queue, as Peek() returns it with each record.
struct QueuePosition {
  uint64_t segment = 0;  // the segment's sequence number
  uint64_t offset = 0;   // in that segment
  uint64_t index = 0;    // records before it since Open()'s cursor

  friend bool operator==(const QueuePosition&, const QueuePosition&) = default;
};

struct QueueRecord {
  std::string data;
  uint64_t samples = 0;  // as given to Append()
  std::chrono::system_clock::time_point appended;
  QueuePosition end;  // Commit(end) consumes this record and those before
};

struct DiskQueueStats {
  uint64_t bytes = 0;       // queued, headers included (bounded by max_bytes)
  uint64_t records = 0;     // queued
  uint64_t segments = 0;    // files
  uint64_t disk_bytes = 0;  // the segment files' sizes
  // Since the oldest queued record was appended; 0 when empty.
  std::chrono::milliseconds oldest_age{0};
  // Since Open().
  uint64_t appended = 0;
  uint64_t committed = 0;        // records
  uint64_t refused_full = 0;     // appends refused with ResourceExhausted
  uint64_t truncated_bytes = 0;  // torn records cut away by Open()
  uint64_t corrupt_bytes = 0;    // damaged data skipped by Peek()
};

// Thread safety: Append() and Stats() from any number of threads; Peek() and
// Commit() from one consumer at a time (they serialise on their own mutex).
class DiskQueue {
 public:
  // Opens (or creates) the queue in options.dir and recovers it (see the
  // file comment). Errors: InvalidArgument (options), FailedPrecondition
  // (another process has the directory open), I/O errors naming the file.
  static StatusOr<std::unique_ptr<DiskQueue>> Open(DiskQueueOptions options);
  ~DiskQueue();
  DiskQueue(const DiskQueue&) = delete;
  DiskQueue& operator=(const DiskQueue&) = delete;

  // Appends one record and wakes a waiting consumer; the record is in the
  // kernel's hands (on disk with fsync and sync_every 1) when this returns OK.
  // `samples` is carried along for the consumer's accounting. Errors:
  // InvalidArgument (empty, or larger than max_bytes or 4 GiB),
  // ResourceExhausted (the queue is full: answer with backpressure), I/O
  // errors (nothing of the record is kept).
  Status Append(std::string_view data, uint64_t samples = 0);

  // The oldest records, without removing them: at least one when any is
  // queued, then more while their bytes stay within max_batch_bytes. Waits
  // up to `wait` for a first record (not while interrupted). OK with `out`
  // empty when none came. Errors: I/O errors reading a segment.
  Status Peek(size_t max_batch_bytes, std::chrono::milliseconds wait,
              std::vector<QueueRecord>* out);

  // Removes every record up to `through` (the end of a record the last
  // Peek() returned), persists the cursor (one pwrite() of a slot, see
  // disk_queue_file.h; and an fdatasync() with fsync) and deletes the
  // segments it has left behind. InvalidArgument for any other position (or
  // one already committed); I/O errors (the cursor is unchanged).
  Status Commit(const QueuePosition& through);

  // While set, Peek() does not wait, and a Peek() waiting now returns: set
  // it to stop a consumer promptly, clear it before consuming again.
  void SetInterrupted(bool interrupted);

  // True when a record of `bytes` would fit now: a hint, since other
  // appenders may take the room first.
  bool HasRoom(uint64_t bytes) const;

  DiskQueueStats Stats() const;
  const std::string& dir() const { return options_.dir; }

 private:
  struct Segment {
    uint64_t seq = 0;
    uint64_t bytes = 0;        // valid bytes in the file
    uint64_t first_index = 0;  // index of its first record
  };

  explicit DiskQueue(DiskQueueOptions options);
  // Open(), with mu_ held.
  Status Recover();
  StatusOr<std::optional<CursorSlot>> OpenCursor();
  Status LoadSegment(uint64_t seq, bool last,
                     const std::optional<CursorSlot>& cursor);
  Status StartSegment(uint64_t seq);  // with mu_ held
  Status WriteCursor(const QueuePosition& cursor);
  // With consumer_mu_ held. Reads records from `*pos` (moved past them) as
  // far as `segs` go; sets `damage` at a damaged record.
  Status ReadRecords(const std::vector<Segment>& segs, size_t max_batch_bytes,
                     QueuePosition* pos, std::vector<QueueRecord>* out,
                     std::string* damage);
  Status CommitLocked(const QueuePosition& through);
  Status BadPosition(const QueuePosition& p, std::string_view what) const;
  Status SkipDamaged(const QueuePosition& at, std::string_view why);
  int ReadFd(uint64_t seq);  // consumer only
  std::string SegmentPath(uint64_t seq) const;

  const DiskQueueOptions options_;
  int lock_fd_ = -1;

  std::mutex consumer_mu_;  // Peek and Commit
  int read_fd_ = -1;        // GUARDED_BY(consumer_mu_)
  uint64_t read_seq_ = 0;   // GUARDED_BY(consumer_mu_)
  // The ends of the records the last Peek() returned (index order).
  std::vector<QueuePosition> peeked_;  // GUARDED_BY(consumer_mu_)
  int cursor_fd_ = -1;                 // GUARDED_BY(consumer_mu_)
  uint64_t cursor_generation_ = 0;     // GUARDED_BY(consumer_mu_)

  mutable std::mutex mu_;
  std::condition_variable data_;
  std::deque<Segment> segments_;  // GUARDED_BY(mu_); the cursor's is first
  QueuePosition cursor_;          // GUARDED_BY(mu_), committed
  uint64_t tail_index_ = 0;       // GUARDED_BY(mu_), index of the next append
  uint64_t bytes_ = 0;            // GUARDED_BY(mu_), after the cursor
  uint64_t disk_bytes_ = 0;       // GUARDED_BY(mu_)
  int write_fd_ = -1;             // GUARDED_BY(mu_), the last segment's
  uint32_t unsynced_ = 0;         // GUARDED_BY(mu_)
  bool interrupted_ = false;      // GUARDED_BY(mu_)
  DiskQueueStats counters_;       // GUARDED_BY(mu_), the since-Open() part
  // Stats(): the head record's append time, read once per head.
  mutable int stats_fd_ = -1;             // GUARDED_BY(mu_)
  mutable uint64_t stats_seq_ = 0;        // GUARDED_BY(mu_)
  mutable QueuePosition head_time_at_{};  // GUARDED_BY(mu_)
  mutable int64_t head_time_ms_ = -1;     // GUARDED_BY(mu_)
};

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_DISK_QUEUE_H_
