// ContainerEventSender against a real gRPC server on loopback whose acks the
// test controls: ordering, resend after a reconnect, the snapshot that
// follows, the bounded buffer, and auth metadata.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "container_events/container_events.h"
#include "lens/v1/container_events.grpc.pb.h"

namespace lens {
namespace {

using std::chrono::milliseconds;

// What the server does with a stream's messages.
enum class AckPolicy { kAckEach, kHold, kCloseAfterThree };

class RecordingServer final : public v1::ContainerEvents::Service {
 public:
  struct Received {
    int stream;
    v1::AgentMessage message;
  };

  grpc::Status Stream(
      grpc::ServerContext* ctx,
      grpc::ServerReaderWriter<v1::ServerMessage, v1::AgentMessage>* stream)
      override {
    int id;
    {
      std::lock_guard lock(mu_);
      id = streams_++;
      auto auth = ctx->client_metadata().find("authorization");
      if (auth != ctx->client_metadata().end()) {
        authorization_.assign(auth->second.data(), auth->second.size());
      }
    }
    v1::AgentMessage m;
    int n = 0;
    while (stream->Read(&m)) {
      AckPolicy policy;
      {
        std::lock_guard lock(mu_);
        received_.push_back({id, m});
        policy = policy_;
        cv_.notify_all();
      }
      ++n;
      {
        std::lock_guard lock(mu_);
        if (kick_ > 0 && id < kick_) {
          return grpc::Status(grpc::StatusCode::UNAVAILABLE, "kicked");
        }
      }
      if (policy == AckPolicy::kCloseAfterThree && n == 3) {
        return grpc::Status(grpc::StatusCode::UNAVAILABLE, "test closes");
      }
      if (policy == AckPolicy::kAckEach && m.sequence() > 0) {
        v1::ServerMessage ack;
        ack.mutable_ack()->set_sequence(m.sequence());
        if (!stream->Write(ack)) break;
      }
      if (ctx->IsCancelled()) break;
    }
    return grpc::Status::OK;
  }

  void SetPolicy(AckPolicy p) {
    std::lock_guard lock(mu_);
    policy_ = p;
  }
  // Streams opened before now end at their next message.
  void KickOldStreams() {
    std::lock_guard lock(mu_);
    kick_ = streams_;
  }
  std::vector<Received> received() {
    std::lock_guard lock(mu_);
    return received_;
  }
  bool WaitFor(size_t n, milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return received_.size() >= n; });
  }
  std::string authorization() {
    std::lock_guard lock(mu_);
    return authorization_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Received> received_;
  AckPolicy policy_ = AckPolicy::kAckEach;
  int streams_ = 0;
  int kick_ = 0;
  std::string authorization_;
};

class SenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override {
    if (sender_) sender_->Stop();
    server_->Shutdown(std::chrono::system_clock::now() + milliseconds(500));
  }

  ContainerEventSender& Sender(size_t max_buffered = 10000,
                               std::string token = "") {
    ContainerEventSenderOptions o;
    o.target = "127.0.0.1:" + std::to_string(port_);
    o.node = "node-a";
    o.max_buffered = max_buffered;
    o.bearer_token = std::move(token);
    o.reconnect_min = milliseconds(20);
    o.reconnect_max = milliseconds(100);
    sender_ = std::make_unique<ContainerEventSender>(o);
    return *sender_;
  }

  RecordingServer service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<ContainerEventSender> sender_;
  int port_ = 0;
};

ContainerChange Change(const std::string& id, const std::string& type,
                       const std::string& state) {
  ContainerChange c;
  c.container.container_id = id;
  c.container.node = "node-a";
  c.container.pod_name = "pod-" + id;
  c.container.state = ParseContainerState(state);
  c.event.container_id = id;
  c.event.node = "node-a";
  c.event.event_type = ParseContainerEventType(type);
  return c;
}

std::vector<std::string> SnapshotIds(const v1::AgentMessage& m) {
  std::vector<std::string> ids;
  for (const auto& c : m.snapshot().containers())
    ids.push_back(c.container_id());
  return ids;
}

