// The `multiCluster:` keys of lens-multicluster: defaults, every key
// decoded, the environment's variables, and refusals that name the key and
// the file line.
#include <gtest/gtest.h>

#include "service/config.h"

namespace lens {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

ConfigLoadOptions NoEnv() {
  ConfigLoadOptions o;
  o.getenv = [](const std::string&) -> std::optional<std::string> {
    return std::nullopt;
  };
  return o;
}

std::string Error(const std::string& yaml,
                  const ConfigLoadOptions& options = NoEnv()) {
  auto c = ParseConfig(yaml, "inline", options);
  return c.ok() ? "(accepted)" : c.status().message();
}

TEST(ConfigMultiClusterTest, Defaults) {
  auto c = ParseConfig("", "inline", NoEnv());
  ASSERT_TRUE(c.ok()) << c.status();
  const MultiClusterOptions& m = c->multi_cluster;
  EXPECT_EQ(m.listen_address, "0.0.0.0:8996");
  EXPECT_EQ(m.namespace_name, "lens");
  EXPECT_EQ(m.clusters_secret, "lens-clusters");
  EXPECT_EQ(m.storage_secret, "lens-storage");
  EXPECT_EQ(m.storage_namespace, "lens");
  EXPECT_EQ(m.output_secret, "lens-clusters-config");
  EXPECT_EQ(m.refresh, seconds(30));
  EXPECT_EQ(m.request_timeout, seconds(10));
  EXPECT_TRUE(m.leader_election);
  EXPECT_EQ(m.lease_namespace, "lens");
  EXPECT_EQ(m.lease_name, "lens-multicluster");
  EXPECT_FALSE(m.in_cluster);
  EXPECT_TRUE(m.kubeconfig.empty());
}

TEST(ConfigMultiClusterTest, EveryKeyIsDecoded) {
  auto c = ParseConfig(
      "multiCluster:\n"
      "  listenAddress: 127.0.0.1:0\n"
      "  kubeconfig: /etc/lens/home.kubeconfig\n"
      "  context: home\n"
      "  namespace: observability\n"
      "  clustersSecret: members\n"
      "  storageSecret: storage\n"
      "  storageNamespace: lens-system\n"
      "  outputSecret: directory\n"
      "  refresh: 1m\n"
      "  requestTimeout: 500ms\n"
      "  leaderElection: false\n"
      "  leaseNamespace: kube-system\n"
      "  leaseName: mc\n"
      "  identity: replica-a\n"
      "  bearerTokenFile: /etc/lens/token\n"
      "  tlsCertFile: /etc/lens/tls.crt\n"
      "  tlsKeyFile: /etc/lens/tls.key\n",
      "inline", NoEnv());
  ASSERT_TRUE(c.ok()) << c.status();
  const MultiClusterOptions& m = c->multi_cluster;
  EXPECT_EQ(m.listen_address, "127.0.0.1:0");
  EXPECT_EQ(m.kubeconfig, "/etc/lens/home.kubeconfig");
  EXPECT_EQ(m.context, "home");
  EXPECT_EQ(m.namespace_name, "observability");
  EXPECT_EQ(m.clusters_secret, "members");
  EXPECT_EQ(m.storage_secret, "storage");
  EXPECT_EQ(m.storage_namespace, "lens-system");
  EXPECT_EQ(m.output_secret, "directory");
  EXPECT_EQ(m.refresh, seconds(60));
  EXPECT_EQ(m.request_timeout, milliseconds(500));
  EXPECT_FALSE(m.leader_election);
  EXPECT_EQ(m.lease_namespace, "kube-system");
  EXPECT_EQ(m.lease_name, "mc");
  EXPECT_EQ(m.identity, "replica-a");
  EXPECT_EQ(m.bearer_token_file, "/etc/lens/token");
  EXPECT_EQ(m.tls_cert_file, "/etc/lens/tls.crt");
  EXPECT_EQ(m.tls_key_file, "/etc/lens/tls.key");
}

TEST(ConfigMultiClusterTest, TheEnvironmentSetsKeys) {
  ConfigLoadOptions o;
  o.getenv = [](const std::string& name) -> std::optional<std::string> {
    if (name == "LENS_MULTI_CLUSTER_REFRESH") return "2s";
    if (name == "LENS_MULTI_CLUSTER_IN_CLUSTER") return "true";
    return std::nullopt;
  };
  auto c = ParseConfig("", "inline", o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->multi_cluster.refresh, seconds(2));
  EXPECT_TRUE(c->multi_cluster.in_cluster);

  o.getenv = [](const std::string& name) -> std::optional<std::string> {
    if (name == "LENS_MULTI_CLUSTER_REFRESH") return "10ms";
    return std::nullopt;
  };
  EXPECT_EQ(Error("", o),
            "LENS_MULTI_CLUSTER_REFRESH=10ms: multiCluster.refresh: must be "
            "at least 1s");
}

TEST(ConfigMultiClusterTest, RefusalsNameTheKeyAndTheLine) {
  EXPECT_EQ(Error("multiCluster:\n  refresh: 200ms\n"),
            "inline:2:12: multiCluster.refresh: must be at least 1s");
  EXPECT_EQ(Error("multiCluster:\n  refresh: soon\n"),
            "inline:2:12: multiCluster.refresh: expected a duration such as "
            "5s or 500ms, got \"soon\"");
  EXPECT_EQ(Error("multiCluster:\n  requestTimeout: 10ms\n"),
            "inline:2:19: multiCluster.requestTimeout: must be at least 100ms");
  EXPECT_EQ(Error("multiCluster:\n  clusterSecret: x\n"),
            "inline:2:3: multiCluster.clusterSecret: unknown key");
  EXPECT_EQ(Error("multiCluster:\n  namespace: Lens_NS\n"),
            "inline:2:14: multiCluster.namespace: \"Lens_NS\" is not a "
            "namespace name (a DNS label)");
  EXPECT_EQ(Error("multiCluster:\n  outputSecret: lens-clusters\n"),
            "inline:2:17: multiCluster.outputSecret: must differ from "
            "clustersSecret (\"lens-clusters\")");
  EXPECT_EQ(Error("multiCluster:\n  listenAddress: nowhere\n"),
            "inline:2:18: multiCluster.listenAddress: \"nowhere\" is not "
            "host:port");
  EXPECT_EQ(Error("multiCluster:\n  leaderElection: maybe\n"),
            "inline:2:19: multiCluster.leaderElection: expected a boolean "
            "(true/false), got \"maybe\"");
  // Rules across keys: at the section, named.
  EXPECT_EQ(Error("multiCluster:\n  kubeconfig: /k\n  inCluster: true\n"),
            "inline: multiCluster: kubeconfig: set either kubeconfig or "
            "inCluster, not both");
  EXPECT_EQ(Error("multiCluster:\n  tlsCertFile: /c\n"),
            "inline: multiCluster: tlsCertFile and tlsKeyFile must be set "
            "together");
}

}  // namespace
}  // namespace lens
