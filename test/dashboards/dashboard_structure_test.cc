// The dashboards' structure, without a Prometheus: current schema, a
// Prometheus data source variable every panel queries, unique panel ids,
// targets on every panel that shows data, variables that exist; and the
// substitution the end-to-end test relies on.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "dashboard.h"

namespace lens::test {
namespace {

namespace fs = std::filesystem;

const std::string kDir = LENS_DASHBOARDS_DIR;
constexpr int kSchemaVersion = 39;

std::vector<std::string> AllFiles() {
  std::vector<std::string> files = DashboardFiles(kDir);
  for (const std::string& f : DashboardFiles(kDir + "/compat"))
    files.push_back(f);
  return files;
}

bool IsBuiltin(const std::string& name) { return name.rfind("__", 0) == 0; }

TEST(DashboardStructureTest, BothSetsHoldTheFiveDashboards) {
  std::vector<std::string> lens, compat;
  for (const std::string& f : DashboardFiles(kDir))
    lens.push_back(fs::path(f).filename().string());
  for (const std::string& f : DashboardFiles(kDir + "/compat"))
    compat.push_back(fs::path(f).filename().string());
  const std::vector<std::string> want = {
      "lens-cluster.json", "lens-network.json", "lens-node.json",
      "lens-training.json", "lens-workload.json"};
  EXPECT_EQ(lens, want);
  EXPECT_EQ(compat, want);
}

TEST(DashboardStructureTest, EveryDashboardFollowsTheRules) {
  const std::vector<std::string> files = AllFiles();
  ASSERT_EQ(files.size(), 10u);
  std::set<std::string> uids;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    auto d = LoadDashboard(file);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->schema_version, kSchemaVersion);
    EXPECT_FALSE(d->title.empty());
    EXPECT_TRUE(uids.insert(d->uid).second) << "uid " << d->uid << " twice";
    EXPECT_LE(d->uid.size(), 40u) << "Grafana limits a uid to 40 characters";

    // The data source variable, of type prometheus, first.
    ASSERT_FALSE(d->variables.empty());
    EXPECT_EQ(d->variables[0].name, "datasource");
    EXPECT_EQ(d->variables[0].type, "datasource");
    EXPECT_EQ(d->variables[0].query, "prometheus");
    std::map<std::string, bool> multi;  // name -> multi-value
    for (const DashboardVariable& v : d->variables) {
      EXPECT_TRUE(multi.emplace(v.name, v.multi).second) << v.name << " twice";
      if (v.type == "datasource") continue;
      EXPECT_EQ(v.type, "query") << v.name;
      EXPECT_EQ(v.datasource_uid, "${datasource}") << v.name;
      EXPECT_TRUE(ParseLabelValues(v.query).has_value())
          << v.name << ": not label_values(...): " << v.query;
      // A variable may use only the variables defined before it.
      for (const std::string& ref : ReferencedVariables(v.query)) {
        EXPECT_TRUE(multi.count(ref) && ref != v.name)
            << v.name << " uses $" << ref;
      }
    }

    std::set<int> ids;
    for (const DashboardPanel& p : d->panels) {
      SCOPED_TRACE("panel \"" + p.title + "\"");
      EXPECT_GE(p.id, 1);
      EXPECT_TRUE(ids.insert(p.id).second) << "panel id " << p.id << " twice";
      EXPECT_FALSE(p.title.empty());
      EXPECT_TRUE(p.has_grid_pos);
      if (p.type == "row" || p.type == "text") continue;
      const std::set<std::string> kinds = {"timeseries", "stat",  "table",
                                           "heatmap",    "gauge", "bargauge"};
      EXPECT_TRUE(kinds.count(p.type)) << "type " << p.type;
      EXPECT_EQ(p.datasource_uid, "${datasource}");
      ASSERT_FALSE(p.targets.empty()) << "a panel without targets";
      std::set<std::string> refs;
      for (const DashboardTarget& t : p.targets) {
        EXPECT_TRUE(refs.insert(t.ref_id).second)
            << "refId " << t.ref_id << " twice";
        EXPECT_EQ(t.datasource_uid, "${datasource}") << t.ref_id;
        EXPECT_FALSE(t.expr.empty()) << t.ref_id;
        for (size_t i = t.expr.find('$'); i != std::string::npos;
             i = t.expr.find('$', i + 1)) {
          const std::vector<std::string> ref =
              ReferencedVariables(std::string_view(t.expr).substr(i));
          if (ref.empty() || IsBuiltin(ref[0])) continue;
          ASSERT_TRUE(multi.count(ref[0]))
              << t.expr << ": no variable $" << ref[0];
          // Several values only make sense in a regex matcher.
          if (multi[ref[0]]) {
            EXPECT_TRUE(InRegexMatcher(t.expr, i))
                << "multi-value $" << ref[0] << " outside =~ in " << t.expr;
          }
        }
      }
    }
  }
}

TEST(DashboardStructureTest, ParsesLabelValuesQueries) {
  auto q =
      ParseLabelValues(R"e(label_values(lens_gpu_info{node="$node"}, gpu))e");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->match, R"e(lens_gpu_info{node="$node"})e");
  EXPECT_EQ(q->label, "gpu");
  q = ParseLabelValues("label_values(node)");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->match, "");
  EXPECT_EQ(q->label, "node");
  EXPECT_FALSE(ParseLabelValues("query_result(up)").has_value());
  EXPECT_FALSE(ParseLabelValues("label_values(up, a-b)").has_value());
}

TEST(DashboardStructureTest, ExpandsVariablesAsGrafanaDoes) {
  const std::map<std::string, std::vector<std::string>> values = {
      {"node", {"gpu-node-a03"}},
      {"gpu", {"0", "1"}},
      {"bdf", {"0000:0c:00.0"}}};
  EXPECT_EQ(ExpandVariables(
                R"e(rate(x{node="$node", gpu=~"${gpu}"}[$__rate_interval]))e",
                values),
            R"e(rate(x{node="gpu-node-a03", gpu=~"(0|1)"}[1m]))e");
  EXPECT_EQ(ExpandVariables(R"e(x{bdf=~"$bdf"}[$__range]) $unknown)e", values),
            R"e(x{bdf=~"0000:0c:00\\.0"}[5m]) $unknown)e");
  EXPECT_EQ(ExpandVariables(R"e(x{a!~ "${node:regex}"})e", values),
            R"e(x{a!~ "gpu-node-a03"})e");
  EXPECT_EQ(ReferencedVariables("$a ${b} ${c:csv} $__interval $"),
            (std::vector<std::string>{"a", "b", "c", "__interval"}));
}

}  // namespace
}  // namespace lens::test
