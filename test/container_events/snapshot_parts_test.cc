// Snapshots in parts (SnapshotBegin, SnapshotPart..., SnapshotEnd) over real
// gRPC streams into a real SQLite store: a snapshot far over the 4 MiB
// message limit arrives whole, one that breaks off changes nothing, and
// pieces out of order end the stream with a message naming what was wrong.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "container_events/container_events.h"
#include "stream_fixture.h"

namespace lens::test {
namespace {

using SnapshotPartsTest = StreamTest;

// A container with `label_bytes` of labels (ten labels).
ContainerRecord Labelled(const std::string& id, const std::string& node,
                         size_t label_bytes) {
  ContainerRecord c = MakeContainer(id, node);
  for (int i = 0; i < 10; ++i) {
    c.labels["io.example/label-" + std::to_string(i)] =
        std::string(label_bytes / 10, static_cast<char>('a' + i));
  }
  return c;
}

// Stores {a, b} for node n1 through one acked single Snapshot.
void StoreTwo(const std::shared_ptr<grpc::Channel>& channel) {
  TestAgent agent(channel, "n1");
  ASSERT_TRUE(agent.Hello());
  ASSERT_TRUE(agent.Snapshot(
      1, {MakeContainer("a", "n1"), MakeContainer("b", "n1")}, 10));
  ASSERT_TRUE(agent.WaitAck(1));
  EXPECT_TRUE(agent.Close().ok());
}

TEST_F(SnapshotPartsTest, FiveThousandContainersOverFourMiBArriveWhole) {
  StartServer();
  constexpr int kContainers = 5000;
  std::vector<ContainerRecord> all;
  size_t wire_bytes = 0;
  for (int i = 0; i < kContainers; ++i) {
    all.push_back(Labelled("c" + std::to_string(i), "n1", 1200));
    v1::ContainerState state;
    container_events::ToProto(all.back(), &state);
    wire_bytes += state.ByteSizeLong();
  }
  ASSERT_GT(wire_bytes, size_t{4} << 20);  // one message would be refused
  // A container the snapshot does not list is marked deleted by it.
  StoreTwo(Channel());

  ContainerEventSender sender({.target = Target(), .node = "n1"});
  sender.PublishSnapshot(all);
  ASSERT_TRUE(sender.Start().ok());
  ASSERT_TRUE(sender.Flush(std::chrono::seconds(120)));
  const ContainerEventSenderStats st = sender.stats();
  // Begin, at least five 1 MiB parts, end.
  EXPECT_GE(st.sent, 7u);
  sender.Stop();

  EXPECT_EQ(Count("n1", "running"), kContainers);
  EXPECT_EQ(State("a"), "deleted");
  auto c = store_->containers().GetContainer("c4999");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->labels, all.back().labels);
  ASSERT_EQ(c->devices.size(), 1u);
  EXPECT_EQ(c->devices[0].device_key, "GPU-c4999");
  EXPECT_EQ(server_->stats().snapshots_received, 2u);
  EXPECT_EQ(server_->stats().errors, 0u);
}

TEST_F(SnapshotPartsTest, ABrokenStreamMidSnapshotLeavesTheOldState) {
  StartServer();
  StoreTwo(Channel());
  {
    TestAgent agent(Channel(), "n1");
    ASSERT_TRUE(agent.Hello());
    ASSERT_TRUE(agent.Begin(1, 2, 20));
    ASSERT_TRUE(agent.Part(2, 0, {MakeContainer("x", "n1")}));
    // The store would mark a and b deleted if the snapshot were applied.
    agent.Cancel();
    agent.Drain();
  }
  {
    // A clean close inside a snapshot: ABORTED, nothing applied.
    TestAgent agent(Channel(), "n1");
    ASSERT_TRUE(agent.Hello());
    ASSERT_TRUE(agent.Begin(1, 1, 30));
    ASSERT_TRUE(agent.Part(2, 0, {MakeContainer("y", "n1")}));
    const grpc::Status st = agent.Close();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::ABORTED);
    EXPECT_NE(st.error_message().find("discarded"), std::string::npos);
  }
  EXPECT_EQ(State("a"), "running");
  EXPECT_EQ(State("b"), "running");
  EXPECT_EQ(Count("n1"), 2);

