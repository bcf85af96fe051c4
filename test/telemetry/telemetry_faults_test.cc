// lens-telemetry under faults: payloads that must not be retried, the
// forward target away (backpressure, nothing lost), the process killed with
// SIGKILL mid-stream (what it acknowledged still arrives after a restart),
// bad flags (exit 2, saying what is wrong), requests without the token.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "command.h"
#include "loopback_traffic.h"
#include "telemetry_testing.h"
#include "training_rows.h"
#include "victoria_metrics.h"

namespace lens::telemetry {
namespace {

namespace fs = std::filesystem;
using namespace testing;  // NOLINT: the helpers of telemetry_testing.h
using std::chrono::seconds;

// Payloads the sender must not retry get 400 (sizes 413), and harm nothing:
// the next good request goes through.
TEST_F(TelemetryServiceTest, BadPayloadsAreRefusedAndHarmNothing) {
  StartService(Options());
  // A snappy header declaring 4 GiB (varint 0x80 0x80 0x80 0x80 0x10).
  const std::string huge_declared =
      std::string("\x80\x80\x80\x80\x10", 5) + std::string(64, 'x');
  Series many;
  many.labels.push_back({"__name__", "gpu_gfx_activity"});
  for (int i = 0; i < 1'000'000; ++i) {
    many.labels.push_back({"l" + std::to_string(1'000'000 + i), "v"});
  }
  many.samples.push_back({1, NowMs()});
  const std::string good_proto_cut = [] {
    Series s;
    s.labels = {{"__name__", "gpu_gfx_activity"}, {"gpu_id", "2"}};
    s.samples.push_back({1, NowMs()});
    RemoteWriteEncoder e;
    std::vector<WireLabel> labels;
    for (const auto& [k, v] : s.labels) labels.push_back({k, v});
    e.AddSeries(labels, s.samples);
    return e.proto().substr(0, e.proto().size() - 3);
  }();
  std::string truncated;
  {
    // A valid snappy block of a truncated WriteRequest.
    RemoteWriteEncoder e;
    e.AddExtra(good_proto_cut);
    truncated = e.Finish();
  }
  const struct {
    const char* what;
    std::string body;
    int status;
  } cases[] = {
      {"corrupt snappy", std::string("\x0a\xff\xff\xff garbage", 12), 400},
      {"truncated protobuf", truncated, 400},
      {"4 GiB declared", huge_declared, 413},
      {"a million labels", Encode({many}), 400},
      {"empty body", "", 400},
  };
  for (const auto& c : cases) {
    auto res = Post("/api/v1/write", c.body);
    ASSERT_TRUE(res) << c.what;
    EXPECT_EQ(res->status, c.status) << c.what << ": " << res->body;
    EXPECT_FALSE(res->body.empty()) << c.what;
  }
  // Remote write 2.0 is named as what it is.
  httplib::Client client("127.0.0.1", port_);
  auto v2 = client.Post("/api/v1/write", Encode({}),
                        "application/x-protobuf;proto=io.prometheus.write.v2."
                        "Request");
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->status, 415);
  Series s;
  s.labels = {{"__name__", "gpu_gfx_activity"},
              {"gpu_id", "2"},
              {"hostname", "node-a"},
              {"namespace", "ml"},
              {"pod", "llama-70b-worker-1"}};
  s.samples.push_back({42, NowMs()});
  auto res = Post("/prometheus", Encode({s}));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 204) << res->body;
  std::vector<Exported> got;
  ASSERT_TRUE(Eventually([&] {
    got = Export("gpu_gfx_activity");
    return !got.empty();
  }));
  EXPECT_EQ(got[0].labels.at("workload_uid"), "w-llama");
  // The caches show what the index holds.
  auto cache = client.Get("/pods/workload/cache");
  ASSERT_TRUE(cache);
  EXPECT_EQ(cache->status, 200);
  EXPECT_NE(cache->body.find("\"workload_name\":\"bert-ft\""),
            std::string::npos)
      << cache->body;
  auto pods = client.Get("/pods/cache?limit=10");
  ASSERT_TRUE(pods);
  EXPECT_NE(pods->body.find("\"pod\":\"llama-70b-worker-0\""),
            std::string::npos)
      << pods->body;
  EXPECT_NE(pods->body.find("\"device\":\"GPU-4aa8834f-cd01-d0fc-b817-"
                            "549e6c705ba3\""),
            std::string::npos);
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find(
                "lens_telemetry_samples_dropped_total{reason=\"bad_request\"} "
                "4"),
            std::string::npos)
      << metrics->body;
}

