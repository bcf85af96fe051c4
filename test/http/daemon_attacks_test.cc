// The HTTP attack suite (test/support/http_attacks.h) against each daemon as
// its own process, with a bearer token, as a hostile client on the network
// would meet it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "command.h"
#include "ebpf_env.h"
#include "http_attacks.h"
#include "loopback_traffic.h"

namespace lens {
namespace {

constexpr char kToken[] = "attack-suite-token";

class DaemonAttacksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        ::testing::TempDir() + "/daemon-attacks-" + std::to_string(::getpid());
    ASSERT_EQ(std::system(("mkdir -p " + dir_).c_str()), 0);
    ASSERT_TRUE(
        test::WriteFile(dir_ + "/token", std::string(kToken) + "\n").ok());
    port_ = test::FreeLoopbackPort();
  }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      auto status = test::WaitExit(pid_, std::chrono::seconds(10));
      if (!status) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        ADD_FAILURE() << "the daemon ignored SIGTERM";
      }
    }
    std::system(("rm -rf " + dir_).c_str());
  }

  std::string listen() const { return "127.0.0.1:" + std::to_string(port_); }

  // Starts `argv` (logging to dir_/daemon.log) and waits for /healthz.
  void Run(std::vector<std::string> argv) {
    pid_ = test::Spawn(argv, dir_ + "/daemon.log");
    test::HttpTarget health;
    health.port = port_;
    health.metrics_path = "/healthz";
    health.tls = tls_;
    for (int i = 0; i < 200; ++i) {
      if (test::ScrapeOnce(health).status == 200) return;
      int status;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        FAIL() << argv[0] << " exited: " << test::Describe(status) << "\n"
               << test::ReadFile(dir_ + "/daemon.log");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << argv[0] << " did not serve /healthz\n"
           << test::ReadFile(dir_ + "/daemon.log");
  }

  // A self-signed certificate for 127.0.0.1 in dir_ (cert.pem, key.pem).
  void MakeCertificate() {
    const std::string cmd =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
        "-nodes -days 1 -subj /CN=127.0.0.1 -keyout " +
        dir_ + "/key.pem -out " + dir_ + "/cert.pem >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << "openssl CLI (a test dependency)";
  }

  void Attack(bool tls = false) {
    test::HttpTarget target;
    target.tls = tls;
    target.port = port_;
    target.token = kToken;
    target.pid = pid_;
    for (const auto& r : test::RunHttpAttacks(target)) {
      std::printf("  %s: %s\n", r.name.c_str(), r.detail.c_str());
      EXPECT_TRUE(r.ok) << r.name << ": " << r.detail;
    }
    int status;
    EXPECT_EQ(::waitpid(pid_, &status, WNOHANG), 0)
        << "the daemon died: " << test::ReadFile(dir_ + "/daemon.log");
  }

  std::string dir_;
  bool tls_ = false;
  int port_ = 0;
  pid_t pid_ = -1;
};

TEST_F(DaemonAttacksTest, LensNodeAgent) {
  const std::string host =
      std::string(LENS_FIXTURES_DIR) + "/hosts/mi300x-8x-mlx5";
  Run({LENS_NODE_AGENT_BIN, "--sysfs-root", host + "/sys", "--procfs-root",
       host + "/proc", "--dev-root", host + "/dev", "--listen", listen(),
       "--interval", "1", "--no-nvml", "--bearer-token-file", dir_ + "/token"});
  Attack();
}

// Over TLS the suite adds half-open handshakes (and idle connections).
TEST_F(DaemonAttacksTest, LensNodeAgentOverTls) {
  MakeCertificate();
  tls_ = true;
  const std::string host =
      std::string(LENS_FIXTURES_DIR) + "/hosts/mi300x-8x-mlx5";
  Run({LENS_NODE_AGENT_BIN, "--sysfs-root", host + "/sys", "--procfs-root",
       host + "/proc", "--dev-root", host + "/dev", "--listen", listen(),
       "--interval", "1", "--no-nvml", "--bearer-token-file", dir_ + "/token",
       "--tls-cert", dir_ + "/cert.pem", "--tls-key", dir_ + "/key.pem"});
  Attack(/*tls=*/true);
}

TEST_F(DaemonAttacksTest, LensNetflow) {
  if (std::string why = test::EbpfSkipReason(); !why.empty())
    GTEST_SKIP() << why;
  ASSERT_TRUE(test::WriteFile(dir_ + "/policy.yaml",
                              "k8sSvc: [10.96.0.0/12]\nresolvConf: \"\"\n")
                  .ok());
  Run({LENS_NETFLOW_BIN, "--listen", listen(), "--interval", "1", "--policy",
       dir_ + "/policy.yaml", "--no-containers", "--bearer-token-file",
       dir_ + "/token"});
  Attack();
}

TEST_F(DaemonAttacksTest, LensJobs) {
  Run({LENS_JOBS_BIN, "--listen-grpc", "127.0.0.1:0", "--listen-http", listen(),
       "--database", "sqlite://" + dir_ + "/lens.db", "--bearer-token-file",
       dir_ + "/token"});
  Attack();
}

#ifdef LENS_API_BIN
// The API serves the dashboard's page without a token and everything else
// with it: the suite's /metrics is behind the token, like the others'.
TEST_F(DaemonAttacksTest, LensApiOverTls) {
  MakeCertificate();
  tls_ = true;
  Run({LENS_API_BIN, "--listen", listen(), "--database",
       "sqlite://" + dir_ + "/lens.db", "--bearer-token-file", dir_ + "/token",
       "--tls-cert", dir_ + "/cert.pem", "--tls-key", dir_ + "/key.pem"});
  Attack(/*tls=*/true);
}
#endif

}  // namespace
}  // namespace lens
