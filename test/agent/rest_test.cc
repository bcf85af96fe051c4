// The node REST API and NodeService over loopback HTTP, on fixture hosts.
#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/node_agent.h"
#include "lens/probe.h"
#include "service/node_health.h"
#include "service/node_service.h"

namespace lens {
namespace {

const std::string kHosts = std::string(LENS_FIXTURES_DIR) + "/hosts/";

Config FixtureConfig(const std::string& host) {
  Config c;
  c.node_exporter.sysfs_root = kHosts + host + "/sys";
  c.node_exporter.procfs_root = kHosts + host + "/proc";
  c.node_exporter.dev_root = kHosts + host + "/dev";
  c.node_exporter.listen_address = "127.0.0.1:0";
  c.node_exporter.nvidia_gpus = false;
  return c;
}

rapidjson::Document Data(const httplib::Result& res, int want_status = 200) {
  rapidjson::Document doc;
  EXPECT_TRUE(res);
  if (!res) return doc;
  EXPECT_EQ(res->status, want_status) << res->body;
  doc.Parse(res->body.c_str());
  EXPECT_FALSE(doc.HasParseError()) << res->body;
  EXPECT_TRUE(doc.IsObject() && doc.HasMember("code") &&
              doc.HasMember("message"));
  return doc;
}

class RestTest : public ::testing::Test {
 protected:
  void Start(const Config& config) {
    auto options = NodeServiceOptionsFromConfig(config, kNodeAgent);
    ASSERT_TRUE(options.ok()) << options.status();
    auto service = NodeService::Start(*options);
    ASSERT_TRUE(service.ok()) << service.status();
    service_ = std::move(*service);
    const std::string url = service_->url();
    port_ = std::stoi(url.substr(url.rfind(':') + 1));
    // The loop's first cycle runs on its own thread.
    for (int i = 0; i < 200 && service_->agent()->snapshot()->cycle == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  std::unique_ptr<NodeService> service_;
  int port_ = 0;
};

TEST_F(RestTest, GpusKeepTheOriginalShapeAndAddLensFields) {
  Start(FixtureConfig("mi300x-8x-mlx5"));
  httplib::Client c("127.0.0.1", port_);
  auto doc = Data(c.Get("/gpus"));
  ASSERT_TRUE(doc["data"].IsArray());
  ASSERT_EQ(doc["data"].Size(), 8u);
  const auto& g = doc["data"][0];
  EXPECT_EQ(g["gpu"].GetInt(), 0);
  EXPECT_TRUE(g["asic"]["market_name"].IsString());
  EXPECT_STREQ(g["asic"]["vendor_id"].GetString(), "0x1002");
  EXPECT_STREQ(g["bus"]["bdf"].GetString(), g["bdf"].GetString());
  EXPECT_EQ(std::string(g["dri_device"]["card"].GetString())
                .rfind("/dev/dri/card", 0),
            0u);
  EXPECT_STREQ(g["vendor"].GetString(), "amd");
  EXPECT_EQ(doc["code"].GetInt(), 0);
  EXPECT_STREQ(doc["message"].GetString(), "success");
}

TEST_F(RestTest, CardMetricsDriMappingRdmaNodeAndDriverVersion) {
  Start(FixtureConfig("mi300x-8x-mlx5"));
  httplib::Client c("127.0.0.1", port_);
  auto metrics = Data(c.Get("/cardMetrics"));
  ASSERT_EQ(metrics["data"].Size(), 8u);
  for (const auto& m : metrics["data"].GetArray()) {
    if (m.HasMember("gpu_use_percent")) {
      EXPECT_GE(m["gpu_use_percent"].GetDouble(), 0);
      EXPECT_LE(m["gpu_use_percent"].GetDouble(), 100);
      EXPECT_DOUBLE_EQ(m["gpu_use_percent"].GetDouble(),
                       100 * m["utilization_ratio"].GetDouble());
    }
  }
  auto dri = Data(c.Get("/driMapping"));
  ASSERT_TRUE(dri["data"].IsObject());
  EXPECT_GE(dri["data"].MemberCount(), 8u);
  for (const auto& m : dri["data"].GetObject()) {
    EXPECT_STREQ(m.name.GetString(), m.value["card"].GetString());
    EXPECT_GE(m.value["card_id"].GetInt(), 0);
  }
  auto rdma = Data(c.Get("/rdma"));
  ASSERT_EQ(rdma["data"].Size(), 8u);
  EXPECT_STREQ(rdma["data"][0]["if_name"].GetString(), "mlx5_0");
  EXPECT_EQ(rdma["data"][0]["if_index"].GetInt(), 0);
  EXPECT_TRUE(rdma["data"][0]["node_guid"].IsString());
  EXPECT_TRUE(rdma["data"][0]["ports"].IsArray());
  auto node = Data(c.Get("/node"));
  EXPECT_TRUE(node["data"]["collectors"].IsArray());
  auto version = Data(c.Get("/gpuDriverVersion"));
  ASSERT_TRUE(version["data"].IsString());
  EXPECT_GT(version["data"].GetStringLength(), 0u);
  auto health = c.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->body, "ok\n");
  auto prom = c.Get("/metrics");
  ASSERT_TRUE(prom);
  EXPECT_EQ(prom->get_header_value("Content-Type"),
            "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(prom->body.find("# TYPE lens_gpu_utilization_ratio gauge"),
            std::string::npos);
}

TEST_F(RestTest, NodeWithoutGpusAnswers404ForTheDriverVersion) {
  Start(FixtureConfig("empty"));
  httplib::Client c("127.0.0.1", port_);
  auto version = Data(c.Get("/gpuDriverVersion"), 404);
  EXPECT_EQ(version["code"].GetInt(), 404);
  auto gpus = Data(c.Get("/gpus"));
  EXPECT_EQ(gpus["data"].Size(), 0u);
}

// The lens_gpu_health samples of a /metrics body with this value.
int GpuHealthLines(const std::string& body, const std::string& value) {
  int n = 0;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    n += line.rfind("lens_gpu_health{", 0) == 0 && line.size() > value.size() &&
         line.compare(line.size() - value.size() - 1, std::string::npos,
                      " " + value) == 0;
  }
  return n;
}

// Device health from the agent's cycles: on a copy of the MI300X host every
// GPU and port starts healthy; one uncorrectable HBM error on every GPU
// more (amdgpu's "ue: %lu\nce: %lu\n" RAS file) makes the eight GPUs unhealthy
// at the next cycle, each with its cause, a transition and the metric at 2.
TEST_F(RestTest, DeviceHealthFollowsTheCyclesAndExplainsItself) {
  const std::string root =
      ::testing::TempDir() + "rest-health-" + std::to_string(::getpid());
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  std::filesystem::copy(kHosts + "mi300x-8x-mlx5/sys", root + "/sys",
                        std::filesystem::copy_options::recursive |
                            std::filesystem::copy_options::copy_symlinks);
  Config config = FixtureConfig("mi300x-8x-mlx5");
  config.node_exporter.sysfs_root = root + "/sys";
  config.node_exporter.interval = std::chrono::milliseconds(100);
  Start(config);
  httplib::Client client("127.0.0.1", port_);
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("# TYPE lens_gpu_health gauge"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("lens_gpu_health{gpu=\"0\",id="),
            std::string::npos)
      << metrics->body.substr(0, 2000);
  EXPECT_EQ(GpuHealthLines(metrics->body, "0"), 8);
  rapidjson::Document d = Data(client.Get("/health/devices"));
  ASSERT_TRUE(d["data"]["devices"].IsArray());
  EXPECT_EQ(d["data"]["devices"].Size(), 16u);  // 8 GPUs, 8 ports
  for (const auto& dev : d["data"]["devices"].GetArray()) {
    EXPECT_STREQ(dev["state"].GetString(), "healthy");
  }
  EXPECT_EQ(d["data"]["transitions"].Size(), 0u);

  int rewritten = 0;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(root + "/sys/devices")) {
    if (e.path().filename() != "umc_err_count") continue;
    // One more than the file says (one GPU already had an error before the
    // agent started: a count, not a new error, so it started healthy).
    std::ifstream in(e.path());
    std::string key;
    uint64_t ue = 0;
    in >> key >> ue;
    in.close();
    std::ofstream(e.path(), std::ios::trunc) << "ue: " << ue + 1 << "\nce: 0\n";
    ++rewritten;
  }
  ASSERT_EQ(rewritten, 8);
  int unhealthy = 0;
  for (int i = 0; i < 100 && unhealthy < 8; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    d = Data(client.Get("/health/devices"));
    unhealthy = 0;
    for (const auto& dev : d["data"]["devices"].GetArray()) {
      unhealthy += std::string(dev["state"].GetString()) == "unhealthy";
    }
  }
  ASSERT_EQ(unhealthy, 8);
  for (const auto& dev : d["data"]["devices"].GetArray()) {
    if (std::string(dev["kind"].GetString()) != "gpu") continue;
    EXPECT_STREQ(dev["cause"]["counter"].GetString(),
                 "ecc_uncorrectable_errors");
    EXPECT_EQ(dev["cause"]["amount"].GetUint64(), 1u);
    EXPECT_TRUE(dev["clearsAt"].IsNumber());
  }
  ASSERT_EQ(d["data"]["transitions"].Size(), 8u);
  EXPECT_STREQ(d["data"]["transitions"][0]["to"].GetString(), "unhealthy");
  const uint64_t last = d["data"]["transitions"][7]["sequence"].GetUint64();
  d = Data(client.Get("/health/devices?after=" + std::to_string(last)));
  EXPECT_EQ(d["data"]["transitions"].Size(), 0u);
  Data(client.Get("/health/devices?after=x"), 400);
  metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("lens_device_health_transitions_total{kind="
                               "\"gpu\",to=\"unhealthy\"} 8"),
            std::string::npos);
  EXPECT_EQ(GpuHealthLines(metrics->body, "2"), 8);
  EXPECT_EQ(GpuHealthLines(metrics->body, "0"), 0);
  service_.reset();
  std::filesystem::remove_all(root);
}

