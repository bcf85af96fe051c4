// The value parsers behind RdmaDevice / RdmaPort, on the exact strings the
// kernel prints (drivers/infiniband/core/sysfs.c rate_show, state_show, ...).
#include "rdma/rdma_sysfs.h"

#include <gtest/gtest.h>

namespace lens::rdma {
namespace {

TEST(StripEnumPrefixTest, RemovesTheNumberAndColon) {
  EXPECT_EQ(StripEnumPrefix("4: ACTIVE\n"), "ACTIVE");
  EXPECT_EQ(StripEnumPrefix("1: DOWN"), "DOWN");
  EXPECT_EQ(StripEnumPrefix("5: LinkUp\n"), "LinkUp");
  EXPECT_EQ(StripEnumPrefix("3: Disabled"), "Disabled");
  EXPECT_EQ(StripEnumPrefix("4: PortConfigurationTraining"),
            "PortConfigurationTraining");
  EXPECT_EQ(StripEnumPrefix("1: CA\n"), "CA");
  EXPECT_EQ(StripEnumPrefix("4: usNIC UDP"), "usNIC UDP");
}

TEST(StripEnumPrefixTest, KeepsTextWithoutAPrefix) {
  EXPECT_EQ(StripEnumPrefix("InfiniBand\n"), "InfiniBand");
  EXPECT_EQ(StripEnumPrefix("4:ACTIVE"), "4:ACTIVE");
  EXPECT_EQ(StripEnumPrefix(": x"), ": x");
  EXPECT_EQ(StripEnumPrefix(""), "");
}

TEST(ParseRateGbpsTest, ReadsEveryKernelRateShape) {
  EXPECT_EQ(ParseRateGbps("400 Gb/sec (4X NDR)\n"), 400.0);
  EXPECT_EQ(ParseRateGbps("200 Gb/sec (4X HDR)"), 200.0);
  EXPECT_EQ(ParseRateGbps("100 Gb/sec (4X EDR)"), 100.0);
  EXPECT_EQ(ParseRateGbps("25 Gb/sec (1X EDR)"), 25.0);
  EXPECT_EQ(ParseRateGbps("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_EQ(ParseRateGbps("56 Gb/sec (4X FDR)"), 56.0);
  // i40iw prints the width without a speed name.
  EXPECT_EQ(ParseRateGbps("10 Gb/sec (4X)"), 10.0);
}

TEST(ParseRateGbpsTest, RejectsTextThatIsNotARate) {
  EXPECT_EQ(ParseRateGbps(""), std::nullopt);
  EXPECT_EQ(ParseRateGbps("400"), std::nullopt);
  EXPECT_EQ(ParseRateGbps("400 Mb/sec"), std::nullopt);
  EXPECT_EQ(ParseRateGbps("N/A"), std::nullopt);
  EXPECT_EQ(ParseRateGbps("Gb/sec (4X NDR)"), std::nullopt);
}

TEST(IsPciAddressTest, AcceptsSysfsFunctionNames) {
  EXPECT_TRUE(IsPciAddress("0000:0d:00.0"));
  EXPECT_TRUE(IsPciAddress("0000:c1:00.1"));
  EXPECT_TRUE(IsPciAddress("10000:e1:00.7"));  // VMD domain
}

TEST(IsPciAddressTest, RejectsOtherLinkTargets) {
  EXPECT_FALSE(IsPciAddress(""));
  EXPECT_FALSE(IsPciAddress(".."));
  EXPECT_FALSE(IsPciAddress("eth0"));
  EXPECT_FALSE(IsPciAddress("0d:00.0"));
  EXPECT_FALSE(IsPciAddress("0000:0d:00.8"));
  EXPECT_FALSE(IsPciAddress("0000:0g:00.0"));
  EXPECT_FALSE(IsPciAddress("0000:0d:00.0x"));
}

}  // namespace
}  // namespace lens::rdma
