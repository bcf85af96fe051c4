// Readiness from a background check (liblens/service/readiness.h): /readyz
// answers from the last result and never waits for a check, so a hung
// database cannot hold the thread that serves scrapes and liveness.
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
  HttpResponse out;
  r.Respond(&out);
  EXPECT_EQ(out.status, 503);
  EXPECT_EQ(out.body, "not checked yet\n");
  r.CheckNow();
  r.Respond(&out);
  EXPECT_EQ(out.status, 200);
  EXPECT_EQ(out.body, "ok\n");
  next = UnavailableError("store: connection refused");
  r.CheckNow();
  r.Respond(&out);
  EXPECT_EQ(out.status, 503);
  EXPECT_EQ(out.body, "store: connection refused\n");
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
  HttpResponse out;
  r.Respond(&out);
  EXPECT_EQ(out.status, 503);
  EXPECT_NE(out.body.find("no check finished for"), std::string::npos)
      << out.body;
  EXPECT_NE(out.body.find("(last: ok)"), std::string::npos) << out.body;
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  r.Stop();
}

}  // namespace
}  // namespace lens::service
