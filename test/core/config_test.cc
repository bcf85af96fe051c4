#include "service/config.h"

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

#include "config_test_util.h"

namespace lens {
namespace {

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
  // A rule across keys names the flag that set one of them, not "defaults";
  // a key that only starts like it (jobsCaFile vs jobs) does not count.
  options.overrides = {
      {"nodeExporter.containerRuntime", "docker", "--container-runtime"},
      {"nodeExporter.dockerSocket", "", "--docker-socket"}};
  config = LoadConfig("", options);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "--docker-socket=: nodeExporter: dockerSocket must not be empty "
            "while containers is on with containerRuntime docker");
  // With a file that may have set the other key, both are named.
  const std::string file = WriteTemp("nodeExporter:\n  dockerSocket: \"\"\n");
  options.overrides = {
      {"nodeExporter.containerRuntime", "docker", "--container-runtime"}};
  config = LoadConfig(file, options);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            file +
                ": nodeExporter: dockerSocket must not be empty while "
                "containers is on with containerRuntime docker "
                "(--container-runtime=docker)");
  options.overrides = {{"jobs.tlsCertFile", "/c.pem", "--jobs-tls-cert"}};
  config = LoadConfig("", options);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "--jobs-tls-cert=/c.pem: jobs: tlsCertFile and tlsKeyFile must be "
            "set together");
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

TEST(ConfigTest, ReadsTheProcessEnvironmentByDefault) {
  ASSERT_EQ(::setenv("LENS_METRICS_COMPAT_NAMES", "true", 1), 0);
  auto config = ParseConfig("metrics:\n  compatNames: false\n", "inline");
  ::unsetenv("LENS_METRICS_COMPAT_NAMES");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->metrics.compat_names);
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
