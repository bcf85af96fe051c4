// The forwarder against an in-process receiver (a lens::HttpServer that
// answers as scripted: 5xx, 429 with Retry-After, 400, down then up) and
// against a real VictoriaMetrics.
#include "telemetry/forwarder.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <thread>

#include "command.h"
#include "http/http.h"
#include "telemetry/remote_write.h"
#include "victoria_metrics.h"

namespace lens::telemetry {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

template <typename F>
bool Eventually(F done, milliseconds limit = milliseconds(10000)) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return done();
}

// A remote-write receiver on 127.0.0.1: answers each POST with what
// `policy` says (204 by default) and keeps the bodies it accepted.
class Receiver {
 public:
  struct Reply {
    int status = 204;
    std::string retry_after;
    std::string body;
  };
  using Policy = std::function<Reply(const HttpRequest&, int attempt)>;

  explicit Receiver(int port = 0, Policy policy = nullptr)
      : policy_(std::move(policy)) {
    HttpServerOptions o;
    o.listen = "127.0.0.1:" + std::to_string(port);
    auto server = HttpServer::Create(o);
    EXPECT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    server_->Handle(
        "POST", "/api/v1/write",
        [this](const HttpRequest& req, HttpResponse* r) { Serve(req, r); });
    EXPECT_TRUE(server_->Start().ok());
  }
  std::string url() const { return server_->url() + "/api/v1/write"; }
  int port() const { return server_->port(); }
  void SetPolicy(Policy policy) {
    std::lock_guard lock(mu_);
    policy_ = std::move(policy);
  }
  std::vector<std::string> accepted() const {
    std::lock_guard lock(mu_);
    return accepted_;
  }
  std::vector<Clock::time_point> attempts() const {
    std::lock_guard lock(mu_);
    return attempts_;
  }
  std::multimap<std::string, std::string> last_headers() const {
    std::lock_guard lock(mu_);
    return last_headers_;
  }

 private:
  void Serve(const HttpRequest& req, HttpResponse* r) {
    std::lock_guard lock(mu_);
    attempts_.push_back(Clock::now());
    last_headers_ = req.headers;
    Reply reply;
    if (policy_) reply = policy_(req, static_cast<int>(attempts_.size()));
    r->status = reply.status;
    r->content_type = "text/plain";
    r->body = reply.body;
    if (!reply.retry_after.empty()) {
      r->headers.emplace_back("Retry-After", reply.retry_after);
    }
    if (reply.status / 100 == 2) accepted_.push_back(req.body);
  }

  mutable std::mutex mu_;
  Policy policy_;                                         // GUARDED_BY(mu_)
  std::vector<std::string> accepted_;                     // GUARDED_BY(mu_)
  std::vector<Clock::time_point> attempts_;               // GUARDED_BY(mu_)
  std::multimap<std::string, std::string> last_headers_;  // GUARDED_BY(mu_)
  std::unique_ptr<HttpServer> server_;
};

std::vector<std::string> Bodies(int n, int from = 0) {
  std::vector<std::string> out;
  for (int i = from; i < from + n; ++i)
    out.push_back("body-" + std::to_string(i));
  return out;
}

class ForwarderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "forwarder-" + std::to_string(::getpid()) +
           "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    options_.queue_dir = dir_;
    options_.initial_backoff = milliseconds(20);
    options_.max_backoff = milliseconds(100);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Forwarder> Create(const std::string& url) {
    options_.target.url = url;
    auto f = Forwarder::Create(options_);
    EXPECT_TRUE(f.ok()) << f.status();
    return f.ok() ? std::move(*f) : nullptr;
  }
  static void Enqueue(Forwarder& f, const std::vector<std::string>& bodies) {
    for (const std::string& b : bodies) ASSERT_TRUE(f.Enqueue(b, 1).ok());
  }
  static uint64_t Failures(const Forwarder& f, ForwardFailure failure) {
    return f.Stats().failures[static_cast<int>(failure)];
  }

  std::string dir_;
  ForwarderOptions options_;
};

