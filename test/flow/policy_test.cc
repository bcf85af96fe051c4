#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "lens/flow_policy.h"

namespace lens {
namespace {

const std::string kDir = std::string(LENS_FIXTURES_DIR) + "/flow";

TEST(FlowPolicyTest, LoadsTheDualStackFixture) {
  auto p = LoadFlowPolicy(kDir + "/policy.yaml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->internal_hosts,
            (std::vector<std::string>{"10.0.0.0/8", "fd00::/8"}));
  EXPECT_EQ(p->k8s_svc.size(), 2u);
  EXPECT_EQ(p->dns, std::vector<std::string>{"10.96.0.10"});
  EXPECT_EQ(p->docker, std::vector<std::string>{"172.17.0.0/16"});  // scalar
  EXPECT_TRUE(p->resolv_conf.empty());
  // Not in the file: localhost keeps its default.
  EXPECT_EQ(p->localhost, DefaultFlowPolicy().localhost);
}

TEST(FlowPolicyTest, UnknownKeyIsAnErrorWithItsLocation) {
  auto p = ParseFlowPolicy("dns: [10.0.0.1]\nk8sService: [10.96.0.0/12]\n",
                           "policy.yaml");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(
      p.status().message().find("policy.yaml:2:1: k8sService: unknown key"),
      std::string::npos)
      << p.status();
}

TEST(FlowPolicyTest, BadCidrsSayWhatIsWrongAndWhere) {
  struct Case {
    const char* yaml;
    const char* want;
  } cases[] = {
      {"k8sSvc:\n  - 10.96.0.0/12\n  - 10.96.0.0/33\n",
       "policy.yaml:3:5: k8sSvc[1]: \"10.96.0.0/33\": prefix length 33 exceeds "
       "32"},
      {"dns: [10.0.0]\n", "dns[0]: \"10.0.0\" is not an IPv4 or IPv6 address"},
      {"internalHosts: [\"fd00::/129\"]\n", "prefix length 129 exceeds 128"},
      {"internalHosts: [10.0.0.0/-1]\n", "is not a number"},
      {"internalHosts: [10.0.0.0/]\n", "is not a number"},
      {"internalHosts: {a: b}\n", "expected a list of CIDRs"},
      {"- 10.0.0.0/8\n", "expected a map"},
  };
  for (const Case& c : cases) {
    auto p = ParseFlowPolicy(c.yaml, "policy.yaml");
    ASSERT_FALSE(p.ok()) << c.yaml;
    EXPECT_NE(p.status().message().find(c.want), std::string::npos)
        << c.yaml << " -> " << p.status();
  }
}

TEST(FlowPolicyTest, AbsentKeysStartEmptyExceptLocalhostAndResolvConf) {
  auto p = ParseFlowPolicy("dns: [10.96.0.10]\n", "policy.yaml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->internal_hosts.empty());
  EXPECT_TRUE(p->docker.empty());
  EXPECT_EQ(p->localhost, DefaultFlowPolicy().localhost);
  EXPECT_EQ(p->resolv_conf, "/etc/resolv.conf");
  // An empty document is the same policy with no DNS servers listed.
  auto empty = ParseFlowPolicy("", "policy.yaml");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->dns.empty());
  // An explicit null turns resolv.conf off like "".
  auto off = ParseFlowPolicy("resolvConf:\n", "policy.yaml");
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_TRUE(off->resolv_conf.empty());
}

TEST(FlowPolicyTest, DefaultPolicyListsThePrivateRanges) {
  FlowPolicy p = DefaultFlowPolicy();
  EXPECT_EQ(p.localhost, (std::vector<std::string>{"127.0.0.0/8", "::1/128"}));
  EXPECT_EQ(p.docker, std::vector<std::string>{"172.17.0.0/16"});
  EXPECT_EQ(p.internal_hosts.size(), 7u);
  EXPECT_TRUE(p.dns.empty());
  EXPECT_EQ(p.resolv_conf, "/etc/resolv.conf");
}

TEST(FlowPolicyTest, NonStringItemsAndYamlSyntaxErrorsHaveALocation) {
  auto nested = ParseFlowPolicy("dns:\n  - [10.0.0.1]\n", "p.yaml");
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.status().message().find("p.yaml:2:5: dns[0]:"),
            std::string::npos)
      << nested.status();
  auto syntax = ParseFlowPolicy("dns: [10.0.0.1\n", "p.yaml");
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(syntax.status().message().rfind("p.yaml:", 0), 0u)
      << syntax.status();
}

TEST(FlowPolicyTest, Ipv4MappedPrefixesNeedSlash96OrMore) {
  EXPECT_TRUE(
      ParseFlowPolicy("internalHosts: [\"::ffff:10.0.0.0/104\"]\n", "p.yaml")
          .ok());
  auto p =
      ParseFlowPolicy("internalHosts: [\"::ffff:10.0.0.0/80\"]\n", "p.yaml");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("needs /96 or more"), std::string::npos)
      << p.status();
}

