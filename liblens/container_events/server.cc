// ContainerEventServer: a gRPC sync server for lens.v1.ContainerEvents.
//
// Threads. Each agent stream runs on one of gRPC's handler threads, which
// only reads: it checks and converts each message and queues it for the one
// BatchWriter thread shared by all streams. A sync stream allows one Read and
// one Write at a time, and acks must not wait for the next message to arrive,
// so each stream also has its own ack thread, the only one that writes to
// it: the BatchWriter records the highest handled sequence in the stream's
// AgentStreamState and the ack thread writes one cumulative Ack for whatever is
// newest (acks coalesce when the agent reads slowly, and a slow agent blocks
// only its own ack thread, never the writer or other streams).
//
// Ending a stream from outside its handler (store failure, Stop) cancels the
// call with a status. The sync API has no other way to end a stream whose
// handler is blocked in Read; grpc_call_cancel_with_status on a server call
// sends that status to the client as the stream's final status.
#include <algorithm>
#include <atomic>
#include <climits>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include "container_events/agent_stream.h"
#include "container_events/batch_writer.h"
#include "container_events/container_events.h"
#include "container_events/listener.h"
#include "container_events/server_metrics.h"
#include "container_events/snapshot_assembly.h"
#include "container_events/stream_auth.h"
#include "http/listen_address.h"
#include "lens/log.h"
#include "lens/v1/container_events.grpc.pb.h"

namespace lens {
namespace {

using container_events::AgentStream;
using container_events::AgentStreamState;
using container_events::BatchItem;
using container_events::BatchWriter;
using container_events::CheckHello;
using container_events::CheckMessage;
using container_events::ServerMetrics;
using container_events::SnapshotAssembly;
using container_events::StreamIdentity;

// Queue bound, in batches: enough to keep the writer busy while the store
// is slow, small enough that memory stays bounded.
constexpr size_t kQueuedBatches = 4;

}  // namespace

class ContainerEventServer::Impl final : public v1::ContainerEvents::Service {
 public:
  Impl(ContainerEventServerOptions options, Store* store)
      : options_(std::move(options)),
        store_(store),
        auth_(options_.bearer_token, options_.node_tokens,
              options_.accept_shared_token) {
    auto metrics = ServerMetrics::Create();
    if (metrics.ok()) {
      metrics_ = std::move(*metrics);
    } else {
      metrics_status_ = metrics.status();
    }
  }
  ~Impl() override { Stop(); }

  Status Start();
  void Stop();
  int port() const { return port_.load(); }
  ContainerEventServerStats stats() const {
    return metrics_ ? metrics_->Stats() : ContainerEventServerStats{};
  }
  std::string RenderMetrics() const {
    return metrics_ ? metrics_->Render() : std::string();
  }

  grpc::Status Stream(grpc::ServerContext* ctx, AgentStream* rw) override {
    try {
      return Serve(ctx, rw);
    } catch (const std::exception& e) {
      LENS_LOG(ERROR).Field("error", e.what()) << "container event stream";
      return grpc::Status(grpc::StatusCode::INTERNAL, "internal error");
    }
  }

 private:
  grpc::Status Register(const std::shared_ptr<AgentStreamState>& s);
  void Unregister(const std::shared_ptr<AgentStreamState>& s);
  grpc::Status Serve(grpc::ServerContext* ctx, AgentStream* rw);
  // After the Hello: the ack thread's lifetime around Receive.
  grpc::Status ServeAgent(grpc::ServerContext* ctx, AgentStream* rw,
                          const std::string& node,
                          const StreamIdentity& identity,
                          const std::shared_ptr<AgentStreamState>& state);
  // Reads, checks and queues messages until the stream ends.
  grpc::Status Receive(grpc::ServerContext* ctx, AgentStream* rw,
                       const std::string& node, const StreamIdentity& identity,
                       const std::shared_ptr<AgentStreamState>& state);
  // The first check of every message: not rejected before.
  grpc::Status Check(const v1::AgentMessage& m, const std::string& node,
                     const StreamIdentity& identity, uint64_t last,
                     const SnapshotAssembly& snapshot);
  grpc::Status Reject(const std::string& node, grpc::Status st);
  void CountReceived(const BatchItem& item);
  bool stopping() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stopping_;
  }

  const ContainerEventServerOptions options_;
  Store* const store_;
  const container_events::StreamAuth auth_;
  std::unique_ptr<ServerMetrics> metrics_;
  Status metrics_status_;
  std::atomic<int> port_{0};

  std::mutex stop_mu_;                    // serializes Start and Stop
  std::unique_ptr<BatchWriter> writer_;   // GUARDED_BY(stop_mu_) for reset
  std::unique_ptr<grpc::Server> server_;  // GUARDED_BY(stop_mu_)

