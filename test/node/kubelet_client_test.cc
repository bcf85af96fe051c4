// KubeletGet against real local HTTP(S) servers (cpp-httplib) that answer
// like a kubelet: the summary, 401/403/500, oversized and slow responses.
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "lens/kubelet.h"

namespace lens {
namespace {

using std::chrono::milliseconds;

std::string Fixture(const std::string& rel) {
  return std::string(LENS_FIXTURES_DIR) + "/node/" + rel;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr size_t kBigBytes = 2 << 20;

// Serves the kubelet routes on 127.0.0.1 (HTTP, or HTTPS with the fixture
// certificate) on its own thread; records each request's Authorization.
class FakeKubelet {
 public:
  explicit FakeKubelet(bool tls) {
    if (tls) {
      server_ = std::make_unique<httplib::SSLServer>(
          Fixture("tls/kubelet.crt").c_str(),
          Fixture("tls/kubelet.key").c_str());
    } else {
      server_ = std::make_unique<httplib::Server>();
    }
    summary_ = Slurp(Fixture("stats_summary_gpu_node.json"));
    Route();
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    // stop() is a no-op until the accept loop runs: wait for it.
    while (!server_->is_running()) std::this_thread::sleep_for(milliseconds(1));
  }
  ~FakeKubelet() {
    release_.store(true);
    server_->stop();
    thread_.join();
  }

  std::string url() const {
    return std::string(tls() ? "https" : "http") +
           "://127.0.0.1:" + std::to_string(port_);
  }
  int port() const { return port_; }
  bool tls() const { return dynamic_cast<httplib::SSLServer*>(server_.get()); }
  const std::string& summary() const { return summary_; }
  std::string last_authorization() {
    std::lock_guard<std::mutex> lock(mu_);
    return authorization_;
  }

 private:
  void Record(const httplib::Request& req) {
    std::lock_guard<std::mutex> lock(mu_);
    authorization_ = req.get_header_value("Authorization");
  }

  void Route() {
    server_->Get("/stats/summary", [this](const auto& req, auto& res) {
      Record(req);
      res.set_content(summary_, "application/json");
    });
    server_->Get("/unauthorized", [this](const auto& req, auto& res) {
      Record(req);
      res.status = 401;
      res.set_content("Unauthorized", "text/plain");
    });
    server_->Get("/forbidden", [](const auto&, auto& res) {
      res.status = 403;
      res.set_content(
          "Forbidden (user=system:serviceaccount:lens:agent, "
          "verb=get, resource=nodes, subresource=stats)",
          "text/plain");
    });
    // A broken proxy that echoes the request headers into its error page.
    server_->Get("/boom", [](const auto& req, auto& res) {
      res.status = 500;
      res.set_content(
          "internal error: stats provider not ready\nAuthorization: " +
              req.get_header_value("Authorization") + "\n",
          "text/plain");
    });
    server_->Get("/big", [](const auto&, auto& res) {
      res.set_content(std::string(kBigBytes, 'x'), "application/json");
    });
    server_->Get("/big-chunked", [](const auto&, auto& res) {
      res.set_chunked_content_provider(
          "application/json", [](size_t offset, httplib::DataSink& sink) {
            if (offset >= kBigBytes) {
              sink.done();
              return true;
            }
            std::string chunk(64 << 10, 'y');
            return sink.write(chunk.data(), chunk.size());
          });
    });
    server_->Get("/slow", [this](const auto&, auto& res) {
      for (int i = 0; i < 500 && !release_.load(); ++i) {
        std::this_thread::sleep_for(milliseconds(10));
      }
      res.set_content("{}", "application/json");
    });
  }

  std::unique_ptr<httplib::Server> server_;
  std::string summary_;
  int port_ = -1;
  std::thread thread_;
  std::atomic<bool> release_{false};
  std::mutex mu_;
  std::string authorization_;
};

class KubeletGetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // libcurl honours proxy variables; the fake kubelet is local.
    for (const char* name : {"http_proxy", "https_proxy", "HTTPS_PROXY",
                             "all_proxy", "ALL_PROXY"}) {
      ::unsetenv(name);
    }
    std::string pattern = ::testing::TempDir() + "lens_kubelet_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    token_file_ = dir_ + "/token";
    WriteToken("eyJhbGciOiJSUzI1NiIsImtpZCI6Imx-first-token\n");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void WriteToken(const std::string& token) {
    std::ofstream(token_file_, std::ios::trunc) << token;
  }
  KubeletOptions Options(const FakeKubelet& kubelet) const {
    KubeletOptions options;
    options.url = kubelet.url();
    options.token_file = token_file_;
    options.timeout = milliseconds(3000);
    return options;
  }
  std::string dir_, token_file_;
};

TEST_F(KubeletGetTest, ReturnsTheBodyAndSendsTheTokenReadOnEveryCall) {
  FakeKubelet kubelet(false);
  KubeletOptions options = Options(kubelet);
  auto body = KubeletGet(options, "/stats/summary");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(*body, kubelet.summary());
  EXPECT_EQ(kubelet.last_authorization(),
            "Bearer eyJhbGciOiJSUzI1NiIsImtpZCI6Imx-first-token");
  auto parsed = ParseKubeletStatsSummary(*body);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->pods.size(), 6u);

