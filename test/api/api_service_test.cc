// lens-api as a service and as its own process: the bearer token guards the
// API and /metrics while the dashboard's page and the probes stay public;
// bad configuration exits 2 naming the key; SIGTERM stops it cleanly; and
// `lens up` serves the same API and dashboard over its store and prints
// the dashboard's URL.
#include "service/api_service.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "api_service_fixture.h"
#include "chromium.h"
#include "command.h"
#include "lens/store.h"
#include "loopback_traffic.h"

namespace lens {
namespace {

using std::chrono::seconds;

// `text` as one path segment.
std::string Escaped(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.') {
      out.push_back(static_cast<char>(c));
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

class ApiServiceTest : public test::ApiStoreTest {
 protected:
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      test::WaitExit(pid_, seconds(10));
    }
    ApiStoreTest::TearDown();
  }

  // Waits for /healthz on `port`.
  static bool WaitHealthy(int port) {
    httplib::Client client("127.0.0.1", port);
    for (int i = 0; i < 400; ++i) {
      auto res = client.Get("/healthz");
      if (res && res->status == 200) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  pid_t pid_ = -1;
};

TEST_F(ApiServiceTest, TokenGuardsTheApiAndMetricsButNotThePageOrProbes) {
  ApiServiceOptions o;
  o.database_url = database_;
  o.http.listen = "127.0.0.1:0";
  o.http.bearer_token = "s3cret";
  o.http.public_paths = {"/healthz", "/readyz"};
  o.api.cluster = "lab";
  auto service = ApiService::Start(o);
  ASSERT_TRUE(service.ok()) << service.status();
  EXPECT_EQ((*service)->series_backend(), "sample-history");
  const std::string url = (*service)->http_url();
  httplib::Client client("127.0.0.1",
                         std::stoi(url.substr(url.rfind(':') + 1)));
  for (const char* path : {"/", "/healthz", "/readyz"}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 200) << path;
  }
  auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_NE(page->get_header_value("Content-Type").find("text/html"),
            std::string::npos);
  for (const char* path : {"/api/v1/nodes", "/metrics"}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 401) << path;
    EXPECT_EQ(res->body.find("gpu-node-7"), std::string::npos);
  }
  client.set_bearer_token_auth("s3cret");
  auto nodes = client.Get("/api/v1/nodes?cluster=lab");
  ASSERT_TRUE(nodes);
  EXPECT_EQ(nodes->status, 200) << nodes->body;
  EXPECT_NE(nodes->body.find("\"gpu-node-7\""), std::string::npos);
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("lens_api_info{cluster=\"lab\","
                               "series_backend=\"sample-history\"} 1"),
            std::string::npos)
      << metrics->body;
  (*service)->Stop();
  (*service)->Stop();  // idempotent
}

#ifdef LENS_API_BIN
TEST_F(ApiServiceTest, DaemonRefusesBadConfigurationWithTwo) {
  const std::array<std::string, 3> cases[] = {
      {"--prometheus-url", "vm:8428", "prometheusUrl"},
      {"--listen", "nowhere", "listen"},
      {"--bearer-token-file", "/nonexistent/token", "/nonexistent/token"}};
  for (const auto& [flag, value, says] : cases) {
    auto run = test::RunCommand(
        {LENS_API_BIN, "--database", database_, flag, value}, seconds(20));
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(test::Describe(run->wait_status), "exit status 2")
        << value << ": " << run->err;
    EXPECT_NE(run->err.find(says), std::string::npos)
        << value << ": " << run->err;
  }
}

TEST_F(ApiServiceTest, DaemonServesAndStopsOnSigterm) {
  pid_ = test::Spawn({LENS_API_BIN, "--database", database_, "--listen",
                      "127.0.0.1:0", "--cluster", "lab"},
                     dir_ + "/api.log");
  ASSERT_GT(pid_, 0);
  auto bound = test::WaitForLoggedPort(dir_ + "/api.log", pid_, "http=");
  ASSERT_TRUE(bound.ok()) << bound.status();
  const int port = *bound;
  ASSERT_TRUE(WaitHealthy(port)) << test::ReadFile(dir_ + "/api.log");
  httplib::Client client("127.0.0.1", port);
  auto clusters = client.Get("/api/v1/clusters");
  ASSERT_TRUE(clusters);
  EXPECT_EQ(clusters->status, 200) << clusters->body;
  EXPECT_NE(clusters->body.find("\"lab\""), std::string::npos)
      << clusters->body;
  auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  ::kill(pid_, SIGTERM);
  auto status = test::WaitExit(pid_, seconds(20));
  ASSERT_TRUE(status.has_value()) << "lens-api did not stop on SIGTERM";
  pid_ = -1;
  EXPECT_EQ(test::Describe(*status), "exit status 0")
      << test::ReadFile(dir_ + "/api.log");
}
#endif

