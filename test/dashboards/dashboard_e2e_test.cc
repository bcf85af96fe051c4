// Every dashboard of deploy/dashboards/ (and compat/) against real data: the
// Lens daemons of a one-node fixture cluster (fixture_cluster.h) scraped by a
// real Prometheus, through lens-telemetry, into the Prometheus Grafana would
// query. Each template variable is resolved through Prometheus's HTTP API
// like Grafana does, each panel target is expanded with the resolved values
// and must return at least one series with a finite value.
#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <thread>

#include "command.h"
#include "dashboard.h"
#include "ebpf_env.h"
#include "fixture_cluster.h"

namespace lens::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Values = std::map<std::string, std::vector<std::string>>;

const std::string kDir = LENS_DASHBOARDS_DIR;

// Series that only lens-netflow produces (root and eBPF).
bool IsFlowQuery(std::string_view expr) {
  for (std::string_view m :
       {"lens_tcp_flow_", "lens_netflow_", "primus_lens_network_"}) {
    if (expr.find(m) != std::string_view::npos) return true;
  }
  return false;
}

struct Tally {
  int dashboards = 0, variables = 0, panels = 0, queries = 0;
};

class DashboardE2ETest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (FindBinary("prometheus").empty()) {
      skip_ = "prometheus not installed (scripts/install-deps.sh)";
      return;
    }
    flow_skip_ = std::string(LENS_NETFLOW_BIN).empty()
                     ? "lens-netflow is not built"
                     : EbpfSkipReason();
    dir_ = fs::temp_directory_path() /
           ("lens-dashboards-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    FixtureClusterOptions o;
    o.dir = dir_;
    o.flows = flow_skip_.empty();
    o.binaries = {{"lens-node-agent", LENS_NODE_AGENT_BIN},
                  {"lens-netflow", LENS_NETFLOW_BIN},
                  {"lens-jobs", LENS_JOBS_BIN},
                  {"lens-telemetry", LENS_TELEMETRY_BIN}};
    auto cluster = FixtureCluster::Start(o);
    if (!cluster.ok()) {
      start_error_ = cluster.status().ToString();
      return;
    }
    cluster_ = std::move(*cluster).release();
    // Data keeps arriving after start: each query may wait until then.
    deadline_ = Clock::now() + std::chrono::seconds(90);
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(start_error_.empty()) << start_error_;
  }

  // GET on the query Prometheus; the answer's "data", or null.
  static rapidjson::Document Api(const std::string& path,
                                 const httplib::Params& params) {
    httplib::Client client("127.0.0.1", cluster_->query_port());
    rapidjson::Document doc;
    auto res = client.Get(path, params, httplib::Headers{});
    if (!res || res->status != 200) return doc;
    doc.Parse(res->body.c_str());
    if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("data"))
      return rapidjson::Document();
    rapidjson::Document data;
    data.CopyFrom(doc["data"], data.GetAllocator());
    return data;
  }

  // Retries `attempt` until it succeeds or the suite's deadline (at least
  // 3 s from now) passes.
  template <typename F>
  static bool Eventually(F attempt) {
    const auto end =
        std::max(deadline_, Clock::now() + std::chrono::seconds(3));
    while (!attempt()) {
      if (Clock::now() >= end) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return true;
  }

  // The values of label_values(match, label), sorted (Prometheus sorts).
  static std::vector<std::string> LabelValues(const LabelValuesQuery& q) {
    httplib::Params params;
    if (!q.match.empty()) params.emplace("match[]", q.match);
    const rapidjson::Document data =
        Api("/api/v1/label/" + q.label + "/values", params);
    std::vector<std::string> values;
    if (data.IsArray()) {
      for (const auto& v : data.GetArray()) values.push_back(v.GetString());
    }
    return values;
  }

  // How many series of an instant query have a finite value.
  static size_t FiniteSeries(const std::string& expr) {
    const rapidjson::Document data = Api("/api/v1/query", {{"query", expr}});
    if (!data.IsObject() || !data["result"].IsArray()) return 0;
    size_t n = 0;
    for (const auto& s : data["result"].GetArray()) {
      const double v = std::strtod(s["value"][1].GetString(), nullptr);
      if (std::isfinite(v)) ++n;
    }
    return n;
  }

  // Resolves `d`'s variables into `values`; each that yields nothing is a
  // failure. With `flows` false, variables over flow series are left out
  // (and so are the panels that use them).
  static void ResolveVariables(const Dashboard& d, bool flows, Values* values,
                               Tally* tally) {
    for (const DashboardVariable& v : d.variables) {
      if (v.type == "datasource") continue;
      if (IsFlowQuery(v.query) && !flows) continue;
      auto q = ParseLabelValues(v.query);
      ASSERT_TRUE(q.has_value())
          << d.path << ": $" << v.name << ": " << v.query;
      q->match = ExpandVariables(q->match, *values);
      std::vector<std::string> got;
      Eventually([&] { return !(got = LabelValues(*q)).empty(); });
      ++tally->variables;
      EXPECT_FALSE(got.empty()) << d.path << ": variable $" << v.name
                                << " resolves to nothing: label_values("
                                << q->match << ", " << q->label << ")";
      // A single-value variable shows its first value, as Grafana does.
      if (!got.empty())
        (*values)[v.name] = v.multi ? got : std::vector{got.front()};
    }
  }

  // Every panel target of every dashboard, flows' or the rest.
  static Tally CheckAll(bool flows) {
    Tally tally;
    std::vector<std::string> files = DashboardFiles(kDir);
    for (const std::string& f : DashboardFiles(kDir + "/compat"))
      files.push_back(f);
    EXPECT_EQ(files.size(), 10u);
    for (const std::string& file : files) {
      auto d = LoadDashboard(file);
      EXPECT_TRUE(d.ok()) << d.status();
      if (!d.ok()) continue;
      ++tally.dashboards;
      Values values;
      ResolveVariables(*d, flow_skip_.empty(), &values, &tally);
      for (const DashboardPanel& p : d->panels) {
        bool counted = false;
        for (const DashboardTarget& t : p.targets) {
          // A target is the flows' when it or a variable it uses is.
          bool is_flow = IsFlowQuery(t.expr);
          for (const std::string& ref : ReferencedVariables(t.expr)) {
            for (const DashboardVariable& v : d->variables)
              if (v.name == ref && IsFlowQuery(v.query)) is_flow = true;
          }
          if (is_flow != flows) continue;
          const std::string expr = ExpandVariables(t.expr, values);
          size_t series = 0;
          Eventually([&] { return (series = FiniteSeries(expr)) > 0; });
          ++tally.queries;
          if (!counted) ++tally.panels, counted = true;
          EXPECT_GT(series, 0u)
              << fs::path(file).parent_path().filename().string() << "/"
              << fs::path(file).filename().string() << ": panel \"" << p.title
              << "\" (id " << p.id << ") target " << t.ref_id
              << " returns no series with a value: " << expr;
        }
      }
    }
    return tally;
  }

  static void Report(const char* what, const Tally& t) {
    std::cout << what << ": " << t.dashboards << " dashboards, " << t.variables
              << " variable queries, " << t.panels << " panels, " << t.queries
              << " panel queries checked\n";
    ::testing::Test::RecordProperty(std::string(what) + "_queries", t.queries);
  }

  static inline std::string skip_, flow_skip_, start_error_;
  static inline std::string dir_;
  static inline FixtureCluster* cluster_ = nullptr;
  static inline Clock::time_point deadline_;
};

TEST_F(DashboardE2ETest, EveryPanelReturnsData) {
  const Tally t = CheckAll(false);
  Report("non-flow", t);
  EXPECT_GT(t.queries, 100);
  if (HasFailure()) std::cout << cluster_->Logs();
}

TEST_F(DashboardE2ETest, EveryFlowPanelReturnsData) {
  if (!flow_skip_.empty())
    GTEST_SKIP() << "lens-netflow cannot run here, so the TCP flow panels are "
                    "not checked: "
                 << flow_skip_;
  const Tally t = CheckAll(true);
  Report("flow", t);
  EXPECT_GT(t.queries, 10);
  if (HasFailure()) std::cout << cluster_->Logs();
}

}  // namespace
}  // namespace lens::test
