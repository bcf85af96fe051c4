// The pure parsers and the name table of the amdgpu sysfs source. Inputs
// are written the way the driver prints them (see amdgpu_parse.cc).
#include <gtest/gtest.h>

#include <string>

#include "gpu/amdgpu_sysfs.h"

namespace lens {
namespace {

using namespace std::string_literals;

TEST(ParseDpmCurrentHzTest, TakesTheLevelMarkedWithAStar) {
  // smu_cmn style: "%d: %uMhz %s\n", a trailing space on unmarked levels.
  EXPECT_DOUBLE_EQ(*ParseDpmCurrentHz("0: 500Mhz *\n1: 2660Mhz \n"), 500e6);
  EXPECT_DOUBLE_EQ(
      *ParseDpmCurrentHz("0: 96Mhz \n1: 456Mhz \n2: 673Mhz \n3: 1000Mhz *\n"),
      1000e6);
  // Fine-grained gfxclk (Aldebaran, SMU 13.0.6): min / current / max.
  EXPECT_DOUBLE_EQ(*ParseDpmCurrentHz("0: 500Mhz\n1: 1897Mhz *\n2: 2100Mhz\n"),
                   1897e6);
}

TEST(ParseDpmCurrentHzTest, ReadsTheDeepSleepLineOfMi300) {
  // smu_v13_0_6 below its deep-sleep threshold: "S: %uMhz *" first.
  EXPECT_DOUBLE_EQ(*ParseDpmCurrentHz("S: 132Mhz *\n0: 500Mhz\n1: 2100Mhz\n"),
                   132e6);
}

TEST(ParseDpmCurrentHzTest, ReportsNothingWithoutAMarkedLevel) {
  EXPECT_FALSE(ParseDpmCurrentHz("0: 500Mhz \n1: 2660Mhz \n"));
  // Printed while a RAS interrupt is being handled.
  EXPECT_FALSE(ParseDpmCurrentHz("unavailable\n"));
  EXPECT_FALSE(ParseDpmCurrentHz(""));
  EXPECT_FALSE(ParseDpmCurrentHz("0: fastMhz *\n"));
  EXPECT_FALSE(ParseDpmCurrentHz("0: 500GHz *\n"));
}

TEST(ParseDpmCurrentHzTest, IgnoresNulPaddingAfterTheText) {
  std::string padded = "0: 480Mhz \n1: 800Mhz *\n2: 1200Mhz \n"s;
  padded.resize(4096, '\0');
  EXPECT_DOUBLE_EQ(*ParseDpmCurrentHz(padded), 800e6);
}

TEST(ParseLinkSpeedGtpsTest, ReadsThePciCoreSpeedStrings) {
  EXPECT_DOUBLE_EQ(*ParseLinkSpeedGtps("32.0 GT/s PCIe\n"), 32.0);
  EXPECT_DOUBLE_EQ(*ParseLinkSpeedGtps("16.0 GT/s PCIe"), 16.0);
  EXPECT_DOUBLE_EQ(*ParseLinkSpeedGtps("2.5 GT/s PCIe\n\0\0\0"s), 2.5);
  // Kernels before 4.18 printed "8 GT/s" without the bus name.
  EXPECT_DOUBLE_EQ(*ParseLinkSpeedGtps("8 GT/s\n"), 8.0);
}

TEST(ParseLinkSpeedGtpsTest, ReportsNothingForUnknownSpeeds) {
  EXPECT_FALSE(ParseLinkSpeedGtps("Unknown\n"));
  EXPECT_FALSE(ParseLinkSpeedGtps(""));
  EXPECT_FALSE(ParseLinkSpeedGtps("16.0 Gb/s"));
}

TEST(ParseRasCountsTest, ReadsUncorrectableAndCorrectableCounts) {
  std::optional<RasCounts> two_lines = ParseRasCounts("ue: 1\nce: 14\n");
  ASSERT_TRUE(two_lines);
  EXPECT_EQ(two_lines->uncorrectable, 1u);
  EXPECT_EQ(two_lines->correctable, 14u);
  // Newer kernels (ACA) add deferred errors, which are not counted here.
  std::optional<RasCounts> three_lines =
      ParseRasCounts("ue: 0\nce: 5\nde: 3\n");
  ASSERT_TRUE(three_lines);
  EXPECT_EQ(three_lines->uncorrectable, 0u);
  EXPECT_EQ(three_lines->correctable, 5u);
}

TEST(ParseRasCountsTest, ReportsNothingWhenTheCountersAreNotReadable) {
  // amdgpu_ras_sysfs_read during a GPU reset.
  EXPECT_FALSE(ParseRasCounts("Query currently inaccessible\n"));
  EXPECT_FALSE(ParseRasCounts("ue: 0\n"));
  EXPECT_FALSE(ParseRasCounts("ue: many\nce: 0\n"));
  EXPECT_FALSE(ParseRasCounts("ue: 1 2\nce: 0\n"));
  EXPECT_FALSE(ParseRasCounts(""));
}

TEST(AmdGpuModelTest, PrefersTheBoardsProductName) {
  EXPECT_EQ(AmdGpuModel("AMD Instinct MI300X OAM\n", 0x74a1, 0x00),
            "AMD Instinct MI300X OAM");
}

TEST(AmdGpuModelTest, FallsBackToTheTableByDeviceAndRevision) {
  EXPECT_EQ(AmdGpuModel("", 0x74a1, 0x00), "AMD Instinct MI300X");
  EXPECT_EQ(AmdGpuModel("\n", 0x740f, 0x02), "AMD Instinct MI210");
  // One device id, several boards: the revision decides.
  EXPECT_EQ(AmdGpuModel("", 0x73bf, 0xc0), "AMD Radeon RX 6900 XT");
  EXPECT_EQ(AmdGpuModel("", 0x73bf, 0xc1), "AMD Radeon RX 6800 XT");
}

TEST(AmdGpuModelTest, NamesUnknownDevicesByTheirPciId) {
  EXPECT_EQ(AmdGpuModel("", 0x1234, 0x00), "AMD GPU 0x1234");
}

TEST(LookupAmdGpuMarketingNameTest,
     AcceptsAnUnlistedRevisionOnlyWhenUnambiguous) {
  // Every listed 0x74a1 revision is "AMD Instinct MI300X".
  EXPECT_EQ(LookupAmdGpuMarketingName(0x74a1, 0x01), "AMD Instinct MI300X");
  // 0x73bf names three boards; an unlisted revision could be any.
  EXPECT_FALSE(LookupAmdGpuMarketingName(0x73bf, 0xff));
  EXPECT_FALSE(LookupAmdGpuMarketingName(0xffff, 0x00));
}

}  // namespace
}  // namespace lens