// The forward target away for a while: every request acknowledged
// meanwhile waits on disk and arrives once it is back; a queue that fills
// answers 503 with Retry-After rather than growing or dropping.
TEST_F(TelemetryServiceTest, TargetDownThenBackLosesNothingAndPushesBack) {
  TelemetryServiceOptions o = Options();
  o.telemetry.queue_max_bytes = 1 << 20;
  StartService(o);
  // A request no 1 MiB queue could ever hold: refused for good (413), not
  // pushed back for ever.
  Series huge;
  huge.labels = {{"__name__", "gpu_power_usage"}, {"gpu_id", "7"}};
  for (int k = 0; k < 150000; ++k) {
    huge.samples.push_back(
        {static_cast<double>((k * 2654435761u) % 1000003) / 7, k});
  }
  auto too_big = Post("/api/v1/write", Encode({huge}));
  ASSERT_TRUE(too_big);
  EXPECT_EQ(too_big->status, 413) << too_big->body;
  vm_->Stop();
  const int64_t base = NowMs() - 30000;
  int acknowledged = 0;
  bool pushed_back = false;
  std::string retry_after;
  // Requests of ~40 KB (poorly compressible values) until the queue says
  // no; each acknowledged one must arrive.
  for (int i = 0; i < 400 && !pushed_back; ++i) {
    Series s;
    s.labels = {{"__name__", "gpu_power_usage"},
                {"gpu_id", "2"},
                {"hostname", "node-a"},
                {"request", std::to_string(i)}};
    for (int k = 0; k < 3000; ++k) {
      s.samples.push_back(
          {static_cast<double>((i * 7919 + k * 104729) % 1000003), base + k});
    }
    auto res = Post("/api/v1/write", Encode({s}));
    ASSERT_TRUE(res);
    if (res->status == 204) {
      ++acknowledged;
    } else {
      ASSERT_EQ(res->status, 503) << res->body;
      retry_after = res->get_header_value("Retry-After");
      pushed_back = true;
    }
  }
  ASSERT_TRUE(pushed_back) << "the 1 MiB queue never filled";
  EXPECT_FALSE(retry_after.empty());
  ASSERT_GT(acknowledged, 3);
  ASSERT_TRUE(vm_->StartAgain().ok()) << vm_->log();
  std::vector<Exported> got;
  ASSERT_TRUE(Eventually(
      [&] {
        got = Export("gpu_power_usage");
        return static_cast<int>(got.size()) == acknowledged;
      },
      std::chrono::seconds(60)))
      << got.size() << " of " << acknowledged << " series arrived";
  for (const Exported& e : got) {
    EXPECT_EQ(e.points.size(), 3000u) << e.labels.at("request");
    EXPECT_EQ(e.labels.at("workload_name"), "llama-70b");
  }
  // Drained: requests are taken again.
  Series s;
  s.labels = {{"__name__", "gpu_power_usage"}, {"gpu_id", "9"}};
  s.samples.push_back({1, NowMs()});
  auto res = Post("/api/v1/write", Encode({s}));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 204);
}

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

