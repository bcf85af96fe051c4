// The `api:` keys of lens-api: defaults, the service options built from
// them (token files read, a PromQL server or the sample history), and
// located errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "service/api_service.h"
#include "service/config.h"

namespace lens {
namespace {

ConfigLoadOptions NoEnv() {
  ConfigLoadOptions o;
  o.getenv = [](const std::string&) -> std::optional<std::string> {
    return std::nullopt;
  };
  return o;
}

TEST(ConfigApiTest, DefaultsServeTheDashboardFromTheSampleHistory) {
  auto c = ParseConfig("", "inline", NoEnv());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->api.listen, "0.0.0.0:8080");
  EXPECT_EQ(c->api.cluster, "default");
  EXPECT_TRUE(c->api.dashboard);
  auto o = ApiServiceOptionsFromConfig(*c);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->promql.has_value());
  EXPECT_TRUE(o->http.bearer_token.empty());
  EXPECT_EQ(o->api.cluster, "default");
  EXPECT_EQ(o->database_url, c->database.url);
}

TEST(ConfigApiTest, KeysBecomeServiceOptionsWithTokensRead) {
  const std::string dir = ::testing::TempDir();
  const std::string token = dir + "api-token-" + std::to_string(::getpid());
  const std::string vm_token = token + "-vm";
  std::ofstream(token) << "s3cret\n";
  std::ofstream(vm_token) << " vm-token \n";
  auto c = ParseConfig(
      "api:\n"
      "  listen: 127.0.0.1:0\n"
      "  cluster: prod-east\n"
      "  dashboard: false\n"
      "  bearerTokenFile: " +
          token +
          "\n"
          "  prometheusUrl: https://vm:8428\n"
          "  prometheusTokenFile: " +
          vm_token +
          "\n"
          "  prometheusTimeout: 3s\n",
      "inline", NoEnv());
  ASSERT_TRUE(c.ok()) << c.status();
  auto o = ApiServiceOptionsFromConfig(*c);
  std::remove(token.c_str());
  std::remove(vm_token.c_str());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->http.listen, "127.0.0.1:0");
  EXPECT_EQ(o->http.bearer_token, "s3cret");
  EXPECT_EQ(o->api.cluster, "prod-east");
  EXPECT_FALSE(o->dashboard);
  ASSERT_TRUE(o->promql.has_value());
  EXPECT_EQ(o->promql->url, "https://vm:8428");
  EXPECT_EQ(o->promql->bearer_token, "vm-token");
  EXPECT_EQ(o->promql->timeout, std::chrono::seconds(3));
}

TEST(ConfigApiTest, BadValuesAreLocated) {
  const struct {
    const char* yaml;
    const char* says;
  } cases[] = {
      {"api:\n  prometheusUrl: vm:8428\n",
       "inline:2:18: api.prometheusUrl: want an http:// or https:// URL"},
      {"api:\n  cluster: \"\"\n", "inline:2:12: api.cluster: must not be"},
      {"api:\n  prometheusTimeout: 5ms\n",
       "inline:2:22: api.prometheusTimeout: must be in 100ms..10m"},
      {"api:\n  listen: nowhere\n", "inline:2:11: api.listen:"},
      {"api:\n  dashboard: maybe\n", "inline:2:14: api.dashboard:"},
      {"api:\n  prometheus: http://x\n",
       "inline:2:3: api.prometheus: unknown key"},
  };
  for (const auto& c : cases) {
    auto config = ParseConfig(c.yaml, "inline", NoEnv());
    ASSERT_FALSE(config.ok()) << c.yaml;
    EXPECT_EQ(config.status().message().rfind(c.says, 0), 0u)
        << config.status().message();
  }
  // A token file that is not there names the key and the file.
  auto config = ParseConfig("api:\n  bearerTokenFile: /nonexistent/token\n",
                            "inline", NoEnv());
  ASSERT_TRUE(config.ok()) << config.status();
  auto o = ApiServiceOptionsFromConfig(*config);
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("api.bearerTokenFile"), std::string::npos)
      << o.status();
  EXPECT_NE(o.status().message().find("/nonexistent/token"), std::string::npos)
      << o.status();
}

}  // namespace
}  // namespace lens
