// lens-tuner as a service and as its own process, on a copy of the fixture
// /proc and /etc: drift is re-applied, logged and counted in /metrics; the
// token guards /metrics; --dry-run writes nothing; --once applies and a
// second --once has nothing to do; bad configuration exits 2 naming the
// key; SIGTERM stops it.
#include "service/tuner_service.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "command.h"
#include "lens/log.h"
#include "loopback_traffic.h"

namespace lens {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

class TunerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("tuner-service-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::copy(fs::path(LENS_FIXTURES_DIR) / "tuner/root", root_,
             fs::copy_options::recursive);
    options_.spec.proc_root = (root_ / "proc").string();
    options_.spec.etc_root = (root_ / "etc").string();
    options_.spec.sysctls = {{"vm.max_map_count", "262144"}};
    options_.spec.limits = {{.item = "nofile", .value = "131072"}};
    options_.interval = seconds(1);
    options_.http.listen = "127.0.0.1:0";
  }
  void TearDown() override {
    ConfigureLogging({});
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      test::WaitExit(pid_, seconds(10));
    }
    fs::remove_all(root_);
  }

  std::string Sysctl() const {
    return test::ReadFile((root_ / "proc/sys/vm/max_map_count").string());
  }
  void SetSysctl(const std::string& value) const {
    std::ofstream(root_ / "proc/sys/vm/max_map_count", std::ios::trunc)
        << value;
  }
  static std::string Metrics(const std::string& url,
                             const std::string& token = "") {
    httplib::Client client(url);
    if (!token.empty()) client.set_bearer_token_auth(token);
    auto res = client.Get("/metrics");
    return res ? std::to_string(res->status) + "\n" + res->body : "no answer";
  }

  fs::path root_;
  TunerServiceOptions options_;
  pid_t pid_ = -1;
};