#ifdef LENS_CLI_BIN
// `lens up` on a plain machine: the dashboard's URL printed, the API over
// its store; Ctrl-C stops it and the next start finds the same store.
TEST_F(ApiServiceTest, LensUpServesTheDashboardOverItsStore) {
  for (int start = 0; start < 2; ++start) {
    const std::string log = dir_ + "/up" + std::to_string(start) + ".log";
    pid_ = test::Spawn(
        {LENS_CLI_BIN, "up", "--database", database_, "--listen", "127.0.0.1:0",
         "--flows-listen", "127.0.0.1:0", "--jobs-listen", "127.0.0.1:0",
         "--telemetry-listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0"},
        log);
    ASSERT_GT(pid_, 0);
    auto bound = test::WaitForLoggedPort(log, pid_, "dashboard at ");
    ASSERT_TRUE(bound.ok()) << bound.status();
    const int port = *bound;
    ASSERT_TRUE(WaitHealthy(port)) << test::ReadFile(log);
    httplib::Client client("127.0.0.1", port);
    auto nodes = client.Get("/api/v1/nodes");
    ASSERT_TRUE(nodes);
    EXPECT_EQ(nodes->status, 200) << nodes->body;
    EXPECT_NE(nodes->body.find("\"gpu-node-7\""), std::string::npos)
        << "start " << start << ": " << nodes->body;
    auto page = client.Get("/");
    ASSERT_TRUE(page);
    EXPECT_EQ(page->status, 200);
    std::string out;
    for (int i = 0; i < 100; ++i) {
      out = test::ReadFile(log);
      if (out.find("dashboard at") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_NE(out.find("lens up: dashboard at http://127.0.0.1:" +
                       std::to_string(port) + "/"),
              std::string::npos)
        << out;
    ::kill(pid_, SIGINT);
    auto status = test::WaitExit(pid_, seconds(30));
    ASSERT_TRUE(status.has_value()) << "lens up did not stop on SIGINT";
    pid_ = -1;
    EXPECT_EQ(test::Describe(*status), "exit status 0") << test::ReadFile(log);
  }
}

// `lens up --logs` on the example resumed log: the file is a workload the
// API lists, with both runs and every iteration of the log, and the
// dashboard's training chart shows them.
TEST_F(ApiServiceTest, LensUpLogsBecomeAWorkloadWithItsRuns) {
  const std::string log =
      std::filesystem::absolute(std::string(LENS_SOURCE_DIR) +
                                "/examples/logs/megatron_lm_gpt_8b_resume.log");
  pid_ =
      test::Spawn({LENS_CLI_BIN, "up", "--database", database_, "--listen",
                   "127.0.0.1:0", "--flows-listen", "127.0.0.1:0",
                   "--jobs-listen", "127.0.0.1:0", "--telemetry-listen",
                   "127.0.0.1:0", "--api-listen", "127.0.0.1:0", "--logs", log},
                  dir_ + "/up.log");
  ASSERT_GT(pid_, 0);
  auto bound = test::WaitForLoggedPort(dir_ + "/up.log", pid_, "dashboard at ");
  ASSERT_TRUE(bound.ok()) << bound.status();
  const int port = *bound;
  ASSERT_TRUE(WaitHealthy(port)) << test::ReadFile(dir_ + "/up.log");
  httplib::Client client("127.0.0.1", port);
  std::string body;
  for (int i = 0; i < 200; ++i) {
    auto res = client.Get("/api/v1/workloads?kind=LogFile");
    ASSERT_TRUE(res);
    body = res->body;
    if (body.find("megatron_lm_gpt_8b_resume.log") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(body.find("\"name\":\"megatron_lm_gpt_8b_resume.log\""),
            std::string::npos)
      << body;
  const std::string uid = std::filesystem::canonical(log).string();
  const std::string path =
      "/api/v1/workloads/" + Escaped(uid) + "/iterations?pageSize=1";
  for (int i = 0; i < 200; ++i) {
    auto res = client.Get(path);
    ASSERT_TRUE(res);
    body = res->body;
    if (body.find("\"total\":53") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(body.find("\"total\":53"), std::string::npos) << body;
  auto detail = client.Get("/api/v1/workloads/" + Escaped(uid));
  ASSERT_TRUE(detail);
  EXPECT_EQ(detail->status, 200) << detail->body;
  EXPECT_NE(detail->body.find("\"run\":2"), std::string::npos) << detail->body;
  // The dashboard's workload page charts every iteration of both runs.
  if (!test::ChromiumPath().empty()) {
    auto page = test::LoadPage("http://127.0.0.1:" + std::to_string(port) +
                               "/#/workloads/" + Escaped(uid));
    ASSERT_TRUE(page.ok()) << page.status();
    EXPECT_NE(page->dom.find("Loss: 2 runs, 53 points, latest 3.17 at "
                             "iteration 500"),
              std::string::npos)
        << page->dom;
    EXPECT_NE(page->dom.find("megatron_lm_gpt_8b_resume.log"),
              std::string::npos);
    EXPECT_TRUE(page->console.empty()) << page->stderr_text;
  } else {
    std::printf("chromium not installed: the chart check is skipped\n");
  }
  ::kill(pid_, SIGINT);
  auto status = test::WaitExit(pid_, seconds(30));
  ASSERT_TRUE(status.has_value());
  pid_ = -1;
  EXPECT_EQ(test::Describe(*status), "exit status 0");
}
#endif

}  // namespace
}  // namespace lens