  // The next complete snapshot is applied.
  TestAgent agent(Channel(), "n1");
  ASSERT_TRUE(agent.Hello());
  ASSERT_TRUE(agent.Begin(1, 2, 40));
  ASSERT_TRUE(agent.Part(2, 0, {MakeContainer("a", "n1")}));
  ASSERT_TRUE(agent.Part(3, 1, {MakeContainer("x", "n1")}));
  ASSERT_TRUE(agent.End(4, 2));
  ASSERT_TRUE(agent.WaitAck(4));
  EXPECT_EQ(agent.acks().back(), 4u);
  EXPECT_EQ(State("a"), "running");
  EXPECT_EQ(State("b"), "deleted");
  EXPECT_EQ(State("x"), "running");
  EXPECT_TRUE(agent.Close().ok());
}

// One stream sending `send`; it must end with INVALID_ARGUMENT naming
// `expect`, and a and b must be untouched.
struct OutOfOrder {
  const char* name;
  std::function<void(TestAgent&)> send;
  const char* expect;
};

TEST_F(SnapshotPartsTest, RejectsPiecesOutOfOrder) {
  StartServer();
  StoreTwo(Channel());
  const auto x = MakeContainer("x", "n1");
  const std::vector<OutOfOrder> cases = {
      {"part without begin", [&](TestAgent& a) { a.Part(1, 0, {x}); },
       "SnapshotPart (sequence 1) without a SnapshotBegin"},
      {"end without begin", [&](TestAgent& a) { a.End(1, 0); },
       "SnapshotEnd (sequence 1) without a SnapshotBegin"},
      {"skipped part",
       [&](TestAgent& a) {
         a.Begin(1, 2, 1);
         a.Part(2, 0, {x});
         a.Part(3, 2, {x});
       },
       "snapshot part 2 (sequence 3) arrived where part 1 was expected"},
      {"begin inside begin",
       [&](TestAgent& a) {
         a.Begin(1, 1, 1);
         a.Begin(2, 1, 1);
       },
       "SnapshotBegin (sequence 2) while the snapshot begun (sequence 1)"},
      {"event inside",
       [&](TestAgent& a) {
         a.Begin(1, 1, 1);
         a.Event(2, MakeChange(x, "start", 1));
       },
       "an event (sequence 2) inside the snapshot begun (sequence 1)"},
      {"end miscounts parts",
       [&](TestAgent& a) {
         a.Begin(1, 1, 1);
         a.Part(2, 0, {x});
         a.End(3, 2);
       },
       "SnapshotEnd (sequence 3) counts 2 parts, 1 arrived"},
      {"fewer containers than announced",
       [&](TestAgent& a) {
         a.Begin(1, 3, 1);
         a.Part(2, 0, {x});
         a.End(3, 1);
       },
       "carried 1 containers, SnapshotBegin announced 3"},
      {"more containers than announced",
       [&](TestAgent& a) {
         a.Begin(1, 0, 1);
         a.Part(2, 0, {x});
       },
       "more containers than the 0 its SnapshotBegin announced"},
  };
  for (const OutOfOrder& c : cases) {
    TestAgent agent(Channel(), "n1");
    ASSERT_TRUE(agent.Hello());
    c.send(agent);
    const grpc::Status st = agent.Drain();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.name;
    EXPECT_NE(st.error_message().find(c.expect), std::string::npos)
        << c.name << ": " << st.error_message();
  }
  EXPECT_EQ(State("a"), "running");
  EXPECT_EQ(State("b"), "running");
  EXPECT_EQ(Count("n1"), 2);
  EXPECT_EQ(server_->stats().errors, cases.size());
}

TEST_F(SnapshotPartsTest, RefusesASnapshotOverItsLimit) {
  ContainerEventServerOptions options;
  options.max_snapshot_bytes = 64 << 10;
  StartServer(options);
  StoreTwo(Channel());
  TestAgent agent(Channel(), "n1");
  ASSERT_TRUE(agent.Hello());
  ASSERT_TRUE(agent.Begin(1, 100, 1));
  uint64_t seq = 1;
  for (uint32_t i = 0; i < 10; ++i) {  // 10 parts of 10 * ~12 KiB
    std::vector<ContainerRecord> part;
    for (int j = 0; j < 10; ++j) {
      part.push_back(Labelled("p" + std::to_string(i * 10 + j), "n1", 1200));
    }
    if (!agent.Part(++seq, i, part)) break;
  }
  const grpc::Status st = agent.Drain();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(st.error_message().find("limit of 65536 bytes"), std::string::npos)
      << st.error_message();
  EXPECT_EQ(Count("n1"), 2);
  EXPECT_EQ(State("a"), "running");
}

}  // namespace
}  // namespace lens::test
