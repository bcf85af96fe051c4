// The `telemetry:` keys of lens-telemetry: decoding (lists, sizes,
// durations), located errors, and the service options built from them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "service/config.h"
#include "service/telemetry_service.h"

namespace lens {
namespace {

ConfigLoadOptions NoEnv() {
  ConfigLoadOptions o;
  o.getenv = [](const std::string&) -> std::optional<std::string> {
    return std::nullopt;
  };
  return o;
}

TEST(ConfigTelemetryTest, DefaultsAreTheDocumentedOnes) {
  auto c = ParseConfig("", "inline", NoEnv());
  ASSERT_TRUE(c.ok()) << c.status();
  const TelemetryConfigOptions& t = c->telemetry;
  EXPECT_EQ(t.listen, "0.0.0.0:8994");
  EXPECT_TRUE(t.forward.empty());
  EXPECT_EQ(t.processor.queue_max_bytes, uint64_t{1} << 30);
  EXPECT_EQ(t.processor.max_body_bytes, size_t{8} << 20);
  EXPECT_EQ(t.processor.max_uncompressed_bytes, size_t{32} << 20);
  EXPECT_EQ(t.processor.ownership_refresh, std::chrono::seconds(5));
  EXPECT_FALSE(t.processor.sample_history);
  EXPECT_TRUE(t.processor.logs);
  EXPECT_EQ(t.processor.series.metric_prefixes.front(), "DCGM_FI_");
}

TEST(ConfigTelemetryTest, ListsSizesAndDurationsBecomeServiceOptions) {
  const std::string token =
      ::testing::TempDir() + "telemetry-token-" + std::to_string(::getpid());
  std::ofstream(token) << "s3cret\n";
  auto c = ParseConfig(
      "telemetry:\n"
      "  forward:\n"
      "    - http://vm-a:8428/api/v1/write\n"
      "    - https://vm-b:8428/api/v1/write\n"
      "  forwardTokenFile: " +
          token +
          "\n"
          "  queueMaxBytes: 64MiB\n"
          "  maxRequestBytes: 4MiB\n"
          "  metricPrefixes: DCGM_FI_DEV_, gpu_\n"
          "  podLabels: [pod, exported_pod, k8s_pod]\n"
          "  ownershipHistory: 2h\n"
          "  sampleHistory: true\n"
          "  sampleResolution: 30s\n"
          "  compatNames: true\n",
      "inline", NoEnv());
  ASSERT_TRUE(c.ok()) << c.status();
  c->database.url = "sqlite:///tmp/x.db";
  auto o = TelemetryServiceOptionsFromConfig(*c);
  std::remove(token.c_str());
  ASSERT_TRUE(o.ok()) << o.status();
  const TelemetryOptions& t = o->telemetry;
  ASSERT_EQ(t.forward.size(), 2u);
  EXPECT_EQ(t.forward[1].url, "https://vm-b:8428/api/v1/write");
  EXPECT_EQ(t.forward[1].bearer_token, "s3cret");
  EXPECT_EQ(t.queue_max_bytes, uint64_t{64} << 20);
  EXPECT_EQ(t.max_body_bytes, size_t{4} << 20);
  EXPECT_EQ(t.max_uncompressed_bytes, size_t{16} << 20);  // 4 times
  EXPECT_EQ(t.series.metric_prefixes,
            (std::vector<std::string>{"DCGM_FI_DEV_", "gpu_"}));
  EXPECT_EQ(t.series.pod_labels.back(), "k8s_pod");
  EXPECT_EQ(t.ownership_history, std::chrono::hours(2));
  EXPECT_TRUE(t.sample_history);
  EXPECT_EQ(t.sample_resolution, std::chrono::seconds(30));
  EXPECT_TRUE(t.compat_names);
  EXPECT_EQ(o->http.max_body_bytes, size_t{1} << 20)
      << "the service sets the body limit from telemetry's when it starts";
}

TEST(ConfigTelemetryTest, RulesBetweenKeysHoldInAnyOrder) {
  auto c = ParseConfig(
      "telemetry:\n  sampleRetention: 10s\n  sampleResolution: 5s\n"
      "  ownershipHistory: 2s\n  ownershipRefresh: 1s\n",
      "inline", NoEnv());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->telemetry.processor.sample_retention, std::chrono::seconds(10));
  c = ParseConfig("telemetry:\n  sampleRetention: 10s\n", "inline", NoEnv());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(
      c.status().message().find("telemetry: sampleRetention: must be at least "
                                "sampleResolution"),
      std::string::npos)
      << c.status();
}

TEST(ConfigTelemetryTest, BadValuesAreLocated) {
  const struct {
    const char* yaml;
    const char* says;
  } cases[] = {
      {"telemetry:\n  forward: [ftp://x]\n",
       "inline:2:12: telemetry.forward: \"ftp://x\" is not an http:// or "
       "https:// URL"},
      {"telemetry:\n  queueMaxBytes: lots\n",
       "inline:2:18: telemetry.queueMaxBytes: expected a size"},
      {"telemetry:\n  queueMaxBytes: 1KiB\n",
       "inline:2:18: telemetry.queueMaxBytes: must be at least 1MiB"},
      {"telemetry:\n  sampleResolution: 10ms\n",
       "inline:2:21: telemetry.sampleResolution: must be at least 1s"},
      {"telemetry:\n  podLabels: []\n",
       "inline:2:14: telemetry.podLabels: needs at least one label name"},
      {"telemetry:\n  listen: nowhere\n", "inline:2:11: telemetry.listen:"},
      {"telemetry:\n  forwrd: [http://x]\n",
       "inline:2:3: telemetry.forwrd: unknown key"},
  };
  for (const auto& c : cases) {
    auto config = ParseConfig(c.yaml, "inline", NoEnv());
    ASSERT_FALSE(config.ok()) << c.yaml;
    EXPECT_EQ(config.status().message().rfind(c.says, 0), 0u)
        << config.status().message();
  }
}

}  // namespace
}  // namespace lens
