// What NVIDIA GPUs add to /metrics and the node REST API: lifetime ECC
// counts, MIG devices and named processes, from the NVML replay of a real
// H200 in MIG mode and of an HGX H100 node (test/fixtures/nvml), through the
// node agent's GPU collector; the text passes `promtool check metrics`.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "agent/node_agent.h"
#include "agent/rest.h"
#include "gpu/nvml/nvml_replay.h"
#include "gpu/nvml/nvml_source.h"

namespace lens {
namespace {

// A node agent whose only collector is the GPU collector over the replay
// `name`, run once. Process names come from a fixture procfs.
struct Agent {
  std::unique_ptr<NodeAgent> agent;
  std::string metrics;
};
Agent RunReplay(const std::string& name, const std::string& procfs) {
  Agent a;
  auto replay =
      nvml::NvmlReplay::Open(std::string(LENS_FIXTURES_DIR) + "/nvml/" + name);
  EXPECT_TRUE(replay.ok()) << replay.status();
  if (!replay.ok()) return a;
  auto source = nvml::NewNvmlGpuSourceFromApi(*replay, {procfs});
  EXPECT_TRUE(source.ok()) << source.status();
  if (!source.ok()) return a;
  std::vector<std::unique_ptr<GpuSource>> sources;
  sources.push_back(*std::move(source));
  NodeAgentOptions o;
  o.roots = HostRoots::Under("/nonexistent");
  o.node_name = "node-a";
  CollectorRegistry registry;
  EXPECT_TRUE(registry.Add(NewGpuCollector(o.roots, std::move(sources))).ok());
  a.agent = std::make_unique<NodeAgent>(o, std::move(registry));
  EXPECT_TRUE(a.agent->RunOnce().ok());
  a.metrics = a.agent->RenderMetrics();
  return a;
}

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

class NvidiaMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    procfs_ = std::filesystem::path(::testing::TempDir()) /
              ("lens_nvidia_proc_" + std::to_string(::getpid()));
    std::filesystem::create_directories(procfs_ / "12249");
    std::ofstream(procfs_ / "12249" / "comm") << "memhog\n";
  }
  void TearDown() override { std::filesystem::remove_all(procfs_); }
  std::filesystem::path procfs_;
};

TEST_F(NvidiaMetricsTest, MigDevicesAndLifetimeEccAreFamiliesOfTheirOwn) {
  const Agent h200 = RunReplay("h200_mig_590.48.01.json", procfs_);
  const std::string& t = h200.metrics;
  EXPECT_TRUE(Has(t, "# TYPE lens_gpu_mig_device_info gauge"));
  EXPECT_TRUE(Has(t, "lens_gpu_mig_enabled{gpu=\"0\",bdf=\"0000:83:00.0\"} 1"));
  EXPECT_TRUE(
      Has(t,
          "lens_gpu_mig_device_info{gpu=\"0\",bdf=\"0000:83:00.0\","
          "gpu_instance_id=\"2\",compute_instance_id=\"1\",mig_index=\"1\","
          "uuid=\"MIG-7a3e9c11-5c1e-5d0a-9b7e-41f0c2a8d361\","
          "profile=\"2c.3g.71gb\"} 1"));
  // 16384 MiB and 9 MiB in use: the 1g.18gb of GPU instance 10.
  EXPECT_TRUE(Has(t,
                  "lens_gpu_mig_memory_total_bytes{gpu=\"0\",bdf=\"0000:83:"
                  "00.0\",gpu_instance_id=\"10\",compute_instance_id=\"0\"} "
                  "17179869184"));
  EXPECT_TRUE(Has(t,
                  "lens_gpu_mig_memory_used_bytes{gpu=\"0\",bdf=\"0000:83:"
                  "00.0\",gpu_instance_id=\"10\",compute_instance_id=\"0\"} "
                  "9437184"));
  const Agent h100 = RunReplay("h100_8x_550.90.07.json", procfs_);
  EXPECT_TRUE(Has(h100.metrics,
                  "lens_gpu_ecc_lifetime_errors_total{gpu=\"4\",bdf=\"0000:"
                  "9b:00.0\",type=\"correctable\"} 14"));
  EXPECT_TRUE(Has(h100.metrics,
                  "lens_gpu_ecc_errors_total{gpu=\"4\",bdf=\"0000:9b:00.0\","
                  "type=\"correctable\"} 2"));
  EXPECT_TRUE(Has(h100.metrics,
                  "lens_gpu_mig_enabled{gpu=\"0\",bdf=\"0000:19:00.0\"} 0"));
  EXPECT_EQ(h100.metrics.find("lens_gpu_mig_device_info"), std::string::npos);
}

