// The HTTP attack suite (test/support/http_attacks.h) against every daemon
// as its own process, with a bearer token, as a hostile client on the
// network would meet it: lens-node-agent, lens-netflow, lens-jobs,
// lens-controller, lens-telemetry, lens-api, lens-tuner, lens-multicluster
// and `lens up`. Each daemon binds port 0 and says in its log what it got.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "command.h"
#include "ebpf_env.h"
#include "http_attacks.h"
#include "kube_api_server.h"

namespace lens {
namespace {

constexpr char kToken[] = "attack-suite-token";

// Daemons built with a sanitizer do several times the work per request, on
// a machine that runs another test beside each (ctest -j): the scrape budget
// of the suite (1 s) is scaled by as much. Release daemons meet 1 s.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr int kSlowdown = 3;
#else
constexpr int kSlowdown = 1;
#endif
#else
constexpr int kSlowdown = 1;
#endif
using test::KubeApiServer;

class DaemonAttacksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/daemon-attacks-" +
           std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_EQ(std::system(("mkdir -p " + dir_).c_str()), 0);
    ASSERT_TRUE(
        test::WriteFile(dir_ + "/token", std::string(kToken) + "\n").ok());
  }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      auto status = test::WaitExit(pid_, std::chrono::seconds(20));
      if (!status) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        ADD_FAILURE() << "the daemon ignored SIGTERM";
      }
    }
    std::system(("rm -rf " + dir_).c_str());
  }

  std::string log() const { return dir_ + "/daemon.log"; }

  // Starts `argv` (logging to log()), reads the address it serves on from
  // the log ("<key>http..."), and waits for its /healthz.
  void Run(std::vector<std::string> argv, std::string_view key = "http=") {
    pid_ = test::Spawn(argv, log());
    auto url = test::WaitForLoggedUrl(log(), pid_, key);
    if (!url.ok()) {
      if (url.status().code() == StatusCode::kUnavailable) pid_ = -1;
      FAIL() << argv[0] << ": " << url.status();
    }
    url_ = *url;
    const size_t colon = url_.rfind(':');
    port_ = std::atoi(url_.c_str() + colon + 1);
    ASSERT_GT(port_, 0) << url_;
    test::HttpTarget health;
    health.port = port_;
    health.metrics_path = "/healthz";
    health.tls = tls_;
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < until) {
      if (test::ScrapeOnce(health).status == 200) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL() << argv[0] << " did not serve /healthz on " << url_ << "\n"
           << test::ReadFile(log());
  }

  // A self-signed certificate for 127.0.0.1 in dir_ (cert.pem, key.pem).
  void MakeCertificate() {
    const std::string cmd =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
        "-nodes -days 1 -subj /CN=127.0.0.1 -keyout " +
        dir_ + "/key.pem -out " + dir_ + "/cert.pem >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << "openssl CLI (a test dependency)";
  }

  // A kubeconfig for `server` in dir_.
  std::string Kubeconfig(const KubeApiServer& server) {
    const std::string path = dir_ + "/kubeconfig";
    EXPECT_TRUE(test::WriteFile(
                    path,
                    "apiVersion: v1\nkind: Config\nclusters:\n- name: t\n"
                    "  cluster:\n    server: " +
                        server.url() + "\n    certificate-authority: " +
                        KubeApiServer::CaFile() +
                        "\nusers:\n- name: u\n  user:\n    token: kube-token\n"
                        "contexts:\n- name: t\n  context:\n    cluster: t\n"
                        "    user: u\ncurrent-context: t\n")
                    .ok());
    return path;
  }

  void Attack(test::HttpTarget target = {}) {
    if (HasFatalFailure()) return;  // the daemon did not start
    target.scrape_budget *= kSlowdown;
    target.tls = tls_;
    target.port = port_;
    target.token = kToken;
    target.pid = pid_;
    for (const auto& r : test::RunHttpAttacks(target)) {
      std::printf("  %s: %s\n", r.name.c_str(), r.detail.c_str());
      EXPECT_TRUE(r.ok) << r.name << ": " << r.detail;
    }
    int status;
    EXPECT_EQ(::waitpid(pid_, &status, WNOHANG), 0)
        << "the daemon died: " << test::ReadFile(log());
  }

  std::string dir_;
  bool tls_ = false;
  std::string url_;
  int port_ = 0;
  pid_t pid_ = -1;
};

