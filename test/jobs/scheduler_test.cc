#include "scheduled/scheduler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace lens::scheduled {
namespace {

using std::chrono::milliseconds;

JobState StateOf(const Scheduler& s, const std::string& name) {
  for (const JobState& st : s.States()) {
    if (st.name == name) return st;
  }
  return {};
}

template <typename F>
bool WaitFor(F done, milliseconds limit = milliseconds(5000)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

TEST(SchedulerTest, RunsEachJobEveryIntervalAndCountsRuns) {
  std::atomic<int> runs{0};
  Scheduler s({{"tick", milliseconds(20), milliseconds(1000), [&](SteadyTime) {
                  ++runs;
                  return OkStatus();
                }}});
  s.Start(nullptr);
  ASSERT_TRUE(WaitFor([&] { return runs >= 4; }));
  s.Stop();
  const JobState st = StateOf(s, "tick");
  EXPECT_EQ(st.runs, static_cast<uint64_t>(runs.load()));
  EXPECT_EQ(st.failures, 0u);
  EXPECT_TRUE(st.last_success.has_value());
  EXPECT_EQ(st.durations.count, st.runs);
  EXPECT_FALSE(st.running);
}

TEST(SchedulerTest, NeverRunsOneJobTwiceAtOnceAndCountsSkippedTicks) {
  std::atomic<int> in_flight{0}, max_in_flight{0}, runs{0};
  Scheduler s({{"slow", milliseconds(10), milliseconds(1000), [&](SteadyTime) {
                  const int now = ++in_flight;
                  int seen = max_in_flight;
                  while (now > seen &&
                         !max_in_flight.compare_exchange_weak(seen, now)) {
                  }
                  std::this_thread::sleep_for(milliseconds(55));
                  --in_flight;
                  ++runs;
                  return OkStatus();
                }}});
  s.Start(nullptr);
  // RunOnce from another thread waits for the loop's run, never overlaps.
  std::thread other([&] { EXPECT_TRUE(s.RunOnce("slow").ok()); });
  ASSERT_TRUE(WaitFor([&] { return runs >= 4; }));
  other.join();
  s.Stop();
  EXPECT_EQ(max_in_flight.load(), 1);
  // Each 55 ms run covers about five 10 ms ticks: most are skipped.
  EXPECT_GE(StateOf(s, "slow").skipped, 3u);
}

TEST(SchedulerTest, ARunPastItsTimeoutIsAFailureAndErrorsAreKept) {
  std::atomic<int> calls{0};
  Scheduler s({{"late", milliseconds(100000), milliseconds(10),
                [&](SteadyTime deadline) {
                  ++calls;
                  std::this_thread::sleep_until(deadline + milliseconds(20));
                  return OkStatus();
                }},
               {"broken", milliseconds(100000), milliseconds(1000),
                [](SteadyTime) { return UnavailableError("store is down"); }}});
  Status late = s.RunOnce("late");
  EXPECT_EQ(late.code(), StatusCode::kDeadlineExceeded) << late.message();
  EXPECT_NE(late.message().find("timeout of 10 ms"), std::string::npos);
  Status broken = s.RunOnce("broken");
  EXPECT_EQ(broken.code(), StatusCode::kUnavailable);
  const JobState b = StateOf(s, "broken");
  EXPECT_EQ(b.runs, 1u);
  EXPECT_EQ(b.failures, 1u);
  EXPECT_EQ(b.last_error, "store is down");
  EXPECT_FALSE(b.last_success.has_value());
  EXPECT_EQ(s.RunOnce("nope").code(), StatusCode::kNotFound);
}

// "Nothing ran" is shown by the ticks the job's thread took as a follower
// (each asks whether this replica leads), not by waiting some time.
TEST(SchedulerTest, RunsOnlyWhileLeading) {
  std::atomic<bool> leading{false};
  std::atomic<int> runs{0}, follower_ticks{0};
  Scheduler s({{"led", milliseconds(10), milliseconds(1000), [&](SteadyTime) {
                  ++runs;
                  return OkStatus();
                }}});
  s.Start([&] {
    const bool l = leading.load();
    if (!l) ++follower_ticks;
    return l;
  });
  ASSERT_TRUE(WaitFor([&] { return follower_ticks >= 5; }));
  EXPECT_EQ(runs.load(), 0);
  EXPECT_EQ(StateOf(s, "led").skipped, 0u);  // a follower skips nothing
  leading = true;
  ASSERT_TRUE(WaitFor([&] { return runs >= 2; }));
  leading = false;
  // The job's one thread asked again: a run in flight has ended.
  const int asked = follower_ticks;
  ASSERT_TRUE(WaitFor([&] { return follower_ticks >= asked + 1; }));
  const int after = runs;
  ASSERT_TRUE(WaitFor([&] { return follower_ticks >= asked + 6; }));
  EXPECT_EQ(runs.load(), after);
  s.Stop();
}

TEST(SchedulerTest, StopReturnsPromptlyBetweenLongIntervals) {
  Scheduler s({{"hourly", std::chrono::hours(1), milliseconds(1000),
                [](SteadyTime) { return OkStatus(); }}});
  s.Start(nullptr);
  ASSERT_TRUE(WaitFor([&] { return StateOf(s, "hourly").runs == 1; }));
  // A Stop that waited for the next run would take an hour.
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    s.Stop();
    stopped = true;
  });
  const bool prompt = WaitFor([&] { return stopped.load(); });
  if (!prompt) {  // the stopper still uses s: no way back
    std::fprintf(stderr, "Stop() still waiting after the deadline\n");
    std::abort();
  }
  stopper.join();
}

TEST(SchedulerTest, AJobThatThrowsFailsWithoutTakingTheProcessDown) {
  Scheduler s(
      {{"throws", milliseconds(1000), milliseconds(1000),
        [](SteadyTime) -> Status { throw std::runtime_error("boom"); }}});
  Status st = s.RunOnce("throws");
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("boom"), std::string::npos);
}

}  // namespace
}  // namespace lens::scheduled
