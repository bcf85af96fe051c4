// LogFileTailer on real files: one appended to while it is tailed (cut
// anywhere, mid-line too), one rotated by rename + create, one by
// copytruncate. Every line arrives once and in order: the store holds what
// `lens parse-log --store` stores for the whole log.
#include "telemetry/log_tail.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "telemetry/logs.h"
#include "training_rows.h"

namespace lens::telemetry {
namespace {

namespace fs = std::filesystem;

Timestamp Now() {
  return std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
}

// The first `n` lines of `text` and the rest.
std::pair<std::string, std::string> SplitAtLine(const std::string& text,
                                                int n) {
  size_t at = 0;
  for (int i = 0; i < n; ++i) at = text.find('\n', at) + 1;
  return {text.substr(0, at), text.substr(at)};
}

class LogTailTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int seq = 0;
    dir_ =
        fs::path(::testing::TempDir()) /
        ("logtail-" + std::to_string(::getpid()) + "-" + std::to_string(seq++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    log_ = ReadFixture("training/megatron_lm_core_r0.x.log");
    ASSERT_GT(log_.size(), 10000u);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void Append(const fs::path& path, std::string_view text) {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << text;
  }

  // The ingest's rows equal what parse-log stores for `text` (the whole
  // log unless given), with the file's absolute path as source and
  // workload.
  void ExpectWholeLog(Store& store, const fs::path& path,
                      const std::string* text = nullptr) {
    const std::string source = fs::canonical(path).string();
    TempStore reference("tail-reference");
    StoreLikeParseLog(*reference.get(), source, source,
                      text != nullptr ? *text : log_);
    const std::string want = TrainingRows(*reference.get(), source);
    EXPECT_NE(want.find("run 2 "), std::string::npos);
    EXPECT_EQ(TrainingRows(store, source), want);
  }

  fs::path dir_;
  std::string log_;
};

TEST_F(LogTailTest, FollowsAFileWhileItIsWritten) {
  const fs::path path = dir_ / "train.log";
  TempStore store("tail");
  LogIngest logs({}, store.get(), nullptr);
  LogFileTailer tailer(&logs);
  ASSERT_TRUE(tailer.Add({path.string(), "", ""}).ok());
  ASSERT_TRUE(tailer.Poll().ok());  // not there yet: nothing to do
  std::mt19937 rng(11);
  for (size_t at = 0; at < log_.size();) {
    const size_t n = std::uniform_int_distribution<size_t>(1, 3000)(rng);
    Append(path, std::string_view(log_).substr(at, n));
    at += n;
    ASSERT_TRUE(tailer.Poll().ok());
    if (rng() % 4 == 0) {
      ASSERT_TRUE(logs.Flush(Now()).ok());
    }
  }
  ASSERT_TRUE(logs.Stop().ok());
  ExpectWholeLog(*store.get(), path);
  EXPECT_EQ(logs.metrics().lines(), 303u);
}

TEST_F(LogTailTest, FollowsRenameAndCreate) {
  const fs::path path = dir_ / "train.log";
  const auto [first, rest] = SplitAtLine(log_, 100);
  const auto [second, third] = SplitAtLine(rest, 100);
  TempStore store("rename");
  LogIngest logs({}, store.get(), nullptr);
  LogFileTailer tailer(&logs);
  ASSERT_TRUE(tailer.Add({path.string(), "", ""}).ok());
  Append(path, first);
  ASSERT_TRUE(tailer.Poll().ok());
  // logrotate renames; the writer still holds the old file and writes on
  // until it reopens the path, which is a new file then.
  fs::rename(path, dir_ / "train.log.1");
  ASSERT_TRUE(tailer.Poll().ok());  // the path is gone for a moment
  Append(dir_ / "train.log.1", second);
  Append(path, third.substr(0, 1000));
  ASSERT_TRUE(tailer.Poll().ok());
  Append(path, third.substr(1000));
  ASSERT_TRUE(tailer.Poll().ok());
  ASSERT_TRUE(logs.Stop().ok());
  ExpectWholeLog(*store.get(), path);
  EXPECT_EQ(logs.metrics().lines(), 303u);
}

TEST_F(LogTailTest, FollowsCopyTruncate) {
  const fs::path path = dir_ / "train.log";
  const auto [first, rest] = SplitAtLine(log_, 200);
  ASSERT_LT(rest.size(), first.size());
  TempStore store("copytruncate");
  LogIngest logs({}, store.get(), nullptr);
  LogFileTailer tailer(&logs);
  ASSERT_TRUE(tailer.Add({path.string(), "", ""}).ok());
  Append(path, first);
  ASSERT_TRUE(tailer.Poll().ok());
  fs::copy_file(path, dir_ / "train.log.1");
  fs::resize_file(path, 0);
  Append(path, rest);  // an O_APPEND writer starts again at 0
  ASSERT_TRUE(tailer.Poll().ok());
  ASSERT_TRUE(logs.Stop().ok());
  ExpectWholeLog(*store.get(), path);
  EXPECT_EQ(logs.metrics().lines(), 303u);
}

TEST_F(LogTailTest, DropsTheHoleOfAWriterWithoutAppend) {
  const fs::path path = dir_ / "train.log";
  const auto [first, rest] = SplitAtLine(log_, 100);
  const auto [second, third] = SplitAtLine(rest, 100);
  TempStore store("hole");
  LogIngest logs({}, store.get(), nullptr);
  LogFileTailer tailer(&logs);
  ASSERT_TRUE(tailer.Add({path.string(), "", ""}).ok());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, first.data(), first.size()),
            static_cast<ssize_t>(first.size()));
  ASSERT_TRUE(tailer.Poll().ok());
  // More is written, then copytruncate runs before the next poll, and the
  // writer goes on at its own offset: what the reader sees past its offset
  // is NULs up to there, then the new lines. The lines in between went to
  // the copy only.
  ASSERT_EQ(::write(fd, second.data(), second.size()),
            static_cast<ssize_t>(second.size()));
  ASSERT_EQ(::ftruncate(fd, 0), 0);
  ASSERT_EQ(::write(fd, third.data(), third.size()),
            static_cast<ssize_t>(third.size()));
  ::close(fd);
  ASSERT_TRUE(tailer.Poll().ok());
  ASSERT_TRUE(logs.Stop().ok());
  const std::string seen = first + third;
  ExpectWholeLog(*store.get(), path, &seen);
}

TEST_F(LogTailTest, PollsOnItsOwnThread) {
  const fs::path path = dir_ / "train.log";
  TempStore store("thread");
  LogIngest logs({}, store.get(), nullptr);
  LogFileTailerOptions options;
  options.poll_interval = std::chrono::milliseconds(5);
  LogFileTailer tailer(&logs, options);
  ASSERT_TRUE(tailer.Add({path.string(), "llama-local", "llama"}).ok());
  tailer.Start();
  Append(path, log_);
  for (int i = 0; i < 400 && logs.metrics().lines() < 303; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  tailer.Stop();
  EXPECT_TRUE(tailer.last_error().ok()) << tailer.last_error();
  ASSERT_TRUE(logs.Stop().ok());
  EXPECT_EQ(logs.metrics().lines(), 303u);
  auto runs = store->training().ListRuns("llama-local");
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_EQ(runs->size(), 2u);
}

}  // namespace
}  // namespace lens::telemetry

