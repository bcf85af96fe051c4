// The Grafana dashboards of deploy/dashboards/ as the tests see them: their
// template variables, panels (rows' nested panels included) and targets, and
// a target's PromQL with the variables substituted the way Grafana does.
#ifndef LENS_TEST_DASHBOARDS_DASHBOARD_H_
#define LENS_TEST_DASHBOARDS_DASHBOARD_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"

namespace lens::test {

struct DashboardVariable {
  std::string name;
  std::string type;   // "datasource", "query", ...
  std::string query;  // "prometheus" for a datasource variable
  std::string datasource_uid;
  bool multi = false;  // multi-value or with an "All" option
};

struct DashboardTarget {
  std::string ref_id;
  std::string expr;
  std::string datasource_uid;
};

struct DashboardPanel {
  int id = -1;  // -1: none
  std::string type;
  std::string title;
  std::string datasource_uid;  // "" when the panel names none
  bool has_grid_pos = false;
  std::vector<DashboardTarget> targets;
};

struct Dashboard {
  std::string path;
  std::string uid;
  std::string title;
  int schema_version = 0;
  std::vector<DashboardVariable> variables;
  std::vector<DashboardPanel> panels;  // rows' panels follow their row
};

// The dashboard JSON files under `dir` (not recursive), sorted by name.
std::vector<std::string> DashboardFiles(const std::string& dir);

// Reads and checks the shape of one dashboard file (InvalidArgument naming
// the file and the field that is wrong).
StatusOr<Dashboard> LoadDashboard(const std::string& path);

// label_values(<series selector>, <label>) or label_values(<label>).
struct LabelValuesQuery {
  std::string match;  // "" for the second form
  std::string label;
};
std::optional<LabelValuesQuery> ParseLabelValues(std::string_view query);

// The names of the variables `text` refers to ($name, ${name}, ${name:fmt}),
// Grafana's own ($__rate_interval, ...) included.
std::vector<std::string> ReferencedVariables(std::string_view text);

// `text` with each variable replaced. A variable inside a regex matcher
// (=~"..." or !~"...") becomes its values regex-escaped and joined as
// (a|b) when there are several, as Grafana does for multi-value and "All";
// elsewhere, its first value. $__rate_interval, $__interval and $__range
// become the durations given. Unknown variables stay as they are.
struct Durations {
  std::string rate_interval = "1m";
  std::string interval = "15s";
  std::string range = "5m";
};
std::string ExpandVariables(
    std::string_view text,
    const std::map<std::string, std::vector<std::string>>& values,
    const Durations& durations = {});

// Whether the variable reference at `offset` in `text` is inside a regex
// matcher's string.
bool InRegexMatcher(std::string_view text, size_t offset);

}  // namespace lens::test

#endif  // LENS_TEST_DASHBOARDS_DASHBOARD_H_