std::string Db(const std::string& dir) {
  return "sqlite://" + dir + "/lens.db";
}

TEST_F(DaemonAttacksTest, LensNodeAgent) {
  const std::string host =
      std::string(LENS_FIXTURES_DIR) + "/hosts/mi300x-8x-mlx5";
  Run({LENS_NODE_AGENT_BIN, "--sysfs-root", host + "/sys", "--procfs-root",
       host + "/proc", "--dev-root", host + "/dev", "--listen", "127.0.0.1:0",
       "--interval", "1", "--no-nvml", "--bearer-token-file", dir_ + "/token"},
      "url=");
  Attack();
}

// Over TLS the suite adds half-open handshakes (and idle connections).
TEST_F(DaemonAttacksTest, LensNodeAgentOverTls) {
  MakeCertificate();
  tls_ = true;
  const std::string host =
      std::string(LENS_FIXTURES_DIR) + "/hosts/mi300x-8x-mlx5";
  Run({LENS_NODE_AGENT_BIN, "--sysfs-root", host + "/sys", "--procfs-root",
       host + "/proc", "--dev-root", host + "/dev", "--listen", "127.0.0.1:0",
       "--interval", "1", "--no-nvml", "--bearer-token-file", dir_ + "/token",
       "--tls-cert", dir_ + "/cert.pem", "--tls-key", dir_ + "/key.pem"},
      "url=");
  Attack();
}

TEST_F(DaemonAttacksTest, LensNetflow) {
  if (std::string why = test::EbpfSkipReason(); !why.empty())
    GTEST_SKIP() << why;
  ASSERT_TRUE(test::WriteFile(dir_ + "/policy.yaml",
                              "k8sSvc: [10.96.0.0/12]\nresolvConf: \"\"\n")
                  .ok());
  Run({LENS_NETFLOW_BIN, "--listen", "127.0.0.1:0", "--interval", "1",
       "--policy", dir_ + "/policy.yaml", "--no-containers",
       "--bearer-token-file", dir_ + "/token"});
  Attack();
}

TEST_F(DaemonAttacksTest, LensJobs) {
  Run({LENS_JOBS_BIN, "--listen-grpc", "127.0.0.1:0", "--listen-http",
       "127.0.0.1:0", "--database", Db(dir_), "--bearer-token-file",
       dir_ + "/token"});
  test::HttpTarget t;
  t.slow_path = "/jobs";
  Attack(t);
}

#ifdef LENS_CONTROLLER_BIN
TEST_F(DaemonAttacksTest, LensController) {
  KubeApiServer kube({.token = "kube-token", .tls = true});
  ASSERT_TRUE(kube.ok()) << kube.error();
  Run({LENS_CONTROLLER_BIN, "--kubeconfig", Kubeconfig(kube), "--database",
       Db(dir_), "--listen", "127.0.0.1:0", "--bearer-token-file",
       dir_ + "/token", "--identity", "attacked"});
  Attack();
}
#endif

#ifdef LENS_TELEMETRY_BIN
TEST_F(DaemonAttacksTest, LensTelemetry) {
  Run({LENS_TELEMETRY_BIN, "--database", Db(dir_), "--listen", "127.0.0.1:0",
       "--queue-dir", dir_ + "/queue", "--sample-history",
       "--bearer-token-file", dir_ + "/token"});
  test::HttpTarget t;
  t.max_body_bytes = size_t{8} << 20;  // telemetry.maxRequestBytes
  t.slow_path = "/pods/cache";
  Attack(t);
}
#endif

#ifdef LENS_API_BIN
// The API serves the dashboard's page without a token and everything else
// with it: the suite's /metrics is behind the token, like the others'.
TEST_F(DaemonAttacksTest, LensApi) {
  Run({LENS_API_BIN, "--listen", "127.0.0.1:0", "--database", Db(dir_),
       "--bearer-token-file", dir_ + "/token"});
  test::HttpTarget t;
  t.large_paths = {"/api/v1/openapi.json", "/static/app.js", "/", "/metrics"};
  t.slow_path = "/api/v1/workloads";
  Attack(t);
}

TEST_F(DaemonAttacksTest, LensApiOverTls) {
  MakeCertificate();
  tls_ = true;
  Run({LENS_API_BIN, "--listen", "127.0.0.1:0", "--database", Db(dir_),
       "--bearer-token-file", dir_ + "/token", "--tls-cert", dir_ + "/cert.pem",
       "--tls-key", dir_ + "/key.pem"});
  Attack();
}
#endif

