// BatchWriter: one queue, one thread, batches written in arrival order.
#include "container_events/batch_writer.h"

#include <algorithm>
#include <utility>

#include "lens/log.h"

namespace lens::container_events {
namespace {

Timestamp Now() {
  return std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
}

// Enough of a bad container id to recognise it; it may be megabytes.
constexpr size_t kMaxLoggedIdBytes = 128;

bool IsBadInput(const Status& status) {
  return status.code() == StatusCode::kInvalidArgument;
}

}  // namespace

BatchWriter::BatchWriter(ContainerRepository* repo, ServerMetrics* metrics,
                         size_t max_batch, size_t max_queued,
                         size_t max_queued_bytes)
    : repo_(repo),
      metrics_(metrics),
      max_batch_(std::max<size_t>(1, max_batch)),
      max_queued_(std::max<size_t>(1, max_queued)),
      max_queued_bytes_(std::max<size_t>(1, max_queued_bytes)) {}

BatchWriter::~BatchWriter() { Stop(); }

void BatchWriter::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_ || stopping_) return;
  started_ = true;
  thread_ = std::thread([this] { Run(); });
}

bool BatchWriter::Push(BatchItem item, const std::function<bool()>& give_up) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto full = [&] {
    return !queue_.empty() && (queue_.size() >= max_queued_ ||
                               queued_bytes_ + item.bytes > max_queued_bytes_);
  };
  while (!stopping_ && full()) {
    if (give_up && give_up()) return false;
    // Bounded wait so a cancelled stream notices (give_up) while waiting.
    has_space_.wait_for(lock, std::chrono::milliseconds(100));
  }
  if (stopping_ || !started_) return false;
  queued_bytes_ += item.bytes;
  metrics_->queued_bytes->Set(static_cast<double>(queued_bytes_));
  queue_.push_back(std::move(item));
  lock.unlock();
  has_items_.notify_one();
  return true;
}

void BatchWriter::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  has_items_.notify_all();
  has_space_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BatchWriter::Run() {
  std::vector<BatchItem> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      has_items_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything is written
      batch.clear();
      const size_t n = std::min(max_batch_, queue_.size());
      for (size_t i = 0; i < n; ++i) {
        queued_bytes_ -= queue_.front().bytes;
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      metrics_->queued_bytes->Set(static_cast<double>(queued_bytes_));
    }
    has_space_.notify_all();
    if (!WriteBatch(batch)) {
      // While stopping, do not wait out the store's retry deadline once per
      // remaining batch: the agents resend what was not acked.
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) {
        queue_.clear();
        queued_bytes_ = 0;
        metrics_->queued_bytes->Set(0);
      }
    }
  }
}

bool BatchWriter::WriteBatch(std::vector<BatchItem>& batch) {
  // A failed stream's messages come again on the agent's next stream.
  std::erase_if(batch, [](const BatchItem& i) { return i.stream->failed(); });
  if (batch.empty()) return true;
  const Segment all(batch);
  size_t begin = 0;
  while (begin < all.size()) {
    size_t end = begin;
    while (end < all.size() && !all[end].is_snapshot) ++end;
    if (end < all.size()) ++end;  // the snapshot closes the segment
    const Segment segment = all.subspan(begin, end - begin);
    Status st = WriteSegment(segment);
    if (IsBadInput(st)) st = WriteOneByOne(segment);
    if (!st.ok()) {
      FailStreams(all.subspan(begin), st);
      return false;
    }
    Acknowledge(segment);
    begin = end;
  }
  metrics_->batches->Inc();
  return true;
}

Status BatchWriter::WriteSegment(Segment segment) {
  std::vector<ContainerRecord> states;
  std::vector<ContainerEventRecord> events;
  for (const BatchItem& item : segment) {
    if (item.is_snapshot) {
      states.insert(states.end(), item.snapshot.begin(), item.snapshot.end());
    } else {
      states.push_back(item.change.container);
      events.push_back(item.change.event);
    }
  }
  // Within one call the last state of a container wins: arrival order.
  if (!states.empty()) LENS_RETURN_IF_ERROR(repo_->UpsertContainers(states));
  if (!events.empty()) LENS_RETURN_IF_ERROR(repo_->AddContainerEvents(events));
  if (segment.back().is_snapshot) return MarkMissing(segment.back());
  return OkStatus();
}

Status BatchWriter::WriteOneByOne(Segment segment) {
  for (const BatchItem& item : segment) {
    if (item.is_snapshot) {
      LENS_RETURN_IF_ERROR(WriteSnapshotOneByOne(item));
      continue;
    }
    Status st = repo_->UpsertContainers(
        std::span<const ContainerRecord>(&item.change.container, 1));
    if (st.ok()) {
      st = repo_->AddContainerEvents(
          std::span<const ContainerEventRecord>(&item.change.event, 1));
    }
    if (IsBadInput(st)) {
      Drop(item, st);
    } else if (!st.ok()) {
      return st;
    }
  }
  return OkStatus();
}

Status BatchWriter::WriteSnapshotOneByOne(const BatchItem& item) {
  bool logged = false;
  for (const ContainerRecord& c : item.snapshot) {
    const Status st =
        repo_->UpsertContainers(std::span<const ContainerRecord>(&c, 1));
    if (!IsBadInput(st)) {
      LENS_RETURN_IF_ERROR(st);
      continue;
    }
    metrics_->errors->Inc();
    if (!logged) {  // once per snapshot, not once per bad entry
      logged = true;
      LENS_LOG(WARN)
              .Field("node", item.node)
              .Field("sequence", item.sequence)
              .Field("error", st)
          << "dropping invalid container of a snapshot";
    }
  }
  return MarkMissing(item);
}

Status BatchWriter::MarkMissing(const BatchItem& item) {
  std::vector<std::string> ids;
  ids.reserve(item.snapshot.size());
  for (const ContainerRecord& c : item.snapshot) ids.push_back(c.container_id);
  const Timestamp at =
      item.snapshot_at > Timestamp{} ? item.snapshot_at : Now();
  return repo_->MarkMissingDeleted(item.node, ids, at).status();
}

void BatchWriter::Drop(const BatchItem& item, const Status& why) {
  metrics_->errors->Inc();
  // Logged once: the message is still acked, so the agent does not resend it.
  LENS_LOG(WARN)
          .Field("node", item.node)
          .Field("sequence", item.sequence)
          .Field("container",
                 std::string_view(item.change.container.container_id)
                     .substr(0, kMaxLoggedIdBytes))
          .Field("error", why)
      << "dropping invalid container event";
}

void BatchWriter::Acknowledge(Segment segment) {
  const auto now = std::chrono::steady_clock::now();
  for (const BatchItem& item : segment) {
    metrics_->processing_seconds->Observe(
        std::chrono::duration<double>(now - item.received).count());
    item.stream->Handled(item.sequence);
  }
}

void BatchWriter::FailStreams(Segment rest, const Status& why) {
  metrics_->errors->Inc();
  LENS_LOG(ERROR).Field("error", why)
      << "storing container events failed; ending the affected agent streams "
         "so they resend";
  for (const BatchItem& item : rest) item.stream->Fail(why.message());
}

}  // namespace lens::container_events