// The node's placement metric: a running container (init pid 4343, whose
// cgroup's cpuset is 96-103,288-295: NUMA node 1 of the MI300X host) holds
// GPU 0000:0c:00.0 on node 0: one cpus-off-gpu-numa-nodes flag for its pod.
TEST(PlacementMetricsTest, CountsEachPodsFlagsByIssue) {
  HostRoots roots = HostRoots::Under(kHosts + "mi300x-8x-mlx5");
  roots.procfs = std::string(LENS_FIXTURES_DIR) + "/flow/proc";
  ContainerRecord c;
  c.container_id = "c-1";
  c.pod_uid = "uid-1";
  c.pod_namespace = "ml";
  c.pod_name = "llama-0";
  c.state = ContainerState::kRunning;
  c.pid = 4343;
  c.devices = {{DeviceKind::kGpu, "SER0", "0000:0c:00.0", "pod-resources"}};
  ContainerRecord exited = c;
  exited.container_id = "c-2";
  exited.pod_name = "old-0";
  exited.pod_uid = "uid-2";
  exited.state = ContainerState::kExited;
  const ContainerRecord both[] = {c, exited};
  std::string out;
  service::RenderPlacementMetrics(roots, both, &out);
  EXPECT_NE(out.find("# TYPE lens_pod_placement_issues gauge"),
            std::string::npos);
  EXPECT_NE(out.find("lens_pod_placement_issues{issue=\"cpus-off-gpu-numa-"
                     "nodes\",namespace=\"ml\",pod=\"llama-0\"} 1\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("old-0"), std::string::npos) << "only running pods";
  // The GPU's place: NUMA node 0 under pci0000:00, no NIC.
  EXPECT_NE(out.find("lens_pod_placement_device_info{bdf=\"0000:0c:00.0\","
                     "device=\"SER0\",kind=\"gpu\",namespace=\"ml\","),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("numa_node=\"0\",pod=\"llama-0\",root_complex=\""
                     "pci0000:00\"} 1\n"),
            std::string::npos)
      << out;
}

TEST_F(RestTest, PodsWithTrackingOffSaysWhy) {
  Start(FixtureConfig("empty"));  // the agent part only: no tracker
  httplib::Client c("127.0.0.1", port_);
  auto pods = Data(c.Get("/pods"), 404);
  EXPECT_EQ(pods["code"].GetInt(), 404);
  EXPECT_NE(std::string(pods["message"].GetString())
                .find("container tracking is off"),
            std::string::npos);
}

TEST_F(RestTest, BearerTokenFileProtectsTheApiButNotHealthz) {
  const std::string token_file = (std::filesystem::temp_directory_path() /
                                  ("lens-token-" + std::to_string(::getpid())))
                                     .string();
  std::ofstream(token_file) << "tok-123\n";
  Config config = FixtureConfig("empty");
  config.node_exporter.bearer_token_file = token_file;
  Start(config);
  httplib::Client c("127.0.0.1", port_);
  auto denied = c.Get("/metrics");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 401);
  auto allowed = c.Get("/metrics", {{"Authorization", "Bearer tok-123"}});
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200);
  auto health = c.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  std::filesystem::remove(token_file);
}

