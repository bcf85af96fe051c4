#include "lens/config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace lens {
namespace {

// Files written by WriteTemp, removed when the test program exits.
struct TempFiles {
  ~TempFiles() {
    for (const std::string& p : paths) std::remove(p.c_str());
  }
  std::vector<std::string> paths;
};

// Writes `content` to a fresh file under the test temp dir and returns its
// path.
std::string WriteTemp(const std::string& content) {
  static TempFiles files;
  const std::string path = testing::TempDir() + "lens_config_test_" +
                           std::to_string(::getpid()) + "_" +
                           std::to_string(files.paths.size()) + ".yaml";
  std::ofstream(path, std::ios::binary) << content;
  files.paths.push_back(path);
  return path;
}

// Loader options with a fake environment (the process environment is not
// consulted).
ConfigLoadOptions WithEnv(std::map<std::string, std::string> env) {
  ConfigLoadOptions options;
  options.getenv = [env = std::move(env)](
                       const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  return options;
}

// Loads `yaml` from a temp file with an empty environment; returns the error
// message with the temp path replaced by "F".
std::string LoadError(const std::string& yaml,
                      StatusCode want = StatusCode::kInvalidArgument) {
  const std::string path = WriteTemp(yaml);
  auto config = LoadConfigFile(path, WithEnv({}));
  EXPECT_FALSE(config.ok()) << yaml;
  if (config.ok()) return "";
  EXPECT_EQ(config.status().code(), want) << config.status();
  std::string msg = config.status().message();
  for (size_t pos; (pos = msg.find(path)) != std::string::npos;)
    msg.replace(pos, path.size(), "F");
  return msg;
}

TEST(ConfigTest, LoadsFixtureWithEverySection) {
  auto config = LoadConfigFile(
      std::string(LENS_FIXTURES_DIR) + "/core/lens.yaml", WithEnv({}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->logging.level, LogLevel::kDebug);
  EXPECT_EQ(config->logging.format, LogFormat::kJson);
  EXPECT_TRUE(config->metrics.compat_names);
  EXPECT_EQ(config->metrics.listen_address, "[::]:9400");
  EXPECT_EQ(config->http_port, 8989);
}

TEST(ConfigTest, EmptyFileAndNullSectionsGiveDefaults) {
  for (const char* yaml : {"", "# only a comment\n", "logging:\nmetrics:\n"}) {
    auto config = LoadConfigFile(WriteTemp(yaml), WithEnv({}));
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_EQ(config->logging.level, LogLevel::kInfo);
    EXPECT_EQ(config->logging.format, LogFormat::kText);
    EXPECT_FALSE(config->metrics.compat_names);
    EXPECT_EQ(config->metrics.listen_address, "");
    EXPECT_FALSE(config->http_port.has_value());
  }
}

TEST(ConfigTest, UnknownKeysNameTheirPathAndLocation) {
  EXPECT_EQ(LoadError("logging:\n  levle: info\n"),
            "F:2:3: logging.levle: unknown key");
  EXPECT_EQ(LoadError("httpPort: 80\nfleet:\n  host: x\n"),
            "F:2:1: fleet: unknown key");
  EXPECT_EQ(LoadError("httpPort: 80\nmultiCluster:\n  host: x\n"),
            "F:3:3: multiCluster.host: unknown key");
  EXPECT_EQ(LoadError("httpPort: 80\ndatabase:\n  host: x\n"),
            "F:3:3: database.host: unknown key");
}

TEST(ConfigTest, WrongTypesNamePathExpectedTypeAndLocation) {
  EXPECT_EQ(LoadError("httpPort: eighty\n"),
            "F:1:11: httpPort: expected an integer, got \"eighty\"");
  EXPECT_EQ(LoadError("httpPort: 80.5\n"),
            "F:1:11: httpPort: expected an integer, got \"80.5\"");
  EXPECT_EQ(LoadError("metrics: [1, 2]\n"),
            "F:1:10: metrics: expected a map, got a list");
  EXPECT_EQ(LoadError("metrics:\n  compatNames: maybe\n"),
            "F:2:16: metrics.compatNames: expected a boolean (true/false), got "
            "\"maybe\"");
  EXPECT_EQ(LoadError("logging:\n  level: {a: 1}\n"),
            "F:2:10: logging.level: expected a log level, got a map");
  EXPECT_EQ(LoadError("- a\n- b\n"),
            "F:1:1: (top level): expected a map, got a list");
}

TEST(ConfigTest, BadValuesSayWhatIsAccepted) {
  EXPECT_EQ(LoadError("logging:\n  level: loud\n"),
            "F:2:10: logging.level: unknown log level \"loud\" (want one of: "
            "debug, info, warn, "
            "error)");
  EXPECT_EQ(LoadError("httpPort: 70000\n"),
            "F:1:11: httpPort: must be in 1..65535, got 70000");
  EXPECT_EQ(LoadError("httpPort: 0\n"),
            "F:1:11: httpPort: must be in 1..65535, got 0");
  EXPECT_EQ(LoadError("httpPort: 99999999999999999999\n"),
            "F:1:11: httpPort: must be in 1..65535, got 99999999999999999999");
  EXPECT_EQ(LoadError("metrics:\n  listenAddress: \"::1:9400\"\n"),
            "F:2:18: metrics.listenAddress: \"::1:9400\": IPv6 hosts must be "
            "in brackets, e.g. "
            "[::1]:9400");
  EXPECT_EQ(
      LoadError("metrics:\n  listenAddress: \"host:\"\n"),
      "F:2:18: metrics.listenAddress: \"host:\": port must be in 1..65535");
}

TEST(ConfigTest, DuplicateKeysAreRejected) {
  EXPECT_EQ(LoadError("httpPort: 1\nhttpPort: 2\n"),
            "F:2:1: httpPort: duplicate key");
}

TEST(ConfigTest, SyntaxErrorsAndExtraDocumentsAreInvalidArgument) {
  const std::string syntax = LoadError("logging: [unclosed\n");
  EXPECT_EQ(syntax.rfind("F:", 0), 0u) << syntax;
  EXPECT_NE(syntax.find(": invalid YAML: "), std::string::npos) << syntax;
  EXPECT_EQ(LoadError("httpPort: 1\n---\nhttpPort: 2\n"),
            "F: expected one YAML document, found 2");
}

TEST(ConfigTest, FilesOverTheSizeLimitAreRejectedBeforeParsing) {
  ConfigLoadOptions options = WithEnv({});
  options.max_file_bytes = 64;
  const std::string at_limit =
      WriteTemp("# " + std::string(61, 'x') + "\n");  // 64 bytes
  EXPECT_TRUE(LoadConfigFile(at_limit, options).ok());
  const std::string over =
      WriteTemp("# " + std::string(62, 'x') + "\n");  // 65 bytes
  auto config = LoadConfigFile(over, options);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(config.status().message(),
            "config file " + over + " is larger than the limit of 64 bytes");
  // The default limit is 1 MiB.
  EXPECT_EQ(LoadError("#" + std::string(1 << 20, 'x'),
                      StatusCode::kResourceExhausted),
            "config file F is larger than the limit of 1048576 bytes");
}

TEST(ConfigTest, MissingFileIsNotFoundNamingThePath) {
  const std::string path =
      testing::TempDir() + "lens_config_test_does_not_exist.yaml";
  auto config = LoadConfigFile(path);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kNotFound);
  EXPECT_NE(config.status().message().find(path), std::string::npos)
      << config.status();
}

TEST(ConfigTest, DirectoryIsNotAConfigFile) {
  auto config = LoadConfigFile(testing::TempDir());
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument);
}

TEST(ConfigTest, EnvironmentOverridesTheFile) {
  const std::string path =
      WriteTemp("logging:\n  level: debug\nhttpPort: 8080\n");
  auto config =
      LoadConfigFile(path, WithEnv({{"LENS_LOGGING_LEVEL", "error"},
                                    {"LENS_LOGGING_FORMAT", "json"},
                                    {"LENS_HTTP_PORT", "9000"},
                                    {"LENS_METRICS_COMPAT_NAMES", "true"},
                                    {"LENS_METRICS_LISTEN_ADDRESS", ":9400"},
                                    {"LENS_UNRELATED", "ignored"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->logging.level, LogLevel::kError);
  EXPECT_EQ(config->logging.format, LogFormat::kJson);
  EXPECT_EQ(config->http_port, 9000);
  EXPECT_TRUE(config->metrics.compat_names);  // section absent from the file
  EXPECT_EQ(config->metrics.listen_address, ":9400");
}

TEST(ConfigTest, EnvironmentFillsNullSectionsAndEmptyFiles) {
  auto config = ParseConfig("metrics:\n", "inline",
                            WithEnv({{"LENS_METRICS_COMPAT_NAMES", "TRUE"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->metrics.compat_names);
  auto empty =
      ParseConfig("", "inline", WithEnv({{"LENS_LOGGING_FORMAT", "json"}}));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->logging.format, LogFormat::kJson);
}

TEST(ConfigTest, EmptyEnvironmentVariablesCountAsUnset) {
  auto config = LoadConfigFile(WriteTemp("httpPort: 8080\n"),
                               WithEnv({{"LENS_HTTP_PORT", ""}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->http_port, 8080);
}

TEST(ConfigTest, BadEnvironmentValuesNameTheVariable) {
  auto config = LoadConfigFile(WriteTemp("httpPort: 8080\n"),
                               WithEnv({{"LENS_HTTP_PORT", "x"}}));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "LENS_HTTP_PORT=x: httpPort: expected an integer, got \"x\"");
  auto level =
      ParseConfig("", "inline", WithEnv({{"LENS_LOGGING_LEVEL", "loud"}}));
  ASSERT_FALSE(level.ok());
  EXPECT_EQ(level.status().message(),
            "LENS_LOGGING_LEVEL=loud: logging.level: unknown log level "
            "\"loud\" (want one of: "
            "debug, info, warn, error)");
}

TEST(ConfigTest, CommandLineOverridesWinOverEnvironmentAndFile) {
  ConfigLoadOptions options =
      WithEnv({{"LENS_NODE_EXPORTER_LISTEN_ADDRESS", "0.0.0.0:7000"},
               {"LENS_NODE_EXPORTER_INTERVAL", "10s"}});
  options.overrides = {
      {"nodeExporter.listenAddress", "127.0.0.1:8989", "--listen"},
      {"nodeExporter.nvidiaGpus", "false", "--no-nvml"},
      {"netflow.topRemote", "5", "--top-remote"},
      {"httpPort", "9100", "--http-port"},
  };
  auto config =
      LoadConfig(WriteTemp("nodeExporter:\n  listenAddress: 0.0.0.0:1\n"
                           "  interval: 2s\nnetflow:\n  topRemote: 50\n"),
                 options);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->node_exporter.listen_address, "127.0.0.1:8989");
  EXPECT_EQ(config->node_exporter.interval, std::chrono::seconds(10));
  EXPECT_FALSE(config->node_exporter.nvidia_gpus);
  EXPECT_EQ(config->netflow.top_remote, 5);
  EXPECT_EQ(config->http_port, 9100);
  // No file: the defaults, with the overrides on top.
  auto defaults = LoadConfig("", options);
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->node_exporter.listen_address, "127.0.0.1:8989");
  EXPECT_EQ(defaults->netflow.top_remote, 5);
}

TEST(ConfigTest, BadOverridesNameTheFlag) {
  ConfigLoadOptions options = WithEnv({});
  options.overrides = {{"netflow.topRemote", "many", "--top-remote"}};
  auto config = LoadConfig("", options);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "--top-remote=many: netflow.topRemote: expected an integer, got "
            "\"many\"");
  options.overrides = {{"a.b.c", "1", "--deep"}};
  config = LoadConfig("", options);
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("--deep"), std::string::npos);
  options.overrides = {{"nodeExporter.nope", "1", "--nope"}};
  config = LoadConfig("", options);
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("nodeExporter.nope: unknown key"),
            std::string::npos)
      << config.status();
}

TEST(ConfigTest, OutOfRangeOverridesNameTheFlagOrVariable) {
  ConfigLoadOptions options = WithEnv({});
  options.overrides = {{"nodeExporter.interval", "10ms", "--interval"}};
  auto config = LoadConfig("", options);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "--interval=10ms: nodeExporter.interval: must be at least 100ms");
  options = WithEnv({{"LENS_NETFLOW_INTERVAL", "50ms"}});
  config = LoadConfig("", options);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "LENS_NETFLOW_INTERVAL=50ms: netflow.interval: must be at least "
            "100ms");
  // A value from the file still names the file.
  const std::string file = WriteTemp("netflow:\n  interval: 50ms\n");
  config = LoadConfig(file, WithEnv({}));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message().rfind(file, 0), 0u) << config.status();
}

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

TEST(ConfigTest, ReadsTheProcessEnvironmentByDefault) {
  ASSERT_EQ(::setenv("LENS_METRICS_COMPAT_NAMES", "true", 1), 0);
  auto config = ParseConfig("metrics:\n  compatNames: false\n", "inline");
  ::unsetenv("LENS_METRICS_COMPAT_NAMES");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->metrics.compat_names);
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

TEST(ConfigTest, ValidateChecksStructsBuiltInCode) {
  Config config;
  EXPECT_TRUE(config.Validate().ok());
  config.http_port = 0;
  EXPECT_EQ(config.Validate().message(),
            "httpPort: must be in 1..65535, got 0");
  config.http_port = 65535;
  config.metrics.listen_address = "localhost";
  EXPECT_EQ(config.Validate().message(),
            "metrics: listenAddress: \"localhost\" is not host:port");
  config.metrics.listen_address = "localhost:9400";
  EXPECT_TRUE(config.Validate().ok());
}

}  // namespace
}  // namespace lens