  mutable std::mutex mu_;
  bool stopping_ = false;                                // GUARDED_BY(mu_)
  std::set<std::shared_ptr<AgentStreamState>> streams_;  // GUARDED_BY(mu_)
};

Status ContainerEventServer::Impl::Start() {
  std::lock_guard<std::mutex> stop_lock(stop_mu_);
  LENS_RETURN_IF_ERROR(metrics_status_);
  if (server_ || stopping()) {
    return FailedPreconditionError("container event server already started");
  }
  if (store_ == nullptr) {
    return InvalidArgumentError("container event server: no store");
  }
  LENS_ASSIGN_OR_RETURN(auto creds,
                        container_events::ServerCredentials(options_));
  LENS_ASSIGN_OR_RETURN(const std::string address,
                        container_events::GrpcAddress(options_.listen));
  const size_t max_batch = std::max<size_t>(1, options_.max_batch);
  writer_ = std::make_unique<BatchWriter>(&store_->containers(), metrics_.get(),
                                          max_batch, max_batch * kQueuedBatches,
                                          options_.max_queued_bytes);
  writer_->Start();
  grpc::ServerBuilder builder;
  int selected = 0;
  builder.AddListeningPort(address, creds, &selected);
  builder.RegisterService(this);
  container_events::SetServerOptions(options_, &builder);
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || selected == 0) {
    server_.reset();
    writer_->Stop();
    return UnavailableError("container event server: cannot listen on " +
                            options_.listen);
  }
  port_ = selected;
  return OkStatus();
}

void ContainerEventServer::Impl::Stop() {
  std::lock_guard<std::mutex> stop_lock(stop_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (const auto& s : streams_) {
      s->Cancel(GRPC_STATUS_UNAVAILABLE, "lens-jobs is stopping");
    }
  }
  if (server_) {
    // Every stream is cancelled; the deadline only bounds stragglers.
    server_->Shutdown(std::chrono::system_clock::now() +
                      std::chrono::seconds(2));
    server_->Wait();
    server_.reset();
  }
  // Writes what the handlers queued before they ended.
  if (writer_) writer_->Stop();
}

grpc::Status ContainerEventServer::Impl::Register(
    const std::shared_ptr<AgentStreamState>& s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_)
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "lens-jobs is stopping");
  if (static_cast<int>(streams_.size()) >= options_.max_streams) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "lens-jobs serves at most " +
                            std::to_string(options_.max_streams) +
                            " agent streams at once");
  }
  streams_.insert(s);
  return grpc::Status::OK;
}

void ContainerEventServer::Impl::Unregister(
    const std::shared_ptr<AgentStreamState>& s) {
  std::lock_guard<std::mutex> lock(mu_);
  streams_.erase(s);
  s->Detach();
}

grpc::Status ContainerEventServer::Impl::Serve(grpc::ServerContext* ctx,
                                               AgentStream* rw) {
  const StreamIdentity identity = auth_.Authenticate(*ctx);
  if (!identity.authenticated) {
    metrics_->unauthenticated->Inc();
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        auth_.UnauthenticatedMessage());
  }
  auto state = std::make_shared<AgentStreamState>(ctx);
  if (grpc::Status st = Register(state); !st.ok()) return st;
  struct Unregistered {
    Impl* impl;
    std::shared_ptr<AgentStreamState> s;
    ~Unregistered() { impl->Unregister(s); }
  } unregistered{this, state};

  v1::AgentMessage hello;
  if (!rw->Read(&hello)) return grpc::Status::OK;  // closed before a Hello
  if (grpc::Status st = CheckHello(hello); !st.ok()) {
    metrics_->errors->Inc();
    LENS_LOG(WARN).Field("peer", ctx->peer()).Field("error", st.error_message())
        << "rejected container event stream";
    return st;
  }
  if (identity.node && *identity.node != hello.hello().node()) {
    return Reject(*identity.node, container_events::PermissionDenied(
                                      *identity.node, hello.hello().node()));
  }
  LENS_LOG(INFO)
          .Field("node", hello.hello().node())
          .Field("peer", ctx->peer())
          .Field("session", hello.hello().session())
          .Field("agent_version", hello.hello().agent_version().substr(0, 64))
      << "node agent connected";
  metrics_->agents->Inc();
  const grpc::Status st =
      ServeAgent(ctx, rw, hello.hello().node(), identity, state);
  metrics_->agents->Dec();
  LENS_LOG(INFO)
          .Field("node", hello.hello().node())
          .Field("status",
                 StatusCodeName(static_cast<StatusCode>(st.error_code())))
      << "node agent disconnected";
  return st;
}