TEST(NodeServiceTest, MissingTokenFileIsAnErrorNamingTheKey) {
  Config config = FixtureConfig("empty");
  config.node_exporter.bearer_token_file = "/nonexistent/token";
  auto options = NodeServiceOptionsFromConfig(config, kNodeAgent);
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find("bearerTokenFile"),
            std::string::npos);
  EXPECT_NE(options.status().message().find("/nonexistent/token"),
            std::string::npos);
}

TEST(NodeServiceTest, CadenceAndDeviceHealthKeysReachTheParts) {
  Config config = FixtureConfig("empty");
  config.node_exporter.rdma_slow_counters_interval = std::chrono::minutes(2);
  config.node_exporter.health_degraded_clear_after = std::chrono::minutes(10);
  config.node_exporter.health_unhealthy_clear_after = std::chrono::hours(2);
  auto options = NodeServiceOptionsFromConfig(config, kNodeAgent);
  ASSERT_TRUE(options.ok()) << options.status();
  ASSERT_TRUE(options->agent.has_value());
  EXPECT_EQ(options->agent->rdma_slow_counters_interval,
            std::chrono::minutes(2));
  EXPECT_EQ(options->health.degraded_clear_after, std::chrono::minutes(10));
  EXPECT_EQ(options->health.unhealthy_clear_after, std::chrono::hours(2));
}

