#include "container_events/agent_stream.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "container_events/convert.h"

namespace lens::container_events {
namespace {

constexpr size_t kMaxNodeBytes = 253;  // the store's key limit

grpc::Status Invalid(std::string message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, std::move(message));
}

}  // namespace

void DefaultUpdatedAt(ContainerRecord* c, Timestamp at) {
  if (c->updated_at > Timestamp{}) return;
  c->updated_at = at > Timestamp{}
                      ? at
                      : std::chrono::time_point_cast<std::chrono::microseconds>(
                            std::chrono::system_clock::now());
}

void AgentStreamState::Handled(uint64_t sequence) {
  std::lock_guard<std::mutex> lock(mu_);
  handled_ = std::max(handled_, sequence);
  cv_.notify_all();
}

void AgentStreamState::Fail(std::string_view /*why*/) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_) return;
  failed_ = true;
  CancelLocked(GRPC_STATUS_UNAVAILABLE, kStoreFailedMessage);
  cv_.notify_all();
}

void AgentStreamState::Cancel(grpc_status_code code,
                              const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  CancelLocked(code, message);
}

void AgentStreamState::Detach() {
  std::lock_guard<std::mutex> lock(mu_);
  ctx_ = nullptr;
}

void AgentStreamState::ReaderDone() {
  std::lock_guard<std::mutex> lock(mu_);
  done_ = true;
  cv_.notify_all();
}

void AgentStreamState::AckLoop(AgentStream* stream) {
  uint64_t sent = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return handled_ > sent || done_ || failed_; });
    if (failed_) return;
    if (handled_ == sent) return;  // done_, nothing left to ack
    sent = handled_;
    lock.unlock();
    v1::ServerMessage m;
    m.mutable_ack()->set_sequence(sent);
    const bool ok = stream->Write(m);
    lock.lock();
    if (!ok) return;  // the call is over
  }
}

void AgentStreamState::WaitHandled(uint64_t sequence,
                                   const std::function<bool()>& give_up) {
  std::unique_lock<std::mutex> lock(mu_);
  while (handled_ < sequence && !failed_ && !give_up()) {
    cv_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

void AgentStreamState::CancelLocked(grpc_status_code code,
                                    const std::string& message) {
  if (ctx_ == nullptr) return;
  // On a server call this sends `code` and `message` as the final status.
  grpc_call_cancel_with_status(ctx_->c_call(), code, message.c_str(), nullptr);
}

// A client-supplied name as it may appear in a status or a log line: at most
// kMaxNodeBytes (a status travels in a trailer of limited size).
std::string Clip(const std::string& name) {
  return name.size() <= kMaxNodeBytes ? name
                                      : name.substr(0, kMaxNodeBytes) + "...";
}

grpc::Status CheckHello(const v1::AgentMessage& m) {
  if (!m.has_hello()) {
    return Invalid("the first message of a stream must be a Hello");
  }
  const std::string& node = m.hello().node();
  if (node.empty()) return Invalid("Hello without a node name");
  if (node.size() > kMaxNodeBytes) {
    return Invalid("Hello node name longer than " +
                   std::to_string(kMaxNodeBytes) + " bytes");
  }
  if (!m.node().empty() && m.node() != node) {
    return Invalid("Hello for node '" + node + "' sent as node '" +
                   Clip(m.node()) + "'");
  }
  return grpc::Status::OK;
}

grpc::Status CheckMessage(const v1::AgentMessage& m, const std::string& node,
                          uint64_t last_sequence) {
  if (m.node() != node) {
    return Invalid("message for node '" + Clip(m.node()) +
                   "' on the stream of node '" + node + "'");
  }
  if (m.has_hello()) return Invalid("a second Hello on one stream");
  if (m.body_case() == v1::AgentMessage::BODY_NOT_SET) {
    return Invalid("message " + std::to_string(m.sequence()) +
                   " has no event or snapshot (an unknown kind from a newer "
                   "agent? upgrade lens-jobs first)");
  }
  if (m.sequence() <= last_sequence) {
    return Invalid("sequence " + std::to_string(m.sequence()) +
                   " does not increase (last " + std::to_string(last_sequence) +
                   ")");
  }
  return grpc::Status::OK;
}

BatchItem ToBatchItem(const v1::AgentMessage& m, const std::string& node,
                      std::shared_ptr<AckSink> stream) {
  BatchItem item;
  item.stream = std::move(stream);
  item.node = node;
  item.sequence = m.sequence();
  item.received = std::chrono::steady_clock::now();
  item.bytes = m.ByteSizeLong();
  if (m.has_snapshot()) {
    item.is_snapshot = true;
    item.snapshot_at = FromUnixMicros(m.snapshot().at_us());
    item.snapshot.reserve(m.snapshot().containers_size());
    for (const v1::ContainerState& c : m.snapshot().containers()) {
      item.snapshot.push_back(FromProto(c, node));
      DefaultUpdatedAt(&item.snapshot.back(), item.snapshot_at);
    }
  } else {
    item.change = FromProto(m.event(), node, m.sequence());
    DefaultUpdatedAt(&item.change.container, item.change.event.at);
  }
  return item;
}

}  // namespace lens::container_events