// The bearer token guards every route but the probes.
TEST_F(TelemetryDaemonTest, BearerTokenGuardsEveryRouteButTheProbes) {
  const std::string token = dir_ + "/token";
  ASSERT_TRUE(test::WriteFile(token, "s3cret\n").ok());
  port_ = test::FreeLoopbackPort();
  pid_ = test::Spawn({LENS_TELEMETRY_BIN, "--database", database_, "--listen",
                      "127.0.0.1:" + std::to_string(port_), "--queue-dir",
                      dir_ + "/queue", "--bearer-token-file", token},
                     dir_ + "/telemetry.log");
  ASSERT_GT(pid_, 0);
  httplib::Client client("127.0.0.1", port_);
  bool up = false;
  for (int i = 0; i < 200 && !up; ++i) {
    auto health = client.Get("/healthz");
    up = health && health->status == 200;
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(up) << test::ReadFile(dir_ + "/telemetry.log");
  for (const char* path : {"/metrics", "/pods/cache", "/pods/workload/cache"}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 401) << path;
  }
  auto post =
      client.Post("/api/v1/write", Encode({}), "application/x-protobuf");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 401);
  client.set_bearer_token_auth("s3cret");
  post = client.Post("/api/v1/write", Encode({}), "application/x-protobuf");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 204) << post->body;
  auto logs = client.Post("/v1/logs", "[]", "application/json");
  ASSERT_TRUE(logs);
  EXPECT_EQ(logs->status, 204) << logs->body;
}

#ifdef LENS_CLI_BIN
// `lens up --logs FILE`: a many-run training log (a restart) written while
// lens up runs (a line cut between two writes) ends up in the store as the
// rows `lens parse-log --store --workload FILE FILE` gives; Ctrl-C stops
// it cleanly.
TEST_F(TelemetryDaemonTest, LensUpFollowsATrainingLogIntoTheStore) {
  const std::string text = ReadFixture("training/primus_rocm.log");
  ASSERT_GT(text.size(), 10000u);
  const std::string log = fs::absolute(dir_ + "/train.log").string();
  const size_t first = text.size() * 2 / 5;
  ASSERT_TRUE(test::WriteFile(log, text.substr(0, first)).ok());
  port_ = test::FreeLoopbackPort();
  pid_ = test::Spawn(
      {LENS_CLI_BIN, "up", "--database", database_, "--listen", "127.0.0.1:0",
       "--flows-listen", "127.0.0.1:0", "--jobs-listen", "127.0.0.1:0",
       "--api-listen", "127.0.0.1:0", "--telemetry-listen",
       "127.0.0.1:" + std::to_string(port_), "--logs", log},
      dir_ + "/up.log");
  ASSERT_GT(pid_, 0);
  httplib::Client client("127.0.0.1", port_);
  bool up = false;
  for (int i = 0; i < 400 && !up; ++i) {
    auto health = client.Get("/healthz");
    up = health && health->status == 200;
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(up) << test::ReadFile(dir_ + "/up.log");
  // The rest in three writes, one ending in the middle of a line.
  for (size_t at = first; at < text.size();) {
    const size_t n = std::min(text.size() - at, (text.size() - first) / 3 + 7);
    std::ofstream(log, std::ios::app) << text.substr(at, n);
    at += n;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  TempStore reference("lens-up");
  StoreLikeParseLog(*reference.get(), log, log, text);
  const std::string want = TrainingRows(*reference.get(), log);
  ASSERT_NE(want.find("\nrun 2 "), std::string::npos)
      << "the fixture is a resumed log: more than one run\n"
      << want;
  std::string got;
  const auto end = std::chrono::steady_clock::now() + seconds(20);
  while (std::chrono::steady_clock::now() < end && got != want) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    auto store = Store::Open(database_);
    ASSERT_TRUE(store.ok()) << store.status();
    got = TrainingRows(**store, log);
  }
  EXPECT_EQ(got, want);
  EXPECT_NE(test::ReadFile(dir_ + "/up.log").find("following training log"),
            std::string::npos);
  ::kill(pid_, SIGINT);
  auto status = test::WaitExit(pid_, seconds(30));
  ASSERT_TRUE(status.has_value()) << "lens up did not stop on SIGINT";
  pid_ = -1;
  EXPECT_EQ(test::Describe(*status), "exit status 0")
      << test::ReadFile(dir_ + "/up.log");
}
#endif

}  // namespace
}  // namespace lens::telemetry
