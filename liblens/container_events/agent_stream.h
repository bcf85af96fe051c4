// One agent's stream on the server side: the state its reader, its ack
// thread and the BatchWriter share, and the checks and conversion of the
// messages it receives. gRPC types stay inside liblens/container_events.
#ifndef LENS_CONTAINER_EVENTS_AGENT_STREAM_H_
#define LENS_CONTAINER_EVENTS_AGENT_STREAM_H_

#include <grpc/grpc.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "container_events/batch_writer.h"
#include "lens/v1/container_events.grpc.pb.h"

namespace lens::container_events {

using AgentStream =
    grpc::ServerReaderWriter<v1::ServerMessage, v1::AgentMessage>;

// The agent's final status after a store failure.
inline constexpr char kStoreFailedMessage[] =
    "lens-jobs could not store events; reconnect and resend";

// Thread-safe. Lifetime: shared by the handler, its ack thread and queued
// BatchItems; the handler Detach()es it before returning, after which it
// never touches the call again.
class AgentStreamState final : public AckSink {
 public:
  explicit AgentStreamState(grpc::ServerContext* ctx) : ctx_(ctx) {}

  void Handled(uint64_t sequence) override;
  // Ends the call with UNAVAILABLE. `why` is logged by the writer; the agent
  // only learns that it must reconnect (store errors name database hosts).
  void Fail(std::string_view why) override;
  bool failed() const override { return failed_; }

  // Ends the call with `code` (its final status on the agent's side) unless
  // the handler has returned. The sync API offers no other way to end a
  // stream whose handler is blocked in Read.
  void Cancel(grpc_status_code code, const std::string& message);
  // The handler is returning: the call must not be touched any more.
  void Detach();
  // The reader is done; the ack thread sends what is left and exits.
  void ReaderDone();
  // The ack thread's body: the only writer of `stream`. Writes one
  // cumulative Ack for the newest handled sequence each time it changes.
  void AckLoop(AgentStream* stream);
  // Waits until every message up to `sequence` is handled, the stream
  // failed, or `give_up` returns true.
  void WaitHandled(uint64_t sequence, const std::function<bool()>& give_up);

 private:
  void CancelLocked(grpc_status_code code, const std::string& message);

  std::mutex mu_;
  std::condition_variable cv_;
  grpc::ServerContext* ctx_;         // GUARDED_BY(mu_); null once detached
  uint64_t handled_ = 0;             // GUARDED_BY(mu_)
  bool done_ = false;                // GUARDED_BY(mu_)
  std::atomic<bool> failed_{false};  // written under mu_
};

// The first message: a Hello with a node name (INVALID_ARGUMENT otherwise).
grpc::Status CheckHello(const v1::AgentMessage& m);
// Every later message: the Hello's node, an event, a snapshot or a piece of
// one (begin, part, end), and a sequence above `last_sequence`
// (INVALID_ARGUMENT otherwise).
grpc::Status CheckMessage(const v1::AgentMessage& m, const std::string& node,
                          uint64_t last_sequence);
// A state without an update time gets `at` (or now): it was current then.
void DefaultUpdatedAt(ContainerRecord* c, Timestamp at);
// The queue entry of a checked event or single-snapshot message, sized in
// wire bytes. States get DefaultUpdatedAt the message's time.
BatchItem ToBatchItem(const v1::AgentMessage& m, const std::string& node,
                      std::shared_ptr<AckSink> stream);

}  // namespace lens::container_events

#endif  // LENS_CONTAINER_EVENTS_AGENT_STREAM_H_
