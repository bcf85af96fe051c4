// ContainerEventSender: one connection thread owns the stream and is its only
// writer; a reader thread per stream takes acks. Messages are numbered when
// published and kept until acked; after a reconnect the unacked ones are
// resent in order, then a snapshot of the sender's current view (the last
// snapshot with every later event applied) repairs anything dropped. A view
// larger than one part goes out as SnapshotBegin, parts, SnapshotEnd.
#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "container_events/container_events.h"
#include "container_events/convert.h"
#include "lens/log.h"
#include "lens/v1/container_events.grpc.pb.h"
#include "lens/version.h"
#include "proto/grpc_status.h"

namespace lens {
namespace {

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The protocol this sender speaks (container_events.proto): snapshots in
// parts.
constexpr uint32_t kProtocol = 2;
// What a ContainerState adds to a message beyond its own size: the field
// tag and the length prefix.
constexpr size_t kEntryOverhead = 6;
constexpr size_t kMinPartBytes = 4 << 10;
constexpr size_t kMaxPartBytes = 3 << 20;

bool IsSnapshotMessage(const v1::AgentMessage& m) {
  return m.has_snapshot() || m.has_snapshot_begin() || m.has_snapshot_part() ||
         m.has_snapshot_end();
}

uint64_t RandomSession() {
  std::random_device rd;
  return (uint64_t{rd()} << 32) ^ rd();
}

StatusOr<std::string> ReadPem(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError("cannot read TLS CA file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

class ContainerEventSender::Impl {
 public:
  explicit Impl(ContainerEventSenderOptions options)
      : options_(std::move(options)), session_(RandomSession()) {}

  ContainerEventSenderOptions options_;
  uint64_t session_;
  std::shared_ptr<grpc::Channel> channel_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  // Unacked messages in sequence order; [0, sent_) went out on the current
  // stream.
  std::deque<v1::AgentMessage> buffer_;  // GUARDED_BY(mu_)
  size_t sent_ = 0;                      // GUARDED_BY(mu_)
  uint64_t next_sequence_ = 1;           // GUARDED_BY(mu_)
  // The node's containers as the server should see them.
  std::map<std::string, v1::ContainerState> view_;  // GUARDED_BY(mu_)
  bool snapshot_due_ = true;
  // A snapshot is sent only once the view is known (PublishSnapshot was
  // called): an empty or partial view would mark live containers deleted.
  bool view_known_ = false;                 // GUARDED_BY(mu_)
  bool stopping_ = false;                   // GUARDED_BY(mu_)
  grpc::ClientContext* context_ = nullptr;  // GUARDED_BY(mu_)
  ContainerEventSenderStats stats_;         // GUARDED_BY(mu_)
  std::thread thread_;

  // Appends a numbered message; drops the oldest event when full.
  void Append(v1::AgentMessage msg) {
    msg.set_node(options_.node);
    msg.set_sequence(next_sequence_++);
    buffer_.push_back(std::move(msg));
    while (buffer_.size() > options_.max_buffered) {
      auto it = std::find_if(buffer_.begin(), buffer_.end(),
                             [](const auto& m) { return m.has_event(); });
      if (it == buffer_.end()) break;
      if (static_cast<size_t>(it - buffer_.begin()) < sent_) --sent_;
      buffer_.erase(it);
      ++stats_.dropped;
      snapshot_due_ = true;  // the state the event carried comes back this way
    }
    cv_.notify_all();
  }

  // Queues the view: one Snapshot message when it fits in one part (what
  // every server reads), otherwise SnapshotBegin, SnapshotParts of at most
  // snapshot_part_bytes, SnapshotEnd.
  void QueueSnapshotLocked() {
    DropUnsentSnapshotsLocked();
    snapshot_due_ = false;
    const int64_t at = NowUs();
    std::vector<size_t> sizes;
    sizes.reserve(view_.size());
    size_t total = 0;
    for (const auto& [id, state] : view_) {
      sizes.push_back(state.ByteSizeLong() + kEntryOverhead);
      total += sizes.back();
    }
    const size_t limit = options_.snapshot_part_bytes;
    if (total <= limit) {
      v1::AgentMessage msg;
      msg.mutable_snapshot()->set_at_us(at);
      for (const auto& [id, state] : view_) {
        *msg.mutable_snapshot()->add_containers() = state;
      }
      Append(std::move(msg));
      return;
    }
    v1::AgentMessage begin;
    begin.mutable_snapshot_begin()->set_at_us(at);
    begin.mutable_snapshot_begin()->set_containers(view_.size());
    Append(std::move(begin));
    uint32_t parts = 0;
    v1::AgentMessage part;
    size_t bytes = 0;
    size_t i = 0;
    for (const auto& [id, state] : view_) {
      const size_t size = sizes[i++];
      if (bytes > 0 && bytes + size > limit) {
        Append(std::move(part));
        part = v1::AgentMessage();
        ++parts;
        bytes = 0;
      }
      part.mutable_snapshot_part()->set_index(parts);
      *part.mutable_snapshot_part()->add_containers() = state;
      bytes += size;
    }
    if (bytes > 0) {
      Append(std::move(part));
      ++parts;
    }
    v1::AgentMessage end;
    end.mutable_snapshot_end()->set_parts(parts);
    Append(std::move(end));
  }

  // An unsent older snapshot is superseded by the one being queued; the
  // rest of one already under way on this stream is sent to its end (the
  // server would refuse a new begin inside it).
  void DropUnsentSnapshotsLocked() {
    size_t i = sent_;
    if (i > 0 && (buffer_[i - 1].has_snapshot_begin() ||
                  buffer_[i - 1].has_snapshot_part())) {
      while (i < buffer_.size() && !buffer_[i].has_snapshot_end()) ++i;
      if (i < buffer_.size()) ++i;
    }
    const auto from = buffer_.begin() + static_cast<long>(i);
    buffer_.erase(std::remove_if(from, buffer_.end(), IsSnapshotMessage),
                  buffer_.end());
  }

  void OnAck(uint64_t sequence) {
    std::lock_guard lock(mu_);
    while (!buffer_.empty() && buffer_.front().sequence() <= sequence) {
      buffer_.pop_front();
      if (sent_ > 0) --sent_;
    }
    stats_.acked = std::max<uint64_t>(stats_.acked, sequence);
    stats_.buffered = buffer_.size();
    cv_.notify_all();
  }

  bool SleepFor(std::chrono::milliseconds d) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, d, [&] { return stopping_; });
    return !stopping_;
  }

  // One connected stream; returns when it fails or the sender stops.
  Status RunStream();
  void Loop();
};

Status ContainerEventSender::Impl::RunStream() {
  grpc::ClientContext ctx;
  if (!options_.bearer_token.empty()) {
    ctx.AddMetadata("authorization", "Bearer " + options_.bearer_token);
  }
  {
    std::lock_guard lock(mu_);
    if (stopping_) return OkStatus();
    context_ = &ctx;
  }
  auto stub = v1::ContainerEvents::NewStub(channel_);
  auto stream = stub->Stream(&ctx);
  v1::AgentMessage hello;
  hello.set_node(options_.node);
  hello.mutable_hello()->set_node(options_.node);
  hello.mutable_hello()->set_session(session_);
  hello.mutable_hello()->set_agent_version(LENS_VERSION_STRING);
  hello.mutable_hello()->set_protocol(kProtocol);
  bool reader_done = false;
  std::thread reader;
  if (stream->Write(hello)) {
    reader = std::thread([&] {
      v1::ServerMessage m;
      while (stream->Read(&m)) {
        if (m.has_ack()) OnAck(m.ack().sequence());
      }
      std::lock_guard lock(mu_);
      reader_done = true;
      cv_.notify_all();
    });
    std::unique_lock lock(mu_);
    // Resend every unacked event, in order, then the current view; older
    // unacked snapshots are superseded by that one.
    std::erase_if(buffer_, IsSnapshotMessage);
    sent_ = 0;
    snapshot_due_ = true;
    stats_.connected = true;
    while (true) {
      cv_.wait(lock, [&] {
        return stopping_ || reader_done || snapshot_due_ ||
               sent_ < buffer_.size();
      });
      if (stopping_ || reader_done) break;
      if (snapshot_due_ && !view_known_ && sent_ == buffer_.size()) {
        cv_.wait(lock, [&] {
          return stopping_ || reader_done || view_known_ ||
                 sent_ < buffer_.size();
        });
        continue;
      }
      if (snapshot_due_ && sent_ == buffer_.size()) QueueSnapshotLocked();
      v1::AgentMessage msg = buffer_[sent_++];
      lock.unlock();
      bool ok = stream->Write(msg);
      lock.lock();
      if (!ok) break;
      ++stats_.sent;
    }
    stats_.connected = false;
  }
  {
    // When the server ended the stream, Finish() reports its status;
    // otherwise (stopping, a failed write) the call is cancelled first.
    std::lock_guard lock(mu_);
    if (!reader_done) ctx.TryCancel();
  }
  if (reader.joinable()) reader.join();
  grpc::Status st = stream->Finish();
  std::lock_guard lock(mu_);
  context_ = nullptr;
  return FromGrpcStatus(st, "event stream to " + options_.target);
}

void ContainerEventSender::Impl::Loop() {
  auto backoff = options_.reconnect_min;
  bool logged = false;
  while (true) {
    auto started = std::chrono::steady_clock::now();
    Status st = RunStream();
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      ++stats_.reconnects;
    }
    if (!logged) {
      LENS_LOG(WARN).Field("target", options_.target).Field("error", st)
          << "container event stream lost; reconnecting with backoff";
      logged = true;
    }
    // A stream that lived a while resets the backoff.
    if (std::chrono::steady_clock::now() - started > std::chrono::seconds(10)) {
      backoff = options_.reconnect_min;
      logged = false;
    }
    if (!SleepFor(backoff)) return;
    backoff = std::min(backoff * 2, options_.reconnect_max);
  }
}

ContainerEventSender::ContainerEventSender(ContainerEventSenderOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

ContainerEventSender::~ContainerEventSender() { Stop(); }

uint64_t ContainerEventSender::Publish(const ContainerChange& change) {
  v1::AgentMessage msg;
  container_events::ToProto(change, msg.mutable_event());
  std::lock_guard lock(impl_->mu_);
  ++impl_->stats_.published;
  if (change.event.event_type == ContainerEventType::kDelete) {
    impl_->view_.erase(change.container.container_id);
  } else {
    impl_->view_[change.container.container_id] = msg.event().container();
  }
  const uint64_t sequence = impl_->next_sequence_;
  impl_->Append(std::move(msg));
  impl_->stats_.buffered = impl_->buffer_.size();
  return sequence;
}

void ContainerEventSender::PublishSnapshot(
    const std::vector<ContainerRecord>& containers) {
  std::map<std::string, v1::ContainerState> view;
  for (const ContainerRecord& c : containers) {
    container_events::ToProto(c, &view[c.container_id]);
  }
  std::lock_guard lock(impl_->mu_);
  ++impl_->stats_.published;
  impl_->view_ = std::move(view);
  impl_->view_known_ = true;
  impl_->QueueSnapshotLocked();
  impl_->stats_.buffered = impl_->buffer_.size();
}

Status ContainerEventSender::Start() {
  Impl& impl = *impl_;
  if (impl.thread_.joinable()) return OkStatus();
  if (impl.options_.node.empty()) {
    return InvalidArgumentError("container event sender: node name is empty");
  }
  if (impl.options_.target.empty()) {
    return InvalidArgumentError("container event sender: target is empty");
  }
  if (impl.options_.snapshot_part_bytes < kMinPartBytes ||
      impl.options_.snapshot_part_bytes > kMaxPartBytes) {
    return InvalidArgumentError(
        "container event sender: snapshot_part_bytes must be " +
        std::to_string(kMinPartBytes) + ".." + std::to_string(kMaxPartBytes));
  }
  std::shared_ptr<grpc::ChannelCredentials> creds =
      grpc::InsecureChannelCredentials();
  if (!impl.options_.tls_ca_file.empty()) {
    grpc::SslCredentialsOptions ssl;
    LENS_ASSIGN_OR_RETURN(ssl.pem_root_certs,
                          ReadPem(impl.options_.tls_ca_file));
    creds = grpc::SslCredentials(ssl);
  }
  if (impl.options_.tls_ca_file.empty() &&
      !impl.options_.bearer_token.empty()) {
    LENS_LOG(WARN).Field("target", impl.options_.target)
        << "container event stream sends its bearer token without TLS; set "
           "a CA file (jobsCaFile) when the stream leaves the node";
  }
  // Keepalive pings find a peer that vanished without a reset; lens-jobs
  // accepts pings every 10 s or more.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  impl.channel_ = grpc::CreateCustomChannel(impl.options_.target, creds, args);
  {
    std::lock_guard lock(impl.mu_);
    impl.stopping_ = false;
  }
  impl.thread_ = std::thread([&impl] { impl.Loop(); });
  return OkStatus();
}

void ContainerEventSender::Stop() {
  {
    std::lock_guard lock(impl_->mu_);
    impl_->stopping_ = true;
    if (impl_->context_ != nullptr) impl_->context_->TryCancel();
  }
  impl_->cv_.notify_all();
  if (impl_->thread_.joinable()) impl_->thread_.join();
}

bool ContainerEventSender::Flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(impl_->mu_);
  return impl_->cv_.wait_for(lock, timeout, [&] {
    return impl_->buffer_.empty() &&
           (!impl_->snapshot_due_ || !impl_->view_known_);
  });
}

ContainerEventSenderStats ContainerEventSender::stats() const {
  std::lock_guard lock(impl_->mu_);
  ContainerEventSenderStats s = impl_->stats_;
  s.buffered = impl_->buffer_.size();
  return s;
}

}  // namespace lens
