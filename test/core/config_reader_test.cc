// core's configuration reader knows no area: a section declared the way an
// area declares its own (core/config_section.h), registered in a table of
// this test's making, is decoded, overridden from the environment and the
// command line, checked after the whole section, and its errors located.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/config_decode.h"

namespace lens::config {
namespace {

struct PumpOptions {
  std::string name = "main";
  int rate = 10;
  int burst = 20;
  std::vector<std::string> tags;

  Status Validate() const {
    if (name.empty()) return InvalidArgumentError("name: must not be empty");
    if (burst < rate) return InvalidArgumentError("burst: below rate");
    return OkStatus();
  }
};

constexpr FieldRule<PumpOptions> kPumpRules[] = {
    {"name", FieldText<PumpOptions, &PumpOptions::name>},
    {"rate", FieldInt<PumpOptions, &PumpOptions::rate, 1, 1000>},
    {"burst", FieldInt<PumpOptions, &PumpOptions::burst, 1, 1000>},
    {"tags", FieldList<PumpOptions, &PumpOptions::tags>},
};

// Whole-section check, located at the key it is about.
Status AfterPump(const Ctx& ctx, const YAML::Node& node,
                 const std::string& path, PumpOptions* out) {
  if (out->tags.size() > 2 && node.IsMap() && node["tags"]) {
    return ctx.Error(node["tags"], path + ".tags", "at most 2 tags");
  }
  return OkStatus();
}

constinit const SectionSpec<PumpOptions> kPumpSection{"pump", kPumpRules,
                                                      AfterPump};

struct Root {
  PumpOptions pump;
  PumpOptions spare;
};

constinit const SectionSpec<PumpOptions> kSpareSection{"spare", kPumpRules};

StatusOr<Root> Parse(const std::string& yaml,
                     std::map<std::string, std::string> env = {},
                     std::vector<ConfigOverride> flags = {}) {
  static const std::vector<SectionEntry> kSections = {
      SectionOf<Root, PumpOptions, &Root::pump, kPumpSection>(),
      SectionOf<Root, PumpOptions, &Root::spare, kSpareSection>()};
  ConfigLoadOptions options;
  options.getenv =
      [env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  options.overrides = std::move(flags);
  Root root;
  Status s = ParseSections(yaml, "pump.yaml", options, kSections, &root);
  if (!s.ok()) return s;
  return root;
}

TEST(ConfigReaderTest, DecodesARegisteredSectionAndKeepsDefaults) {
  auto root = Parse("pump:\n  rate: 5\n  tags: [a, b]\n");
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->pump.rate, 5);
  EXPECT_EQ(root->pump.burst, 20);
  EXPECT_EQ(root->pump.tags, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(root->spare.name, "main");
}

TEST(ConfigReaderTest, EveryKeyOfEverySectionHasAVariableAndAFlag) {
  auto root = Parse("pump:\n  rate: 5\n",
                    {{"LENS_PUMP_RATE", "7"}, {"LENS_SPARE_TAGS", "x, y"}},
                    {{"pump.burst", "9", "--burst"}});
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->pump.rate, 7);
  EXPECT_EQ(root->pump.burst, 9);
  EXPECT_EQ(root->spare.tags, (std::vector<std::string>{"x", "y"}));
}

TEST(ConfigReaderTest, ErrorsNameTheFileLineTheVariableOrTheFlag) {
  auto unknown = Parse("pump:\n  rat: 5\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "pump.yaml:2:3: pump.rat: unknown key");
  auto section = Parse("pumps: {}\n");
  EXPECT_EQ(section.status().message(), "pump.yaml:1:1: pumps: unknown key");
  auto range = Parse("", {{"LENS_PUMP_RATE", "0"}});
  EXPECT_EQ(range.status().message(),
            "LENS_PUMP_RATE=0: pump.rate: must be in 1..1000, got 0");
  // The section's own rule across keys, named after the flag that broke it.
  auto rule = Parse("", {}, {{"pump.burst", "5", "--burst"}});
  EXPECT_EQ(rule.status().message(), "--burst=5: pump.burst: below rate");
  // The check after the whole section, at the key it is about.
  auto after = Parse("pump:\n  tags: [a, b, c]\n");
  EXPECT_EQ(after.status().message(),
            "pump.yaml:2:9: pump.tags: at most 2 tags");
}

}  // namespace
}  // namespace lens::config
