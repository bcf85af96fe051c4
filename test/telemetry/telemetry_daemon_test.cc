// lens-telemetry as its own process: killed with SIGKILL mid-stream, what it
// acknowledged still arrives at VictoriaMetrics after a restart; bad flags
// exit with 2 and say what is wrong.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <filesystem>
#include <set>
#include <thread>

#include "command.h"
#include "loopback_traffic.h"
#include "telemetry_testing.h"
#include "victoria_metrics.h"

namespace lens::telemetry {
namespace {

namespace fs = std::filesystem;
using namespace testing;  // NOLINT: the helpers of telemetry_testing.h
using std::chrono::seconds;

class TelemetryDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "telemetryd-" + std::to_string(::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    database_ = "sqlite://" + dir_ + "/lens.db";
  }
  void TearDown() override {
    Kill();
    fs::remove_all(dir_);
  }
  // lens-telemetry forwarding to `forward`, serving on port_.
  void StartDaemon(const std::string& forward) {
    port_ = test::FreeLoopbackPort();
    pid_ = test::Spawn({LENS_TELEMETRY_BIN, "--database", database_, "--listen",
                        "127.0.0.1:" + std::to_string(port_), "--forward",
                        forward, "--queue-dir", dir_ + "/queue"},
                       dir_ + "/telemetry.log", true, /*append=*/true);
    ASSERT_GT(pid_, 0);
    const auto end = std::chrono::steady_clock::now() + seconds(20);
    while (std::chrono::steady_clock::now() < end) {
      httplib::Client client("127.0.0.1", port_);
      auto res = client.Get("/healthz");
      if (res && res->status == 200) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "lens-telemetry never served /healthz: "
           << test::ReadFile(dir_ + "/telemetry.log");
  }
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  std::string dir_, database_;
  int port_ = 0;
  pid_t pid_ = -1;
};

TEST_F(TelemetryDaemonTest, AcknowledgedSamplesSurviveSigkill) {
  if (test::VictoriaMetrics::Binary().empty()) {
    GTEST_SKIP() << "victoria-metrics not installed (scripts/install-deps.sh)";
  }
  auto vm = test::VictoriaMetrics::Start();
  ASSERT_TRUE(vm.ok()) << vm.status();
  {
    auto store = Store::Open(database_);
    ASSERT_TRUE(store.ok());
    SeedCluster(**store, NowMs() - 60000);
  }
  // The target away, so what is acknowledged can only be in the queue.
  (*vm)->Stop();
  StartDaemon((*vm)->write_url());
  std::set<int> acknowledged;
  std::atomic<bool> sending{true};
  std::thread sender([&] {
    const int64_t base = NowMs() - 20000;
    for (int i = 0; sending; ++i) {
      Series s;
      s.labels = {{"__name__", "gpu_gfx_activity"},
                  {"gpu_id", "2"},
                  {"hostname", "node-a"},
                  {"request", std::to_string(i)}};
      for (int k = 0; k < 100; ++k) s.samples.push_back({double(k), base + k});
      httplib::Client client("127.0.0.1", port_);
      client.set_read_timeout(seconds(5));
      httplib::Headers headers = {{"Content-Encoding", "snappy"}};
      auto res = client.Post("/api/v1/write", headers, Encode({s}),
                             "application/x-protobuf");
      if (!res) break;  // killed
      if (res->status == 204) acknowledged.insert(i);
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  Kill();  // mid-stream
  sending = false;
  sender.join();
  ASSERT_GT(acknowledged.size(), 10u);
  ASSERT_TRUE((*vm)->StartAgain().ok()) << (*vm)->log();
  StartDaemon((*vm)->write_url());
  std::set<int> arrived;
  const auto end = std::chrono::steady_clock::now() + seconds(60);
  while (std::chrono::steady_clock::now() < end) {
    auto text = (*vm)->Export("gpu_gfx_activity");
    ASSERT_TRUE(text.ok()) << text.status();
    arrived.clear();
    for (const std::string& line : test::Lines(*text)) {
      const size_t at = line.find("\"request\":\"");
      if (at == std::string::npos) continue;
      if (line.find("\"workload_uid\":\"w-llama\"") == std::string::npos) {
        continue;
      }
      arrived.insert(std::stoi(line.substr(at + 11)));
    }
    if (std::includes(arrived.begin(), arrived.end(), acknowledged.begin(),
                      acknowledged.end())) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  std::vector<int> missing;
  std::set_difference(acknowledged.begin(), acknowledged.end(), arrived.begin(),
                      arrived.end(), std::back_inserter(missing));
  EXPECT_TRUE(missing.empty())
      << missing.size() << " of " << acknowledged.size()
      << " acknowledged requests never arrived, first " << missing.front()
      << "\n"
      << test::ReadFile(dir_ + "/telemetry.log");
}

TEST_F(TelemetryDaemonTest, BadConfigurationExitsWithTwo) {
  const std::array<std::string, 3> cases[] = {
      {"--forward", "ftp://x/api/v1/write", "forward"},
      {"--queue-max-bytes", "lots", "queueMaxBytes"},
      {"--listen", "nowhere", "listen"}};
  for (const auto& [flag, value, says] : cases) {
    auto run = test::RunCommand({LENS_TELEMETRY_BIN, "--database", database_,
                                 "--queue-dir", dir_ + "/q", flag, value},
                                seconds(20));
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(test::Describe(run->wait_status), "exit status 2")
        << value << ": " << run->err;
    EXPECT_NE(run->err.find(says), std::string::npos)
        << value << ": " << run->err;
  }
}

}  // namespace
}  // namespace lens::telemetry
