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
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include "container_events/agent_stream.h"
#include "container_events/batch_writer.h"
#include "container_events/server_metrics.h"
#include "core/kernel_file.h"
#include "http/listen_address.h"
#include "http/wire.h"
#include "lens/container_events.h"
#include "lens/log.h"
#include "lens/v1/container_events.grpc.pb.h"

namespace lens {
namespace {

using container_events::AgentStream;
using container_events::AgentStreamState;
using container_events::BatchWriter;
using container_events::CheckHello;
using container_events::CheckMessage;
using container_events::ServerMetrics;

// Queue bound, in batches: enough to keep the writer busy while the store
// is slow, small enough that memory stays bounded.
constexpr size_t kQueuedBatches = 4;

// "host:port" as gRPC wants it, from the listen syntax every Lens daemon
// takes ("0.0.0.0:50051", ":50051", "[::]:50051").
StatusOr<std::string> GrpcAddress(std::string_view listen) {
  StatusOr<http::ListenAddress> a = http::ParseListenAddress(listen);
  if (!a.ok()) return a.status().WithContext("container event server listen");
  const std::string host =
      a->host.find(':') == std::string::npos ? a->host : "[" + a->host + "]";
  return host + ":" + std::to_string(a->port);
}

void SetServerOptions(const ContainerEventServerOptions& o,
                      grpc::ServerBuilder* b) {
  b->SetMaxReceiveMessageSize(
      static_cast<int>(std::min<size_t>(o.max_message_bytes, INT_MAX)));
  // A port in use must fail, not be shared with another process.
  b->AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Find agents that vanished without closing (node lost), and let agents
  // keep their idle stream alive with pings every 10 s or more; a client
  // pinging faster is disconnected after two strikes.
  b->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 60000);
  b->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20000);
  b->AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                        10000);
  b->AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
  b->AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // Idle streams carry no data for hours; keepalive pings must not stop.
  b->AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // Bounds on what a client can hold without sending anything useful.
  b->AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, 4);
  b->AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE, 16 << 10);
  b->AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, 5 * 60 * 1000);
  b->AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                        static_cast<int>(std::min<int64_t>(
                            o.handshake_timeout.count(), INT_MAX)));
}

}  // namespace

class ContainerEventServer::Impl final : public v1::ContainerEvents::Service {
 public:
  Impl(ContainerEventServerOptions options, Store* store)
      : options_(std::move(options)), store_(store) {
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
  StatusOr<std::shared_ptr<grpc::ServerCredentials>> Credentials() const;
  bool Authorized(const grpc::ServerContext& ctx) const;
  grpc::Status Register(const std::shared_ptr<AgentStreamState>& s);
  void Unregister(const std::shared_ptr<AgentStreamState>& s);
  grpc::Status Serve(grpc::ServerContext* ctx, AgentStream* rw);
  // After the Hello: the ack thread's lifetime around Receive.
  grpc::Status ServeAgent(grpc::ServerContext* ctx, AgentStream* rw,
                          const std::string& node,
                          const std::shared_ptr<AgentStreamState>& state);
  // Reads, checks and queues messages until the stream ends.
  grpc::Status Receive(grpc::ServerContext* ctx, AgentStream* rw,
                       const std::string& node,
                       const std::shared_ptr<AgentStreamState>& state);
  void CountReceived(const v1::AgentMessage& m);
  bool stopping() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stopping_;
  }

