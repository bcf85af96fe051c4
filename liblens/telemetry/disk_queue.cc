#include "telemetry/disk_queue.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "lens/log.h"

namespace lens::telemetry {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr size_t kHeaderBytes = kRecordHeaderBytes;

}  // namespace

Status DiskQueueOptions::Validate() const {
  if (dir.empty()) return InvalidArgumentError("disk queue: dir is empty");
  if (max_bytes <= kHeaderBytes) {
    return InvalidArgumentError("disk queue " + dir +
                                ": max_bytes must be more than 24");
  }
  if (fsync && sync_every == 0) {
    return InvalidArgumentError("disk queue " + dir +
                                ": sync_every must be at least 1");
  }
  if (segment_bytes == 0) {
    return InvalidArgumentError("disk queue " + dir +
                                ": segment_bytes must be positive");
  }
  return OkStatus();
}

DiskQueue::DiskQueue(DiskQueueOptions options) : options_(std::move(options)) {}

DiskQueue::~DiskQueue() {
  if (write_fd_ >= 0 && unsynced_ > 0) ::fdatasync(write_fd_);
  for (int fd : {write_fd_, read_fd_, stats_fd_, cursor_fd_, lock_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

StatusOr<std::unique_ptr<DiskQueue>> DiskQueue::Open(DiskQueueOptions options) {
  LENS_RETURN_IF_ERROR(options.Validate());
  std::error_code ec;
  fs::create_directories(options.dir, ec);
  if (ec) return ErrnoError(ec.value(), "create directory " + options.dir);
  std::unique_ptr<DiskQueue> queue(new DiskQueue(std::move(options)));
  std::lock_guard lock(queue->mu_);
  LENS_RETURN_IF_ERROR(queue->Recover());
  return queue;
}

std::string DiskQueue::SegmentPath(uint64_t seq) const {
  return options_.dir + "/" + SegmentName(seq);
}

Status DiskQueue::Recover() {
  const std::string& dir = options_.dir;
  lock_fd_ =
      ::open((dir + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) return ErrnoError(errno, "open " + dir + "/lock");
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return ErrnoError(errno, "lock " + dir);
    return FailedPreconditionError("disk queue " + dir +
                                   " is in use by another process");
  }
  LENS_ASSIGN_OR_RETURN(std::vector<uint64_t> seqs, ListSegments(dir));
  LENS_ASSIGN_OR_RETURN(std::optional<CursorSlot> cursor, OpenCursor());
  // Segments before the cursor's were consumed (deleted but for a crash).
  std::error_code ec;
  while (cursor && !seqs.empty() && seqs.front() < cursor->segment) {
    fs::remove(SegmentPath(seqs.front()), ec);
    seqs.erase(seqs.begin());
  }
  for (size_t i = 0; i < seqs.size(); ++i) {
    LENS_RETURN_IF_ERROR(LoadSegment(seqs[i], i + 1 == seqs.size(), cursor));
  }
  if (segments_.empty()) {
    const uint64_t seq = cursor ? cursor->segment + 1 : 1;
    cursor_ = {seq, 0, 0};
    return StartSegment(seq);
  }
  // The cursor at the end of a segment moves on to the next one.
  while (cursor_.offset >= segments_.front().bytes && segments_.size() > 1) {
    disk_bytes_ -= segments_.front().bytes;
    fs::remove(SegmentPath(segments_.front().seq), ec);
    segments_.pop_front();
    cursor_ = {segments_.front().seq, 0, segments_.front().first_index};
  }
  const std::string path = SegmentPath(segments_.back().seq);
  write_fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (write_fd_ < 0) return ErrnoError(errno, "open " + path);
  return OkStatus();
}

StatusOr<std::optional<CursorSlot>> DiskQueue::OpenCursor() {
  const std::string path = options_.dir + "/cursor";
  cursor_fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (cursor_fd_ < 0) return ErrnoError(errno, "open " + path);
  char buf[2 * kCursorSlotBytes];
  const ssize_t got = ::pread(cursor_fd_, buf, sizeof buf, 0);
  if (got < 0) return ErrnoError(errno, "read " + path);
  std::optional<CursorSlot> cursor =
      DecodeCursor({buf, static_cast<size_t>(got)});
  if (cursor) {
    cursor_generation_ = cursor->generation;
  } else if (got > 0) {
    LENS_LOG(WARN).Field("dir", options_.dir)
        << "disk queue: unreadable cursor, delivering from the oldest "
           "segment again";
  }
  return cursor;
}

Status DiskQueue::LoadSegment(uint64_t seq, bool last,
                              const std::optional<CursorSlot>& cursor) {
  const std::string path = SegmentPath(seq);
  const bool cursor_here = cursor && cursor->segment == seq;
  SegmentScan scan;
  LENS_RETURN_IF_ERROR(
      ScanSegment(path, last, cursor_here ? cursor->offset : 0, &scan));
  if (scan.valid_bytes < scan.file_bytes) {
    if (::truncate(path.c_str(), static_cast<off_t>(scan.valid_bytes)) != 0) {
      return ErrnoError(errno, "truncate " + path);
    }
    counters_.truncated_bytes += scan.file_bytes - scan.valid_bytes;
    LENS_LOG(WARN)
            .Field("segment", path)
            .Field("offset", scan.valid_bytes)
            .Field("dropped_bytes", scan.file_bytes - scan.valid_bytes)
            .Field("reason", scan.damage)
        << "disk queue: torn record at the end of a segment dropped";
  }
  if (!last && scan.valid_bytes == 0) {
    std::error_code ec;
    fs::remove(path, ec);
    return OkStatus();
  }
  segments_.push_back({seq, scan.valid_bytes, tail_index_});
  bytes_ += scan.valid_bytes;
  disk_bytes_ += scan.valid_bytes;
  if (segments_.size() == 1) {
    cursor_ = {seq, 0, tail_index_};
    if (cursor_here) {
      cursor_ = {seq, scan.cursor_offset, tail_index_ + scan.cursor_records};
      if (scan.cursor_offset != cursor->offset) {
        LENS_LOG(WARN)
                .Field("dir", options_.dir)
                .Field("offset", scan.cursor_offset)
            << "disk queue: cursor not at a record boundary; resuming at "
               "the one before it";
      }
    }
    bytes_ -= cursor_.offset;
  }
  tail_index_ += scan.records;
  return OkStatus();
}

Status DiskQueue::StartSegment(uint64_t seq) {
  const std::string path = SegmentPath(seq);
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError(errno, "create " + path);
  if (options_.fsync) {
    if (write_fd_ >= 0 && unsynced_ > 0) ::fdatasync(write_fd_);
    Status st = SyncDir(options_.dir);
    if (!st.ok()) {
      ::close(fd);
      ::unlink(path.c_str());
      return st;
    }
  }
  if (write_fd_ >= 0) ::close(write_fd_);
  write_fd_ = fd;
  unsynced_ = 0;
  segments_.push_back({seq, 0, tail_index_});
  return OkStatus();
}

Status DiskQueue::Append(std::string_view data, uint64_t samples) {
  const uint64_t record = kHeaderBytes + data.size();
  if (data.empty() || data.size() > UINT32_MAX || record > options_.max_bytes) {
    return InvalidArgumentError(
        "disk queue " + options_.dir + ": a record of " +
        std::to_string(data.size()) + " bytes (must be 1 byte to 4 GiB and " +
        "fit max_bytes " + std::to_string(options_.max_bytes) + ")");
  }
  char header[kHeaderBytes];
  EncodeRecordHeader(data, samples, UnixNowMs(), header);
  {
    std::lock_guard lock(mu_);
    if (bytes_ + record > options_.max_bytes) {
      ++counters_.refused_full;
      return ResourceExhaustedError(
          "disk queue " + options_.dir + " is full (" + std::to_string(bytes_) +
          " of " + std::to_string(options_.max_bytes) + " bytes queued)");
    }
    if (segments_.back().bytes > 0 &&
        segments_.back().bytes + record > options_.segment_bytes) {
      LENS_RETURN_IF_ERROR(StartSegment(segments_.back().seq + 1));
    }
    Segment& last = segments_.back();
    iovec iov[2] = {{header, kHeaderBytes},
                    {const_cast<char*>(data.data()), data.size()}};
    Status st = WriteAt(write_fd_, iov, 2, last.bytes);
    if (st.ok() && options_.fsync && ++unsynced_ >= options_.sync_every) {
      if (::fdatasync(write_fd_) != 0) st = ErrnoError(errno, "fdatasync");
      unsynced_ = 0;
    }
    if (!st.ok()) {
      // Nothing of a failed record stays (it is not acknowledged).
      if (::ftruncate(write_fd_, static_cast<off_t>(last.bytes)) != 0) {
        LENS_LOG(ERROR).Field("segment", SegmentPath(last.seq))
            << "disk queue: cannot cut a failed append off";
      }
      return st.WithContext("disk queue append to " + SegmentPath(last.seq));
    }
    last.bytes += record;
    bytes_ += record;
    disk_bytes_ += record;
    ++tail_index_;
    ++counters_.appended;
  }
  data_.notify_one();
  return OkStatus();
}

int DiskQueue::ReadFd(uint64_t seq) {
  if (read_fd_ >= 0 && read_seq_ == seq) return read_fd_;
  if (read_fd_ >= 0) ::close(read_fd_);
  read_fd_ = ::open(SegmentPath(seq).c_str(), O_RDONLY | O_CLOEXEC);
  read_seq_ = seq;
  return read_fd_;
}

Status DiskQueue::Peek(size_t max_batch_bytes, milliseconds wait,
                       std::vector<QueueRecord>* out) {
  out->clear();
  std::lock_guard consumer(consumer_mu_);
  peeked_.clear();
  for (;;) {
    std::vector<Segment> segs;
    QueuePosition pos;
    {
      std::unique_lock lock(mu_);
      if (wait.count() > 0) {
        data_.wait_for(lock, wait, [&] { return bytes_ > 0 || interrupted_; });
        wait = milliseconds(0);
      }
      if (bytes_ == 0) return OkStatus();
      pos = cursor_;
      // The segments the batch can reach; appenders only ever grow the last.
      uint64_t covered = 0;
      for (const Segment& s : segments_) {
        segs.push_back(s);
        covered += s.bytes - (s.seq == pos.segment ? pos.offset : 0);
        if (covered > max_batch_bytes) break;
      }
    }
    std::string damage;
    LENS_RETURN_IF_ERROR(
        ReadRecords(segs, max_batch_bytes, &pos, out, &damage));
    if (damage.empty() || !out->empty()) break;
    // Damage at the cursor: skip it and read on.
    LENS_RETURN_IF_ERROR(SkipDamaged(pos, damage));
  }
  for (const QueueRecord& r : *out) peeked_.push_back(r.end);
  return OkStatus();
}

Status DiskQueue::ReadRecords(const std::vector<Segment>& segs,
                              size_t max_batch_bytes, QueuePosition* pos,
                              std::vector<QueueRecord>* out,
                              std::string* damage) {
  uint64_t total = 0;
  char header[kHeaderBytes];
  for (size_t i = 0; i < segs.size();) {
    const Segment& s = segs[i];
    if (pos->offset >= s.bytes) {
      if (++i < segs.size()) *pos = {segs[i].seq, 0, segs[i].first_index};
      continue;
    }
    const int fd = ReadFd(s.seq);
    if (fd < 0) return ErrnoError(errno, "open " + SegmentPath(s.seq));
    Status st = ReadAt(fd, header, kHeaderBytes, pos->offset);
    if (!st.ok()) return st.WithContext("read " + SegmentPath(s.seq));
    const RecordHeader h = DecodeRecordHeader(header);
    if (s.bytes - pos->offset < kHeaderBytes || h.length == 0 ||
        h.length > s.bytes - pos->offset - kHeaderBytes) {
      *damage = "bad length";
      return OkStatus();
    }
    const uint64_t record = kHeaderBytes + h.length;
    if (!out->empty() && total + record > max_batch_bytes) break;
    QueueRecord& r = out->emplace_back();
    r.data.resize(h.length);
    st = ReadAt(fd, r.data.data(), h.length, pos->offset + kHeaderBytes);
    if (!st.ok()) return st.WithContext("read " + SegmentPath(s.seq));
    if (!RecordCrcMatches(header, r.data)) {
      out->pop_back();
      *damage = "CRC mismatch";
      return OkStatus();
    }
    r.samples = h.samples;
    r.appended = std::chrono::system_clock::time_point(milliseconds(h.time_ms));
    pos->offset += record;
    ++pos->index;
    r.end = *pos;
    total += record;
  }
  return OkStatus();
}

Status DiskQueue::SkipDamaged(const QueuePosition& at, std::string_view why) {
  QueuePosition to;
  uint64_t skipped = 0;
  {
    std::lock_guard lock(mu_);
    size_t i = 0;  // the segment `at` is in (the cursor's, or the next)
    while (i + 1 < segments_.size() && segments_[i].seq != at.segment) ++i;
    const Segment& s = segments_[i];
    skipped = s.bytes > at.offset ? s.bytes - at.offset : 0;
    to = i + 1 < segments_.size() ? QueuePosition{segments_[i + 1].seq, 0,
                                                  segments_[i + 1].first_index}
                                  : QueuePosition{s.seq, s.bytes, tail_index_};
    counters_.corrupt_bytes += skipped;
  }
  LENS_LOG(ERROR)
          .Field("segment", SegmentPath(at.segment))
          .Field("offset", at.offset)
          .Field("skipped_bytes", skipped)
          .Field("reason", why)
      << "disk queue: damaged record, rest of the segment skipped";
  return CommitLocked(to);
}

Status DiskQueue::Commit(const QueuePosition& through) {
  std::lock_guard consumer(consumer_mu_);
  // Only the end of a record the last Peek() returned is a record boundary.
  const uint64_t first = peeked_.empty() ? 0 : peeked_.front().index;
  if (peeked_.empty() || through.index < first ||
      through.index - first >= peeked_.size() ||
      !(peeked_[through.index - first] == through)) {
    return BadPosition(through, "the end of a record the last Peek() returned");
  }
  return CommitLocked(through);
}

Status DiskQueue::BadPosition(const QueuePosition& p,
                              std::string_view what) const {
  return InvalidArgumentError(
      "disk queue " + options_.dir + ": commit position (segment " +
      std::to_string(p.segment) + ", offset " + std::to_string(p.offset) +
      ") is not " + std::string(what));
}

Status DiskQueue::CommitLocked(const QueuePosition& through) {
  QueuePosition to = through;
  std::vector<uint64_t> drop;
  {
    std::lock_guard lock(mu_);
    size_t i = 0;
    while (i < segments_.size() && segments_[i].seq < through.segment) ++i;
    if (i == segments_.size() || segments_[i].seq != through.segment ||
        through.offset > segments_[i].bytes ||
        (i == 0 && through.offset < cursor_.offset) ||
        through.index < cursor_.index || through.index > tail_index_) {
      return BadPosition(through, "in the queue");
    }
    while (to.offset >= segments_[i].bytes && i + 1 < segments_.size()) {
      ++i;
      to = {segments_[i].seq, 0, segments_[i].first_index};
    }
    if (to == cursor_) return OkStatus();
    for (size_t k = 0; k < i; ++k) drop.push_back(segments_[k].seq);
  }
  LENS_RETURN_IF_ERROR(WriteCursor(to));
  {
    std::lock_guard lock(mu_);
    uint64_t consumed = to.offset - cursor_.offset;
    for (size_t k = 0; k < drop.size(); ++k) {
      consumed += segments_.front().bytes;
      disk_bytes_ -= segments_.front().bytes;
      segments_.pop_front();
    }
    bytes_ -= consumed;
    counters_.committed += to.index - cursor_.index;
    cursor_ = to;
    if (stats_fd_ >= 0 && stats_seq_ < to.segment) {
      ::close(stats_fd_);
      stats_fd_ = -1;
    }
  }
  for (uint64_t seq : drop) {
    if (read_fd_ >= 0 && read_seq_ == seq) {
      ::close(read_fd_);
      read_fd_ = -1;
    }
    // One left behind is deleted by the next Open().
    if (::unlink(SegmentPath(seq).c_str()) != 0 && errno != ENOENT) {
      LENS_LOG(WARN).Field("segment", SegmentPath(seq)).Field("errno", errno)
          << "disk queue: cannot delete a consumed segment";
    }
  }
  return OkStatus();
}

Status DiskQueue::WriteCursor(const QueuePosition& cursor) {
  char slot[kCursorSlotBytes];
  const uint64_t generation = cursor_generation_ + 1;
  EncodeCursorSlot({generation, cursor.segment, cursor.offset}, slot);
  iovec iov{slot, kCursorSlotBytes};
  Status st = WriteAt(cursor_fd_, &iov, 1, (generation % 2) * kCursorSlotBytes);
  if (st.ok() && options_.fsync && ::fdatasync(cursor_fd_) != 0) {
    st = ErrnoError(errno, "fdatasync");
  }
  if (!st.ok()) return st.WithContext("disk queue " + options_.dir + "/cursor");
  cursor_generation_ = generation;
  return OkStatus();
}

void DiskQueue::SetInterrupted(bool interrupted) {
  {
    std::lock_guard lock(mu_);
    interrupted_ = interrupted;
  }
  data_.notify_all();
}

bool DiskQueue::HasRoom(uint64_t bytes) const {
  std::lock_guard lock(mu_);
  return bytes_ + kHeaderBytes + bytes <= options_.max_bytes;
}

}  // namespace lens::telemetry
