// The forwarder's disk queue: FIFO across segments, its bound, its cursor
// across reopening, torn and damaged records, a real SIGKILL in the middle
// of appending, and many appenders with one consumer.
#include "telemetry/disk_queue.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "telemetry/disk_queue_file.h"

namespace lens::telemetry {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// A record's content: its number, then filler that depends on it.
std::string Blob(int i, size_t size) {
  std::string s = "record-" + std::to_string(i) + "-";
  // Position p holds 'a' + (i + p) % 26, appended 26 at a time.
  static const std::string kTwoAlphabets =
      "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz";
  s.reserve(size);
  while (s.size() < size) {
    const size_t at = (static_cast<size_t>(i) + s.size()) % 26;
    s.append(kTwoAlphabets, at, std::min<size_t>(26, size - s.size()));
  }
  return s;
}

// "record-7/900" per record: failures stay readable.
std::vector<std::string> Summary(const std::vector<std::string>& records) {
  std::vector<std::string> out;
  for (const std::string& r : records) {
    out.push_back(r.substr(0, r.find('-', 7)) + "/" + std::to_string(r.size()));
  }
  return out;
}

#define EXPECT_RECORDS(got, want)                       \
  do {                                                  \
    const std::vector<std::string> g = (got);           \
    const std::vector<std::string> w = (want);          \
    EXPECT_EQ(Summary(g), Summary(w));                  \
    EXPECT_TRUE(g == w) << "same names, other content"; \
  } while (0)

// The segment files, oldest first.
std::vector<std::string> Segments(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".seg") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class DiskQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "disk-queue-" + std::to_string(::getpid()) +
           "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    options_.dir = dir_;
    options_.segment_bytes = 4096;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<DiskQueue> Open() {
    auto q = DiskQueue::Open(options_);
    EXPECT_TRUE(q.ok()) << q.status();
    return q.ok() ? std::move(*q) : nullptr;
  }
  // Every queued record's data, committing as it goes.
  static std::vector<std::string> Drain(DiskQueue& q, size_t batch = 8192) {
    std::vector<std::string> out;
    std::vector<QueueRecord> records;
    for (;;) {
      Status st = q.Peek(batch, milliseconds(0), &records);
      EXPECT_TRUE(st.ok()) << st;
      if (!st.ok() || records.empty()) return out;
      for (QueueRecord& r : records) out.push_back(std::move(r.data));
      st = q.Commit(records.back().end);
      EXPECT_TRUE(st.ok()) << st;
    }
  }

  std::string dir_;
  DiskQueueOptions options_;
};

TEST(Crc32cTest, MatchesTheCastagnoliCheckValue) {
  EXPECT_EQ(Crc32c(0, "123456789"), 0xe3069283u);
  EXPECT_EQ(Crc32c(Crc32c(0, "1234"), "56789"), 0xe3069283u);
  EXPECT_EQ(Crc32c(0, std::string(32, '\0')), 0x8a9136aau);
}

TEST_F(DiskQueueTest, KeepsOrderAcrossSegments) {
  auto q = Open();
  ASSERT_TRUE(q);
  std::vector<std::string> want;
  for (int i = 0; i < 100; ++i) {
    want.push_back(Blob(i, 100 + (i * 337) % 2900));
    ASSERT_TRUE(q->Append(want.back(), i).ok());
  }
  DiskQueueStats s = q->Stats();
  EXPECT_EQ(s.records, 100u);
  EXPECT_GT(s.segments, 20u);
  EXPECT_EQ(s.bytes, s.disk_bytes);
  // The samples come back with their record.
  std::vector<QueueRecord> first;
  ASSERT_TRUE(q->Peek(1, milliseconds(0), &first).ok());
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].samples, 0u);
  EXPECT_RECORDS(Drain(*q), want);
  s = q->Stats();
  EXPECT_EQ(s.records, 0u);
  EXPECT_EQ(s.bytes, 0u);
  EXPECT_EQ(s.segments, 1u);  // the one being appended to
  EXPECT_EQ(s.committed, 100u);
  EXPECT_EQ(Segments(dir_).size(), 1u);
}

