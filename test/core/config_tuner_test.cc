// The `tuner:` keys of lens-tuner: defaults, sysctls and limits decoded to
// canonical values, the flag forms, and refusals that name the key, the
// file line and what would be accepted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "service/config.h"
#include "service/tuner_service.h"

namespace lens {
namespace {

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

TEST(ConfigTunerTest, DefaultsTuneNothing) {
  auto c = ParseConfig("", "inline", NoEnv());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->tuner.listen_address, "0.0.0.0:8995");
  EXPECT_EQ(c->tuner.interval, std::chrono::seconds(30));
  EXPECT_EQ(c->tuner.proc_root, "/proc");
  EXPECT_EQ(c->tuner.etc_root, "/etc");
  EXPECT_TRUE(c->tuner.persist);
  EXPECT_TRUE(c->tuner.sysctls.empty());
  EXPECT_TRUE(c->tuner.limits.empty());
  auto o = TunerServiceOptionsFromConfig(*c);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->http.listen, "0.0.0.0:8995");
  EXPECT_EQ(o->interval, std::chrono::seconds(30));
}

// The example config of every section carries a `tuner:` section.
TEST(ConfigTunerTest, TheExampleConfigTunesANode) {
  auto c = LoadConfigFile(std::string(LENS_FIXTURES_DIR) + "/core/lens.yaml",
                          NoEnv());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->tuner.sysctls.at("vm.max_map_count"), "262144");
  ASSERT_EQ(c->tuner.limits.size(), 2u);
  EXPECT_EQ(c->tuner.limits[1].item, "memlock");
  EXPECT_EQ(c->tuner.limits[1].value, "unlimited");
}

TEST(ConfigTunerTest, SysctlsAndLimitsBecomeCanonicalValues) {
  auto c = ParseConfig(
      "tuner:\n"
      "  interval: 5s\n"
      "  procRoot: /host/proc\n"
      "  etcRoot: /host/etc\n"
      "  persist: false\n"
      "  sysctls:\n"
      "    vm.max_map_count: 0262144\n"
      "    net.ipv4.tcp_rmem: \"4096  87380\t6291456\"\n"
      "    net.ipv4.ip_local_port_range: [1024, 65000]\n"
      "    fs.nr_open: 2097152\n"
      "  limits:\n"
      "    - {item: nofile, value: 2000000}\n"
      "    - {domain: \"@gpu\", type: hard, item: memlock, value: infinity}\n"
      "    - {domain: \"@gpu\", type: soft, item: memlock, value: 64}\n",
      "inline", NoEnv());
  ASSERT_TRUE(c.ok()) << c.status();
  const TunerOptions& t = c->tuner;
  EXPECT_EQ(t.interval, std::chrono::seconds(5));
  EXPECT_FALSE(t.persist);
  EXPECT_EQ(t.sysctls.at("vm.max_map_count"), "262144");
  EXPECT_EQ(t.sysctls.at("net.ipv4.tcp_rmem"), "4096 87380 6291456");
  EXPECT_EQ(t.sysctls.at("net.ipv4.ip_local_port_range"), "1024 65000");
  ASSERT_EQ(t.limits.size(), 3u);
  EXPECT_EQ(t.limits[0].domain, "*");
  EXPECT_EQ(t.limits[0].type, TunerLimit::Type::kBoth);
  EXPECT_EQ(t.limits[0].value, "2000000");  // allowed: fs.nr_open raised
  EXPECT_EQ(t.limits[1].type, TunerLimit::Type::kHard);
  EXPECT_EQ(t.limits[1].value, "unlimited");
  auto o = TunerServiceOptionsFromConfig(*c);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->spec.proc_root, "/host/proc");
  EXPECT_EQ(o->spec.sysctls.size(), 4u);
}

TEST(ConfigTunerTest, FlagFormsSetTheWholeMapAndList) {
  ConfigLoadOptions options = NoEnv();
  options.overrides = {
      {"tuner.sysctls", "vm.max_map_count=262144, vm.swappiness=10",
       "--sysctls"},
      {"tuner.limits", "nofile=131072,@gpu soft memlock unlimited",
       "--limits"}};
  auto c = ParseConfig("tuner:\n  sysctls:\n    kernel.pid_max: 4194304\n",
                       "inline", options);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->tuner.sysctls,
            (std::map<std::string, std::string>{{"vm.max_map_count", "262144"},
                                                {"vm.swappiness", "10"}}));
  ASSERT_EQ(c->tuner.limits.size(), 2u);
  EXPECT_EQ(c->tuner.limits[1].domain, "@gpu");
  EXPECT_EQ(c->tuner.limits[1].type, TunerLimit::Type::kSoft);
  // A variable is named in the error it causes.
  ConfigLoadOptions env = NoEnv();
  env.getenv = [](const std::string& name) -> std::optional<std::string> {
    if (name == "LENS_TUNER_SYSCTLS") return "vm.swappiness=300";
    return std::nullopt;
  };
  EXPECT_EQ(Error("", env),
            "LENS_TUNER_SYSCTLS=vm.swappiness=300: tuner.sysctls: "
            "vm.swappiness: must be in 0..200, got 300");
}

