// Readiness from a background check (liblens/service/readiness.h): /readyz
// answers from the last result and never waits for a check, so a hung
// database cannot hold the thread that serves scrapes and liveness. The
// service host's routes, threads and stop order are in service_host_test.cc.
#include "service/readiness.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

namespace lens::service {
namespace {

using std::chrono::milliseconds;

TEST(ReadinessTest, AnswersFromTheLastCheck) {
  Status next = OkStatus();
  Readiness r([&] { return next; }, milliseconds(60000), milliseconds(60000));
  EXPECT_EQ(r.State(), UnavailableError("not checked yet"));
  r.CheckNow();
  EXPECT_TRUE(r.State().ok()) << r.State();
  next = UnavailableError("store: connection refused");
  r.CheckNow();
  EXPECT_EQ(r.State(), UnavailableError("store: connection refused"));
}

// A check that hangs (a database that stopped answering): answers keep
// coming at once, and once the last finished check is older than the
// staleness bound they say not ready and for how long.
TEST(ReadinessTest, AHungCheckNeverHoldsAnAnswer) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  int entered = 0;
  bool first = true;
  Readiness r(
      [&] {
        std::unique_lock lock(mu);
        if (first) {
          first = false;
          return OkStatus();
        }
        ++entered;
        cv.notify_all();
        cv.wait(lock, [&] { return release; });
        return OkStatus();
      },
      milliseconds(1), milliseconds(0));
  r.CheckNow();  // the first: ok
  r.Start();     // the thread's first check hangs
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30),
                            [&] { return entered > 0; }));
  }
  // The check is held right now; the answer does not wait for it.
  const Status state = r.State();
  EXPECT_EQ(state.code(), StatusCode::kUnavailable) << state;
  EXPECT_NE(state.message().find("no check finished for"), std::string::npos)
      << state;
  EXPECT_NE(state.message().find("(last: ok)"), std::string::npos) << state;
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  r.Stop();
}

}  // namespace
}  // namespace lens::service
