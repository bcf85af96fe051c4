// The config sections of the daemons (netflow, jobs and database, controller)
// and the node agent's cadence and health keys: defaults, overrides from the
// file and the environment, and errors named by key.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "config_test_util.h"
#include "service/config.h"

namespace lens {
namespace {

// The node agent's cadence and device-health keys: durations, with limits
// named by key.
TEST(ConfigTest, NodeExporterRdmaCadenceAndDeviceHealthKeys) {
  auto config = LoadConfig(WriteTemp("nodeExporter:\n"
                                     "  rdmaSlowCountersInterval: 2m\n"
                                     "  healthDegradedClearAfter: 10m\n"
                                     "  healthUnhealthyClearAfter: 2h\n"),
                           WithEnv({}));
  ASSERT_TRUE(config.ok()) << config.status();
  const NodeExporterOptions& ne = config->node_exporter;
  EXPECT_EQ(ne.rdma_slow_counters_interval, std::chrono::minutes(2));
  EXPECT_EQ(ne.health_degraded_clear_after, std::chrono::minutes(10));
  EXPECT_EQ(ne.health_unhealthy_clear_after, std::chrono::hours(2));
  // Defaults: 30 s, 30 min, 1 h.
  config = LoadConfig("", WithEnv({}));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->node_exporter.rdma_slow_counters_interval,
            std::chrono::seconds(30));
  EXPECT_EQ(config->node_exporter.health_unhealthy_clear_after,
            std::chrono::hours(1));
  for (const auto& [yaml, key] :
       std::vector<std::pair<std::string, std::string>>{
           {"  rdmaSlowCountersInterval: 1s\n", "rdmaSlowCountersInterval"},
           {"  healthDegradedClearAfter: 30s\n", "healthDegradedClearAfter"},
           {"  healthUnhealthyClearAfter: soon\n",
            "healthUnhealthyClearAfter"}}) {
    config = LoadConfig(WriteTemp("nodeExporter:\n" + yaml), WithEnv({}));
    ASSERT_FALSE(config.ok()) << yaml;
    EXPECT_NE(config.status().message().find(key), std::string::npos)
        << config.status();
  }
}

TEST(ConfigTest, NetflowSectionWithDefaultsAndLimits) {
  auto defaults = ParseConfig("", "inline", WithEnv({}));
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->netflow.listen_address, "0.0.0.0:8990");
  EXPECT_EQ(defaults->netflow.interval, std::chrono::seconds(5));
  EXPECT_EQ(defaults->netflow.top_remote, 20);
  EXPECT_EQ(defaults->netflow.max_flows, 65536);
  EXPECT_EQ(defaults->netflow.bpf_stats_window, std::chrono::seconds(1));
  EXPECT_EQ(defaults->netflow.bpf_stats_period, std::chrono::seconds(20));
  auto config = ParseConfig(
      "netflow:\n  listenAddress: 127.0.0.1:9990\n  interval: 2s\n"
      "  policyFile: /etc/lens/policy.yaml\n  topRemote: 5\n"
      "  maxFlows: 131072\n  bearerTokenFile: /etc/lens/token\n"
      "  bpfStatsWindow: 2s\n  bpfStatsPeriod: 1m\n",
      "inline", WithEnv({{"LENS_NETFLOW_INTERVAL", "500ms"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->netflow.listen_address, "127.0.0.1:9990");
  EXPECT_EQ(config->netflow.interval, std::chrono::milliseconds(500));
  EXPECT_EQ(config->netflow.policy_file, "/etc/lens/policy.yaml");
  EXPECT_EQ(config->netflow.top_remote, 5);
  EXPECT_EQ(config->netflow.max_flows, 131072);
  EXPECT_EQ(config->netflow.bearer_token_file, "/etc/lens/token");
  EXPECT_EQ(config->netflow.bpf_stats_window, std::chrono::seconds(2));
  EXPECT_EQ(config->netflow.bpf_stats_period, std::chrono::minutes(1));
  EXPECT_NE(LoadError("netflow:\n  bpfStatsWindow: 30s\n")
                .find("netflow: bpfStatsWindow: must be between 0 and "
                      "bpfStatsPeriod (30000ms of 20000ms)"),
            std::string::npos)
      << LoadError("netflow:\n  bpfStatsWindow: 30s\n");
  EXPECT_EQ(LoadError("netflow:\n  topRemote: 5000\n"),
            "F:2:14: netflow.topRemote: must be in 0..1000, got 5000");
  EXPECT_EQ(LoadError("netflow:\n  maxFlows: 10\n"),
            "F:2:13: netflow.maxFlows: must be in 1024..4194304, got 10");
  EXPECT_EQ(LoadError("netflow:\n  polcyFile: x\n"),
            "F:2:3: netflow.polcyFile: unknown key");
  EXPECT_NE(LoadError("netflow:\n  interval: 50ms\n").find("at least 100ms"),
            std::string::npos);
}

TEST(ConfigTest, JobsAndDatabaseSections) {
  auto defaults = ParseConfig("", "inline", WithEnv({}));
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->jobs.listen_grpc, "0.0.0.0:50051");
  EXPECT_EQ(defaults->jobs.listen_http, "0.0.0.0:8993");
  EXPECT_EQ(defaults->jobs.max_agent_streams, 2048);
  EXPECT_EQ(defaults->database.url, "sqlite:///var/lib/lens/lens.db");
  auto config = ParseConfig(
      "jobs:\n  listenGrpc: 127.0.0.1:6000\n  maxAgentStreams: 10\n"
      "  bearerTokenFile: /etc/lens/token\n"
      "database:\n  url: postgresql://lens@db:5432/lens\n",
      "inline",
      WithEnv({{"LENS_JOBS_LISTEN_HTTP", "127.0.0.1:6001"},
               {"LENS_STORE_URL", "postgresql://lens:pw@db2:5432/lens"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->jobs.listen_grpc, "127.0.0.1:6000");
  EXPECT_EQ(config->jobs.listen_http, "127.0.0.1:6001");
  EXPECT_EQ(config->jobs.max_agent_streams, 10);
  EXPECT_EQ(config->jobs.bearer_token_file, "/etc/lens/token");
  EXPECT_EQ(config->database.url, "postgresql://lens:pw@db2:5432/lens");
  EXPECT_EQ(LoadError("jobs:\n  maxAgentStreams: 0\n"),
            "F:2:20: jobs.maxAgentStreams: must be in 1..65536, got 0");
  EXPECT_EQ(LoadError("jobs:\n  tlsCertFile: /c.pem\n"),
            "F: jobs: tlsCertFile and tlsKeyFile must be set together");
  // A bad URL from the environment: named, its password never shown.
  auto bad = ParseConfig(
      "", "inline", WithEnv({{"LENS_STORE_URL", "mysql://u:hunter2@h/db"}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "LENS_STORE_URL=mysql://u:***@h/db: database.url: "
            "mysql://u:***@h/db is not sqlite:///path.db or "
            "postgresql://user@host:5432/db");
}

TEST(ConfigTest, ControllerSection) {
  auto defaults = ParseConfig("", "inline", WithEnv({}));
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->controller.listen_http, "0.0.0.0:8992");
  EXPECT_TRUE(defaults->controller.leader_election);
  EXPECT_FALSE(defaults->controller.in_cluster);
  EXPECT_EQ(defaults->controller.lease_namespace, "lens");
  EXPECT_EQ(defaults->controller.gpu_resources,
            "amd.com/gpu,nvidia.com/gpu,nvidia.com/mig-*");
  auto config = ParseConfig(
      "controller:\n  kubeconfig: /etc/lens/kubeconfig\n  context: prod\n"
      "  leaderElection: false\n  gpuResources: amd.com/gpu\n",
      "inline",
      WithEnv({{"LENS_CONTROLLER_LEASE_NAMESPACE", "monitoring"},
               {"LENS_CONTROLLER_IDENTITY", "replica-7"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->controller.kubeconfig, "/etc/lens/kubeconfig");
  EXPECT_EQ(config->controller.context, "prod");
  EXPECT_FALSE(config->controller.leader_election);
  EXPECT_EQ(config->controller.gpu_resources, "amd.com/gpu");
  EXPECT_EQ(config->controller.lease_namespace, "monitoring");
  EXPECT_EQ(config->controller.identity, "replica-7");
  EXPECT_EQ(LoadError("controller:\n  gpuResources: amd.com/gpu,,x\n"),
            "F:2:17: controller.gpuResources: \"\" is not a resource name "
            "(domain/name, '*' only at the end)");
  EXPECT_EQ(LoadError("controller:\n  leaseNamespace: Lens_NS\n"),
            "F:2:19: controller.leaseNamespace: \"Lens_NS\" is not a "
            "namespace name");
  EXPECT_EQ(LoadError("controller:\n  inCluster: yes please\n"),
            "F:2:14: controller.inCluster: expected a boolean (true/false), "
            "got \"yes please\"");
  EXPECT_EQ(LoadError("controller:\n  inCluster: true\n  kubeconfig: /k\n"),
            "F: controller: kubeconfig: set either kubeconfig or inCluster, "
            "not both");
  EXPECT_EQ(LoadError("controller:\n  listenHttp: nowhere\n"),
            "F:2:15: controller.listenHttp: \"nowhere\" is not host:port");
}

// Every key of every section can come from the environment, not a chosen
// few: a variable for each, checked by the same rules as the file.
TEST(ConfigTest, EveryKeyHasAnEnvironmentVariable) {
  auto config = ParseConfig(
      "", "inline",
      WithEnv({{"LENS_NODE_EXPORTER_AMD_SMI_PATH", "/opt/rocm/bin/amd-smi"},
               {"LENS_NODE_EXPORTER_CONTAINERS", "false"},
               {"LENS_NODE_EXPORTER_JOBS_ADDRESS", "lens-jobs:50051"},
               {"LENS_NETFLOW_MAX_FLOWS", "2048"},
               {"LENS_NETFLOW_TOP_REMOTE", "3"},
               {"LENS_JOBS_MAX_AGENT_STREAMS", "7"},
               {"LENS_JOBS_TLS_CERT_FILE", "/c.pem"},
               {"LENS_JOBS_TLS_KEY_FILE", "/k.pem"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->node_exporter.amd_smi_path, "/opt/rocm/bin/amd-smi");
  EXPECT_FALSE(config->node_exporter.containers);
  EXPECT_EQ(config->node_exporter.jobs_address, "lens-jobs:50051");
  EXPECT_EQ(config->netflow.max_flows, 2048);
  EXPECT_EQ(config->netflow.top_remote, 3);
  EXPECT_EQ(config->jobs.max_agent_streams, 7);
  EXPECT_EQ(config->jobs.tls_key_file, "/k.pem");
}

}  // namespace
}  // namespace lens