TEST_F(NvidiaMetricsTest, PromtoolFindsNothing) {
  constexpr const char* kPromtool = "/usr/bin/promtool";
  if (::access(kPromtool, X_OK) != 0) {
    GTEST_SKIP() << kPromtool << " not installed (Debian package prometheus)";
  }
  for (const char* replay :
       {"h200_mig_590.48.01.json", "h100_8x_550.90.07.json"}) {
    const std::string path = (procfs_ / "metrics.txt").string();
    std::ofstream(path) << RunReplay(replay, procfs_).metrics;
    FILE* pipe = ::popen(
        (std::string(kPromtool) + " check metrics < " + path + " 2>&1").c_str(),
        "r");
    ASSERT_NE(pipe, nullptr);
    std::string output;
    std::array<char, 4096> buf;
    for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) {
      output.append(buf.data(), n);
    }
    EXPECT_EQ(::pclose(pipe), 0) << replay << ": " << output;
    EXPECT_EQ(output, "") << replay;
  }
}

TEST_F(NvidiaMetricsTest, RestShowsMigDevicesAndNamedProcessesOnly) {
  const Agent h200 = RunReplay("h200_mig_590.48.01.json", procfs_);
  const auto snapshot = h200.agent->snapshot();
  rapidjson::Document gpus;
  gpus.Parse(agent::GpusJson(*snapshot).c_str());
  ASSERT_TRUE(gpus.IsArray() && gpus.Size() == 1u);
  const auto& g = gpus[0];
  EXPECT_EQ(g["nvidia_minor"].GetInt(), 0);
  EXPECT_TRUE(g["mig_enabled"].GetBool());
  ASSERT_EQ(g["mig_devices"].Size(), 5u);
  EXPECT_STREQ(g["mig_devices"][2]["profile"].GetString(), "2g.35gb");
  EXPECT_EQ(g["mig_devices"][2]["memory_total_bytes"].GetUint64(),
            33280ull << 20);
  rapidjson::Document cards;
  cards.Parse(agent::CardMetricsJson(*snapshot).c_str());
  ASSERT_TRUE(cards.IsArray() && cards.Size() == 1u);
  const auto& c = cards[0];
  EXPECT_EQ(c["mig_memory_used_bytes"][0].GetUint64(), 16925ull << 20);
  EXPECT_EQ(c["ecc_uncorrectable_errors_lifetime"].GetUint64(), 0u);
  const auto& procs = c["processes"];
  ASSERT_EQ(procs.Size(), 3u);
  EXPECT_EQ(procs[0]["pid"].GetInt64(), 12249);
  EXPECT_STREQ(procs[0]["name"].GetString(), "memhog");
  EXPECT_STREQ(procs[1]["name"].GetString(), "");  // no comm: exited
  EXPECT_EQ(procs[2]["used_memory_bytes"].GetUint64(), 13526ull << 20);
  EXPECT_EQ(procs[2]["gpu_instance_id"].GetUint(), 2u);
  // Only these keys: no command line, no environment.
  for (const auto& p : procs.GetArray()) {
    for (const auto& m : p.GetObject()) {
      const std::string key = m.name.GetString();
      EXPECT_TRUE(key == "pid" || key == "name" || key == "used_memory_bytes" ||
                  key == "gpu_instance_id" || key == "compute_instance_id")
          << key;
    }
  }
}

}  // namespace
}  // namespace lens