TEST_F(TunerServiceTest, DriftIsReappliedLoggedAndCounted) {
  std::mutex mu;
  std::vector<std::string> lines;
  ConfigureLogging({LogLevel::kInfo,
                    LogFormat::kText,
                    [&](std::string_view line) {
                      std::lock_guard lock(mu);
                      lines.emplace_back(line);
                    },
                    {}});
  auto service = TunerService::Start(options_);
  ASSERT_TRUE(service.ok()) << service.status();
  EXPECT_EQ(Sysctl(), "262144\n");  // the first check ran before serving
  const std::string url = (*service)->http_url();
  std::string m = Metrics(url);
  EXPECT_NE(m.find("lens_tuner_setting_in_sync{kind=\"sysctl\",key=\"vm.max_"
                   "map_count\"} 1\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("lens_tuner_drift_total{kind=\"sysctl\",key=\"vm.max_map_"
                   "count\"} 0\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("lens_tuner_applied_total 4\n"), std::string::npos) << m;
  EXPECT_NE(m.find("lens_tuner_info{proc_root=\"" + options_.spec.proc_root),
            std::string::npos);

  // Nothing changed: a check finds nothing to do.
  TuningCheck quiet = (*service)->CheckNow();
  EXPECT_EQ(quiet.drifted, 0u);
  EXPECT_EQ(quiet.applied, 0u);

  SetSysctl("65530\n");
  TuningCheck check = (*service)->CheckNow();
  EXPECT_EQ(check.drifted, 1u);
  EXPECT_EQ(check.applied, 1u);
  EXPECT_EQ(check.errors, 0u);
  EXPECT_EQ(Sysctl(), "262144\n");
  m = Metrics(url);
  EXPECT_NE(m.find("lens_tuner_drift_total{kind=\"sysctl\",key=\"vm.max_map_"
                   "count\"} 1\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("lens_tuner_applied_total 5\n"), std::string::npos) << m;
  {
    std::lock_guard lock(mu);
    bool logged = false;
    for (const std::string& line : lines) {
      logged |= line.find("tuner drift") != std::string::npos &&
                line.find("key=vm.max_map_count") != std::string::npos &&
                line.find("desired=262144") != std::string::npos &&
                line.find("found=65530") != std::string::npos;
    }
    EXPECT_TRUE(logged) << ::testing::PrintToString(lines);
  }

  // The schedule repairs on its own within an interval or two.
  SetSysctl("1\n");
  for (int i = 0; i < 100 && Sysctl() != "262144\n"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(Sysctl(), "262144\n");
  (*service)->Stop();
  (*service)->Stop();  // idempotent
  SetSysctl("7\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(Sysctl(), "7\n");  // stopped means stopped
}

TEST_F(TunerServiceTest, TokenGuardsMetricsButNotHealth) {
  options_.http.bearer_token = "s3cret";
  auto service = TunerService::Start(options_);
  ASSERT_TRUE(service.ok()) << service.status();
  const std::string url = (*service)->http_url();
  EXPECT_EQ(Metrics(url).substr(0, 4), "401\n");
  EXPECT_EQ(Metrics(url, "s3cret").substr(0, 4), "200\n");
  httplib::Client client(url);
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

#ifdef LENS_TUNER_BIN
TEST_F(TunerServiceTest, DaemonDryRunShowsChangesAndWritesNothing) {
  const std::string sysctl_file =
      (root_ / "etc/sysctl.d/90-lens.conf").string();
  auto run = test::RunCommand(
      {LENS_TUNER_BIN, "--dry-run", "--proc-root", options_.spec.proc_root,
       "--etc-root", options_.spec.etc_root, "--sysctls",
       "vm.max_map_count=262144,vm.swappiness=60", "--limits", "nofile=131072"},
      seconds(20));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(test::Describe(run->wait_status), "exit status 0") << run->err;
  EXPECT_EQ(run->out,
            "sysctl vm.max_map_count: 65530 -> 262144\n"
            "limits nofile: absent -> 131072\n"
            "file security/limits.d/90-lens.conf: absent -> 1 line\n"
            "file sysctl.d/90-lens.conf: absent -> 2 lines\n");
  EXPECT_EQ(Sysctl(), "65530\n");
  EXPECT_FALSE(fs::exists(sysctl_file));
}

TEST_F(TunerServiceTest, DaemonOnceAppliesAndASecondOnceHasNothingToDo) {
  const std::string config = (root_ / "lens.yaml").string();
  std::ofstream(config) << "tuner:\n  procRoot: " << options_.spec.proc_root
                        << "\n  etcRoot: " << options_.spec.etc_root
                        << "\n  sysctls:\n    vm.max_map_count: 262144\n"
                           "  limits:\n    - {item: nofile, value: 131072}\n";
  auto run = test::RunCommand({LENS_TUNER_BIN, "--config", config, "--once"},
                              seconds(20));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(test::Describe(run->wait_status), "exit status 0") << run->err;
  EXPECT_NE(run->out.find("sysctl vm.max_map_count: 65530 -> 262144\n"),
            std::string::npos)
      << run->out;
  EXPECT_EQ(Sysctl(), "262144\n");
  EXPECT_NE(
      test::ReadFile((root_ / "etc/security/limits.d/90-lens.conf").string())
          .find("*\t-\tnofile\t131072\n"),
      std::string::npos);
  auto again = test::RunCommand(
      {LENS_TUNER_BIN, "--config", config, "--dry-run"}, seconds(20));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(test::Describe(again->wait_status), "exit status 0");
  EXPECT_EQ(again->out, "no changes\n");
}

TEST_F(TunerServiceTest, DaemonRefusesBadConfigurationWithTwo) {
  const std::array<std::string, 3> cases[] = {
      {"--sysctls", "vm.max_map_cont=262144",
       "tuner.sysctls: unknown key \"vm.max_map_cont\" (did you mean "
       "vm.max_map_count?)"},
      {"--sysctls", "vm.swappiness=300", "vm.swappiness: must be in 0..200"},
      {"--limits", "nofile=unlimited", "nofile: cannot be unlimited"}};
  for (const auto& [flag, value, says] : cases) {
    auto run = test::RunCommand({LENS_TUNER_BIN, "--dry-run", "--proc-root",
                                 options_.spec.proc_root, flag, value},
                                seconds(20));
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(test::Describe(run->wait_status), "exit status 2")
        << value << ": " << run->err;
    EXPECT_NE(run->err.find(says), std::string::npos)
        << value << ": " << run->err;
    EXPECT_EQ(run->out, "");
  }
}

TEST_F(TunerServiceTest, DaemonServesAndStopsOnSigterm) {
  const std::string log = (root_ / "tuner.log").string();
  pid_ = test::Spawn(
      {LENS_TUNER_BIN, "--listen", "127.0.0.1:0", "--proc-root",
       options_.spec.proc_root, "--etc-root", options_.spec.etc_root,
       "--sysctls", "vm.max_map_count=262144", "--interval", "1"},
      log);
  ASSERT_GT(pid_, 0);
  auto bound = test::WaitForLoggedPort(log, pid_, "http=");
  ASSERT_TRUE(bound.ok()) << bound.status();
  const int port = *bound;
  httplib::Client client("127.0.0.1", port);
  bool healthy = false;
  for (int i = 0; i < 200 && !healthy; ++i) {
    auto res = client.Get("/healthz");
    healthy = res && res->status == 200;
    if (!healthy) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(healthy) << test::ReadFile(log);
  EXPECT_EQ(Sysctl(), "262144\n");
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("lens_tuner_setting_in_sync{kind=\"sysctl\","
                               "key=\"vm.max_map_count\"} 1"),
            std::string::npos)
      << metrics->body;
  ::kill(pid_, SIGTERM);
  auto status = test::WaitExit(pid_, seconds(20));
  ASSERT_TRUE(status.has_value()) << "lens-tuner did not stop on SIGTERM";
  pid_ = -1;
  EXPECT_EQ(test::Describe(*status), "exit status 0") << test::ReadFile(log);
}
#endif

}  // namespace
}  // namespace lens