namespace lens::telemetry {
namespace {

// A followed file is a workload the API lists: by its real path, once.
TEST(LogFileWorkloadTest, RegistersTheFileOnceUnderItsRealPath) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("logwl-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "train.log") << "x\n";
  fs::create_symlink(dir / "train.log", dir / "latest.log");
  auto store = Store::Open("sqlite://" + (dir / "lens.db").string());
  ASSERT_TRUE(store.ok()) << store.status();
  Status st = RegisterLogFileWorkload(store->get(),
                                      (dir / "latest.log").string(), Now());
  ASSERT_TRUE(st.ok()) << st;
  const std::string uid = fs::canonical(dir / "train.log").string();
  auto w = (*store)->pods().GetWorkload(uid);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->kind, "LogFile");
  EXPECT_EQ(w->name, "train.log");
  EXPECT_EQ(w->namespace_name, "local");
  EXPECT_EQ(w->status, "Running");
  // What the store says later (a status the jobs set) is kept.
  w->status = "Succeeded";
  ASSERT_TRUE((*store)->pods().UpsertWorkloads({&*w, 1}).ok());
  ASSERT_TRUE(
      RegisterLogFileWorkload(store->get(), (dir / "train.log").string(), Now())
          .ok());
  auto again = (*store)->pods().GetWorkload(uid);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, "Succeeded");
  auto all = (*store)->pods().ListWorkloads({});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->total, 1);
  store->reset();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lens::telemetry