TEST_F(ForwarderTest, DeliversInOrderWithTheRemoteWriteHeaders) {
  Receiver receiver;
  options_.target.bearer_token = "s3cret";
  options_.target.headers = {{"X-Scope-OrgID", "tenant-1"}};
  auto f = Create(receiver.url());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->name(),
            "127.0.0.1_" + std::to_string(receiver.port()) + "_api_v1_write");
  EXPECT_TRUE(fs::exists(dir_ + "/" + f->name()));
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(f->Enqueue("body-" + std::to_string(i), i).ok());
  }
  f->Start();
  ASSERT_TRUE(Eventually([&] { return f->Stats().queue.records == 0; }));
  EXPECT_EQ(receiver.accepted(), Bodies(30));
  const auto headers = receiver.last_headers();
  auto header = [&](const std::string& name) {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  };
  EXPECT_EQ(header("content-encoding"), "snappy");
  EXPECT_EQ(header("content-type"), "application/x-protobuf");
  EXPECT_EQ(header("x-prometheus-remote-write-version"), "0.1.0");
  EXPECT_EQ(header("user-agent"), "lens-telemetry/0.1.0");
  EXPECT_EQ(header("authorization"), "Bearer s3cret");
  EXPECT_EQ(header("x-scope-orgid"), "tenant-1");
  const ForwarderStats s = f->Stats();
  EXPECT_EQ(s.records, 30u);
  EXPECT_EQ(s.samples, 435u);  // 0 + 1 + ... + 29
  EXPECT_EQ(s.requests, 30u);
  EXPECT_EQ(s.retries, 0u);
  EXPECT_EQ(s.send_seconds.count, 30u);
  std::string metrics;
  f->RenderMetrics(&metrics);
  const std::string target = "target=\"" + f->name() + "\"";
  EXPECT_NE(
      metrics.find("lens_telemetry_forward_records_total{" + target + "} 30\n"),
      std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("lens_telemetry_forward_failures_total{" + target +
                         ",reason=\"http_429\"} 0\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("lens_telemetry_forward_send_duration_seconds_count{" +
                         target + "} 30\n"),
            std::string::npos);
  EXPECT_NE(
      metrics.find("lens_telemetry_forward_queue_records{" + target + "} 0\n"),
      std::string::npos);
}

TEST_F(ForwarderTest, RetriesA5xxAndDeliversOnce) {
  Receiver receiver(0, [](const HttpRequest&, int attempt) {
    return attempt == 1 ? Receiver::Reply{500, "", "overloaded"}
                        : Receiver::Reply{};
  });
  auto f = Create(receiver.url());
  ASSERT_TRUE(f);
  Enqueue(*f, Bodies(3));
  f->Start();
  ASSERT_TRUE(Eventually([&] { return f->Stats().queue.records == 0; }));
  EXPECT_EQ(receiver.accepted(), Bodies(3));
  const ForwarderStats s = f->Stats();
  EXPECT_EQ(s.requests, 4u);
  EXPECT_EQ(s.retries, 1u);
  EXPECT_EQ(s.failures[static_cast<int>(ForwardFailure::kHttp5xx)], 1u);
  EXPECT_EQ(s.records, 3u);
}

TEST_F(ForwarderTest, WaitsForRetryAfterOn429) {
  Receiver receiver(0, [](const HttpRequest&, int attempt) {
    return attempt == 1 ? Receiver::Reply{429, "1", "slow down"}
                        : Receiver::Reply{};
  });
  options_.initial_backoff = milliseconds(10);
  auto f = Create(receiver.url());
  ASSERT_TRUE(f);
  Enqueue(*f, Bodies(2));
  f->Start();
  ASSERT_TRUE(Eventually([&] { return f->Stats().queue.records == 0; }));
  EXPECT_EQ(receiver.accepted(), Bodies(2));
  const auto attempts = receiver.attempts();
  ASSERT_EQ(attempts.size(), 3u);
  EXPECT_GE(attempts[1] - attempts[0], milliseconds(950));
  EXPECT_EQ(Failures(*f, ForwardFailure::kHttp429), 1u);
}

TEST_F(ForwarderTest, DropsARejectedRecordAndDeliversTheNext) {
  Receiver receiver(0, [](const HttpRequest& req, int) {
    return req.body == "bad" ? Receiver::Reply{400, "", "out of order sample"}
                             : Receiver::Reply{};
  });
  auto f = Create(receiver.url());
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->Enqueue("a", 1).ok());
  ASSERT_TRUE(f->Enqueue("bad", 5).ok());
  ASSERT_TRUE(f->Enqueue("c", 1).ok());
  f->Start();
  ASSERT_TRUE(Eventually([&] { return f->Stats().queue.records == 0; }));
  EXPECT_EQ(receiver.accepted(), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(receiver.attempts().size(), 3u);  // never retried
  const ForwarderStats s = f->Stats();
  EXPECT_EQ(s.dropped_records, 1u);
  EXPECT_EQ(s.dropped_samples, 5u);
  EXPECT_EQ(s.failures[static_cast<int>(ForwardFailure::kRejected)], 1u);
  EXPECT_EQ(s.retries, 0u);
}

