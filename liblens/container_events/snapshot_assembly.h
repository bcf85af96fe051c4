// A snapshot that arrives in parts (SnapshotBegin, SnapshotPart...,
// SnapshotEnd): collected per stream and handed to the writer only when it
// is complete, so a stream that ends in between changes nothing.
#ifndef LENS_CONTAINER_EVENTS_SNAPSHOT_ASSEMBLY_H_
#define LENS_CONTAINER_EVENTS_SNAPSHOT_ASSEMBLY_H_

#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "container_events/batch_writer.h"
#include "lens/v1/container_events.pb.h"

namespace lens::container_events {

// Whether `m` is one of the three parts-protocol messages.
bool IsSnapshotPiece(const v1::AgentMessage& m);

// One stream's snapshot in progress. Not thread-safe: the stream's reader
// owns it.
class SnapshotAssembly {
 public:
  explicit SnapshotAssembly(size_t max_bytes) : max_bytes_(max_bytes) {}

  // Whether a SnapshotBegin came and its SnapshotEnd not yet.
  bool active() const { return active_; }
  // The sequence of the open SnapshotBegin (0 when none).
  uint64_t begin_sequence() const { return active_ ? begin_sequence_ : 0; }

  // An event or a single Snapshot: INVALID_ARGUMENT while a snapshot is
  // open (nothing may come between its parts).
  grpc::Status CheckOutside(const v1::AgentMessage& m) const;
  // A checked begin, part or end message of `node`'s stream. Out of order
  // (a part without a begin, a part index other than the next, an end whose
  // part or container count differs from what came): INVALID_ARGUMENT; over
  // max_bytes: RESOURCE_EXHAUSTED. At the end, `*done` is the whole
  // snapshot as one queue entry, sequenced as the end message (its ack
  // covers the parts) and sized in wire bytes.
  grpc::Status Add(const v1::AgentMessage& m, const std::string& node,
                   const std::shared_ptr<AckSink>& stream,
                   std::optional<BatchItem>* done);

 private:
  grpc::Status Begin(const v1::AgentMessage& m, const std::string& node,
                     const std::shared_ptr<AckSink>& stream);
  grpc::Status Part(const v1::AgentMessage& m, const std::string& node);
  grpc::Status End(const v1::AgentMessage& m, std::optional<BatchItem>* done);

  const size_t max_bytes_;
  bool active_ = false;
  uint64_t begin_sequence_ = 0;
  uint64_t announced_ = 0;  // containers the begin announced
  uint32_t next_part_ = 0;
  BatchItem item_;
};

}  // namespace lens::container_events

#endif  // LENS_CONTAINER_EVENTS_SNAPSHOT_ASSEMBLY_H_
