// The node REST API and NodeService over loopback HTTP, on fixture hosts.
#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "lens/node_agent.h"
#include "lens/node_service.h"
#include "lens/probe.h"

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
