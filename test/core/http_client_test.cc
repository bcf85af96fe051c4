// The one outbound HTTP client (core/http_client.h) against a cpp-httplib
// server on loopback: what a request carries (method, body, fixed and
// per-request headers, a token asked for per request), line streaming, the
// answer's limits, cancellation, idle streams, and errors that name the
// server without its credentials.
#include "core/http_client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace lens {
namespace {

using std::chrono::milliseconds;

struct Seen {
  std::string method, path, body, authorization, accept, fixed, agent;
};

class FakeServer {
 public:
  FakeServer() {
    server_.Get("/hello",
                [this](const httplib::Request& q, httplib::Response& r) {
                  Record(q);
                  r.set_content("hi", "text/plain");
                });
    for (const char* method : {"POST", "PUT", "DELETE"}) {
      auto handler = [this](const httplib::Request& q, httplib::Response& r) {
        Record(q);
        r.status = 201;
        r.set_content("made", "text/plain");
      };
      if (std::string(method) == "POST") server_.Post("/things", handler);
      if (std::string(method) == "PUT") server_.Put("/things", handler);
      if (std::string(method) == "DELETE") server_.Delete("/things", handler);
    }
    server_.Get("/lines", [](const httplib::Request&, httplib::Response& r) {
      r.set_chunked_content_provider(
          "text/plain", [](size_t, httplib::DataSink& sink) {
            for (std::string_view part : {"a\r\n\nb", "\n", "c"}) {
              sink.write(part.data(), part.size());
            }
            sink.done();
            return true;
          });
    });
    server_.Get("/busy", [](const httplib::Request&, httplib::Response& r) {
      r.status = 503;
      r.set_header("Retry-After", "7");
      r.set_content("come back later", "text/plain");
    });
    server_.Get("/dated", [](const httplib::Request&, httplib::Response& r) {
      r.status = 429;
      r.set_header("Retry-After", "Wed, 21 Oct 2026 07:28:00 GMT");
    });
    server_.Get("/big", [](const httplib::Request&, httplib::Response& r) {
      r.set_content(std::string(4096, 'x'), "text/plain");
    });
    // One line, then nothing until the client goes away or the server stops.
    server_.Get(
        "/hang", [this](const httplib::Request& q, httplib::Response& r) {
          Record(q);
          r.set_chunked_content_provider(
              "text/plain", [this](size_t offset, httplib::DataSink& sink) {
                if (offset == 0) sink.write("first\n", 6);
                // Until released, looking now and then whether the client
                // went away.
                std::unique_lock lock(release_mu_);
                while (!release_cv_.wait_for(lock, milliseconds(5),
                                             [this] { return release_; })) {
                  if (!sink.is_writable()) return false;
                }
                sink.done();
                return true;
              });
        });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() is a no-op until the accept loop runs: wait for it.
    while (!server_.is_running()) std::this_thread::yield();
  }
  ~FakeServer() {
    {
      std::lock_guard lock(release_mu_);
      release_ = true;
    }
    release_cv_.notify_all();
    server_.stop();
    thread_.join();
  }

  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_);
  }
  std::vector<Seen> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }
  size_t requests() {
    std::lock_guard lock(mu_);
    return seen_.size();
  }

 private:
  void Record(const httplib::Request& q) {
    std::lock_guard lock(mu_);
    seen_.push_back(
        {q.method, q.path, q.body, q.get_header_value("Authorization"),
         q.get_header_value("Accept"), q.get_header_value("X-Fixed"),
         q.get_header_value("User-Agent")});
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex release_mu_;
  std::condition_variable release_cv_;
  bool release_ = false;  // GUARDED_BY(release_mu_)
  std::mutex mu_;
  std::vector<Seen> seen_;  // GUARDED_BY(mu_)
};

std::unique_ptr<HttpClient> Client(HttpClientOptions o) {
  auto client = HttpClient::Create(std::move(o));
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? std::move(*client) : nullptr;
}

TEST(HttpClientTest, SendsMethodBodyHeadersAndATokenAskedForEachRequest) {
  FakeServer server;
  HttpClientOptions o;
  o.base_url = server.url();
  o.user_agent = "lens-test";
  o.headers = {{"X-Fixed", "tenant-1"}};
  int asked = 0;
  o.token_source = [&asked]() -> StatusOr<std::string> {
    return "token-" + std::to_string(++asked);
  };
  auto client = Client(o);
  ASSERT_NE(client, nullptr);

  HttpClient::Request get;
  get.path = "/hello";
  get.headers = {{"Accept", "text/plain"}};
  auto r = client->Send(get);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hi");
  EXPECT_EQ(r->retry_after_seconds, -1);

  for (const char* method : {"POST", "PUT", "DELETE"}) {
    HttpClient::Request send;
    send.method = method;
    send.path = "/things";
    send.body = std::string(method) == "DELETE" ? "" : "{\"a\":1}";
    auto made = client->Send(send);
    ASSERT_TRUE(made.ok()) << method << ": " << made.status();
    EXPECT_EQ(made->status, 201) << method;
    EXPECT_EQ(made->body, "made");
  }
  const std::vector<Seen> seen = server.seen();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].accept, "text/plain");
  EXPECT_EQ(seen[0].fixed, "tenant-1");
  EXPECT_TRUE(seen[0].agent.starts_with("lens-test/")) << seen[0].agent;
  EXPECT_EQ(seen[0].authorization, "Bearer token-1");
  EXPECT_EQ(seen[1].method, "POST");
  EXPECT_EQ(seen[1].body, "{\"a\":1}");
  EXPECT_EQ(seen[2].method, "PUT");
  EXPECT_EQ(seen[2].body, "{\"a\":1}");
  EXPECT_EQ(seen[3].method, "DELETE");
  EXPECT_EQ(seen[3].authorization, "Bearer token-4")
      << "a rotated token is sent from the next request on";
}

