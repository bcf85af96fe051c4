// lens-netflow as it runs: the real binary with the probe attached, known
// loopback traffic, and its HTTP surface (token, /metrics, /flows, /healthz).
#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "command.h"
#include "ebpf_env.h"
#include "loopback_traffic.h"

namespace lens {
namespace {

constexpr char kToken[] = "netflow-test-token";

// The value of the first sample line starting with `series`, or -1.
double Sample(const std::string& text, const std::string& series) {
  size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

class NetflowDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = test::EbpfSkipReason(); !why.empty()) {
      GTEST_SKIP() << why;
    }
    dir_ = ::testing::TempDir() + "/netflow-" + std::to_string(::getpid());
    ASSERT_EQ(std::system(("mkdir -p " + dir_).c_str()), 0);
    ASSERT_TRUE(
        test::WriteFile(dir_ + "/token", std::string(kToken) + "\n").ok());
    ASSERT_TRUE(test::WriteFile(dir_ + "/policy.yaml",
                                "k8sSvc: [10.96.0.0/12]\nresolvConf: \"\"\n")
                    .ok());
    pid_ = test::Spawn(
        {LENS_NETFLOW_BIN, "--listen", "127.0.0.1:0", "--interval", "0.2",
         "--policy", dir_ + "/policy.yaml", "--bearer-token-file",
         dir_ + "/token", "--bpf-stats-window", "1", "--bpf-stats-period", "1"},
        dir_ + "/netflow.log", /*stdout_too=*/false);
    auto bound = test::WaitForLoggedPort(dir_ + "/netflow.log", pid_, "http=");
    if (!bound.ok()) {
      if (bound.status().code() == StatusCode::kUnavailable) pid_ = -1;
      FAIL() << "lens-netflow: " << bound.status();
    }
    port_ = *bound;
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    for (int i = 0; i < 200; ++i) {
      auto r = client_->Get("/healthz");
      if (r && r->status == 200) return;
      int status;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        FAIL() << "lens-netflow exited: " << test::Describe(status) << "\n"
               << test::ReadFile(dir_ + "/netflow.log");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "lens-netflow did not serve /healthz\n"
           << test::ReadFile(dir_ + "/netflow.log");
  }

  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      auto status = test::WaitExit(pid_, std::chrono::seconds(10));
      if (!status) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        ADD_FAILURE() << "lens-netflow ignored SIGTERM";
      } else {
        EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
            << test::Describe(*status);
      }
    }
  }

  httplib::Headers Auth() const {
    return {{"Authorization", std::string("Bearer ") + kToken}};
  }

  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(NetflowDaemonTest, ServesFlowMetricsBehindTheToken) {
  test::LoopbackTraffic traffic("ipv4");
  ASSERT_TRUE(traffic.ok());
  ASSERT_TRUE(traffic.Run(10, 50'000, 1'000)) << traffic.error();
  // Our connections are egress (connect) and ingress (accept) to localhost;
  // other loopback traffic on this machine can only add to the counters.
  const std::string egress =
      "{class=\"localhost\",direction=\"egress\",workload=\"host\"}";
  const std::string ingress =
      "{class=\"localhost\",direction=\"ingress\",workload=\"host\"}";
  std::string text;
  for (int i = 0; i < 50; ++i) {
    auto r = client_->Get("/metrics", Auth());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
    text = r->body;
    if (Sample(text, "lens_tcp_flow_bytes_sent_total" + egress) >= 500'000 &&
        Sample(text, "lens_tcp_flow_connections_total" + ingress) >= 10) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_GE(Sample(text, "lens_tcp_flow_bytes_sent_total" + egress), 500'000)
      << text;
  EXPECT_GE(Sample(text, "lens_tcp_flow_bytes_received_total" + ingress),
            500'000);
  EXPECT_GE(Sample(text, "lens_tcp_flow_connections_total" + egress), 10);
  EXPECT_GE(Sample(text, "lens_tcp_flow_connections_total" + ingress), 10);
  EXPECT_NE(
      text.find("lens_tcp_flow_rtt_microseconds_count{class=\"localhost\""),
      std::string::npos);
  EXPECT_GT(Sample(text,
                   "lens_netflow_bpf_program_runs_total{program=\"sock/"
                   "sock_send_length\"}"),
            0);
  EXPECT_EQ(Sample(text, "lens_netflow_ringbuf_dropped_total"), 0);
  EXPECT_EQ(Sample(text, "lens_netflow_flow_map_capacity"), 65536);

  auto denied = client_->Get("/metrics");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 401);
  auto wrong = client_->Get("/flows", {{"Authorization", "Bearer nope"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
}

TEST_F(NetflowDaemonTest, FlowsRouteReturnsTheLastDrainInTheEnvelope) {
  auto r = client_->Get("/flows", Auth());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  rapidjson::Document doc;
  doc.Parse(r->body.c_str());
  ASSERT_FALSE(doc.HasParseError()) << r->body;
  EXPECT_EQ(doc["code"].GetInt(), 0);
  ASSERT_TRUE(doc["data"]["flows"].IsArray()) << r->body;
  auto bad = client_->Get("/flows?limit=0", Auth());
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("limit"), std::string::npos);
  test::LoopbackTraffic traffic("ipv4");
  ASSERT_TRUE(traffic.Run(5, 1000, 1000));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // 2 drains
  auto one = client_->Get("/flows?limit=1", Auth());
  ASSERT_TRUE(one);
  ASSERT_EQ(one->status, 200);
  rapidjson::Document d1;
  d1.Parse(one->body.c_str());
  ASSERT_FALSE(d1.HasParseError());
  EXPECT_LE(d1["data"]["flows"].Size(), 1u);
}

}  // namespace
}  // namespace lens
