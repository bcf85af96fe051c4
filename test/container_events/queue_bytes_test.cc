// The server's queue in front of the store is bounded in bytes: while the
// store is stalled (a real SQLite write lock held by another connection)
// the queue stays under its bound, the agent's writes stop through gRPC
// flow control, and once the store frees up every message is stored and
// acked: backpressure, not loss.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "container_events/container_events.h"
#include "stream_fixture.h"

namespace lens::test {
namespace {

using QueueBytesTest = StreamTest;
using std::chrono::steady_clock;

TEST_F(QueueBytesTest, AStalledStoreHoldsTheAgentBackWithinTheByteBound) {
  constexpr size_t kQueueBytes = 256 << 10;
  constexpr int kEvents = 4000;  // 4000 * ~8 KiB: more than gRPC buffers
  ContainerEventServerOptions options;
  options.max_queued_bytes = kQueueBytes;
  options.max_batch = 1000;  // 4000 messages: the byte bound is the one hit
  StartServer(options);

  // Stall the store: another connection holds SQLite's write lock.
  sqlite3* lock_db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path().c_str(), &lock_db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(lock_db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(lock_db);

  TestAgent agent(Channel(), "n1");
  ASSERT_TRUE(agent.Hello());
  std::atomic<int> written{0};
  size_t largest = 0;
  std::vector<ContainerChange> changes;
  for (int i = 1; i <= kEvents; ++i) {
    ContainerRecord c = MakeContainer("c" + std::to_string(i), "n1");
    c.labels["payload"] = std::string(8 << 10, 'x');
    changes.push_back(MakeChange(c, "start", i));
  }
  {
    v1::AgentMessage m;
    container_events::ToProto(changes[0], m.mutable_event());
    largest = m.ByteSizeLong() + 64;
  }
  std::thread writer([&] {
    for (int i = 1; i <= kEvents; ++i) {
      if (!agent.Event(i, changes[i - 1])) return;
      written = i;
    }
  });

  // While stalled: the queue stays within its bound and the agent is held.
  int64_t most_queued = 0;
  const auto until = steady_clock::now() + std::chrono::seconds(3);
  while (steady_clock::now() < until) {
    most_queued = std::max(most_queued, server_->stats().queued_bytes);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GT(most_queued, static_cast<int64_t>(kQueueBytes / 2));
  EXPECT_LE(most_queued, static_cast<int64_t>(kQueueBytes + largest));
  const int held_at = written.load();
  EXPECT_LT(held_at, kEvents) << "flow control never held the agent back";
  EXPECT_LT(server_->stats().events_received, static_cast<uint64_t>(kEvents));
  EXPECT_NE(server_->RenderMetrics().find(
                "# TYPE lens_container_event_queued_bytes gauge\n"),
            std::string::npos);

  // Released: everything arrives, nothing was dropped.
  ASSERT_EQ(sqlite3_exec(lock_db, "COMMIT", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(lock_db);
  writer.join();
  EXPECT_EQ(written.load(), kEvents);
  ASSERT_TRUE(agent.WaitAck(kEvents));
  EXPECT_TRUE(agent.Close().ok());
  EXPECT_EQ(Count("n1", "running"), kEvents);
  EXPECT_EQ(server_->stats().errors, 0u);
  EXPECT_EQ(server_->stats().queued_bytes, 0);
}

}  // namespace
}  // namespace lens::test