TEST(HttpClientTest, StreamsLinesUntilTheEndOrUntilTheHandlerStops) {
  FakeServer server;
  auto client = Client({.base_url = server.url()});
  ASSERT_NE(client, nullptr);
  std::vector<std::string> lines;
  const std::function<bool(std::string_view)> all = [&](std::string_view line) {
    lines.emplace_back(line);
    return true;
  };
  HttpClient::Request stream;
  stream.path = "/lines";
  stream.on_line = &all;
  auto r = client->Send(stream);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "b", "c"}))
      << "CR LF and LF end lines, empty lines are skipped, and the last line "
         "comes without a newline";
  EXPECT_TRUE(r->body.empty());
  EXPECT_FALSE(r->ended_by_handler);

  lines.clear();
  const std::function<bool(std::string_view)> first =
      [&](std::string_view line) {
        lines.emplace_back(line);
        return false;
      };
  stream.on_line = &first;
  r = client->Send(stream);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ended_by_handler);
  EXPECT_EQ(lines, std::vector<std::string>{"a"});

  // A refused stream delivers no line: its body is the answer.
  lines.clear();
  stream.path = "/busy";
  stream.on_line = &all;
  r = client->Send(stream);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->body, "come back later");
  EXPECT_EQ(r->retry_after_seconds, 7);
  EXPECT_TRUE(lines.empty());
}

TEST(HttpClientTest, RetryAfterIsSecondsOnly) {
  FakeServer server;
  auto client = Client({.base_url = server.url()});
  ASSERT_NE(client, nullptr);
  auto r = client->Send({.path = "/dated"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(r->retry_after_seconds, -1) << "an HTTP date is left to backoff";
}

TEST(HttpClientTest, AnAnswerOverTheLimitFailsUnlessOnlyAPrefixIsKept) {
  FakeServer server;
  auto client = Client({.base_url = server.url(), .max_response_bytes = 1000});
  ASSERT_NE(client, nullptr);
  auto r = client->Send({.path = "/big"});
  ASSERT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status();
  EXPECT_NE(r.status().message().find("larger than 1000 bytes"),
            std::string::npos)
      << r.status();
  r = client->Send({.path = "/big", .keep_prefix = 16});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body, std::string(16, 'x'));
  // The client is still usable: the pool dropped nothing it needs.
  r = client->Send({.path = "/hello"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body, "hi");
}

TEST(HttpClientTest, StopCancelsARequestInFlight) {
  FakeServer server;
  auto client = Client({.base_url = server.url()});
  ASSERT_NE(client, nullptr);
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    while (server.requests() == 0) std::this_thread::yield();
    stop.store(true);
  });
  auto r = client->Send(
      {.path = "/hang", .timeout = milliseconds(0), .stop = &stop});
  stopper.join();
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled) << r.status();
}

TEST(HttpClientTest, AStreamWithoutDataForItsIdleTimeIsDeadlineExceeded) {
  FakeServer server;
  auto client = Client({.base_url = server.url()});
  ASSERT_NE(client, nullptr);
  std::vector<std::string> lines;
  const std::function<bool(std::string_view)> on_line =
      [&](std::string_view line) {
        lines.emplace_back(line);
        return true;
      };
  auto r = client->Send({.path = "/hang",
                         .timeout = milliseconds(0),
                         .idle = milliseconds(300),
                         .on_line = &on_line});
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status();
  EXPECT_NE(r.status().message().find("no data for 300 ms"), std::string::npos)
      << r.status();
  EXPECT_EQ(lines, std::vector<std::string>{"first"});
}

TEST(HttpClientTest, ErrorsNameTheServerWithoutItsCredentials) {
  // Port 1 on loopback: nothing listens there (each test process has a
  // network namespace of its own as root; a closed port anywhere).
  auto client =
      Client({.base_url = "http://lens:s3cret@127.0.0.1:1/w?token=t0ken",
              .bearer_token = "b3arer"});
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->shown(), "http://127.0.0.1:1/w");
  auto r = client->Send({.method = "POST", .body = "x"});
  ASSERT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status();
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("POST http://127.0.0.1:1/w"), std::string::npos) << m;
  for (const char* secret : {"s3cret", "t0ken", "b3arer", "lens:"}) {
    EXPECT_EQ(m.find(secret), std::string::npos) << secret << " in " << m;
  }
  EXPECT_EQ(client->Scrub("said b3arer and token=t0ken"), "said *** and ***")
      << "the whole query is a secret";
}

TEST(HttpClientTest, CreateRefusesWhatCannotWork) {
  EXPECT_EQ(HttpClient::Create({.base_url = "ftp://x"}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(HttpClient::Create({.base_url = "http://x",
                                .headers = {{"X-Bad", "a\r\nInjected: 1"}}})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      HttpClient::Create({.base_url = "http://x", .headers = {{"X:Bad", "a"}}})
          .status()
          .code(),
      StatusCode::kInvalidArgument);
  auto missing = HttpClient::Create({.base_url = "https://x",
                                     .origin = "kubeconfig k",
                                     .ca_file = "/nonexistent/ca.pem"});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status();
  EXPECT_NE(missing.status().message().find("/nonexistent/ca.pem"),
            std::string::npos);
  EXPECT_NE(missing.status().message().find("kubeconfig k"), std::string::npos);
  auto name = HttpClient::Create(
      {.base_url = "https://10.0.0.1:6443", .tls_server_name = "a b"});
  EXPECT_EQ(name.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lens