TEST_F(SenderTest, SendsHelloFirstThenNumberedMessagesAndGetsThemAcked) {
  ContainerEventSender& s = Sender();
  s.PublishSnapshot({Change("a", "create", "running").container});
  const uint64_t seq = s.Publish(Change("b", "create", "created"));
  ASSERT_TRUE(s.Start().ok());
  ASSERT_TRUE(s.Flush(std::chrono::seconds(5)));
  auto got = service_.received();
  ASSERT_GE(got.size(), 3u);
  ASSERT_TRUE(got[0].message.has_hello());
  EXPECT_EQ(got[0].message.hello().node(), "node-a");
  EXPECT_NE(got[0].message.hello().session(), 0u);
  EXPECT_EQ(got[0].message.sequence(), 0u);
  uint64_t last = 0;
  bool saw_event = false;
  for (size_t i = 1; i < got.size(); ++i) {
    EXPECT_EQ(got[i].message.node(), "node-a");
    EXPECT_GT(got[i].message.sequence(), last) << "sequence must increase";
    last = got[i].message.sequence();
    if (got[i].message.has_event()) {
      saw_event = true;
      EXPECT_EQ(got[i].message.sequence(), seq);
      EXPECT_EQ(got[i].message.event().container().pod_name(), "pod-b");
    }
  }
  EXPECT_TRUE(saw_event);
  // The last snapshot is the current view: a and b.
  const v1::AgentMessage* snap = nullptr;
  for (const auto& r : got) {
    if (r.message.has_snapshot()) snap = &r.message;
  }
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ(SnapshotIds(*snap), (std::vector<std::string>{"a", "b"}))
      << "the snapshot after the connect holds the current view";
  ContainerEventSenderStats st = s.stats();
  EXPECT_EQ(st.acked, last);
  EXPECT_EQ(st.buffered, 0u);
  EXPECT_EQ(st.dropped, 0u);
  EXPECT_TRUE(st.connected);
}

TEST_F(SenderTest, SendsALargeSnapshotInBoundedPartsInOrder) {
  ContainerEventSenderOptions o;
  o.target = "127.0.0.1:" + std::to_string(port_);
  o.node = "node-a";
  o.snapshot_part_bytes = 8 << 10;
  sender_ = std::make_unique<ContainerEventSender>(o);
  std::vector<ContainerRecord> all;
  for (int i = 0; i < 100; ++i) {
    ContainerRecord c =
        Change("c" + std::to_string(1000 + i), "create", "running").container;
    c.labels["payload"] = std::string(1000, 'p');
    all.push_back(c);
  }
  sender_->PublishSnapshot(all);
  ASSERT_TRUE(sender_->Start().ok());
  ASSERT_TRUE(sender_->Flush(std::chrono::seconds(5)));
  auto got = service_.received();
  ASSERT_GE(got.size(), 4u);
  EXPECT_EQ(got[0].message.hello().protocol(), 2u);
  ASSERT_TRUE(got[1].message.has_snapshot_begin());
  EXPECT_EQ(got[1].message.snapshot_begin().containers(), 100u);
  std::vector<std::string> ids;
  uint32_t parts = 0;
  size_t i = 2;
  for (; i < got.size() && got[i].message.has_snapshot_part(); ++i) {
    const v1::AgentMessage& m = got[i].message;
    EXPECT_EQ(m.snapshot_part().index(), parts++);
    EXPECT_LE(m.ByteSizeLong(), size_t{8 << 10} + 64) << "part " << parts;
    for (const auto& c : m.snapshot_part().containers()) {
      ids.push_back(c.container_id());
    }
  }
  EXPECT_GE(parts, 12u);  // ~110 KiB in 8 KiB parts
  ASSERT_LT(i, got.size());
  ASSERT_TRUE(got[i].message.has_snapshot_end());
  EXPECT_EQ(got[i].message.snapshot_end().parts(), parts);
  ASSERT_EQ(ids.size(), 100u);
  EXPECT_EQ(ids.front(), "c1000");
  EXPECT_EQ(ids.back(), "c1099");
  EXPECT_EQ(sender_->stats().acked, got[i].message.sequence());
}

TEST(SenderOptionsTest, RejectsPartSizesOutsideTheMessageLimit) {
  for (size_t bytes : {size_t{100}, size_t{4} << 20}) {
    ContainerEventSender s(
        {.target = "127.0.0.1:1", .node = "n", .snapshot_part_bytes = bytes});
    const Status st = s.Start();
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bytes;
    EXPECT_NE(st.message().find("snapshot_part_bytes"), std::string::npos);
  }
}

TEST_F(SenderTest, ResendsUnackedMessagesInOrderAfterAReconnectThenASnapshot) {
  service_.SetPolicy(AckPolicy::kCloseAfterThree);
  ContainerEventSender& s = Sender();
  s.PublishSnapshot({});
  std::vector<uint64_t> seqs;
  seqs.push_back(s.Publish(Change("a", "create", "created")));
  seqs.push_back(s.Publish(Change("a", "start", "running")));
  seqs.push_back(s.Publish(Change("b", "create", "created")));
  seqs.push_back(s.Publish(Change("b", "delete", "deleted")));
  ASSERT_TRUE(s.Start().ok());
  // First stream: hello + two messages, then the server hangs up unacked.
  ASSERT_TRUE(service_.WaitFor(3, std::chrono::seconds(5)));
  service_.SetPolicy(AckPolicy::kAckEach);
  ASSERT_TRUE(s.Flush(std::chrono::seconds(5)));
  EXPECT_GE(s.stats().reconnects, 1u);

  const auto received = service_.received();
  std::vector<const v1::AgentMessage*> second;
  for (const auto& r : received) {
    if (r.stream == 1) second.push_back(&r.message);
  }
  ASSERT_EQ(second.size(), 6u) << "hello, 4 resent events, 1 snapshot";
  ASSERT_TRUE(second[0]->has_hello());
  for (size_t i = 0; i < seqs.size(); ++i) {
    ASSERT_TRUE(second[i + 1]->has_event()) << i;
    EXPECT_EQ(second[i + 1]->sequence(), seqs[i]) << "resent in order";
  }
  // After the resent events: a snapshot of the current view (b deleted).
  const v1::AgentMessage* snap = second.back();
  ASSERT_TRUE(snap->has_snapshot());
  EXPECT_EQ(SnapshotIds(*snap), (std::vector<std::string>{"a"}));
  EXPECT_EQ(snap->snapshot().containers(0).state(), "running");
  EXPECT_EQ(s.stats().dropped, 0u);
}