grpc::Status ContainerEventServer::Impl::ServeAgent(
    grpc::ServerContext* ctx, AgentStream* rw, const std::string& node,
    const StreamIdentity& identity,
    const std::shared_ptr<AgentStreamState>& state) {
  std::thread acker([state, rw] { state->AckLoop(rw); });
  struct Joined {
    AgentStreamState& s;
    std::thread& t;
    ~Joined() {
      s.ReaderDone();  // lets the acker send the last ack and exit
      t.join();
    }
  } joined{*state, acker};
  return Receive(ctx, rw, node, identity, state);
}

grpc::Status ContainerEventServer::Impl::Receive(
    grpc::ServerContext* ctx, AgentStream* rw, const std::string& node,
    const StreamIdentity& identity,
    const std::shared_ptr<AgentStreamState>& state) {
  const auto cancelled = [ctx] { return ctx->IsCancelled(); };
  const grpc::Status unavailable(grpc::StatusCode::UNAVAILABLE,
                                 container_events::kStoreFailedMessage);
  SnapshotAssembly snapshot(options_.max_snapshot_bytes);
  v1::AgentMessage m;
  uint64_t last = 0;    // the last message read
  uint64_t queued = 0;  // the last message queued for the writer
  while (rw->Read(&m)) {
    if (grpc::Status st = Check(m, node, identity, last, snapshot); !st.ok()) {
      return Reject(node, std::move(st));
    }
    last = m.sequence();
    std::optional<BatchItem> item;
    if (container_events::IsSnapshotPiece(m)) {
      if (grpc::Status st = snapshot.Add(m, node, state, &item); !st.ok()) {
        return Reject(node, std::move(st));
      }
      if (!item) continue;  // the snapshot is not complete yet
    } else {
      item = container_events::ToBatchItem(m, node, state);
    }
    CountReceived(*item);
    queued = item->sequence;
    if (!writer_->Push(std::move(*item), cancelled)) {
      return state->failed() ? unavailable
                             : grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                            "lens-jobs is stopping");
    }
  }
  if (state->failed()) return unavailable;
  if (ctx->IsCancelled()) return grpc::Status::CANCELLED;
  // The agent closed its side: ack what it sent before ending the stream.
  state->WaitHandled(queued, cancelled);
  if (state->failed()) return unavailable;
  if (snapshot.active()) {
    // Nothing of it was stored; the agent sends a new one when it returns.
    return grpc::Status(grpc::StatusCode::ABORTED,
                        "the stream ended inside the snapshot begun at "
                        "sequence " +
                            std::to_string(snapshot.begin_sequence()) +
                            "; it was discarded");
  }
  return grpc::Status::OK;
}

grpc::Status ContainerEventServer::Impl::Check(
    const v1::AgentMessage& m, const std::string& node,
    const StreamIdentity& identity, uint64_t last,
    const SnapshotAssembly& snapshot) {
  // A node's identity binds every message, not only the Hello.
  if (identity.node && m.node() != *identity.node) {
    return container_events::PermissionDenied(*identity.node, m.node());
  }
  if (grpc::Status st = CheckMessage(m, node, last); !st.ok()) return st;
  if (container_events::IsSnapshotPiece(m)) return grpc::Status::OK;
  return snapshot.CheckOutside(m);
}

grpc::Status ContainerEventServer::Impl::Reject(const std::string& node,
                                                grpc::Status st) {
  if (st.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
    metrics_->permission_denied->Inc();
  } else {
    metrics_->errors->Inc();
  }
  LENS_LOG(WARN).Field("node", node).Field("error", st.error_message())
      << "rejected container event stream";
  return st;
}

void ContainerEventServer::Impl::CountReceived(const BatchItem& item) {
  if (item.is_snapshot) {
    metrics_->snapshots->Inc();
    metrics_->received->Add(static_cast<double>(item.snapshot.size()));
  } else {
    metrics_->received->Inc();
  }
}

ContainerEventServer::ContainerEventServer(ContainerEventServerOptions options,
                                           Store* store)
    : impl_(std::make_unique<Impl>(std::move(options), store)) {}

ContainerEventServer::~ContainerEventServer() { Stop(); }

Status ContainerEventServer::Start() { return impl_->Start(); }
void ContainerEventServer::Stop() { impl_->Stop(); }
int ContainerEventServer::port() const { return impl_->port(); }
ContainerEventServerStats ContainerEventServer::stats() const {
  return impl_->stats();
}
std::string ContainerEventServer::RenderMetrics() const {
  return impl_->RenderMetrics();
}

}  // namespace lens
