// The service host (liblens/service/service_host.h): the standard routes,
// readiness from the service's own state, /metrics with the service's
// families before the server's, threads run and stopped, and the stop order
// (HTTP first, then the parts in reverse order of adding).
#include "service/service_host.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace lens::service {
namespace {

struct Answer {
  int status = 0;
  std::string body;
};

Answer Get(const std::string& url, const std::string& path) {
  httplib::Client client(url);
  auto r = client.Get(path);
  if (!r) return {};
  return {r->status, r->body};
}

TEST(ServiceHostTest, ServesTheStandardRoutesFromTheServicesState) {
  std::atomic<bool> synced{false};
  ServiceHost::Options o;
  o.http.listen = "127.0.0.1:0";
  o.ready = [&synced] {
    return synced ? OkStatus() : UnavailableError("not synced yet");
  };
  o.metrics = [] {
    return std::string("# TYPE lens_test_things gauge\nlens_test_things 3\n");
  };
  auto host = ServiceHost::Create(std::move(o));
  ASSERT_TRUE(host.ok()) << host.status();
  (*host)->http().Handle(
      "GET", "/own",
      [](const HttpRequest&, HttpResponse* r) { r->body = "mine\n"; });
  ASSERT_TRUE((*host)->Start().ok());
  const std::string url = (*host)->url();

  Answer a = Get(url, "/healthz");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "ok\n");
  a = Get(url, "/readyz");
  EXPECT_EQ(a.status, 503);
  EXPECT_EQ(a.body, "not synced yet\n");
  synced = true;
  a = Get(url, "/readyz");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "ok\n");
  EXPECT_EQ(Get(url, "/own").body, "mine\n");
  a = Get(url, "/metrics");
  EXPECT_EQ(a.status, 200);
  EXPECT_TRUE(a.body.starts_with("# TYPE lens_test_things gauge\n")) << a.body;
  EXPECT_NE(a.body.find("lens_http_requests_total"), std::string::npos)
      << "the server's own metrics follow the service's: " << a.body;
  EXPECT_TRUE((*host)->Leading()) << "without leader election: always";
  EXPECT_EQ((*host)->leader_transitions(), 0u);
}

TEST(ServiceHostTest, StopsHttpFirstThenThePartsInReverseOrder) {
  ServiceHost::Options o;
  o.http.listen = "127.0.0.1:0";
  auto made = ServiceHost::Create(std::move(o));
  ASSERT_TRUE(made.ok()) << made.status();
  ServiceHost& host = **made;

  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> order;
  bool stopping = false;
  int running = 0;
  auto note = [&](std::string what) {
    std::lock_guard lock(mu);
    order.push_back(std::move(what));
  };
  host.AddStop([&] { note("store closed"); });
  host.AddThread(
      "worker",
      [&]() -> Status {
        std::unique_lock lock(mu);
        ++running;
        cv.notify_all();
        cv.wait(lock, [&] { return stopping; });
        order.push_back("worker ended");
        return UnavailableError("logged, not fatal");
      },
      [&] {
        std::lock_guard lock(mu);
        order.push_back("worker asked to stop");
        stopping = true;
        cv.notify_all();
      });
  host.AddStop([&] { note("scheduler stopped"); });
  ASSERT_TRUE(host.Start().ok());
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30),
                            [&] { return running == 1; }));
  }
  const std::string url = host.url();
  EXPECT_EQ(Get(url, "/healthz").status, 200);
  host.Stop();
  EXPECT_EQ(Get(url, "/healthz").status, 0) << "no longer served";
  EXPECT_EQ(order, (std::vector<std::string>{"scheduler stopped",
                                             "worker asked to stop",
                                             "worker ended", "store closed"}));
  host.Stop();  // idempotent
  EXPECT_EQ(order.size(), 4u);
}

TEST(ServiceHostTest, AnAddressInUseIsAnErrorNamingIt) {
  ServiceHost::Options first;
  first.http.listen = "127.0.0.1:0";
  auto a = ServiceHost::Create(std::move(first));
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE((*a)->Start().ok());
  const std::string taken = (*a)->url().substr(std::string("http://").size());

  ServiceHost::Options second;
  second.http.listen = taken;
  auto b = ServiceHost::Create(std::move(second));
  EXPECT_EQ(b.status().code(), StatusCode::kUnavailable) << b.status();
  EXPECT_NE(b.status().message().find(taken), std::string::npos) << b.status();
}

}  // namespace
}  // namespace lens::service
