// /metrics text of real fixture hosts: valid exposition, the right types,
// values in base units, compatibility names only when asked.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "agent/node_agent.h"

namespace lens {
namespace {

const std::string kHosts = std::string(LENS_FIXTURES_DIR) + "/hosts/";

struct Exposition {
  std::map<std::string, std::string> types;  // family -> type
  std::map<std::string, double> series;      // "name{labels}" -> value
};

// Parses the text format strictly enough to catch what Prometheus rejects:
// samples before their TYPE, a family declared twice, duplicate series, bad
// sample lines.
Exposition Parse(const std::string& text) {
  Exposition e;
  std::istringstream in(text);
  std::string line;
  static const std::regex kSample(
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? (\S+)$)");
  std::string current;
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream t(line.substr(7));
      std::string name, type;
      t >> name >> type;
      EXPECT_EQ(e.types.count(name), 0u) << "family declared twice: " << name;
      e.types[name] = type;
      current = name;
      continue;
    }
    std::smatch m;
    EXPECT_TRUE(std::regex_match(line, m, kSample))
        << "bad sample line: " << line;
    if (m.empty()) continue;
    EXPECT_EQ(m[1].str().rfind(current, 0), 0u)
        << "sample outside its family: " << line;
    const std::string key = m[1].str() + m[2].str();
    EXPECT_EQ(e.series.count(key), 0u) << "duplicate series: " << key;
    e.series[key] = std::stod(m[5].str());
  }
  return e;
}

std::string Render(const std::string& host, bool compat) {
  NodeAgentOptions o;
  o.roots = HostRoots::Under(kHosts + host);
  o.node_name = "node-a";
  o.nvidia_gpus = false;
  o.compat_names = compat;
  NodeAgent agent(o, DefaultNodeCollectors(o));
  EXPECT_TRUE(agent.RunOnce().ok());
  return agent.RenderMetrics();
}

TEST(MetricsRenderTest, MI300XExpositionIsValidAndTyped) {
  const Exposition e = Parse(Render("mi300x-8x-mlx5", false));
  for (const auto& [name, type] : e.types) {
    EXPECT_EQ(name.rfind("lens_", 0), 0u) << name;
    const bool total =
        name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
    EXPECT_EQ(type == "counter", total) << name << " is a " << type;
  }
  EXPECT_EQ(e.types.at("lens_gpu_utilization_ratio"), "gauge");
  EXPECT_EQ(e.types.at("lens_gpu_ecc_errors_total"), "counter");
  EXPECT_EQ(e.types.at("lens_rdma_port_transmit_bytes_total"), "counter");
  EXPECT_EQ(e.types.at("lens_rdma_port_hw_stat_total"), "counter");
  int utilization = 0;
  for (const auto& [key, value] : e.series) {
    if (key.rfind("lens_gpu_utilization_ratio{", 0) == 0) {
      ++utilization;
      EXPECT_GE(value, 0.0) << key;
      EXPECT_LE(value, 1.0) << key;
    }
    if (key.rfind("lens_gpu_temperature_celsius{", 0) == 0) {
      EXPECT_GT(value, 5.0) << key << " (millidegrees not converted?)";
      EXPECT_LT(value, 130.0) << key;
    }
    if (key.rfind("lens_gpu_power_watts{", 0) == 0) {
      EXPECT_GT(value, 10.0) << key << " (microwatts not converted?)";
      EXPECT_LT(value, 2000.0) << key;
    }
  }
  EXPECT_EQ(utilization, 8);
  EXPECT_EQ(e.series.count("lens_node_gpus"), 1u);
  EXPECT_EQ(e.series.at("lens_node_gpus"), 8);
  EXPECT_EQ(e.types.count("gpu_utilization"), 0u);
}

TEST(MetricsRenderTest, CompatibilityNamesKeepTheOriginalUnitsAndLabels) {
  const Exposition e = Parse(Render("mi300x-8x-mlx5", true));
  ASSERT_EQ(e.types.count("gpu_utilization"), 1u);
  const std::regex lens_gpu0(R"(lens_gpu_utilization_ratio\{gpu="0",.*)");
  double ratio = -1;
  for (const auto& [key, value] : e.series) {
    if (std::regex_match(key, lens_gpu0)) ratio = value;
  }
  ASSERT_GE(ratio, 0);
  EXPECT_DOUBLE_EQ(e.series.at("gpu_utilization{gpu_id=\"0\"}"), ratio * 100);
  bool rdma_stat = false;
  for (const auto& [name, type] : e.types) {
    if (name.rfind("rdma_stat_", 0) == 0) {
      rdma_stat = true;
      EXPECT_EQ(type, "counter") << name;
    }
  }
  EXPECT_TRUE(rdma_stat);
}

TEST(MetricsRenderTest, PartitionedGpusAreDistinctSeries) {
  const Exposition e = Parse(Render("mi300x-cpx", false));
  std::set<std::string> gpus;
  for (const auto& [key, value] : e.series) {
    if (key.rfind("lens_gpu_info{", 0) == 0) gpus.insert(key);
  }
  EXPECT_GT(gpus.size(), 2u) << "CPX partitions should appear as logical GPUs";
}

}  // namespace
}  // namespace lens