TEST_F(ForwarderTest, DeliversEverythingOnceTheReceiverComesBack) {
  int port = 0;
  {
    Receiver probe;  // a free port, closed again
    port = probe.port();
  }
  auto f = Create("http://127.0.0.1:" + std::to_string(port) + "/api/v1/write");
  ASSERT_TRUE(f);
  Enqueue(*f, Bodies(5));
  f->Start();
  ASSERT_TRUE(Eventually(
      [&] { return Failures(*f, ForwardFailure::kConnection) >= 3; }));
  Enqueue(*f, Bodies(5, 5));  // queued meanwhile
  Receiver receiver(port);
  ASSERT_TRUE(Eventually([&] { return f->Stats().queue.records == 0; }));
  EXPECT_EQ(receiver.accepted(), Bodies(10));
  EXPECT_GE(f->Stats().retries, 3u);
}

TEST_F(ForwarderTest, StopsDuringBackoffPromptlyAndARestartDeliversTheRest) {
  Receiver receiver(0, [](const HttpRequest&, int) {
    return Receiver::Reply{503, "", "unavailable"};
  });
  // A backoff far longer than the test may take: a Stop that waited for it
  // would never return in time.
  options_.initial_backoff = std::chrono::hours(1);
  options_.max_backoff = std::chrono::hours(1);
  auto f = Create(receiver.url());
  ASSERT_TRUE(f);
  Enqueue(*f, Bodies(3));
  f->Start();
  ASSERT_TRUE(
      Eventually([&] { return Failures(*f, ForwardFailure::kHttp5xx) == 1; }));
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    f->Stop();
    stopped = true;
  });
  const bool prompt = Eventually([&] { return stopped.load(); });
  if (!prompt) {  // the stopper still uses f: no way back
    std::fprintf(stderr, "Stop() still waiting after the deadline\n");
    std::abort();
  }
  stopper.join();
  EXPECT_EQ(f->Stats().queue.records, 3u);
  // Another forwarder on the same queue is refused while this one has it.
  EXPECT_EQ(Forwarder::Create(options_).status().code(),
            StatusCode::kFailedPrecondition);
  f.reset();

  receiver.SetPolicy(nullptr);
  f = Create(receiver.url());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->Stats().queue.records, 3u);
  f->Start();
  ASSERT_TRUE(Eventually([&] { return f->Stats().queue.records == 0; }));
  EXPECT_EQ(receiver.accepted(), Bodies(3));
}

TEST_F(ForwarderTest, RendersEachFamilyOnceForSeveralTargets) {
  Receiver receiver;
  options_.target.name = "vm-a";
  auto a = Create(receiver.url());
  options_.target.name = "vm-b";
  auto b = Create(receiver.url());
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->Enqueue("x", 7).ok());
  const Forwarder* both[] = {a.get(), b.get()};
  std::string text;
  RenderForwarderMetrics(both, &text);
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos;
         at = text.find(needle, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("# TYPE lens_telemetry_forward_queue_records gauge\n"), 1u);
  EXPECT_EQ(count("# TYPE lens_telemetry_forward_send_duration_seconds "
                  "histogram\n"),
            1u);
  EXPECT_EQ(count("lens_telemetry_forward_queue_records{target=\"vm-a\"} 1\n"),
            1u);
  EXPECT_EQ(count("lens_telemetry_forward_queue_records{target=\"vm-b\"} 0\n"),
            1u);
  EXPECT_EQ(count("lens_telemetry_forward_failures_total{target=\"vm-b\","),
            static_cast<size_t>(kForwardFailureCount));
}