TEST_F(DiskQueueTest, RefusesWhenFullAndTakesMoreAfterACommit) {
  options_.max_bytes = 10 * (24 + 1000);
  auto q = Open();
  ASSERT_TRUE(q);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(q->Append(Blob(i, 1000)).ok());
  EXPECT_FALSE(q->HasRoom(1000));
  Status st = q->Append(Blob(10, 1000));
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st;
  EXPECT_EQ(q->Stats().refused_full, 1u);
  EXPECT_EQ(q->Append("").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(q->Append(std::string(options_.max_bytes, 'x')).code(),
            StatusCode::kInvalidArgument);
  std::vector<QueueRecord> r;
  ASSERT_TRUE(q->Peek(1, milliseconds(0), &r).ok());
  ASSERT_TRUE(q->Commit(r.back().end).ok());
  EXPECT_TRUE(q->HasRoom(1000));
  EXPECT_TRUE(q->Append(Blob(10, 1000)).ok());
  EXPECT_EQ(q->Stats().records, 10u);
}

TEST_F(DiskQueueTest, ReopeningResumesAtTheCommittedCursor) {
  auto q = Open();
  ASSERT_TRUE(q);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(q->Append(Blob(i, 900), 1).ok());
  // A second process (or open) of the same directory is refused.
  EXPECT_EQ(DiskQueue::Open(options_).status().code(),
            StatusCode::kFailedPrecondition);
  std::vector<QueueRecord> r;
  ASSERT_TRUE(q->Peek(7 * 924, milliseconds(0), &r).ok());
  ASSERT_EQ(r.size(), 7u);
  ASSERT_TRUE(q->Commit(r.back().end).ok());
  // Read, not committed: delivered again after the restart.
  ASSERT_TRUE(q->Peek(3 * 924, milliseconds(0), &r).ok());
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].data, Blob(7, 900));
  // A position outside the queue is refused.
  QueuePosition bad = r.back().end;
  bad.offset += 1;
  EXPECT_EQ(q->Commit(bad).code(), StatusCode::kInvalidArgument);
  q.reset();

  q = Open();
  ASSERT_TRUE(q);
  EXPECT_EQ(q->Stats().records, 13u);
  std::vector<std::string> want;
  for (int i = 7; i < 20; ++i) want.push_back(Blob(i, 900));
  EXPECT_RECORDS(Drain(*q), want);
  ASSERT_TRUE(q->Append(Blob(20, 10)).ok());
  q.reset();
  q = Open();
  EXPECT_RECORDS(Drain(*q), std::vector<std::string>{Blob(20, 10)});
}

