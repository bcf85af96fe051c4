// End to end: lens-node-agent serving a fixture host, scraped by a real
// Prometheus (Debian's package), which must ingest the series with the right
// types.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "command.h"
#include "loopback_traffic.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

using lens::test::FreeLoopbackPort;

// A child process, terminated and reaped on destruction.
class Child {
 public:
  Child(std::vector<std::string> argv, const std::string& log) {
    pid_ = lens::test::Spawn(argv, log);
  }
  ~Child() { Terminate(); }
  // SIGTERM, wait up to 10 s, then SIGKILL. Returns the exit status.
  int Terminate() {
    if (pid_ <= 0) return status_;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 1000; ++i) {
      if (::waitpid(pid_, &status_, WNOHANG) == pid_) {
        pid_ = 0;
        return status_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
    pid_ = 0;
    return status_;
  }
  bool Running() { return pid_ > 0 && ::waitpid(pid_, &status_, WNOHANG) == 0; }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

rapidjson::Document Api(httplib::Client& c, const std::string& path) {
  rapidjson::Document doc;
  auto res = c.Get(path);
  if (!res || res->status != 200) return doc;
  doc.Parse(res->body.c_str());
  return doc;
}

TEST(PrometheusE2ETest, ScrapesTheAgentAndKeepsCounterAndGaugeTypes) {
  const std::string prometheus = "/usr/bin/prometheus";
  if (!fs::exists(prometheus))
    GTEST_SKIP() << "prometheus not installed (scripts/install-deps.sh)";
  const fs::path dir =
      fs::temp_directory_path() / ("lens-prom-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string host =
      std::string(LENS_FIXTURES_DIR) + "/hosts/mi300x-8x-mlx5";
  const int agent_port = FreeLoopbackPort();
  Child agent({LENS_NODE_AGENT_BIN, "--sysfs-root", host + "/sys",
               "--procfs-root", host + "/proc", "--dev-root", host + "/dev",
               "--listen", "127.0.0.1:" + std::to_string(agent_port),
               "--interval", "1", "--no-nvml", "--compat-names"},
              (dir / "agent.log").string());
  httplib::Client agent_client("127.0.0.1", agent_port);
  bool up = false;
  for (auto end = Clock::now() + std::chrono::seconds(10);
       Clock::now() < end && !up;) {
    auto res = agent_client.Get("/healthz");
    up = res && res->status == 200 && res->body == "ok\n";
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(up) << Slurp((dir / "agent.log").string());

  const int prom_port = FreeLoopbackPort();
  std::ofstream(dir / "prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
      << "scrape_configs:\n  - job_name: lens\n    static_configs:\n"
      << "      - targets: ['127.0.0.1:" << agent_port << "']\n";
  Child prom({prometheus, "--config.file=" + (dir / "prometheus.yml").string(),
              "--storage.tsdb.path=" + (dir / "data").string(),
              "--web.listen-address=127.0.0.1:" + std::to_string(prom_port),
              "--log.level=warn"},
             (dir / "prometheus.log").string());
  httplib::Client pc("127.0.0.1", prom_port);
  size_t series = 0;
  for (auto end = Clock::now() + std::chrono::seconds(60);
       Clock::now() < end && series < 8;) {
    auto doc = Api(pc, "/api/v1/query?query=lens_gpu_utilization_ratio");
    if (doc.IsObject() && doc.HasMember("data"))
      series = doc["data"]["result"].Size();
    if (series < 8) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_EQ(series, 8u) << Slurp((dir / "prometheus.log").string());

  auto targets = Api(pc, "/api/v1/targets");
  ASSERT_TRUE(targets.IsObject());
  const auto& active = targets["data"]["activeTargets"];
  ASSERT_EQ(active.Size(), 1u);
  EXPECT_STREQ(active[0]["health"].GetString(), "up")
      << active[0]["lastError"].GetString();

  struct Want {
    const char* metric;
    const char* type;
  };
  for (const Want& w : {Want{"lens_rdma_port_transmit_bytes_total", "counter"},
                        Want{"lens_gpu_ecc_errors_total", "counter"},
                        Want{"lens_gpu_power_watts", "gauge"},
                        Want{"lens_gpu_temperature_celsius", "gauge"},
                        Want{"rdma_stat_port_xmit_data", "counter"},
                        Want{"gpu_utilization", "gauge"}}) {
    std::string type;
    for (auto end = Clock::now() + std::chrono::seconds(10);
         Clock::now() < end && type.empty();) {
      auto meta = Api(pc, std::string("/api/v1/metadata?metric=") + w.metric);
      if (meta.IsObject() && meta["data"].HasMember(w.metric)) {
        type = meta["data"][w.metric][0]["type"].GetString();
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
      }
    }
    EXPECT_EQ(type, w.type) << w.metric;
  }
  auto rdma =
      Api(pc, "/api/v1/query?query=count(lens_rdma_port_transmit_bytes_total)");
  ASSERT_TRUE(rdma.IsObject());
  ASSERT_EQ(rdma["data"]["result"].Size(), 1u);
  EXPECT_STREQ(rdma["data"]["result"][0]["value"][1].GetString(), "8");

  const int status = agent.Terminate();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "agent exit status " << status;
  prom.Terminate();
  fs::remove_all(dir);
}

}  // namespace