TEST(ProbeReportTest, JsonHasTheDocumentedKeys) {
  auto report = ProbeHost(HostRoots::Under(kHosts + "mi300x-8x-mlx5"),
                          GpuProbeOptions{true, false});
  ASSERT_TRUE(report.ok()) << report.status();
  rapidjson::Document doc;
  const std::string json = ProbeReportJson(*report);
  doc.Parse(json.c_str());
  ASSERT_FALSE(doc.HasParseError());
  ASSERT_EQ(doc["gpus"].Size(), 8u);
  const auto& g = doc["gpus"][0];
  for (const char* key :
       {"vendor", "index", "bdf", "model", "serial", "vram_total_bytes"}) {
    EXPECT_TRUE(g.HasMember(key)) << key;
  }
  if (g.HasMember("utilization_ratio")) {
    EXPECT_LE(g["utilization_ratio"].GetDouble(), 1.0);
  }
  ASSERT_EQ(doc["rdma"].Size(), 8u);
  const auto& r = doc["rdma"][0];
  for (const char* key :
       {"name", "fw_version", "board_id", "node_guid", "ports"}) {
    EXPECT_TRUE(r.HasMember(key)) << key;
  }
  const auto& port = r["ports"][0];
  for (const char* key : {"port", "state", "link_layer", "rate_gbps",
                          "tx_bytes", "rx_bytes", "counters"}) {
    EXPECT_TRUE(port.HasMember(key)) << key;
  }
  EXPECT_EQ(port["tx_bytes"].GetUint64(),
            4 * port["counters"]["port_xmit_data"].GetUint64());
  EXPECT_TRUE(doc["node"]["cpu_count"].IsInt());
  const std::string text = ProbeReportText(*report);
  EXPECT_NE(text.find("GPUs: 8"), std::string::npos) << text;
  EXPECT_NE(text.find("mlx5_0"), std::string::npos);
  EXPECT_NE(text.find(" tx " + HumanBytes(port["tx_bytes"].GetUint64())),
            std::string::npos)
      << text;
}

TEST(ProbeReportTest, HumanBytesUsesDecimalUnits) {
  EXPECT_EQ(HumanBytes(0), "0 B");
  EXPECT_EQ(HumanBytes(999), "999 B");
  EXPECT_EQ(HumanBytes(1500), "1.5 kB");
  EXPECT_EQ(HumanBytes(999'960), "1.0 MB");
  EXPECT_EQ(HumanBytes(124'000'000'000'000), "124.0 TB");
  EXPECT_EQ(HumanBytes(UINT64_MAX), "18.4 EB");
}

}  // namespace
}  // namespace lens