TEST_F(SenderTest,
       DropsTheOldestEventsWhenTheBufferIsFullAndRepairsWithASnapshot) {
  service_.SetPolicy(AckPolicy::kHold);
  ContainerEventSender& s = Sender(/*max_buffered=*/3);
  s.PublishSnapshot({});
  ASSERT_TRUE(s.Start().ok());
  for (int i = 0; i < 10; ++i) {
    s.Publish(Change("c" + std::to_string(i), "create", "created"));
  }
  ContainerEventSenderStats st = s.stats();
  EXPECT_EQ(st.buffered, 3u);
  EXPECT_GE(st.dropped, 7u);
  EXPECT_EQ(st.published, 11u) << "the snapshot and 10 events";
  EXPECT_FALSE(s.Flush(milliseconds(100))) << "nothing is acked yet";

  service_.SetPolicy(AckPolicy::kAckEach);
  service_.KickOldStreams();
  s.Publish(Change("c10", "create", "created"));  // wakes the held stream
  ASSERT_TRUE(s.Flush(std::chrono::seconds(5)));
  // The snapshot after the reconnect carries every container, dropped ones too.
  const v1::AgentMessage* snap = nullptr;
  auto got = service_.received();
  for (const auto& r : got) {
    if (r.message.has_snapshot()) snap = &r.message;
  }
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ(snap->snapshot().containers_size(), 11);
}

TEST_F(SenderTest, SendsNoSnapshotBeforeTheViewIsKnown) {
  ContainerEventSender& s = Sender();
  s.Publish(Change("a", "create", "created"));
  ASSERT_TRUE(s.Start().ok());
  ASSERT_TRUE(s.Flush(std::chrono::seconds(5)));
  for (const auto& r : service_.received()) {
    EXPECT_FALSE(r.message.has_snapshot())
        << "an empty view would mark the node's containers deleted";
  }
  s.PublishSnapshot({Change("a", "create", "created").container});
  ASSERT_TRUE(s.Flush(std::chrono::seconds(5)));
  bool snapshot = false;
  for (const auto& r : service_.received())
    snapshot |= r.message.has_snapshot();
  EXPECT_TRUE(snapshot);
}

TEST_F(SenderTest, SendsTheBearerToken) {
  ContainerEventSender& s = Sender(100, "s3cret");
  s.Publish(Change("a", "create", "created"));
  ASSERT_TRUE(s.Start().ok());
  ASSERT_TRUE(s.Flush(std::chrono::seconds(5)));
  EXPECT_EQ(service_.authorization(), "Bearer s3cret");
}

TEST(SenderOptionsTest, RejectsMissingNodeAndUnreadableCa) {
  ContainerEventSenderOptions o;
  o.target = "127.0.0.1:1";
  o.node = "";
  ContainerEventSender no_node(o);
  EXPECT_EQ(no_node.Start().code(), StatusCode::kInvalidArgument);
  o.node = "n";
  o.tls_ca_file = "/nonexistent/ca.pem";
  ContainerEventSender bad_ca(o);
  Status st = bad_ca.Start();
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find("/nonexistent/ca.pem"), std::string::npos);
}

TEST(SenderOptionsTest, StopsPromptlyWhileNothingListens) {
  ContainerEventSenderOptions o;
  o.target = "127.0.0.1:1";
  o.node = "n";
  o.reconnect_min = milliseconds(10);
  o.reconnect_max = std::chrono::seconds(10);
  ContainerEventSender s(o);
  ASSERT_TRUE(s.Start().ok());
  s.Publish(Change("a", "create", "created"));
  std::this_thread::sleep_for(milliseconds(300));
  const auto t0 = std::chrono::steady_clock::now();
  s.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_FALSE(s.stats().connected);
  EXPECT_EQ(s.stats().buffered, 1u) << "unacked messages are kept";
}

}  // namespace
}  // namespace lens
