// Faults: PostgreSQL restarting under a stream of batched writes, and an
// SQLite writer killed with SIGKILL in the middle of its transactions.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "lens/store.h"
#include "store/open.h"
#include "store_test_env.h"

namespace lens::test {
namespace {

constexpr int64_t kT0 = 1700000000000000;

// Batch b: kPerBatch pods in namespace "b<b>".
constexpr int kPerBatch = 100;
std::vector<PodRecord> Batch(int b) {
  std::vector<PodRecord> pods(kPerBatch);
  for (int i = 0; i < kPerBatch; ++i) {
    pods[i].uid = "b" + std::to_string(b) + "-" + std::to_string(i);
    pods[i].name = pods[i].uid;
    pods[i].namespace_name = "b" + std::to_string(b);
    pods[i].updated_at = At(kT0 + b);
  }
  return pods;
}

// namespace -> rows, from raw SQL (so a half-written batch would show).
std::map<std::string, int64_t> CountsPerBatch(const std::string& url) {
  std::map<std::string, int64_t> out;
  auto db = store::OpenDatabase(url, {});
  EXPECT_TRUE(db.ok()) << db.status();
  if (!db.ok()) return out;
  store::Rows rows;
  Status st = (*db)->Read([&](store::Conn& c) {
    return c.Execute(
        "SELECT namespace, count(*) FROM gpu_pods GROUP BY namespace", {},
        &rows);
  });
  EXPECT_TRUE(st.ok()) << st;
  for (size_t i = 0; i < rows.size(); ++i)
    out[rows.Text(i, 0)] = rows.Int(i, 1);
  return out;
}

TEST(StoreFaults, PostgresRestartMidStreamLeavesEveryBatchOnce_postgres) {
  TestDatabase db(Backend::kPostgres);
  StoreOptions options;
  options.retry_deadline = std::chrono::seconds(60);
  auto store = Store::Open(db.url(), options);
  ASSERT_TRUE(store.ok()) << store.status();
  constexpr int kBatches = 150;
  std::atomic<int> written{0};
  std::thread writer([&] {
    for (int b = 0; b < kBatches; ++b) {
      Status st = (*store)->pods().UpsertPods(Batch(b));
      ASSERT_TRUE(st.ok()) << "batch " << b << ": " << st;
      ++written;
    }
  });
  // Restart twice while the stream runs: a fast shutdown (sessions
  // terminated) and an immediate one (crash-like, recovery on start).
  PostgresServer& pg = PostgresServer::Shared();
  while (written.load() < 30)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(pg.Restart(PostgresServer::StopMode::kFast).ok());
  while (written.load() < 90)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(pg.Restart(PostgresServer::StopMode::kImmediate).ok());
  writer.join();
  ASSERT_EQ(written.load(), kBatches);
  EXPECT_GT((*store)->stats().retries + (*store)->stats().reconnects, 0u)
      << "the restarts were not noticed; the test proved nothing";
  auto counts = CountsPerBatch(db.url());
  ASSERT_EQ(counts.size(), static_cast<size_t>(kBatches));
  for (const auto& [ns, n] : counts) EXPECT_EQ(n, kPerBatch) << ns;
}

TEST(StoreFaults, SqliteWriterKilledMidTransactionLeavesWholeBatches_sqlite) {
  TestDatabase db(Backend::kSqlite);
  ASSERT_TRUE(Store::Open(db.url()).ok());  // migrate before forking
  int next_batch = 0;
  for (int round = 0; round < 3; ++round) {
    const int first = next_batch;
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      auto store = Store::Open(db.url());
      if (!store.ok()) ::_exit(3);
      for (int b = first;; ++b) {
        if (!(*store)->pods().UpsertPods(Batch(b)).ok()) ::_exit(4);
      }
    }
    // Let it commit some batches, then kill it wherever it is.
    for (int i = 0; i < 400; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      if (CountsPerBatch(db.url()).size() >=
          static_cast<size_t>(first + 5 + round * 3))
        break;
    }
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "writer exited on its own: " << status;
    auto counts = CountsPerBatch(db.url());
    ASSERT_GT(counts.size(), static_cast<size_t>(first)) << "no progress";
    for (const auto& [ns, n] : counts) EXPECT_EQ(n, kPerBatch) << ns;
    next_batch = static_cast<int>(counts.size());
  }
  auto raw = store::OpenDatabase(db.url(), {});
  ASSERT_TRUE(raw.ok());
  store::Rows rows;
  ASSERT_TRUE((*raw)
                  ->Read([&](store::Conn& c) {
                    return c.Execute("PRAGMA integrity_check", {}, &rows);
                  })
                  .ok());
  EXPECT_EQ(rows.Text(0, 0), "ok");
  // And the store is fully usable again.
  auto store = Store::Open(db.url());
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE((*store)->pods().UpsertPods(Batch(next_batch)).ok());
}

}  // namespace
// Another process holding SQLite's write lock past the busy timeout: opening
// and migrating wait for it (up to the retry deadline) instead of failing
// with "database is locked" when the busy timeout ends.
TEST(StoreFaults, SqliteOpenWaitsForAWriteLockHeldElsewhere_sqlite) {
  TestDatabase db(Backend::kSqlite);
  const std::string url = db.url() + "?busy_timeout_ms=100";
  auto holder = store::OpenDatabase(url, {});
  ASSERT_TRUE(holder.ok()) << holder.status();
  std::atomic<bool> locked{false};
  std::thread hold([&] {
    Status st = (*holder)->WithConn([&](store::Conn& c) {
      LENS_RETURN_IF_ERROR(c.Begin(true));
      locked = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1200));
      c.Rollback();
      return OkStatus();
    });
    EXPECT_TRUE(st.ok()) << st;
  });
  while (!locked) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto start = std::chrono::steady_clock::now();
  auto store = Store::Open(url);  // migrates: needs the write lock
  const auto waited = std::chrono::steady_clock::now() - start;
  hold.join();
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_GE(waited, std::chrono::milliseconds(900));
  auto schema = (*store)->GetSchemaStatus();
  ASSERT_TRUE(schema.ok()) << schema.status();
  EXPECT_EQ(schema->current_version, schema->latest_version);
}

// A database in a directory the process cannot write: the error says that,
// not only SQLite's "unable to open database file". As root (where
// permissions do not apply) the check runs in a child that drops to nobody.
TEST(StoreFaults, SqliteInAReadOnlyDirectorySaysSo_sqlite) {
  const std::string dir =
      ::testing::TempDir() + "/lens-ro-" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0555), 0);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0))
      ::_exit(3);
    auto store = Store::Open("sqlite://" + dir + "/lens.db");
    const std::string message =
        store.ok() ? "opened" : store.status().ToString();
    (void)!::write(fds[1], message.data(), message.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string message;
  char buf[512];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0)
    message.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::rmdir(dir.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "child: " << status;
  EXPECT_NE(message.find("directory " + dir + " is not writable"),
            std::string::npos)
      << message;
}

}  // namespace lens::test