  const ContainerEventServerOptions options_;
  Store* const store_;
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

StatusOr<std::shared_ptr<grpc::ServerCredentials>>
ContainerEventServer::Impl::Credentials() const {
  const std::string& cert = options_.tls_cert_file;
  const std::string& key = options_.tls_key_file;
  if (cert.empty() && key.empty()) return grpc::InsecureServerCredentials();
  if (cert.empty() || key.empty()) {
    return InvalidArgumentError(
        "container event server: TLS needs both a certificate and a key file");
  }
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  for (const auto& [path, marker, out] :
       {std::tuple(&cert, "CERTIFICATE-----", &pair.cert_chain),
        std::tuple(&key, "PRIVATE KEY-----", &pair.private_key)}) {
    StatusOr<std::string> pem = ReadKernelFile(*path);
    if (!pem.ok() || pem->find(marker) == std::string::npos) {
      return InvalidArgumentError(
          "container event server: TLS file " + *path + " is not readable PEM" +
          (pem.ok() ? std::string() : ": " + pem.status().message()));
    }
    *out = std::move(*pem);
  }
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  return grpc::SslServerCredentials(ssl);
}

Status ContainerEventServer::Impl::Start() {
  std::lock_guard<std::mutex> stop_lock(stop_mu_);
  LENS_RETURN_IF_ERROR(metrics_status_);
  if (server_ || stopping()) {
    return FailedPreconditionError("container event server already started");
  }
  if (store_ == nullptr) {
    return InvalidArgumentError("container event server: no store");
  }
  LENS_ASSIGN_OR_RETURN(auto creds, Credentials());
  LENS_ASSIGN_OR_RETURN(const std::string address,
                        GrpcAddress(options_.listen));
  const size_t max_batch = std::max<size_t>(1, options_.max_batch);
  writer_ =
      std::make_unique<BatchWriter>(&store_->containers(), metrics_.get(),
                                    max_batch, max_batch * kQueuedBatches);
  writer_->Start();
  grpc::ServerBuilder builder;
  int selected = 0;
  builder.AddListeningPort(address, creds, &selected);
  builder.RegisterService(this);
  SetServerOptions(options_, &builder);
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

bool ContainerEventServer::Impl::Authorized(
    const grpc::ServerContext& ctx) const {
  if (options_.bearer_token.empty()) return true;
  const auto& md = ctx.client_metadata();
  const auto it = md.find("authorization");
  if (it == md.end()) return false;
  return http::Authorized(
      std::string_view(it->second.data(), it->second.size()),
      options_.bearer_token);
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
  if (!Authorized(*ctx)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "missing or wrong bearer token");
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
  LENS_LOG(INFO)
          .Field("node", hello.hello().node())
          .Field("peer", ctx->peer())
          .Field("session", hello.hello().session())
          .Field("agent_version", hello.hello().agent_version().substr(0, 64))
      << "node agent connected";
  metrics_->agents->Inc();
  const grpc::Status st = ServeAgent(ctx, rw, hello.hello().node(), state);
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
  return Receive(ctx, rw, node, state);
}

grpc::Status ContainerEventServer::Impl::Receive(
    grpc::ServerContext* ctx, AgentStream* rw, const std::string& node,
    const std::shared_ptr<AgentStreamState>& state) {
  const auto cancelled = [ctx] { return ctx->IsCancelled(); };
  const grpc::Status unavailable(grpc::StatusCode::UNAVAILABLE,
                                 container_events::kStoreFailedMessage);
  v1::AgentMessage m;
  uint64_t last = 0;
  while (rw->Read(&m)) {
    if (grpc::Status st = CheckMessage(m, node, last); !st.ok()) {
      metrics_->errors->Inc();
      LENS_LOG(WARN).Field("node", node).Field("error", st.error_message())
          << "rejected container event stream";
      return st;
    }
    last = m.sequence();
    CountReceived(m);
    if (!writer_->Push(container_events::ToBatchItem(m, node, state),
                       cancelled)) {
      return state->failed() ? unavailable
                             : grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                            "lens-jobs is stopping");
    }
  }
  if (state->failed()) return unavailable;
  if (ctx->IsCancelled()) return grpc::Status::CANCELLED;
  // The agent closed its side: ack what it sent before ending the stream.
  state->WaitHandled(last, cancelled);
  return state->failed() ? unavailable : grpc::Status::OK;
}

void ContainerEventServer::Impl::CountReceived(const v1::AgentMessage& m) {
  if (m.has_snapshot()) {
    metrics_->snapshots->Inc();
    metrics_->received->Add(
        static_cast<double>(m.snapshot().containers_size()));
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