  WriteToken("rotated-token");  // the kubelet rotates projected tokens
  options.url += "/";           // a trailing slash on the base URL is fine
  ASSERT_TRUE(KubeletGet(options, "stats/summary").ok());
  EXPECT_EQ(kubelet.last_authorization(), "Bearer rotated-token");
}

TEST_F(KubeletGetTest, NoTokenFileSendsNoAuthorization) {
  FakeKubelet kubelet(false);
  KubeletOptions options = Options(kubelet);
  options.token_file.clear();
  ASSERT_TRUE(KubeletGet(options, "/stats/summary").ok());
  EXPECT_EQ(kubelet.last_authorization(), "");
}

TEST_F(KubeletGetTest, UnreadableTokenFileIsNamedNotSent) {
  FakeKubelet kubelet(false);
  KubeletOptions options = Options(kubelet);
  options.token_file = dir_ + "/missing-token";
  auto body = KubeletGet(options, "/stats/summary");
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), StatusCode::kNotFound);
  EXPECT_NE(body.status().message().find(options.token_file),
            std::string::npos);
  WriteToken("two\nlines\n");
  options.token_file = token_file_;
  body = KubeletGet(options, "/stats/summary");
  EXPECT_EQ(body.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(body.status().message().find("two"), std::string::npos);
}

TEST_F(KubeletGetTest, AuthFailuresArePermissionDeniedWithoutTheToken) {
  FakeKubelet kubelet(false);
  WriteToken("secret-token-value");
  for (const char* path : {"/unauthorized", "/forbidden"}) {
    auto body = KubeletGet(Options(kubelet), path);
    ASSERT_FALSE(body.ok()) << path;
    EXPECT_EQ(body.status().code(), StatusCode::kPermissionDenied);
    const std::string& msg = body.status().message();
    EXPECT_NE(msg.find(kubelet.url() + path), std::string::npos) << msg;
    EXPECT_EQ(msg.find("secret-token-value"), std::string::npos) << msg;
  }
  EXPECT_EQ(kubelet.last_authorization(), "Bearer secret-token-value");
}

TEST_F(KubeletGetTest, ServerErrorIsUnknownWithTheBodyStartButNoToken) {
  FakeKubelet kubelet(false);
  WriteToken("secret-token-value");
  auto body = KubeletGet(Options(kubelet), "/boom");
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), StatusCode::kUnknown);
  const std::string& msg = body.status().message();
  EXPECT_NE(msg.find("HTTP 500"), std::string::npos) << msg;
  EXPECT_NE(msg.find("stats provider not ready"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("secret-token-value"), std::string::npos) << msg;
  EXPECT_NE(msg.find("<redacted>"), std::string::npos) << msg;
}

TEST_F(KubeletGetTest, OversizedResponsesAreRefused) {
  FakeKubelet kubelet(false);
  KubeletOptions options = Options(kubelet);
  options.max_response_bytes = 1 << 20;
  for (const char* path : {"/big", "/big-chunked"}) {
    auto body = KubeletGet(options, path);
    ASSERT_FALSE(body.ok()) << path;
    EXPECT_EQ(body.status().code(), StatusCode::kResourceExhausted) << path;
    EXPECT_NE(body.status().message().find("1048576"), std::string::npos);
  }
  options.max_response_bytes = kBigBytes;  // exactly the size: accepted
  auto body = KubeletGet(options, "/big-chunked");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(body->size(), kBigBytes);
}

TEST_F(KubeletGetTest, SlowKubeletTimesOutAsUnavailable) {
  FakeKubelet kubelet(false);
  KubeletOptions options = Options(kubelet);
  options.timeout = milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  auto body = KubeletGet(options, "/slow");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(body.status().message().find(kubelet.url() + "/slow"),
            std::string::npos);
  EXPECT_LT(took, milliseconds(2000));
}

TEST_F(KubeletGetTest, ConnectionRefusedIsUnavailable) {
  int port;
  {
    FakeKubelet gone(false);
    port = gone.port();
  }
  KubeletOptions options;
  options.url = "http://127.0.0.1:" + std::to_string(port);
  auto body = KubeletGet(options, "/stats/summary");
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(body.status().message().find(options.url), std::string::npos);
}

TEST_F(KubeletGetTest, BadOptionsAreInvalidArgument) {
  KubeletOptions options;
  EXPECT_EQ(KubeletGet(options, "/stats/summary").status().code(),
            StatusCode::kInvalidArgument);
  options.url = "ftp://127.0.0.1:1";
  EXPECT_EQ(KubeletGet(options, "/stats/summary").status().code(),
            StatusCode::kInvalidArgument);
  options.url = "http://127.0.0.1:1";
  options.timeout = milliseconds(0);
  EXPECT_EQ(KubeletGet(options, "/stats/summary").status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(KubeletGetTest, HttpsVerifiesAgainstTheGivenCa) {
  FakeKubelet kubelet(true);
  KubeletOptions options = Options(kubelet);
  options.ca_file = Fixture("tls/ca.crt");
  auto body = KubeletGet(options, "/stats/summary");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(*body, kubelet.summary());
  EXPECT_EQ(kubelet.last_authorization(),
            "Bearer eyJhbGciOiJSUzI1NiIsImtpZCI6Imx-first-token");
}

TEST_F(KubeletGetTest, HttpsWithAnUnknownCaIsUnavailableUnlessSkipped) {
  FakeKubelet kubelet(true);
  KubeletOptions options = Options(kubelet);  // system CAs only
  auto body = KubeletGet(options, "/stats/summary");
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(body.status().message().find(kubelet.url()), std::string::npos);
  options.insecure_skip_verify = true;
  body = KubeletGet(options, "/stats/summary");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(*body, kubelet.summary());
}

TEST_F(KubeletGetTest, HttpsToAPlainHttpServerIsUnavailable) {
  FakeKubelet kubelet(false);
  KubeletOptions options = Options(kubelet);
  options.url = "https://127.0.0.1:" + std::to_string(kubelet.port());
  options.insecure_skip_verify = true;
  auto body = KubeletGet(options, "/stats/summary");
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace lens
