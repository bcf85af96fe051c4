// ParseAmdGpuMetrics and the throttle decoding on the gpu_metrics fixtures
// (test/fixtures/gpu-metrics, laid out by make_gpu_metrics.py from the
// kernel's struct definitions, independently of the parser's offsets).
#include "gpu/amdgpu_metrics.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "amdgpu_test_hosts.h"

namespace lens {
namespace {

using testing_hosts::MetricsFixture;

AmdGpuMetrics Parse(const std::string& fixture) {
  std::vector<uint8_t> blob = MetricsFixture(fixture);
  AmdGpuMetrics m;
  Status st = ParseAmdGpuMetrics(blob, &m);
  EXPECT_TRUE(st.ok()) << fixture << ": " << st;
  return m;
}

void SetU16(std::vector<uint8_t>* blob, size_t offset, uint16_t v) {
  std::memcpy(blob->data() + offset, &v, sizeof v);
}

TEST(ParseAmdGpuMetricsTest, ReadsAnMi250xTableV1_3) {
  AmdGpuMetrics m = Parse("mi250x_v1_3.bin");
  EXPECT_EQ(m.format_revision, 1);
  EXPECT_EQ(m.content_revision, 3);
  EXPECT_EQ(m.temperature_edge_celsius, 45.0);
  EXPECT_EQ(m.temperature_hotspot_celsius, 62.0);
  EXPECT_EQ(m.temperature_mem_celsius, 55.0);
  EXPECT_EQ(m.power_watts, 497.0);
  EXPECT_DOUBLE_EQ(*m.gfx_activity_ratio, 0.88);
  EXPECT_DOUBLE_EQ(*m.umc_activity_ratio, 0.35);
  EXPECT_DOUBLE_EQ(*m.energy_joules, 52'001'234.0);
  EXPECT_EQ(m.gfxclk_hz, 1700e6);
  EXPECT_EQ(m.socclk_hz, 1090e6);
  EXPECT_EQ(m.uclk_hz, 1600e6);
  EXPECT_EQ(m.vclk_hz, 1000e6);
  EXPECT_EQ(m.dclk_hz, 1000e6);
  EXPECT_FALSE(m.xcd_gfxclk_hz[0]);  // one clock per domain in 1.x < 1.4
  ASSERT_TRUE(m.indep_throttle_status);
  EXPECT_EQ(AmdThrottlerNames(*m.indep_throttle_status),
            (std::vector<std::string_view>{"ppt0", "temp_hotspot"}));
  EXPECT_FALSE(m.residency);
  EXPECT_EQ(m.partitions, 0);
}

TEST(ParseAmdGpuMetricsTest, ReadsPerXcdClocksOfAnMi300xTableV1_4) {
  AmdGpuMetrics m = Parse("mi300x_v1_4.bin");
  EXPECT_FALSE(m.temperature_edge_celsius);  // MI300 has no edge sensor
  EXPECT_EQ(m.temperature_hotspot_celsius, 40.0);
  EXPECT_EQ(m.power_watts, 139.0);
  EXPECT_EQ(m.gfx_activity_ratio, 0.0);
  EXPECT_NEAR(*m.energy_joules, 7'412'345.5, 1e-4);
  for (const auto& clock : m.xcd_gfxclk_hz) EXPECT_EQ(clock, 132e6);
  EXPECT_EQ(m.gfxclk_hz, 132e6);
  EXPECT_EQ(m.socclk_hz, 28e6);
  EXPECT_EQ(m.uclk_hz, 900e6);
  EXPECT_EQ(m.vclk_hz, 29e6);
  EXPECT_EQ(m.dclk_hz, 22e6);
  EXPECT_EQ(m.indep_throttle_status, 0u);  // known, nothing active
}

TEST(ParseAmdGpuMetricsTest, TranslatesMi300ThrottleBitsOfV1_5) {
  AmdGpuMetrics m = Parse("mi300x_v1_5.bin");
  EXPECT_EQ(m.temperature_hotspot_celsius, 71.0);
  EXPECT_EQ(m.power_watts, 598.0);
  EXPECT_DOUBLE_EQ(*m.gfx_activity_ratio, 0.97);
  EXPECT_NEAR(*m.energy_joules, 91'234'567.25, 1e-4);
  EXPECT_EQ(m.xcd_gfxclk_hz[1], 2099e6);
  EXPECT_EQ(m.xcd_gfxclk_hz[6], 2097e6);
  EXPECT_EQ(m.uclk_hz, 1300e6);
  // SMU 13.0.6 PPT and THERMAL_HBM become PPT0 and TEMP_MEM.
  ASSERT_TRUE(m.indep_throttle_status);
  EXPECT_EQ(AmdThrottlerNames(*m.indep_throttle_status),
            (std::vector<std::string_view>{"ppt0", "temp_mem"}));
  std::vector<std::string> reasons;
  AppendAmdThrottleReasons(*m.indep_throttle_status, &reasons);
  EXPECT_EQ(reasons, (std::vector<std::string>{"power_cap", "thermal"}));
}

TEST(ParseAmdGpuMetricsTest, TellsTheTwoV1_6LayoutsApartBySize) {
  AmdGpuMetrics early = Parse("mi300x_v1_6_early.bin");
  EXPECT_NEAR(*early.energy_joules, 91'234'567.25, 1e-4);
  EXPECT_EQ(early.xcd_gfxclk_hz[0], 2100e6);
  ASSERT_TRUE(early.residency);
  EXPECT_EQ(early.residency->ppt, 125'000u);
  EXPECT_EQ(early.partitions, 0);
  AmdGpuMetrics cpx = Parse("mi300x_cpx_v1_6.bin");
  EXPECT_NEAR(*cpx.energy_joules, 91'234'567.25, 1e-4);
  EXPECT_FALSE(cpx.indep_throttle_status);
  ASSERT_TRUE(cpx.residency);
  EXPECT_EQ(cpx.residency->accumulation_counter, 4'000'000u);
  EXPECT_EQ(cpx.residency->hbm_thermal, 3'000u);
  EXPECT_EQ(cpx.partitions, 8);
  EXPECT_EQ(cpx.partition_xcd_activity_ratio[0][0], 1.0);
  EXPECT_EQ(cpx.partition_xcd_activity_ratio[2][0], 0.55);
  EXPECT_FALSE(cpx.partition_xcd_activity_ratio[2][1]);  // one XCD each
}

TEST(ParseAmdGpuMetricsTest, ReadsPartitionStatsOfV1_7AndV1_8) {
  AmdGpuMetrics spx = Parse("mi300x_spx_v1_7.bin");
  EXPECT_EQ(spx.partitions, 1);
  EXPECT_EQ(spx.partition_xcd_activity_ratio[0][1], 0.96);
  EXPECT_EQ(spx.partition_xcd_activity_ratio[0][7], 0.99);
  EXPECT_FALSE(spx.partition_xcd_activity_ratio[1][0]);
  EXPECT_EQ(spx.temperature_mem_celsius, 58.0);
  AmdGpuMetrics cpx = Parse("mi300x_cpx_v1_7.bin");
  EXPECT_EQ(cpx.partitions, 8);
  EXPECT_EQ(cpx.partition_xcd_activity_ratio[5][0], 0.12);
  EXPECT_EQ(cpx.partition_xcd_activity_ratio[7][0], 1.0);
  AmdGpuMetrics dpx = Parse("mi300x_dpx_v1_8.bin");
  EXPECT_EQ(dpx.partitions, 2);
  EXPECT_EQ(dpx.partition_xcd_activity_ratio[0][3], 0.93);
  EXPECT_EQ(dpx.partition_xcd_activity_ratio[1][2], 0.20);
  EXPECT_FALSE(dpx.partition_xcd_activity_ratio[1][4]);
  EXPECT_NEAR(*dpx.energy_joules, 91'234'567.25, 1e-4);
}

TEST(ParseAmdGpuMetricsTest, ReadsApuTablesInTheirUnits) {
  AmdGpuMetrics v2 = Parse("apu_v2_2.bin");
  EXPECT_DOUBLE_EQ(*v2.temperature_edge_celsius, 51.23);
  EXPECT_DOUBLE_EQ(*v2.gfx_activity_ratio, 0.235);
  EXPECT_DOUBLE_EQ(*v2.power_watts, 15.32);
  EXPECT_EQ(v2.gfxclk_hz, 1800e6);
  EXPECT_EQ(v2.vclk_hz, 400e6);
  EXPECT_EQ(v2.dclk_hz, 300e6);
  EXPECT_FALSE(v2.energy_joules);
  ASSERT_TRUE(v2.indep_throttle_status);
  EXPECT_EQ(AmdThrottlerNames(*v2.indep_throttle_status),
            (std::vector<std::string_view>{"temp_core"}));
  AmdGpuMetrics v3 = Parse("apu_v3_0.bin");
  EXPECT_DOUBLE_EQ(*v3.gfx_activity_ratio, 0.31);
  EXPECT_DOUBLE_EQ(*v3.power_watts, 28.5);
  EXPECT_EQ(v3.gfxclk_hz, 2100e6);
  EXPECT_EQ(v3.uclk_hz, 2800e6);
  EXPECT_FALSE(v3.temperature_edge_celsius);
}

TEST(ParseAmdGpuMetricsTest, TreatsAllOnesAsNotSupported) {
  std::vector<uint8_t> blob = MetricsFixture("mi250x_v1_3.bin");
  SetU16(&blob, 4, 0xffff);                 // temperature_edge
  SetU16(&blob, 22, 0xffff);                // average_socket_power
  std::memset(blob.data() + 24, 0xff, 8);   // energy_accumulator
  std::memset(blob.data() + 112, 0xff, 8);  // indep_throttle_status
  AmdGpuMetrics m;
  ASSERT_TRUE(ParseAmdGpuMetrics(blob, &m).ok());
  EXPECT_FALSE(m.temperature_edge_celsius);
  EXPECT_FALSE(m.power_watts);
  EXPECT_FALSE(m.energy_joules);
  EXPECT_FALSE(m.indep_throttle_status);
  EXPECT_EQ(m.temperature_hotspot_celsius, 62.0);  // its neighbour stays
  // MI300 slots of absent XCDs (an MI300A has six) are all ones too.
  std::vector<uint8_t> mi300 = MetricsFixture("mi300x_v1_5.bin");
  SetU16(&mi300, 312 + 12, 0xffff);
  SetU16(&mi300, 312 + 14, 0xffff);
  ASSERT_TRUE(ParseAmdGpuMetrics(mi300, &m).ok());
  EXPECT_TRUE(m.xcd_gfxclk_hz[5]);
  EXPECT_FALSE(m.xcd_gfxclk_hz[6]);
  EXPECT_FALSE(m.xcd_gfxclk_hz[7]);
}

TEST(ParseAmdGpuMetricsTest, RejectsTruncatedAndShortBlobs) {
  std::vector<uint8_t> blob = MetricsFixture("mi300x_spx_v1_7.bin");
  AmdGpuMetrics m;
  Status st = ParseAmdGpuMetrics(std::span(blob.data(), 2000), &m);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("truncated, 2000 of 2208 bytes"),
            std::string::npos)
      << st;
  EXPECT_FALSE(m.energy_joules);  // nothing half-parsed
  st = ParseAmdGpuMetrics(std::span(blob.data(), 3), &m);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("shorter than its 4-byte header"),
            std::string::npos);
  EXPECT_EQ(ParseAmdGpuMetrics({}, &m).code(), StatusCode::kInvalidArgument);
}

TEST(ParseAmdGpuMetricsTest, RejectsASizeThatIsNotTheRevisionsLayout) {
  std::vector<uint8_t> blob = MetricsFixture("mi300x_v1_5.bin");
  SetU16(&blob, 0, 328);  // what a mis-laid-out 1.5 would declare
  AmdGpuMetrics m;
  Status st = ParseAmdGpuMetrics(blob, &m);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("gpu_metrics 1.5: header says 328 bytes"),
            std::string::npos)
      << st;
  EXPECT_NE(st.message().find("has 360"), std::string::npos) << st;
}

TEST(ParseAmdGpuMetricsTest, RejectsUnknownRevisions) {
  for (auto [format, content] : {std::pair{1, 9}, {2, 5}, {4, 0}, {0, 0}}) {
    std::vector<uint8_t> blob = MetricsFixture("mi250x_v1_3.bin");
    blob[2] = static_cast<uint8_t>(format);
    blob[3] = static_cast<uint8_t>(content);
    AmdGpuMetrics m;
    Status st = ParseAmdGpuMetrics(blob, &m);
    EXPECT_EQ(st.code(), StatusCode::kUnimplemented) << st;
    EXPECT_NE(st.message().find("format " + std::to_string(format) + "." +
                                std::to_string(content) + " is not supported"),
              std::string::npos)
        << st;
  }
}

TEST(ParseAmdGpuMetricsTest, IgnoresBytesAfterTheTable) {
  std::vector<uint8_t> blob = MetricsFixture("mi250x_v1_3.bin");
  blob.resize(blob.size() + 100, 0xab);
  AmdGpuMetrics m;
  ASSERT_TRUE(ParseAmdGpuMetrics(blob, &m).ok());
  EXPECT_EQ(m.power_watts, 497.0);
}

TEST(AmdThrottleTest, MapsEachGroupOfBitsToOneReason) {
  std::vector<std::string> reasons;
  AppendAmdThrottleReasons((1ull << 3) | (1ull << 6) | (1ull << 17) |
                               (1ull << 45) | (1ull << 46) | (1ull << 57),
                           &reasons);
  EXPECT_EQ(reasons,
            (std::vector<std::string>{"power_cap", "current", "thermal",
                                      "hw_slowdown", "reliability"}));
  EXPECT_EQ(AmdThrottlerNames((1ull << 12) | (1ull << 56)),
            (std::vector<std::string_view>{"bit12", "ppm"}));
}

TEST(AmdThrottleTest, ResidencyCountersThatGrewAreActiveReasons) {
  AmdThrottleResidency before{100, 5, 7, 0, 0, 0xfffffff0u};
  AmdThrottleResidency now = before;
  std::vector<std::string> reasons;
  AppendAmdResidencyReasons(before, now, &reasons);
  EXPECT_TRUE(reasons.empty());
  now.accumulation_counter = 200;
  now.ppt = 9;
  now.hbm_thermal = 3;  // wrapped
  AppendAmdResidencyReasons(before, now, &reasons);
  EXPECT_EQ(reasons, (std::vector<std::string>{"power_cap", "thermal"}));
}

}  // namespace
}  // namespace lens