TEST_F(ForwarderTest, RefusesBadTargets) {
  options_.target.url = "ftp://vm/api/v1/write";
  EXPECT_EQ(Forwarder::Create(options_).status().code(),
            StatusCode::kInvalidArgument);
  options_.target.url = "http://vm:8428/api/v1/write";
  options_.target.headers = {{"X-Bad", "a\r\nInjected: 1"}};
  EXPECT_EQ(Forwarder::Create(options_).status().code(),
            StatusCode::kInvalidArgument);
  options_.target.headers.clear();
  options_.target.ca_file = dir_ + "/missing.pem";
  EXPECT_FALSE(Forwarder::Create(options_).ok());
  options_.target.ca_file.clear();
  options_.queue_dir.clear();
  EXPECT_EQ(Forwarder::Create(options_).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(ForwardTargetNameTest, IsASafeDirectoryName) {
  EXPECT_EQ(ForwardTargetName({.url = "http://vm:8428/api/v1/write"}),
            "vm_8428_api_v1_write");
  EXPECT_EQ(ForwardTargetName({.url = "https://[::1]:9090/api/v1/write/"}),
            "___1__9090_api_v1_write");
  EXPECT_EQ(ForwardTargetName({.name = "../etc", .url = "http://x"}),
            "_.._etc");
  EXPECT_EQ(ForwardTargetName({.name = "vm-a.prod"}), "vm-a.prod");
  // Credentials in a URL never make it into the name (a label, a
  // directory, a log field), nor into messages.
  EXPECT_EQ(ForwardTargetName(
                {.url = "https://user:s3cret@vm:8428/api/v1/write?token=X#y"}),
            "vm_8428_api_v1_write");
  EXPECT_EQ(RedactedUrl("https://user:s3cret@vm:8428/w?token=X"),
            "https://vm:8428/w");
  EXPECT_EQ(RedactedUrl("http://vm/a@b"), "http://vm/a@b");
}

// Series encoded as Prometheus sends them, forwarded to a real
// VictoriaMetrics, read back with /api/v1/export.
TEST_F(ForwarderTest, ForwardsToARealVictoriaMetrics) {
  if (test::VictoriaMetrics::Binary().empty()) {
    GTEST_SKIP() << "victoria-metrics not installed (scripts/install-deps.sh)";
  }
  auto vm = test::VictoriaMetrics::Start();
  ASSERT_TRUE(vm.ok()) << vm.status();
  const int64_t now_ms =
      std::chrono::duration_cast<milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count() /
      1000 * 1000;
  auto f = Create((*vm)->write_url());
  ASSERT_TRUE(f);
  for (int request = 0; request < 2; ++request) {
    RemoteWriteEncoder enc;
    for (int gpu = 0; gpu < 4; ++gpu) {
      const std::string g = std::to_string(gpu);
      const WireLabel labels[] = {{"__name__", "lens_forwarder_test_util"},
                                  {"gpu", g},
                                  {"node", "node-a"},
                                  {"workload_name", "llama-70b"}};
      const WireSample samples[] = {
          {gpu * 10.0 + request, now_ms - 10000 + request * 5000}};
      enc.AddSeries(labels, samples);
    }
    ASSERT_TRUE(f->Enqueue(enc.Finish(), 4).ok());
  }
  f->Start();
  ASSERT_TRUE(Eventually([&] { return f->Stats().queue.records == 0; }))
      << (*vm)->log();
  EXPECT_EQ(f->Stats().records, 2u);
  EXPECT_EQ(f->Stats().samples, 8u);
  auto text = (*vm)->Export("{__name__=\"lens_forwarder_test_util\"}");
  ASSERT_TRUE(text.ok()) << text.status();
  std::map<std::string, std::vector<std::pair<int64_t, double>>> by_gpu;
  for (const std::string& line : test::Lines(*text)) {
    rapidjson::Document doc;
    doc.Parse(line.c_str());
    ASSERT_TRUE(doc.IsObject()) << line;
    const auto& metric = doc["metric"];
    EXPECT_STREQ(metric["node"].GetString(), "node-a");
    EXPECT_STREQ(metric["workload_name"].GetString(), "llama-70b");
    auto& points = by_gpu[metric["gpu"].GetString()];
    for (rapidjson::SizeType i = 0; i < doc["values"].Size(); ++i) {
      points.emplace_back(doc["timestamps"][i].GetInt64(),
                          doc["values"][i].GetDouble());
    }
  }
  ASSERT_EQ(by_gpu.size(), 4u) << *text;
  for (int gpu = 0; gpu < 4; ++gpu) {
    const auto& points = by_gpu[std::to_string(gpu)];
    ASSERT_EQ(points.size(), 2u) << *text;
    EXPECT_EQ(points[0], std::make_pair(now_ms - 10000, gpu * 10.0));
    EXPECT_EQ(points[1], std::make_pair(now_ms - 5000, gpu * 10.0 + 1));
  }
}

}  // namespace
}  // namespace lens::telemetry