TEST(ConfigTunerTest, RefusalsNameTheKeyTheLineAndTheRange) {
  const struct {
    std::string yaml;
    std::string says;
  } cases[] = {
      {"tuner:\n  sysctls:\n    vm.max_map_cont: 262144\n",
       "inline:3:5: tuner.sysctls: unknown key \"vm.max_map_cont\" (did you "
       "mean vm.max_map_count?)"},
      {"tuner:\n  sysctls:\n    kernel.sysrq: 1\n",
       "inline:3:5: tuner.sysctls: unknown key \"kernel.sysrq\"; the keys"},
      {"tuner:\n  sysctls:\n    vm.swappiness: 300\n",
       "inline:3:20: tuner.sysctls: vm.swappiness: must be in 0..200, got 300"},
      {"tuner:\n  sysctls:\n    vm.max_map_count: lots\n",
       "inline:3:23: tuner.sysctls: vm.max_map_count: must be in "
       "65530..2147483647, got lots"},
      {"tuner:\n  sysctls:\n    net.ipv4.tcp_rmem: 4096\n",
       "inline:3:24: tuner.sysctls: net.ipv4.tcp_rmem: expected 3 integers"},
      {"tuner:\n  sysctls:\n    net.ipv4.ip_local_port_range: 60000 1024\n",
       "inline:3:35: tuner.sysctls: net.ipv4.ip_local_port_range: the values "
       "may not decrease"},
      {"tuner:\n  sysctls: [vm.swappiness]\n",
       "inline:2:12: tuner.sysctls: expected a map, got a list"},
      {"tuner:\n  limits:\n    - {item: nofiles, value: 10}\n",
       "inline:3:30: tuner.limits[0]: unknown item \"nofiles\" (one of nofile, "
       "memlock, nproc, stack, core)"},
      {"tuner:\n  limits:\n    - {item: nofile, value: unlimited}\n",
       "inline:3:29: tuner.limits[0]: nofile: cannot be unlimited (the kernel "
       "caps open files at fs.nr_open, and a login over it fails): give a "
       "number"},
      {"tuner:\n  limits:\n    - {item: nproc, value: -1}\n",
       "inline:3:28: tuner.limits[0]: nproc: must be in 1..4194304 or "
       "unlimited, got \"-1\""},
      {"tuner:\n  limits:\n    - {item: core, value: 0, type: both, "
       "kind: x}\n",
       "inline:3:42: tuner.limits[0].kind: unknown key"},
      {"tuner:\n  limits:\n    - {item: core, value: 0, type: medium}\n",
       "inline:3:36: tuner.limits[0].type: expected soft, hard or both"},
      {"tuner:\n  limits:\n    - {item: core}\n",
       "inline:3:7: tuner.limits[0]: value: missing"},
      {"tuner:\n  limits:\n    - {item: nofile, value: 2000000}\n",
       "inline:3:5: tuner.limits: nofile: must be in 1..1048576, got "
       "\"2000000\" (above fs.nr_open 1048576: raise fs.nr_open"},
      {"tuner:\n  limits:\n    - {item: nofile, value: 10}\n"
       "    - {item: nofile, type: soft, value: 20}\n",
       "inline:3:5: tuner.limits: * nofile: the soft limit is set twice"},
      {"tuner:\n  limits:\n    - {item: nproc, type: soft, value: 20}\n"
       "    - {item: nproc, type: hard, value: 10}\n",
       "inline:3:5: tuner.limits: * nproc: soft 20 is above hard 10"},
      {"tuner:\n  interval: 500ms\n",
       "inline:2:13: tuner.interval: must be at least 1s"},
      {"tuner:\n  procRoot: proc\n",
       "inline:2:13: tuner.procRoot: must be an absolute path"},
      {"tuner:\n  listenAddress: nowhere\n",
       "inline:2:18: tuner.listenAddress: \"nowhere\" is not host:port"},
      {"tuner:\n  sysctl: {}\n", "inline:2:3: tuner.sysctl: unknown key"},
  };
  for (const auto& c : cases) {
    const std::string error = Error(c.yaml);
    EXPECT_EQ(error.rfind(c.says, 0), 0u) << c.yaml << "\n  got: " << error;
  }
}

// Structs built in code meet the same rules as the file.
TEST(ConfigTunerTest, ValidateChecksStructsBuiltInCode) {
  Config config;
  config.tuner.sysctls = {{"vm.swapiness", "10"}};
  EXPECT_EQ(config.Validate().message(),
            "tuner: sysctls: unknown key \"vm.swapiness\" (did you mean "
            "vm.swappiness?); the keys Lens may set are in docs/tuner.md");
  config.tuner.sysctls = {{"fs.nr_open", "2097152"}};
  config.tuner.limits = {{.item = "nofile", .value = "2000000"}};
  EXPECT_TRUE(config.Validate().ok()) << config.Validate();
  config.tuner.sysctls.clear();
  EXPECT_NE(config.Validate().message().find("tuner: limits: nofile:"),
            std::string::npos)
      << config.Validate();
}

TEST(ConfigTunerTest, TokenFileIsReadAndAMissingOneNamed) {
  const std::string token =
      ::testing::TempDir() + "tuner-token-" + std::to_string(::getpid());
  std::ofstream(token) << "s3cret\n";
  auto c = ParseConfig("tuner:\n  bearerTokenFile: " + token + "\n", "inline",
                       NoEnv());
  ASSERT_TRUE(c.ok()) << c.status();
  auto o = TunerServiceOptionsFromConfig(*c);
  std::remove(token.c_str());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->http.bearer_token, "s3cret");
  c->tuner.bearer_token_file = "/nonexistent/token";
  o = TunerServiceOptionsFromConfig(*c);
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("tuner.bearerTokenFile"),
            std::string::npos)
      << o.status();
}

}  // namespace
}  // namespace lens
