#include <gtest/gtest.h>

#include <string>

#include "lens/flow_policy.h"

namespace lens {
namespace {

const std::string kDir = std::string(LENS_FIXTURES_DIR) + "/flow";

FlowClass Of(const FlowClassifier& c, const char* addr) {
  auto ip = IpAddress::Parse(addr);
  EXPECT_TRUE(ip.ok()) << addr;
  return c.Classify(*ip);
}

std::unique_ptr<FlowClassifier> Fixture() {
  auto p = LoadFlowPolicy(kDir + "/policy.yaml");
  EXPECT_TRUE(p.ok()) << p.status();
  auto c = FlowClassifier::Create(*p);
  EXPECT_TRUE(c.ok()) << c.status();
  return std::move(*c);
}

TEST(FlowClassifierTest, LongestPrefixWinsAcrossClasses) {
  auto c = Fixture();
  EXPECT_EQ(Of(*c, "10.96.0.10"), FlowClass::kDns);    // /32
  EXPECT_EQ(Of(*c, "10.96.0.1"), FlowClass::kK8sSvc);  // /12
  EXPECT_EQ(Of(*c, "10.111.255.255"), FlowClass::kK8sSvc);
  EXPECT_EQ(Of(*c, "10.112.0.0"), FlowClass::kInternal);  // just past /12
  EXPECT_EQ(Of(*c, "10.244.3.7"), FlowClass::kK8sPod);
  EXPECT_EQ(Of(*c, "10.1.2.3"), FlowClass::kInternal);
  EXPECT_EQ(Of(*c, "172.17.0.2"), FlowClass::kDocker);
  EXPECT_EQ(Of(*c, "127.0.0.1"), FlowClass::kLocalhost);
  EXPECT_EQ(Of(*c, "8.8.8.8"), FlowClass::kExternal);
  EXPECT_EQ(Of(*c, "192.168.1.1"), FlowClass::kExternal);  // not in this policy
}

TEST(FlowClassifierTest, Ipv6AndMappedAddresses) {
  auto c = Fixture();
  EXPECT_EQ(Of(*c, "::1"), FlowClass::kLocalhost);
  EXPECT_EQ(Of(*c, "fd00:10:96::a"), FlowClass::kK8sSvc);
  EXPECT_EQ(Of(*c, "fd00:10:244:0:1::5"), FlowClass::kK8sPod);
  EXPECT_EQ(Of(*c, "fd00:10:245::1"), FlowClass::kInternal);
  EXPECT_EQ(Of(*c, "2001:db8::1"), FlowClass::kExternal);
  EXPECT_EQ(Of(*c, "::ffff:10.96.0.10"), FlowClass::kDns);
  EXPECT_EQ(Of(*c, "::ffff:8.8.8.8"), FlowClass::kExternal);
}

TEST(FlowClassifierTest, EqualPrefixesGoToTheEarlierClass) {
  FlowPolicy p;
  p.resolv_conf.clear();
  p.internal_hosts = {"10.0.0.0/8"};
  p.k8s_pod = {"10.0.0.0/8"};
  auto c = FlowClassifier::Create(p);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(Of(**c, "10.9.9.9"), FlowClass::kK8sPod);
}

TEST(FlowClassifierTest, HostBitsInAPrefixAreIgnored) {
  FlowPolicy p;
  p.resolv_conf.clear();
  p.k8s_svc = {"10.96.7.7/12", "fd00::1234/16"};
  auto c = FlowClassifier::Create(p);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(Of(**c, "10.100.0.1"), FlowClass::kK8sSvc);
  EXPECT_EQ(Of(**c, "fd00:ffff::1"), FlowClass::kK8sSvc);
}

TEST(FlowClassifierTest, DefaultPolicyKnowsThePrivateRanges) {
  FlowPolicy p = DefaultFlowPolicy();
  p.resolv_conf.clear();
  auto c = FlowClassifier::Create(p);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(Of(**c, "127.0.0.53"), FlowClass::kLocalhost);
  EXPECT_EQ(Of(**c, "::1"), FlowClass::kLocalhost);
  EXPECT_EQ(Of(**c, "172.17.0.3"), FlowClass::kDocker);    // /16 in 172.16/12
  EXPECT_EQ(Of(**c, "172.18.0.3"), FlowClass::kInternal);  // other bridges
  EXPECT_EQ(Of(**c, "172.32.0.1"), FlowClass::kExternal);  // past 172.16/12
  EXPECT_EQ(Of(**c, "192.168.1.1"), FlowClass::kInternal);
  EXPECT_EQ(Of(**c, "100.64.0.1"), FlowClass::kInternal);   // CGNAT
  EXPECT_EQ(Of(**c, "100.128.0.1"), FlowClass::kExternal);  // past /10
  EXPECT_EQ(Of(**c, "169.254.169.254"), FlowClass::kInternal);
  EXPECT_EQ(Of(**c, "fd12:3456::1"), FlowClass::kInternal);  // fc00::/7
  EXPECT_EQ(Of(**c, "fe80::1"), FlowClass::kInternal);
  EXPECT_EQ(Of(**c, "2606:4700::1111"), FlowClass::kExternal);
  EXPECT_EQ(Of(**c, "1.1.1.1"), FlowClass::kExternal);
}

TEST(FlowClassifierTest, FamiliesDoNotMixExceptThroughMappedAddresses) {
  FlowPolicy p;
  p.resolv_conf.clear();
  p.internal_hosts = {"::/0"};
  p.docker = {"::ffff:172.17.0.0/112"};  // the IPv4 prefix 172.17.0.0/16
  auto c = FlowClassifier::Create(p);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(Of(**c, "2001:db8::1"), FlowClass::kInternal);
  EXPECT_EQ(Of(**c, "8.8.8.8"), FlowClass::kExternal);  // ::/0 is IPv6 only
  EXPECT_EQ(Of(**c, "172.17.1.2"), FlowClass::kDocker);
  EXPECT_EQ(Of(**c, "::ffff:172.17.1.2"), FlowClass::kDocker);
  EXPECT_EQ(Of(**c, "::ffff:8.8.8.8"), FlowClass::kExternal);
}

TEST(FlowClassifierTest, DefaultRouteAndHostPrefixes) {
  FlowPolicy p;
  p.resolv_conf.clear();
  p.internal_hosts = {"0.0.0.0/0"};
  p.dns = {"192.0.2.53/32", "2001:db8::53"};
  p.k8s_svc = {"2001:db8::/64"};
  auto c = FlowClassifier::Create(p);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(Of(**c, "8.8.8.8"), FlowClass::kInternal);
  EXPECT_EQ(Of(**c, "192.0.2.53"), FlowClass::kDns);
  EXPECT_EQ(Of(**c, "192.0.2.54"), FlowClass::kInternal);
  EXPECT_EQ(Of(**c, "2001:db8::53"), FlowClass::kDns);
  EXPECT_EQ(Of(**c, "2001:db8::54"), FlowClass::kK8sSvc);
  EXPECT_EQ(Of(**c, "2001:db8:0:1::53"), FlowClass::kExternal);
}

TEST(FlowClassifierTest, NameserversFromResolvConfAreDns) {
  FlowPolicy p = DefaultFlowPolicy();
  p.resolv_conf = kDir + "/resolv.conf";
  auto c = FlowClassifier::Create(p);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(Of(**c, "10.96.0.10"), FlowClass::kDns);
  EXPECT_EQ(Of(**c, "192.0.2.53"), FlowClass::kDns);
  EXPECT_EQ(Of(**c, "fe80::1"), FlowClass::kDns);
  EXPECT_EQ(Of(**c, "fe80::2"), FlowClass::kInternal);    // default fe80::/10
  EXPECT_EQ(Of(**c, "192.0.2.1"), FlowClass::kExternal);  // commented out
  p.resolv_conf = kDir + "/no-such-resolv.conf";  // missing: not an error
  EXPECT_TRUE(FlowClassifier::Create(p).ok());
}

TEST(FlowClassifierTest, RejectsABadCidrNotMadeByTheParser) {
  FlowPolicy p;
  p.dns = {"10.0.0.1/40"};
  auto c = FlowClassifier::Create(p);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("prefix length 40 exceeds 32"),
            std::string::npos)
      << c.status();
}

TEST(FlowClassifierTest, AnUnreadableResolvConfIsAnError) {
  FlowPolicy p;
  p.resolv_conf = kDir;  // a directory: exists but cannot be read as a file
  auto c = FlowClassifier::Create(p);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find(kDir), std::string::npos) << c.status();
}

}  // namespace
}  // namespace lens
