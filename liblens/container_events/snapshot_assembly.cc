#include "container_events/snapshot_assembly.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "container_events/agent_stream.h"
#include "container_events/convert.h"

namespace lens::container_events {
namespace {

grpc::Status Invalid(std::string message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, std::move(message));
}

std::string Seq(uint64_t sequence) {
  return "(sequence " + std::to_string(sequence) + ")";
}

// Reserved up front at most, whatever a begin announces.
constexpr uint64_t kMaxReserve = 16384;

}  // namespace

bool IsSnapshotPiece(const v1::AgentMessage& m) {
  return m.has_snapshot_begin() || m.has_snapshot_part() ||
         m.has_snapshot_end();
}

grpc::Status SnapshotAssembly::CheckOutside(const v1::AgentMessage& m) const {
  if (!active_) return grpc::Status::OK;
  return Invalid(std::string(m.has_event() ? "an event" : "a Snapshot") + " " +
                 Seq(m.sequence()) + " inside the snapshot begun " +
                 Seq(begin_sequence_) + "; only its parts and end may follow");
}

grpc::Status SnapshotAssembly::Add(const v1::AgentMessage& m,
                                   const std::string& node,
                                   const std::shared_ptr<AckSink>& stream,
                                   std::optional<BatchItem>* done) {
  if (m.has_snapshot_begin()) return Begin(m, node, stream);
  if (!active_) {
    return Invalid(
        std::string(m.has_snapshot_part() ? "SnapshotPart" : "SnapshotEnd") +
        " " + Seq(m.sequence()) + " without a SnapshotBegin");
  }
  if (m.has_snapshot_part()) return Part(m, node);
  return End(m, done);
}

grpc::Status SnapshotAssembly::Begin(const v1::AgentMessage& m,
                                     const std::string& node,
                                     const std::shared_ptr<AckSink>& stream) {
  if (active_) {
    return Invalid("SnapshotBegin " + Seq(m.sequence()) +
                   " while the snapshot begun " + Seq(begin_sequence_) +
                   " has not ended");
  }
  active_ = true;
  begin_sequence_ = m.sequence();
  announced_ = m.snapshot_begin().containers();
  next_part_ = 0;
  item_ = BatchItem{};
  item_.stream = stream;
  item_.node = node;
  item_.is_snapshot = true;
  item_.snapshot_at = FromUnixMicros(m.snapshot_begin().at_us());
  item_.received = std::chrono::steady_clock::now();
  item_.bytes = m.ByteSizeLong();
  item_.snapshot.reserve(std::min(announced_, kMaxReserve));
  return grpc::Status::OK;
}

grpc::Status SnapshotAssembly::Part(const v1::AgentMessage& m,
                                    const std::string& node) {
  const v1::SnapshotPart& part = m.snapshot_part();
  if (part.index() != next_part_) {
    return Invalid("snapshot part " + std::to_string(part.index()) + " " +
                   Seq(m.sequence()) + " arrived where part " +
                   std::to_string(next_part_) + " was expected");
  }
  item_.bytes += m.ByteSizeLong();
  if (item_.bytes > max_bytes_) {
    active_ = false;
    item_ = BatchItem{};
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "snapshot begun " + Seq(begin_sequence_) +
                            " is over the server's limit of " +
                            std::to_string(max_bytes_) + " bytes");
  }
  if (item_.snapshot.size() + static_cast<size_t>(part.containers_size()) >
      announced_) {
    return Invalid("snapshot part " + std::to_string(part.index()) + " " +
                   Seq(m.sequence()) + " brings more containers than the " +
                   std::to_string(announced_) + " its SnapshotBegin announced");
  }
  for (const v1::ContainerState& c : part.containers()) {
    item_.snapshot.push_back(FromProto(c, node));
    DefaultUpdatedAt(&item_.snapshot.back(), item_.snapshot_at);
  }
  ++next_part_;
  return grpc::Status::OK;
}

grpc::Status SnapshotAssembly::End(const v1::AgentMessage& m,
                                   std::optional<BatchItem>* done) {
  if (m.snapshot_end().parts() != next_part_) {
    return Invalid("SnapshotEnd " + Seq(m.sequence()) + " counts " +
                   std::to_string(m.snapshot_end().parts()) + " parts, " +
                   std::to_string(next_part_) + " arrived");
  }
  if (item_.snapshot.size() != announced_) {
    return Invalid("SnapshotEnd " + Seq(m.sequence()) + ": the parts carried " +
                   std::to_string(item_.snapshot.size()) +
                   " containers, SnapshotBegin announced " +
                   std::to_string(announced_));
  }
  active_ = false;
  item_.sequence = m.sequence();
  item_.bytes += m.ByteSizeLong();
  done->emplace(std::move(item_));
  item_ = BatchItem{};
  return grpc::Status::OK;
}

}  // namespace lens::container_events
