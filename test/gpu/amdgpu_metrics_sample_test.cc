// The amdgpu sysfs GpuSource with gpu_metrics tables installed in copies of
// the host fixture trees: which values come from the table, partitions,
// throttle reasons over two samples, and tables Scan refuses.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "amdgpu_test_hosts.h"
#include "lens/gpu.h"

namespace lens {
namespace {

using testing_hosts::InstallMetrics;
using testing_hosts::MetricsFixture;
using testing_hosts::Probe;
using testing_hosts::ScanAndSample;
using testing_hosts::TempHost;
using testing_hosts::WriteFile;

TEST(AmdGpuMetricsSampleTest, TakesValuesFromTheTableAndKeepsTheRest) {
  TempHost host("mi300x-8x-mlx5");
  InstallMetrics(host, "card0", "mi300x_spx_v1_7.bin");
  Probe probe = ScanAndSample(host.roots());
  ASSERT_EQ(probe.samples.size(), 8u);
  const GpuSample& s = probe.samples[0];
  // From the table (hwmon says 140 W, gpu_busy_percent 0, sclk 132 MHz).
  EXPECT_EQ(s.power_watts, 598.0);
  EXPECT_DOUBLE_EQ(*s.utilization_ratio, 0.97);
  EXPECT_EQ(s.clock_graphics_hz, 2100e6);
  EXPECT_EQ(s.clock_memory_hz, 1300e6);
  EXPECT_EQ(s.clock_soc_hz, 1143e6);
  EXPECT_EQ(s.clock_video_hz, 29e6);
  EXPECT_EQ(s.clock_decode_hz, 22e6);
  EXPECT_EQ(s.temperature_junction_celsius, 71.0);
  EXPECT_EQ(s.temperature_memory_celsius, 58.0);
  EXPECT_NEAR(*s.energy_joules, 91'234'567.25, 1e-4);
  ASSERT_EQ(s.xcds.size(), 8u);
  EXPECT_DOUBLE_EQ(*s.xcds[1].utilization_ratio, 0.96);
  EXPECT_EQ(s.xcds[1].clock_graphics_hz, 2099e6);
  EXPECT_DOUBLE_EQ(*s.xcds[6].utilization_ratio, 0.95);
  // Not in the table: still read from sysfs.
  EXPECT_TRUE(s.vram_used_bytes);
  EXPECT_EQ(s.pcie_link_width, 16);
  EXPECT_TRUE(s.ecc_correctable_errors);
  // Residency counters need a previous reading.
  EXPECT_FALSE(s.throttle_known);
  // A GPU without a table is unchanged.
  EXPECT_FALSE(probe.samples[1].energy_joules);
  EXPECT_FALSE(probe.samples[1].clock_video_hz);
  EXPECT_TRUE(probe.samples[1].xcds.empty());
  EXPECT_EQ(probe.samples[1].clock_graphics_hz, 132e6);
}

TEST(AmdGpuMetricsSampleTest, ResidencyThatGrewBetweenSamplesIsThrottling) {
  TempHost host("mi300x-8x-mlx5");
  InstallMetrics(host, "card0", "mi300x_spx_v1_7.bin");
  auto source = NewAmdGpuSysfsSource(host.roots());
  ASSERT_TRUE(source->Scan().ok());
  std::vector<GpuSample> samples;
  ASSERT_TRUE(source->Sample(&samples).ok());
  ASSERT_TRUE(source->Sample(&samples).ok());
  EXPECT_TRUE(samples[0].throttle_known);  // unchanged counters: none
  EXPECT_TRUE(samples[0].throttle_reasons.empty());
  // ppt_residency_acc (offset 48) and hbm_thm_residency_acc (60) grow.
  std::vector<uint8_t> blob = MetricsFixture("mi300x_spx_v1_7.bin");
  const uint32_t ppt = 125'100, hbm = 3'001;
  std::memcpy(blob.data() + 48, &ppt, 4);
  std::memcpy(blob.data() + 60, &hbm, 4);
  WriteFile(host.Device("card0") / "gpu_metrics",
            std::string(blob.begin(), blob.end()));
  ASSERT_TRUE(source->Sample(&samples).ok());
  EXPECT_TRUE(samples[0].throttle_known);
  EXPECT_EQ(samples[0].throttle_reasons,
            (std::vector<std::string>{"power_cap", "thermal"}));
  EXPECT_FALSE(samples[1].throttle_known);
}

TEST(AmdGpuMetricsSampleTest, ThrottleBitsOfOlderTablesAreReadAtOnce) {
  TempHost host("mi250-mi210");
  InstallMetrics(host, "card0", "mi250x_v1_3.bin");
  Probe probe = ScanAndSample(host.roots());
  ASSERT_EQ(probe.samples.size(), 4u);
  const GpuSample& s = probe.samples[0];
  EXPECT_TRUE(s.throttle_known);
  EXPECT_EQ(s.throttle_reasons,
            (std::vector<std::string>{"power_cap", "thermal"}));
  EXPECT_EQ(s.temperature_edge_celsius, 45.0);
  EXPECT_EQ(s.power_watts, 497.0);
  EXPECT_DOUBLE_EQ(*s.energy_joules, 52'001'234.0);
  EXPECT_TRUE(s.xcds.empty());  // one graphics clock domain
}

TEST(AmdGpuMetricsSampleTest, EachComputePartitionGetsItsOwnXcd) {
  TempHost host("mi300x-cpx");
  InstallMetrics(host, "card0", "mi300x_cpx_v1_7.bin");
  Probe probe = ScanAndSample(host.roots());
  ASSERT_EQ(probe.samples.size(), 16u);
  const double kBusy[] = {1.0, 0.0, 0.55, 0.0, 0.0, 0.12, 0.0, 1.0};
  const double kClock[] = {2100, 2099, 2100, 2098, 2100, 2100, 2097, 2100};
  for (int p = 0; p < 8; ++p) {
    SCOPED_TRACE(p);
    ASSERT_EQ(probe.gpus[p].partition_id, p);
    const GpuSample& s = probe.samples[p];
    ASSERT_EQ(s.xcds.size(), 1u);
    EXPECT_DOUBLE_EQ(*s.xcds[0].utilization_ratio, kBusy[p]);
    EXPECT_EQ(s.xcds[0].clock_graphics_hz, kClock[p] * 1e6);
    EXPECT_DOUBLE_EQ(*s.utilization_ratio, kBusy[p]);
    // Device values stay on partition 0.
    EXPECT_EQ(s.energy_joules.has_value(), p == 0);
    EXPECT_EQ(s.power_watts.has_value(), p == 0);
  }
  // The second GPU has no table: its partitions report nothing new.
  EXPECT_TRUE(probe.samples[8].xcds.empty());
  EXPECT_TRUE(probe.samples[9].xcds.empty());
  EXPECT_FALSE(probe.samples[9].utilization_ratio);
}

TEST(AmdGpuMetricsSampleTest, ATableScanCannotUseIsLeftAside) {
  TempHost host("mi300x-8x-mlx5");
  std::vector<uint8_t> blob = MetricsFixture("mi300x_spx_v1_7.bin");
  WriteFile(host.Device("card0") / "gpu_metrics",
            std::string(blob.begin(), blob.begin() + 1000));  // truncated
  std::vector<uint8_t> v1_9 = MetricsFixture("mi250x_v1_3.bin");
  v1_9[3] = 9;
  WriteFile(host.Device("card8") / "gpu_metrics",
            std::string(v1_9.begin(), v1_9.end()));
  Probe probe = ScanAndSample(host.roots());
  ASSERT_EQ(probe.samples.size(), 8u);
  EXPECT_EQ(probe.samples[0].power_watts, 140.0);  // hwmon
  for (int g : {0, 1}) {
    EXPECT_FALSE(probe.samples[g].energy_joules);
    EXPECT_TRUE(probe.samples[g].xcds.empty());
    EXPECT_EQ(probe.samples[g].clock_graphics_hz, 132e6);
  }
}

TEST(AmdGpuMetricsSampleTest, ATableThatGoesBadFallsBackToTheFiles) {
  TempHost host("mi300x-8x-mlx5");
  InstallMetrics(host, "card0", "mi300x_spx_v1_7.bin");
  auto source = NewAmdGpuSysfsSource(host.roots());
  ASSERT_TRUE(source->Scan().ok());
  std::vector<GpuSample> samples;
  ASSERT_TRUE(source->Sample(&samples).ok());
  EXPECT_EQ(samples[0].power_watts, 598.0);
  WriteFile(host.Device("card0") / "gpu_metrics", "");  // a reset in progress
  ASSERT_TRUE(source->Sample(&samples).ok());
  EXPECT_EQ(samples[0].power_watts, 140.0);
  EXPECT_FALSE(samples[0].energy_joules);
  EXPECT_TRUE(samples[0].xcds.empty());
  EXPECT_FALSE(samples[0].throttle_known);
}

}  // namespace
}  // namespace lens