TEST_F(DiskQueueTest, ATornCursorWriteFallsBackToTheCursorBefore) {
  auto q = Open();
  ASSERT_TRUE(q);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(q->Append(Blob(i, 100)).ok());
  std::vector<QueueRecord> r;
  for (int i = 0; i < 3; ++i) {  // commits 1, 2, 3: generation 3 in slot 1
    ASSERT_TRUE(q->Peek(1, milliseconds(0), &r).ok());
    ASSERT_TRUE(q->Commit(r.back().end).ok());
  }
  q.reset();
  {
    std::fstream f(dir_ + "/cursor",
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(32 + 20);
    f.put('#');
  }
  q = Open();
  ASSERT_TRUE(q);
  // Record 2 comes again (at least once), nothing is lost.
  EXPECT_RECORDS(Drain(*q), (std::vector<std::string>{
                                Blob(2, 100), Blob(3, 100), Blob(4, 100)}));
}

TEST_F(DiskQueueTest, DropsATornTailOnReopenAndKeepsWhatCameBefore) {
  auto q = Open();
  ASSERT_TRUE(q);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(q->Append(Blob(i, 1000)).ok());
  q.reset();
  const std::string last = Segments(dir_).back();
  fs::resize_file(last, fs::file_size(last) - 3);  // the write cut short

  q = Open();
  ASSERT_TRUE(q);
  EXPECT_EQ(q->Stats().records, 2u);
  EXPECT_EQ(q->Stats().truncated_bytes, 1024u - 3);
  ASSERT_TRUE(q->Append(Blob(3, 1000)).ok());
  EXPECT_RECORDS(Drain(*q), (std::vector<std::string>{
                                Blob(0, 1000), Blob(1, 1000), Blob(3, 1000)}));
}

TEST_F(DiskQueueTest, DropsATailRecordWithABadCrcOnReopen) {
  auto q = Open();
  ASSERT_TRUE(q);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(q->Append(Blob(i, 1000)).ok());
  q.reset();
  {
    // A byte of the last record's payload is not what was written.
    std::fstream f(Segments(dir_).back(),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(2 * 1024 + 500);
    f.put('#');
  }
  q = Open();
  ASSERT_TRUE(q);
  EXPECT_RECORDS(Drain(*q),
                 (std::vector<std::string>{Blob(0, 1000), Blob(1, 1000)}));
}

TEST_F(DiskQueueTest, SkipsDamagedDataInAnOlderSegment) {
  auto q = Open();
  ASSERT_TRUE(q);
  // Three records per 4 KiB segment.
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(q->Append(Blob(i, 1200)).ok());
  q.reset();
  ASSERT_EQ(Segments(dir_).size(), 3u);
  {
    std::fstream f(Segments(dir_).front(),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(1224 + 600);  // the second record's payload
    f.put('#');
  }
  q = Open();  // only the last segment is verified on opening
  ASSERT_TRUE(q);
  EXPECT_EQ(q->Stats().records, 9u);
  std::vector<std::string> want = {Blob(0, 1200)};
  for (int i = 3; i < 9; ++i) want.push_back(Blob(i, 1200));
  EXPECT_RECORDS(Drain(*q, 1), want);
  EXPECT_EQ(q->Stats().corrupt_bytes, 2u * 1224);
  EXPECT_EQ(q->Stats().records, 0u);
}

TEST_F(DiskQueueTest, ReportsTheOldestRecordsAge) {
  auto q = Open();
  ASSERT_TRUE(q);
  EXPECT_EQ(q->Stats().oldest_age.count(), 0);
  ASSERT_TRUE(q->Append("first").ok());
  std::this_thread::sleep_for(milliseconds(500));
  ASSERT_TRUE(q->Append("second").ok());
  const int64_t with_first = q->Stats().oldest_age.count();
  EXPECT_GE(with_first, 500);
  std::vector<QueueRecord> r;
  ASSERT_TRUE(q->Peek(1, milliseconds(0), &r).ok());
  ASSERT_TRUE(q->Commit(r[0].end).ok());
  // Now the second is the oldest: 500 ms younger (a busy machine may take
  // a while between the calls, never 500 ms less).
  EXPECT_LE(q->Stats().oldest_age.count(), with_first - 400);
}

TEST_F(DiskQueueTest, InterruptWakesAWaitingConsumer) {
  auto q = Open();
  ASSERT_TRUE(q);
  std::vector<QueueRecord> r;
  const auto start = std::chrono::steady_clock::now();
  std::thread waiter(
      [&] { EXPECT_TRUE(q->Peek(1024, milliseconds(10000), &r).ok()); });
  std::this_thread::sleep_for(milliseconds(50));
  q->SetInterrupted(true);
  waiter.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
  EXPECT_TRUE(r.empty());
  // While interrupted nothing waits; cleared, a record wakes the consumer.
  ASSERT_TRUE(q->Peek(1024, milliseconds(10000), &r).ok());
  q->SetInterrupted(false);
  std::thread appender([&] {
    std::this_thread::sleep_for(milliseconds(50));
    EXPECT_TRUE(q->Append("late").ok());
  });
  ASSERT_TRUE(q->Peek(1024, milliseconds(10000), &r).ok());
  appender.join();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].data, "late");
}

TEST_F(DiskQueueTest, ManyAppendersOneConsumer) {
  options_.segment_bytes = 64 << 10;
  auto q = Open();
  ASSERT_TRUE(q);
  constexpr int kThreads = 4, kPerThread = 400;
  std::vector<std::thread> appenders;
  for (int t = 0; t < kThreads; ++t) {
    appenders.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string data = std::to_string(t) + ":" + std::to_string(i) +
                                 std::string(static_cast<size_t>(i % 500), '.');
        ASSERT_TRUE(q->Append(data, 1).ok());
      }
    });
  }
  std::vector<int> next(kThreads, 0);
  int seen = 0;
  std::vector<QueueRecord> r;
  while (seen < kThreads * kPerThread) {
    ASSERT_TRUE(q->Peek(16 << 10, milliseconds(1000), &r).ok());
    ASSERT_FALSE(r.empty()) << "stalled after " << seen;
    for (const QueueRecord& rec : r) {
      const int t = std::stoi(rec.data);
      const int i = std::stoi(rec.data.substr(rec.data.find(':') + 1));
      ASSERT_EQ(i, next[t]) << "thread " << t;  // each appender's order kept
      ++next[t];
      ++seen;
    }
    ASSERT_TRUE(q->Commit(r.back().end).ok());
    (void)q->Stats();
  }
  for (std::thread& t : appenders) t.join();
  EXPECT_EQ(q->Stats().records, 0u);
  EXPECT_EQ(q->Stats().appended, uint64_t{kThreads * kPerThread});
}