TEST(FlowPolicyTest, FilesOverOneMebibyteAreRejected) {
  const std::string path = testing::TempDir() + "/big-policy.yaml";
  {
    std::ofstream out(path);
    out << "# padding\n" << std::string((1 << 20) + 1, '#') << "\n";
  }
  auto p = LoadFlowPolicy(path);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("limited to 1 MiB"), std::string::npos)
      << p.status();
}

TEST(FlowPolicyTest, MissingFileIsNotFound) {
  auto p = LoadFlowPolicy(kDir + "/no-such-policy.yaml");
  EXPECT_EQ(p.status().code(), StatusCode::kNotFound);
}

TEST(FlowPolicyTest, ResolvConfNameservers) {
  const char* text =
      "# comment\nsearch cluster.local\noptions ndots:5\n"
      "nameserver 10.96.0.10\nnameserver fe80::1%eth0\n"
      "nameserver not-an-address\n;nameserver 192.0.2.1\n"
      "nameserver\t192.0.2.53 # trailing\nnameservers 1.1.1.1\n";
  auto servers = ParseResolvConf(text);
  ASSERT_EQ(servers.size(), 3u);
  EXPECT_EQ(servers[0].ToString(), "10.96.0.10");
  EXPECT_EQ(servers[1].ToString(), "fe80::1");
  EXPECT_EQ(servers[2].ToString(), "192.0.2.53");
}

TEST(IpAddressTest, ParsesFormatsAndUnmaps) {
  auto v4 = IpAddress::Parse("10.1.2.3");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->family, 4);
  EXPECT_EQ(v4->ToString(), "10.1.2.3");
  auto mapped = IpAddress::Parse("::ffff:10.1.2.3");
  ASSERT_TRUE(mapped.ok());
  EXPECT_EQ(mapped->family, 6);
  EXPECT_EQ(mapped->Unmapped(), *v4);
  auto v6 = IpAddress::Parse("fd00::1");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->Unmapped(), *v6);
  EXPECT_TRUE(IpAddress::Parse("::")->IsUnspecified());
  EXPECT_TRUE(IpAddress::Parse("0.0.0.0")->IsUnspecified());
  EXPECT_FALSE(IpAddress::Parse("10.1.2").ok());
  EXPECT_EQ(FlowClassName(FlowClass::kK8sSvc), "k8s_svc");
  EXPECT_EQ(FlowDirectionName(FlowDirection::kIngress), "ingress");
}

TEST(IpAddressTest, BuildsFromBytesAndPrintsCanonically) {
  const uint8_t v4[4] = {192, 0, 2, 1};
  EXPECT_EQ(IpAddress::V4(v4).ToString(), "192.0.2.1");
  EXPECT_EQ(IpAddress::V4(v4), *IpAddress::Parse("192.0.2.1"));
  const uint8_t v6[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  EXPECT_EQ(IpAddress::V6(v6).ToString(), "fd00::1");
  EXPECT_EQ(IpAddress::Parse("FD00:0:0:0::1")->ToString(), "fd00::1");
  // An IPv4 address and its mapped form differ until unmapped.
  EXPECT_NE(*IpAddress::Parse("::ffff:192.0.2.1"), IpAddress::V4(v4));
  EXPECT_FALSE(IpAddress::Parse("fe80::1%eth0").ok());
  EXPECT_FALSE(IpAddress::Parse("").ok());
  EXPECT_NE(
      IpAddress::Parse("10.0.0.256").status().message().find("\"10.0.0.256\""),
      std::string::npos);
}

}  // namespace
}  // namespace lens