#ifdef LENS_TUNER_BIN
TEST_F(DaemonAttacksTest, LensTuner) {
  ASSERT_EQ(std::system(("mkdir -p " + dir_ + "/proc/sys/vm " + dir_ +
                         "/etc/sysctl.d " + dir_ + "/etc/security/limits.d")
                            .c_str()),
            0);
  ASSERT_TRUE(
      test::WriteFile(dir_ + "/proc/sys/vm/max_map_count", "65530\n").ok());
  Run({LENS_TUNER_BIN, "--listen", "127.0.0.1:0", "--proc-root", dir_ + "/proc",
       "--etc-root", dir_ + "/etc", "--sysctls", "vm.max_map_count=262144",
       "--interval", "1", "--bearer-token-file", dir_ + "/token"});
  Attack();
}
#endif

#ifdef LENS_MULTICLUSTER_BIN
TEST_F(DaemonAttacksTest, LensMulticluster) {
  KubeApiServer kube({.token = "kube-token", .tls = true});
  ASSERT_TRUE(kube.ok()) << kube.error();
  Run({LENS_MULTICLUSTER_BIN, "--kubeconfig", Kubeconfig(kube), "--listen",
       "127.0.0.1:0", "--refresh", "1", "--identity", "attacked",
       "--bearer-token-file", dir_ + "/token"});
  Attack();
}
#endif

#ifdef LENS_CLI_BIN
std::vector<std::string> LensUp(const std::string& dir) {
  return {LENS_CLI_BIN,
          "up",
          "--database",
          Db(dir),
          "--listen",
          "127.0.0.1:0",
          "--flows-listen",
          "127.0.0.1:0",
          "--jobs-listen",
          "127.0.0.1:0",
          "--telemetry-listen",
          "127.0.0.1:0",
          "--controller-listen",
          "127.0.0.1:0",
          "--api-listen",
          "127.0.0.1:0",
          "--bearer-token-file",
          dir + "/token"};
}

// The whole of Lens in one process, attacked through its API port.
TEST_F(DaemonAttacksTest, LensUp) {
  Run(LensUp(dir_), "dashboard at ");
  test::HttpTarget t;
  t.large_paths = {"/api/v1/openapi.json", "/static/app.js", "/metrics"};
  t.slow_path = "/api/v1/workloads";
  Attack(t);
}

// One --bearer-token-file guards every surface `lens up` serves but
// /healthz: the API and its /metrics, lens-jobs' /jobs, telemetry's remote
// write, logs and pod caches, the node agent and the flows.
TEST_F(DaemonAttacksTest, LensUpOneTokenGuardsEverySurface) {
  Run(LensUp(dir_), "dashboard at ");
  const std::string out = test::ReadFile(log());
  std::set<std::string> bases;
  const std::regex url(R"((https?://127\.0\.0\.1:[0-9]+))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), url);
       it != std::sregex_iterator(); ++it) {
    bases.insert((*it)[1]);
  }
  ASSERT_GE(bases.size(), 4u) << out;
  const std::vector<std::pair<std::string, std::string>> routes = {
      {"GET", "/metrics"},  {"GET", "/api/v1/nodes"},
      {"GET", "/jobs"},     {"POST", "/api/v1/write"},
      {"POST", "/v1/logs"}, {"GET", "/pods/cache"},
      {"GET", "/gpus"},     {"GET", "/flows"}};
  for (const std::string& base : bases) {
    test::HttpTarget t;
    t.port = std::atoi(base.c_str() + base.rfind(':') + 1);
    for (const auto& [method, path] : routes) {
      const int fd = test::ConnectTo(t);
      ASSERT_GE(fd, 0);
      const std::string request =
          method + " " + path +
          " HTTP/1.1\r\nHost: lens\r\n"
          "Content-Length: 0\r\nConnection: close\r\n\r\n";
      (void)!::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
      const int status =
          test::StatusOf(test::ReadAnswer(fd, std::chrono::seconds(2)));
      ::close(fd);
      // 401 where the route is served; 404/405 is what a port without it
      // says, after the same check.
      EXPECT_EQ(status, 401) << base << " " << method << " " << path;
    }
    t.metrics_path = "/healthz";
    EXPECT_EQ(test::ScrapeOnce(t).status, 200) << base;
  }
}
#endif

}  // namespace
}  // namespace lens