// A child appends records and acknowledges each through a pipe once
// Append() returned; it is SIGKILLed at a random point, several times over
// the same directory. Every acknowledged record must come back, in order:
// each round's records 0..acked-1, and at most one more (appended, killed
// before its acknowledgement).
TEST_F(DiskQueueTest, AcknowledgedRecordsSurviveSigkill) {
  options_.segment_bytes = 1 << 20;
  std::mt19937 rng(::testing::UnitTest::GetInstance()->random_seed());
  constexpr int kRounds = 4, kRecords = 400;
  std::vector<int> acked(kRounds, 0);
  std::vector<std::vector<size_t>> sizes(kRounds);
  auto content = [&](int round, int i) {
    return std::to_string(round) + "/" + Blob(i, sizes[round][i]);
  };
  for (int round = 0; round < kRounds; ++round) {
    // Built before fork(): the child only opens the queue and appends (the
    // test has no other thread now, so the child may allocate).
    std::vector<std::string> blobs;
    for (int i = 0; i < kRecords; ++i) {
      sizes[round].push_back(1 + rng() % 200000);
      blobs.push_back(content(round, i));
    }
    const int kill_after = 20 + static_cast<int>(rng() % (kRecords - 100));
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      auto q = DiskQueue::Open(options_);
      if (!q.ok()) ::_exit(2);
      for (int i = 0; i < kRecords; ++i) {
        if (!(*q)->Append(blobs[i]).ok()) ::_exit(3);
        if (::write(fds[1], &i, sizeof i) != sizeof i) ::_exit(4);
      }
      for (;;) ::pause();  // killed here at the latest
    }
    ::close(fds[1]);
    int i = 0;
    while (::read(fds[0], &i, sizeof i) == sizeof i) {
      acked[round] = i + 1;
      if (acked[round] == kill_after) ::kill(pid, SIGKILL);
    }
    ::close(fds[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exit " << status;
    ASSERT_GE(acked[round], kill_after);
  }
  auto q = Open();
  ASSERT_TRUE(q);
  std::vector<std::string> got = Drain(*q, 1 << 20);
  size_t k = 0;
  for (int round = 0; round < kRounds; ++round) {
    int n = 0;
    const std::string prefix = std::to_string(round) + "/";
    for (; k < got.size() && got[k].starts_with(prefix); ++k, ++n) {
      ASSERT_LT(n, kRecords);
      ASSERT_TRUE(got[k] == content(round, n))
          << "round " << round << " record " << n;
    }
    EXPECT_GE(n, acked[round]) << "round " << round;
    EXPECT_LE(n, acked[round] + 1) << "round " << round;
  }
  EXPECT_EQ(k, got.size());
}

TEST(DiskQueueOptionsTest, AreValidated) {
  DiskQueueOptions o;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);  // no dir
  o.dir = "/tmp/x";
  EXPECT_TRUE(o.Validate().ok());
  o.max_bytes = 10;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o.max_bytes = 1 << 20;
  o.fsync = true;
  o.sync_every = 0;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lens::telemetry
