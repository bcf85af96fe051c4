// DiskQueue::Stats: the counters, and the age of the oldest record read
// from its header on disk (cached while the head does not move).
#include <fcntl.h>
#include <unistd.h>

#include "telemetry/disk_queue.h"
#include "telemetry/disk_queue_file.h"

namespace lens::telemetry {
namespace {

using std::chrono::milliseconds;

}  // namespace

DiskQueueStats DiskQueue::Stats() const {
  std::lock_guard lock(mu_);
  DiskQueueStats s = counters_;
  s.bytes = bytes_;
  s.records = tail_index_ - cursor_.index;
  s.segments = segments_.size();
  s.disk_bytes = disk_bytes_;
  if (bytes_ == 0) return s;
  // The oldest record: at the cursor, or at the start of the next segment
  // when the cursor sits at the end of one that was the last when it was
  // committed.
  QueuePosition head = cursor_;
  for (size_t i = 0;
       i + 1 < segments_.size() && segments_[i].seq == head.segment &&
       head.offset >= segments_[i].bytes;
       ++i) {
    head = {segments_[i + 1].seq, 0, segments_[i + 1].first_index};
  }
  if (head_time_ms_ < 0 || !(head_time_at_ == head)) {
    if (stats_fd_ < 0 || stats_seq_ != head.segment) {
      if (stats_fd_ >= 0) ::close(stats_fd_);
      stats_fd_ =
          ::open(SegmentPath(head.segment).c_str(), O_RDONLY | O_CLOEXEC);
      stats_seq_ = head.segment;
    }
    char header[kRecordHeaderBytes];
    head_time_ms_ = -1;
    if (stats_fd_ >= 0 &&
        ReadAt(stats_fd_, header, kRecordHeaderBytes, head.offset).ok()) {
      head_time_ms_ = DecodeRecordHeader(header).time_ms;
      head_time_at_ = head;
    }
  }
  if (head_time_ms_ >= 0) {
    s.oldest_age =
        milliseconds(std::max<int64_t>(0, UnixNowMs() - head_time_ms_));
  }
  return s;
}

}  // namespace lens::telemetry
