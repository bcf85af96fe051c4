// HttpServer against hostile and unusual clients over raw loopback sockets:
// limits before auth, deadlines, connection caps, the reserved scrape worker,
// keep-alive, pipelining, Expect: 100-continue, HEAD; and the attack suite
// (test/support/http_attacks.h) in process, over HTTP and HTTPS.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "http/http.h"
#include "http_attacks.h"

namespace lens {
namespace {

using std::chrono::milliseconds;

// ThreadSanitizer's shadow memory multiplies what each connection costs.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LENS_UNDER_TSAN 1
#endif
#endif
#ifdef LENS_UNDER_TSAN
constexpr size_t kRssScale = 4;
constexpr int kSlowdown = 4;  // and every step of the loop several times slower
#else
constexpr size_t kRssScale = 1;
constexpr int kSlowdown = 1;
#endif

// Blocks /slow handlers until released.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int waiting = 0;
  void Wait() {
    std::unique_lock lock(mu);
    ++waiting;
    cv.notify_all();
    cv.wait(lock, [&] { return open; });
  }
  void WaitForWaiters(int n) {
    std::unique_lock lock(mu);
    cv.wait_for(lock, std::chrono::seconds(5), [&] { return waiting >= n; });
  }
  void Open() {
    {
      std::lock_guard lock(mu);
      open = true;
    }
    cv.notify_all();
  }
};

class HttpLimitsTest : public ::testing::Test {
 protected:
  void Start(HttpServerOptions options) {
    options.listen = "127.0.0.1:0";
    auto server = HttpServer::Create(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    server_->Handle("GET", "/metrics",
                    [this](const HttpRequest&, HttpResponse* r) {
                      r->content_type = "text/plain";
                      r->body = "lens_up 1\n";
                      server_->RenderMetrics(&r->body);
                    });
    server_->Handle("POST", "/echo",
                    [](const HttpRequest& req, HttpResponse* r) {
                      r->content_type = "text/plain";
                      r->body = req.body;
                    });
    server_->Handle("GET", "/slow",
                    [this](const HttpRequest&, HttpResponse* r) {
                      gate_.Wait();
                      r->body = "{}";
                    });
    ASSERT_TRUE(server_->Start().ok());
    target_.port = server_->port();
    target_.token = options.bearer_token;
    target_.tls = !options.tls_cert_file.empty();
    target_.rss_growth_bytes *= kRssScale;
    target_.scrape_budget *= kSlowdown;
  }
  void TearDown() override {
    gate_.Open();
    if (server_) server_->Stop();
  }
  // Sends `request` on a new connection; the answer.
  std::string Ask(const std::string& request,
                  milliseconds wait = milliseconds(2000)) {
    const int fd = test::ConnectTo(target_);
    EXPECT_GE(fd, 0);
    (void)!::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    std::string answer = test::ReadAnswer(fd, wait);
    ::close(fd);
    return answer;
  }

  std::unique_ptr<HttpServer> server_;
  test::HttpTarget target_;
  Gate gate_;
};

TEST_F(HttpLimitsTest, LimitsAnswerBeforeAuthentication) {
  HttpServerOptions options;
  options.bearer_token = "tok";
  options.max_request_line_bytes = 1024;
  options.max_header_bytes = 2048;
  options.max_body_bytes = 100;
  Start(options);
  EXPECT_EQ(test::StatusOf(
                Ask("GET /" + std::string(2000, 'a') + " HTTP/1.1\r\n\r\n")),
            414);
  const std::string big_header = "X: " + std::string(3000, 'h') + "\r\n";
  const std::string answer =
      Ask("GET /metrics HTTP/1.1\r\n" + big_header + "\r\n");
  EXPECT_EQ(test::StatusOf(answer), 431);
  EXPECT_NE(answer.find("request headers larger than 2048 bytes"),
            std::string::npos)
      << answer;
  EXPECT_EQ(
      test::StatusOf(Ask("POST /echo HTTP/1.1\r\nContent-Length: 101\r\n\r\n")),
      413);
  // Within limits, no token: 401 without waiting for the announced body.
  EXPECT_EQ(
      test::StatusOf(Ask("POST /echo HTTP/1.1\r\nContent-Length: 50\r\n\r\n",
                         milliseconds(1000))),
      401);
}

TEST_F(HttpLimitsTest, BearerSchemeIsCaseInsensitive) {
  HttpServerOptions options;
  options.bearer_token = "tok";
  Start(options);
  EXPECT_EQ(test::StatusOf(
                Ask("GET /metrics HTTP/1.1\r\nAuthorization: bearer tok\r\n"
                    "Connection: close\r\n\r\n")),
            200);
  EXPECT_EQ(test::StatusOf(
                Ask("GET /metrics HTTP/1.1\r\nAuthorization: BEARER  tok\r\n"
                    "Connection: close\r\n\r\n")),
            200);
  EXPECT_EQ(
      test::StatusOf(Ask("GET /metrics HTTP/1.1\r\nAuthorization: Basic tok\r\n"
                         "Connection: close\r\n\r\n")),
      401);
}

TEST_F(HttpLimitsTest, UnknownMethodsAndChunkedBodiesSayWhy) {
  Start({});
  const std::string brew =
      Ask("BREW /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(test::StatusOf(brew), 405);
  EXPECT_NE(brew.find("BREW not allowed on /metrics (allowed: GET)"),
            std::string::npos)
      << brew;
  const std::string chunked =
      Ask("POST /echo HTTP/1.1\r\nTransfer-Encoding: "
          "chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
  EXPECT_EQ(test::StatusOf(chunked), 411);
  EXPECT_NE(chunked.find("Content-Length"), std::string::npos) << chunked;
}

TEST_F(HttpLimitsTest, ASlowClientIsCutOffAtTheReadTimeout) {
  HttpServerOptions options;
  options.read_timeout = std::chrono::seconds(1);
  Start(options);
  const int fd = test::ConnectTo(target_);
  ASSERT_GE(fd, 0);
  const std::string start = "GET /metrics HTTP/1.1\r\nX-Slow: ";
  ASSERT_GT(::send(fd, start.data(), start.size(), MSG_NOSIGNAL), 0);
  const auto begin = std::chrono::steady_clock::now();
  std::string answer;
  bool closed = false;
  // One byte every 100 ms would keep an idle timer alive forever.
  while (std::chrono::steady_clock::now() - begin < std::chrono::seconds(3)) {
    if (::send(fd, "a", 1, MSG_NOSIGNAL) < 0) {
      closed = true;
      break;
    }
    char buf[512];
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) {
      closed = true;
      break;
    }
    if (n > 0) answer.append(buf, static_cast<size_t>(n));
    std::this_thread::sleep_for(milliseconds(100));
  }
  const auto took = std::chrono::steady_clock::now() - begin;
  ::close(fd);
  EXPECT_TRUE(closed || !answer.empty());
  EXPECT_LT(took, std::chrono::milliseconds(2500));
  EXPECT_EQ(test::StatusOf(answer), 408) << answer;
}

TEST_F(HttpLimitsTest, AtThePeerCapTheLongestWaiterMakesRoom) {
  HttpServerOptions options;
  options.max_connections_per_peer = 4;
  // Before eviction of stalled readers, only this timeout freed their slots.
  options.write_timeout = std::chrono::seconds(120);
  Start(options);
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(test::ConnectTo(target_));
    std::this_thread::sleep_for(milliseconds(20));
  }
  // Idle past the grace period (a client that sends at once is never taken
  // for an idle one).
  std::this_thread::sleep_for(milliseconds(300));
  // A fifth connection is served; the oldest idle one was closed for it.
  EXPECT_EQ(test::ScrapeOnce(target_).status, 200);
  char c;
  EXPECT_EQ(::recv(idle[0], &c, 1, 0), 0)
      << "the oldest idle connection stays open";
  for (int fd : idle) ::close(fd);
}

TEST_F(HttpLimitsTest, WhenEveryConnectionIsBusyANewOneGets503) {
  HttpServerOptions options;
  options.max_connections_per_peer = 2;
  options.threads = 2;
  Start(options);
  std::vector<std::thread> slow;
  std::vector<int> fds;
  for (int i = 0; i < 2; ++i) {
    const int fd = test::ConnectTo(target_);
    const std::string req = "GET /slow HTTP/1.1\r\n\r\n";
    ASSERT_GT(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), 0);
    fds.push_back(fd);
  }
  gate_.WaitForWaiters(2);
  const std::string answer = Ask("GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(test::StatusOf(answer), 503) << answer;
  gate_.Open();
  for (int fd : fds) {
    EXPECT_EQ(test::StatusOf(test::ReadAnswer(fd, milliseconds(2000))), 200);
    ::close(fd);
  }
}

TEST_F(HttpLimitsTest, ScrapesAreAnsweredWhileEveryWorkerIsBusy) {
  HttpServerOptions options;
  options.threads = 2;
  Start(options);
  std::vector<int> fds;
  for (int i = 0; i < 6; ++i) {
    const int fd = test::ConnectTo(target_);
    const std::string req = "GET /slow HTTP/1.1\r\n\r\n";
    ASSERT_GT(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), 0);
    fds.push_back(fd);
  }
  gate_.WaitForWaiters(2);
  const test::Scrape s = test::ScrapeOnce(target_);
  EXPECT_EQ(s.status, 200);
  EXPECT_LT(s.took, milliseconds(1000));
  gate_.Open();
  for (int fd : fds) ::close(fd);
}

TEST_F(HttpLimitsTest, KeepAlivePipeliningContinueAndHead) {
  Start({});
  const int fd = test::ConnectTo(target_);
  ASSERT_GE(fd, 0);
  // Two requests in one write: two answers, in order, on one connection.
  const std::string two =
      "POST /echo HTTP/1.1\r\nContent-Length: 5\r\n\r\nfirst"
      "POST /echo HTTP/1.1\r\nContent-Length: 6\r\n\r\nsecond";
  ASSERT_GT(::send(fd, two.data(), two.size(), MSG_NOSIGNAL), 0);
  std::string answers;
  for (int i = 0; i < 20 && answers.find("second") == std::string::npos; ++i)
    answers += test::ReadAnswer(fd, milliseconds(100));
  const size_t first = answers.find("first");
  ASSERT_NE(first, std::string::npos) << answers;
  EXPECT_GT(answers.find("second"), first);
  // Expect: 100-continue gets the interim answer before the body is sent.
  const std::string head =
      "POST /echo HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: "
      "4\r\n\r\n";
  ASSERT_GT(::send(fd, head.data(), head.size(), MSG_NOSIGNAL), 0);
  EXPECT_EQ(test::StatusOf(test::ReadAnswer(fd, milliseconds(500))), 100);
  ASSERT_GT(::send(fd, "body", 4, MSG_NOSIGNAL), 0);
  const std::string echoed = test::ReadAnswer(fd, milliseconds(1000));
  EXPECT_EQ(test::StatusOf(echoed), 200);
  EXPECT_NE(echoed.find("\r\n\r\nbody"), std::string::npos) << echoed;
  // HEAD: the GET's headers, no body.
  const std::string head_req =
      "HEAD /metrics HTTP/1.1\r\nConnection: close\r\n\r\n";
  ASSERT_GT(::send(fd, head_req.data(), head_req.size(), MSG_NOSIGNAL), 0);
  const std::string head_answer = test::ReadAnswer(fd, milliseconds(1000));
  EXPECT_EQ(test::StatusOf(head_answer), 200);
  // The GET's length (its body carries the server's counters too).
  EXPECT_NE(head_answer.find("Content-Length: "), std::string::npos);
  EXPECT_EQ(head_answer.find("lens_up"), std::string::npos);
  ::close(fd);
}

// The server's own counters, as its owner appends them to /metrics.
std::string Counters(HttpServer& server) {
  std::string out;
  server.RenderMetrics(&out);
  return out;
}

double Value(const std::string& metrics, const std::string& series) {
  const size_t at = metrics.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::atof(metrics.c_str() + at + series.size() + 2);
}

bool WaitFor(const std::function<bool()>& done) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

// Requests answered on the loop (404 here) return to the loop: 50,000 of
// them pipelined on one connection are all answered, in order, and the loop
// still serves others meanwhile (each recursed once per request before, and
// the stack overflowed after about 7,400).
TEST_F(HttpLimitsTest, PipelinedAnswersDoNotRecurse) {
  Start(HttpServerOptions());
  test::PipelineResult p;
  std::thread client([&] {
    p = test::Pipeline(target_, "GET /missing HTTP/1.1\r\nHost: x\r\n\r\n",
                       50000, 404);
  });
  // Another client is served while the pipeline is answered.
  EXPECT_EQ(test::ScrapeOnce(target_).status, 200);
  client.join();
  EXPECT_EQ(p.answers, 50000u);
  EXPECT_EQ(p.others, 0u);
  EXPECT_EQ(Value(Counters(*server_),
                  "lens_http_requests_refused_total{reason=\"not_found\"}"),
            50000);
}

// A full handler queue answers 503 with Retry-After at once, and counts it.
TEST_F(HttpLimitsTest, FullQueueAnswers503WithRetryAfter) {
  HttpServerOptions options;
  options.threads = 1;
  options.max_queued_requests = 2;
  Start(options);
  std::vector<int> fds;
  const std::string slow = "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n";
  // One runs (and blocks), two wait.
  for (int i = 0; i < 3; ++i) {
    fds.push_back(test::ConnectTo(target_));
    ASSERT_GE(fds.back(), 0);
    ASSERT_GT(::send(fds.back(), slow.data(), slow.size(), MSG_NOSIGNAL), 0);
    if (i == 0) gate_.WaitForWaiters(1);
  }
  ASSERT_TRUE(WaitFor([&] {
    return Value(Counters(*server_),
                 "lens_http_queued_requests{pool=\"workers\"}") == 2;
  })) << Counters(*server_);
  const std::string answer = Ask(slow);
  EXPECT_EQ(test::StatusOf(answer), 503) << answer;
  EXPECT_NE(answer.find("Retry-After: 1\r\n"), std::string::npos) << answer;
  EXPECT_EQ(Value(Counters(*server_),
                  "lens_http_requests_refused_total{reason=\"queue_full\"}"),
            1);
  // Scrapes have their own thread and queue.
  EXPECT_EQ(test::ScrapeOnce(target_).status, 200);
  gate_.Open();
  for (int fd : fds) {
    EXPECT_EQ(test::StatusOf(test::ReadAnswer(fd, milliseconds(5000))), 200);
    ::close(fd);
  }
}

// A request whose client has gone while it waited for a worker is dropped,
// never run.
TEST_F(HttpLimitsTest, QueuedRequestOfAGoneClientIsDropped) {
  HttpServerOptions options;
  options.threads = 1;
  Start(options);
  static std::atomic<int> counted{0};
  server_->Handle("GET", "/count", [](const HttpRequest&, HttpResponse* r) {
    ++counted;
    r->body = "{}";
  });
  const int busy = test::ConnectTo(target_);
  const std::string slow = "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_GT(::send(busy, slow.data(), slow.size(), MSG_NOSIGNAL), 0);
  gate_.WaitForWaiters(1);
  const int gone = test::ConnectTo(target_);
  const std::string count = "GET /count HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_GT(::send(gone, count.data(), count.size(), MSG_NOSIGNAL), 0);
  ASSERT_TRUE(WaitFor([&] {
    return Value(Counters(*server_),
                 "lens_http_queued_requests{pool=\"workers\"}") == 1;
  }));
  linger reset{1, 0};
  ::setsockopt(gone, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  ::close(gone);
  ASSERT_TRUE(WaitFor([&] {
    return Value(Counters(*server_),
                 "lens_http_connections_closed_total{reason=\"peer\"}") >= 1;
  }));
  gate_.Open();
  EXPECT_EQ(test::StatusOf(test::ReadAnswer(busy, milliseconds(5000))), 200);
  ::close(busy);
  ASSERT_TRUE(WaitFor([&] {
    return Value(Counters(*server_), "lens_http_requests_dropped_total") == 1;
  })) << Counters(*server_);
  EXPECT_EQ(counted.load(), 0);
}

// Clients that ask for large answers and never read them cannot hold their
// address's connection slots: once stalled they are evicted for a scrape
// from the same address.
TEST_F(HttpLimitsTest, NeverReadingClientsAreEvictedAtThePeerCap) {
  HttpServerOptions options;
  options.max_connections_per_peer = 4;
  // Before eviction of stalled readers, only this timeout freed their slots.
  options.write_timeout = std::chrono::seconds(120);
  Start(options);
  server_->Handle("GET", "/large", [](const HttpRequest&, HttpResponse* r) {
    r->body.assign(size_t{8} << 20, 'x');
  });
  std::vector<int> fds;
  const std::string large = "GET /large HTTP/1.1\r\nHost: x\r\n\r\n";
  for (int i = 0; i < 4; ++i) {
    const int fd = test::ConnectTo(target_);
    ASSERT_GE(fd, 0);
    int small = 4096;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    ASSERT_GT(::send(fd, large.data(), large.size(), MSG_NOSIGNAL), 0);
    fds.push_back(fd);
  }
  ASSERT_TRUE(WaitFor([&] {
    return Value(Counters(*server_),
                 "lens_http_requests_total{route=\"/large\",code=\"200\"}") ==
           4;
  })) << Counters(*server_);
  // Refused (503) until one of them has stalled, then let in.
  EXPECT_TRUE(WaitFor([&] { return test::ScrapeOnce(target_).status == 200; }))
      << Counters(*server_);
  EXPECT_GE(Value(Counters(*server_),
                  "lens_http_connections_closed_total{reason=\"evicted\"}"),
            1);
  for (int fd : fds) ::close(fd);
}

TEST_F(HttpLimitsTest, AttackSuiteOverHttp) {
  HttpServerOptions options;
  options.bearer_token = "attack-suite-token";
  options.read_timeout = std::chrono::seconds(2);
  Start(options);
  target_.pid = ::getpid();
  for (const auto& r : test::RunHttpAttacks(target_)) {
    std::printf("  %s: %s\n", r.name.c_str(), r.detail.c_str());
    EXPECT_TRUE(r.ok) << r.name << ": " << r.detail;
  }
}

TEST_F(HttpLimitsTest, AttackSuiteOverHttps) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("lens-tls-attacks-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string cert = (dir / "cert.pem").string();
  const std::string key = (dir / "key.pem").string();
  const std::string cmd =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
      "-nodes "
      "-days 1 -subj /CN=127.0.0.1 -keyout " +
      key + " -out " + cert + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "openssl CLI (a test dependency)";
  HttpServerOptions options;
  options.bearer_token = "attack-suite-token";
  options.read_timeout = std::chrono::seconds(1);
  options.tls_cert_file = cert;
  options.tls_key_file = key;
  Start(options);
  target_.pid = ::getpid();
  for (const auto& r : test::RunHttpAttacks(target_)) {
    std::printf("  %s: %s\n", r.name.c_str(), r.detail.c_str());
    EXPECT_TRUE(r.ok) << r.name << ": " << r.detail;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lens
