// The dashboard end to end: the page and its assets as AddDashboardRoutes
// serves them (types, ETag and 304, cache and security headers, public
// paths), and every page loaded in headless Chromium against the REST API
// over a seeded SQLite store: the names and numbers it must show, no
// recorded script error and no console message, the token form when the
// API wants a token, a refresh that keeps filters, and the first page's
// time to ready. Pages are loaded twice where the API's time-series routes
// matter: without a time-series backend (503: the page says so) and over
// the store's sample history seeded with the series
// (test/web/dashboard_env.h).
//
// LENS_SCREENSHOT_DIR=<dir> writes <dir>/dashboard-<page>.png of each page.
#include "lens/dashboard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "chromium.h"
#include "dashboard_env.h"
#include "lens/api.h"
#include "lens/http.h"
#include "lens/store.h"
#include "lens/timeseries.h"

namespace lens::test {
namespace {

using testing::HasSubstr;
using testing::Not;

#define LENS_NEEDS_CHROMIUM()                                      \
  if (ChromiumPath().empty())                                      \
  GTEST_SKIP() << "no headless browser: /usr/bin/chromium is not " \
                  "installed (Debian package chromium)"

constexpr char kToken[] = "dashboard-test-token";
constexpr double kReadyBudgetMs = 1000;  // first data on screen, loopback

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The text inside <pre id="lens-errors" ...>...</pre>.
std::string RecordedErrors(const std::string& dom) {
  const size_t box = dom.find("id=\"lens-errors\"");
  if (box == std::string::npos) return "<no #lens-errors in the DOM>";
  const size_t open = dom.find('>', box);
  const size_t close = dom.find("</pre>", open);
  return dom.substr(open + 1, close - open - 1);
}

// The value of attribute `name` on the first element that has it.
std::string Attribute(const std::string& dom, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex(name + "=\"([^\"]*)\""))) return "";
  return m[1];
}

class DashboardTest : public testing::Test {
 protected:
  void TearDown() override {
    server_.reset();
    series_.reset();
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  struct Serving {
    bool series = false;  // the sample history seeded and served
    std::string token;    // required by the API when set
    // The training-series route answers 404, as on an API server from
    // before it (the page then reads the iterations).
    bool without_training_series = false;
  };

  // Serves the API over a freshly seeded store, and the dashboard.
  void Serve(const Serving& how) {
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    dir_ = std::filesystem::path(testing::TempDir()) /
           ("lens_dashboard_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto store = Store::Open("sqlite://" + (dir_ / "lens.db").string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    SeedDashboardStore(*store_, now);
    HttpServerOptions options;
    options.listen = "127.0.0.1:0";
    options.bearer_token = how.token;
    for (std::string& p : DashboardPublicPaths())
      options.public_paths.push_back(std::move(p));
    auto server = HttpServer::Create(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    ApiOptions api;
    api.cluster = "lab-east";
    if (how.series) {
      SeedSeries(*store_, now);
      series_ = NewSampleHistorySource(store_.get());
    }
    ASSERT_TRUE(
        AddApiRoutes(store_.get(), series_.get(), api, server_.get()).ok());
    if (how.without_training_series) {
      server_->HandlePattern("GET", "/api/v1/workloads/{uid}/training-series",
                             [](const HttpRequest& req, HttpResponse* out) {
                               RespondError(404, "no such path: " + req.path,
                                            out);
                             });
    }
    AddDashboardRoutes(server_.get());
    ASSERT_TRUE(server_->Start().ok());
  }

  httplib::Result Get(const std::string& path, httplib::Headers headers = {}) {
    httplib::Client client("127.0.0.1", server_->port());
    return client.Get(path, headers);
  }

  // Loads "/" + `fragment` in Chromium; expects the page to reach `state`
  // (#view's data-state), with no recorded error and nothing on the
  // console. Screenshot `shot` when LENS_SCREENSHOT_DIR is set.
  std::string Load(
      const std::string& fragment, const std::string& shot = "",
      const std::string& state = "ready",
      std::chrono::milliseconds virtual_time = std::chrono::milliseconds(5000),
      std::vector<std::string> extra_args = {}) {
    ChromiumOptions options;
    options.virtual_time = virtual_time;
    options.extra_args = std::move(extra_args);
    const char* shots = std::getenv("LENS_SCREENSHOT_DIR");
    if (shots && *shots && !shot.empty())
      options.screenshot = std::string(shots) + "/dashboard-" + shot + ".png";
    StatusOr<ChromiumPage> page =
        LoadPage(server_->url() + "/" + fragment, options);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) return "";
    EXPECT_EQ(Attribute(page->dom, "data-state"), state) << fragment;
    EXPECT_EQ(RecordedErrors(page->dom), "") << fragment;
    EXPECT_THAT(page->console, testing::IsEmpty())
        << fragment << ": console messages";
    return page->dom;
  }

  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<TimeSeriesSource> series_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(DashboardTest, ServesEveryAssetWithTypeCacheAndSecurityHeaders) {
  Serve({});
  const std::vector<std::string> paths = DashboardPublicPaths();
  const std::set<std::string> served(paths.begin(), paths.end());
  for (const char* p : {"/", "/static/app.js", "/static/lens.css",
                        "/static/chart.min.js", "/static/errors.js"}) {
    EXPECT_TRUE(served.count(p)) << p;
  }
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    auto res = Get(path);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    const std::string type = res->get_header_value("Content-Type");
    if (path == "/") {
      EXPECT_EQ(type, "text/html; charset=utf-8");
      EXPECT_EQ(res->get_header_value("Cache-Control"), "no-cache");
    } else {
      EXPECT_EQ(res->get_header_value("Cache-Control"),
                "public, max-age=86400");
    }
    if (path.ends_with(".js"))
      EXPECT_EQ(type, "text/javascript; charset=utf-8");
    if (path.ends_with(".css")) EXPECT_EQ(type, "text/css; charset=utf-8");
    if (path.ends_with(".svg")) EXPECT_EQ(type, "image/svg+xml");
    EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff");
    const std::string csp = res->get_header_value("Content-Security-Policy");
    EXPECT_THAT(csp, HasSubstr("default-src 'self'"));
    EXPECT_THAT(csp, HasSubstr("script-src 'self';"));
    EXPECT_THAT(csp, Not(HasSubstr("unsafe")));
    const std::string etag = res->get_header_value("ETag");
    ASSERT_GE(etag.size(), 3u);
    EXPECT_EQ(etag.front(), '"');
    EXPECT_EQ(etag.back(), '"');

    // Revalidation: the current tag (plain, weak, in a list, "*") is 304
    // with no body; another tag gets the bytes again.
    for (const std::string& tag :
         {etag, "W/" + etag, "\"other\", " + etag, std::string("*")}) {
      auto again = Get(path, {{"If-None-Match", tag}});
      ASSERT_TRUE(again);
      EXPECT_EQ(again->status, 304) << tag;
      EXPECT_EQ(again->body, "");
      EXPECT_EQ(again->get_header_value("ETag"), etag);
    }
    auto changed = Get(path, {{"If-None-Match", "\"0000000000000000-1\""}});
    ASSERT_TRUE(changed);
    EXPECT_EQ(changed->status, 200);
    EXPECT_EQ(changed->body, res->body);
  }
  // Chart.js is Debian's, byte for byte.
  auto chart = Get("/static/chart.min.js");
  ASSERT_TRUE(chart);
  EXPECT_EQ(chart->body,
            ReadAll("/usr/share/javascript/chart.js/chart.min.js"));
  auto missing = Get("/static/missing.js");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

// Every script is a file (the CSP forbids inline ones) and every file the
// page or a module refers to is served.
TEST_F(DashboardTest, PageAndModulesReferOnlyToServedFiles) {
  Serve({});
  const std::vector<std::string> paths = DashboardPublicPaths();
  const std::set<std::string> served(paths.begin(), paths.end());
  auto page = Get("/");
  ASSERT_TRUE(page);
  const std::string& html = page->body;
  for (size_t at = html.find("<script"); at != std::string::npos;
       at = html.find("<script", at + 1)) {
    const std::string tag = html.substr(at, html.find('>', at) - at);
    EXPECT_THAT(tag, HasSubstr("src=\"/static/")) << "inline script: " << tag;
  }
  const std::regex ref("(?:src|href)=\"(/static/[^\"]+)\"");
  for (std::sregex_iterator it(html.begin(), html.end(), ref), end; it != end;
       ++it)
    EXPECT_TRUE(served.count((*it)[1])) << (*it)[1];
  const std::regex import("from '(\\.{1,2}/[^']+)'");
  for (const std::string& path : paths) {
    if (!path.ends_with(".js") || path == "/static/chart.min.js") continue;
    auto res = Get(path);
    ASSERT_TRUE(res);
    const std::string& js = res->body;
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    for (std::sregex_iterator it(js.begin(), js.end(), import), end; it != end;
         ++it) {
      const std::string target =
          (dir / std::string((*it)[1])).lexically_normal().string();
      EXPECT_TRUE(served.count(target)) << path << " imports " << target;
    }
    EXPECT_THAT(js, Not(HasSubstr("innerHTML"))) << path;
  }
}

TEST_F(DashboardTest, PageIsPublicWhileTheApiWantsTheToken) {
  Serve({.token = kToken});
  for (const std::string& path : DashboardPublicPaths()) {
    auto res = Get(path);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << path;
  }
  auto api = Get("/api/v1/clusters");
  ASSERT_TRUE(api);
  EXPECT_EQ(api->status, 401);
  auto with_token = Get("/api/v1/clusters",
                        {{"Authorization", std::string("Bearer ") + kToken}});
  ASSERT_TRUE(with_token);
  EXPECT_EQ(with_token->status, 200);

  LENS_NEEDS_CHROMIUM();
  const std::string dom = Load("#/", "", "auth");
  EXPECT_THAT(dom, HasSubstr("id=\"token-form\""));
  EXPECT_THAT(dom, HasSubstr("requires a bearer token"));
  EXPECT_THAT(dom, Not(HasSubstr(kAlpha)));
}

TEST_F(DashboardTest, OverviewShowsTotalsNodesAndAllocationQuickly) {
  LENS_NEEDS_CHROMIUM();
  Serve({});
  const std::string dom = Load("#/");
  EXPECT_THAT(dom, HasSubstr("Cluster lab-east"));
  EXPECT_THAT(dom, HasSubstr("1 / 2"));   // nodes ready
  EXPECT_THAT(dom, HasSubstr("7 / 12"));  // GPUs allocated
  EXPECT_THAT(dom, HasSubstr("58.3%"));   // allocation ratio
  EXPECT_THAT(dom, HasSubstr(">50%<"));   // GPU-weighted utilisation
  EXPECT_THAT(dom, HasSubstr("62.5%"));   // alpha's utilisation
  EXPECT_THAT(dom, HasSubstr("href=\"#/nodes/gpu-node-alpha\""));
  EXPECT_THAT(dom, HasSubstr(kBravo));
  EXPECT_THAT(dom, HasSubstr("NotReady"));
  EXPECT_THAT(
      dom, HasSubstr("3 samples in range; now 7 of 12 GPUs allocated (58.3%)"));
  EXPECT_THAT(dom, HasSubstr("No utilisation samples"));  // no series backend

  const std::string ready = Attribute(dom, "data-ready-ms");
  ASSERT_FALSE(ready.empty());
  const double ms = std::stod(ready);
  RecordProperty("time_to_ready_ms", ready);
  std::printf("overview time to ready: %.1f ms\n", ms);
  EXPECT_LT(ms, kReadyBudgetMs);
}

TEST_F(DashboardTest, OverviewDrawsTheUtilisationHeatmap) {
  LENS_NEEDS_CHROMIUM();
  Serve({.series = true});
  const std::string dom = Load("#/", "overview");
  EXPECT_THAT(dom, HasSubstr("GPU utilisation of 12 GPUs over 6"));
  EXPECT_THAT(dom, HasSubstr("GPU 7"));
  EXPECT_THAT(dom, Not(HasSubstr("No utilisation samples")));
  // Idle allocated GPUs, from the same samples.
  EXPECT_THAT(dom, HasSubstr("id=\"idle-gpus-caption\""));
  EXPECT_THAT(dom, HasSubstr("GPUs idle now"));
  EXPECT_THAT(dom, HasSubstr("id=\"device-health-caption\""));
}

// The system's dark scheme: the theme's colours resolve for the charts and
// the heatmap without a script error.
TEST_F(DashboardTest, DarkSchemeRendersWithoutErrors) {
  LENS_NEEDS_CHROMIUM();
  Serve({.series = true});
  const std::string dom =
      Load("#/", "overview-dark", "ready", std::chrono::milliseconds(5000),
           {"--force-dark-mode", "--blink-settings=preferredColorScheme=0"});
  EXPECT_THAT(dom, HasSubstr("GPU utilisation of 12 GPUs over 6"));
}

TEST_F(DashboardTest, NodePageShowsGpusOwnersRdmaContainersAndChanges) {
  LENS_NEEDS_CHROMIUM();
  Serve({});
  const std::string dom = Load("#/nodes/gpu-node-alpha");
  EXPECT_THAT(dom, HasSubstr("<h1>gpu-node-alpha</h1>"));
  EXPECT_THAT(dom, HasSubstr("SN-ALPHA-7"));
  EXPECT_THAT(dom, HasSubstr("SN-ALPHA-1B"));
  EXPECT_THAT(dom, HasSubstr("192 GiB"));
  EXPECT_THAT(dom, HasSubstr("1.5 TiB"));
  EXPECT_THAT(dom, HasSubstr("ml-research/llama-pretrain-worker-0 (trainer)"));
  EXPECT_THAT(dom, HasSubstr("mlx5_0"));
  EXPECT_THAT(dom, HasSubstr("1070:fd03:00a1:b2c3"));
  EXPECT_THAT(dom, HasSubstr("REPLACE"));
  EXPECT_THAT(dom, HasSubstr("rocm/megatron-lm:v25.3"));
  // Data is text, never markup.
  EXPECT_THAT(dom, HasSubstr("evil&lt;b&gt;bold&lt;/b&gt;"));
  EXPECT_THAT(dom, Not(HasSubstr("<b>bold</b>")));
  EXPECT_THAT(dom, HasSubstr("GPU metrics are not available"));

  const std::string unknown = Load("#/nodes/no-such-node", "", "error");
  EXPECT_THAT(unknown, HasSubstr("Not found"));
  EXPECT_THAT(unknown, HasSubstr("no-such-node"));
}

TEST_F(DashboardTest, NodePageChartsAndTabulatesGpuMetrics) {
  LENS_NEEDS_CHROMIUM();
  Serve({.series = true});
  const std::string dom = Load("#/nodes/gpu-node-alpha", "node");
  EXPECT_THAT(dom, HasSubstr(">62%<"));
  EXPECT_THAT(dom, HasSubstr("150 GiB"));
  EXPECT_THAT(dom, HasSubstr("612 W"));
  EXPECT_THAT(dom, HasSubstr("71 °C"));
  EXPECT_THAT(dom, HasSubstr("Utilisation: 8 GPUs, 4"));
  EXPECT_THAT(dom, HasSubstr("Power: 8 GPUs, 4"));
}

TEST_F(DashboardTest, WorkloadListFiltersAndLinks) {
  LENS_NEEDS_CHROMIUM();
  Serve({});
  const std::string all = Load("#/workloads", "workloads");
  EXPECT_THAT(all, HasSubstr("2 workloads"));
  EXPECT_THAT(all, HasSubstr(std::string("href=\"#/workloads/") + kLlamaUid));
  EXPECT_THAT(all, HasSubstr(std::string("href=\"#/workloads/") + kBertUid));
  EXPECT_THAT(all, HasSubstr("PyTorchJob"));
  EXPECT_THAT(all, HasSubstr("Succeeded"));

  const std::string running = Load("#/workloads?status=Running&range=6h");
  EXPECT_THAT(running, HasSubstr("1 workload matching"));
  EXPECT_THAT(running, HasSubstr("llama-pretrain"));
  EXPECT_THAT(running, Not(HasSubstr("bert-eval")));
  // Links keep the range.
  EXPECT_THAT(running,
              HasSubstr(std::string("#/workloads/") + kLlamaUid + "?range=6h"));
}

TEST_F(DashboardTest, WorkloadListPages) {
  LENS_NEEDS_CHROMIUM();
  Serve({});
  std::vector<WorkloadRecord> batch(30);
  for (int i = 0; i < 30; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "batch-job-%02d", i);
    batch[i].uid = std::string("uid-") + name;
    batch[i].kind = "Job";
    batch[i].name = name;
    batch[i].namespace_name = "batch";
    batch[i].status = "Succeeded";
    batch[i].created_at = batch[i].updated_at =
        Timestamp(std::chrono::seconds(1700000000 + i));
  }
  ASSERT_TRUE(store_->pods().UpsertWorkloads(batch).ok());
  const std::string dom =
      Load("#/workloads?namespace=batch&sort=name:asc&page=2");
  EXPECT_THAT(dom, HasSubstr("26–30 of 30"));
  EXPECT_THAT(dom, HasSubstr("batch-job-25"));
  EXPECT_THAT(dom, HasSubstr("batch-job-29"));
  EXPECT_THAT(dom, Not(HasSubstr("batch-job-24")));
  EXPECT_THAT(dom, HasSubstr("page=1\">← Previous"));
}

TEST_F(DashboardTest, RefreshKeepsTheFilteredList) {
  LENS_NEEDS_CHROMIUM();
  Serve({});
  // 16 s of virtual time: one refresh after the first render.
  const std::string dom = Load("#/workloads?namespace=ml-research", "", "ready",
                               std::chrono::milliseconds(16000));
  EXPECT_EQ(Attribute(dom, "data-renders"), "2");
  EXPECT_THAT(dom, HasSubstr("llama-pretrain"));
  EXPECT_THAT(dom, Not(HasSubstr("bert-eval")));
  EXPECT_THAT(dom, HasSubstr("value=\"ml-research\""));
}

void ExpectTrainingProgress(const std::string& dom) {
  EXPECT_THAT(dom, HasSubstr("PyTorchJob in namespace ml-research"));
  EXPECT_THAT(dom, HasSubstr("llama-pretrain-worker-1"));
  EXPECT_THAT(dom, HasSubstr("8 allocated to running pods"));
  EXPECT_THAT(dom,
              HasSubstr("Loss: 2 runs, 30 points, latest 1.5 at iteration 30"));
  EXPECT_THAT(
      dom,
      HasSubstr(
          "TFLOP/s per GPU: 2 runs, 30 points, latest 210 at iteration 30"));
  EXPECT_THAT(
      dom,
      HasSubstr(
          "Tokens/s per GPU: 2 runs, 30 points, latest 4,300 at iteration 30"));
  EXPECT_THAT(dom, HasSubstr("Step time: 2 runs, 30 points, latest 1.53 s"));
  EXPECT_THAT(dom, HasSubstr("1 restart<"));
  EXPECT_THAT(dom, HasSubstr("Checkpoint saved"));
  EXPECT_THAT(dom, HasSubstr("/ckpt/llama/iter_20"));
  // The GPUs its containers hold, and its pods' lifecycle.
  EXPECT_THAT(dom, HasSubstr("id=\"workload-gpus\""));
  EXPECT_THAT(dom, HasSubstr("SN-ALPHA-1B"));
  // Goodput: the split bar, the runs and MFU.
  EXPECT_THAT(dom, HasSubstr("id=\"goodput-bar\""));
  EXPECT_THAT(dom, HasSubstr("id=\"goodput-runs\""));
  EXPECT_THAT(dom, HasSubstr("id=\"stat-mfu\""));
  EXPECT_THAT(dom, HasSubstr("id=\"stragglers\""));
  EXPECT_THAT(dom, HasSubstr("id=\"lifecycle-table\""));
  EXPECT_THAT(dom, HasSubstr(">Restarted<"));
}

TEST_F(DashboardTest, WorkloadPageShowsTrainingProgress) {
  LENS_NEEDS_CHROMIUM();
  Serve({});
  ExpectTrainingProgress(
      Load(std::string("#/workloads/") + kLlamaUid, "workload"));
}

TEST_F(DashboardTest, WorkloadPageReadsIterationsWithoutTheSeriesRoute) {
  LENS_NEEDS_CHROMIUM();
  Serve({.without_training_series = true});
  ExpectTrainingProgress(Load(std::string("#/workloads/") + kLlamaUid));
}

// With utilisation samples the stragglers route answers: its caption and
// table are drawn instead of the note.
TEST_F(DashboardTest, WorkloadPageComparesItsGpusWithSeries) {
  LENS_NEEDS_CHROMIUM();
  Serve({.series = true});
  const std::string dom =
      Load(std::string("#/workloads/") + kLlamaUid, "workload");
  EXPECT_THAT(dom, HasSubstr("id=\"stragglers-caption\""));
  EXPECT_THAT(dom, Not(HasSubstr("Stragglers need utilisation samples")));
}

TEST_F(DashboardTest, UnknownWorkloadSaysNotFound) {
  LENS_NEEDS_CHROMIUM();
  Serve({});
  const std::string dom = Load("#/workloads/no-such-uid", "", "error");
  EXPECT_THAT(dom, HasSubstr("Not found"));
  EXPECT_THAT(dom, HasSubstr("no-such-uid"));
}

TEST_F(DashboardTest, FlowsPageSaysWhenFlowsAreUnavailable) {
  LENS_NEEDS_CHROMIUM();
  Serve({});
  EXPECT_THAT(Load("#/flows"), HasSubstr("Flow data is not available"));
}

TEST_F(DashboardTest, FlowsPageShowsRatesAndRemotes) {
  LENS_NEEDS_CHROMIUM();
  Serve({.series = true});
  const std::string dom = Load("#/flows", "flows");
  // Mean rates over the range: the step still being written counts as
  // one without data, so a little under 1.25 GB/s, 1.18 GB/s, 0.75/s.
  EXPECT_THAT(dom, testing::ContainsRegex(">1\\.2[2-5] GB/s<"));  // egress
  EXPECT_THAT(dom, testing::ContainsRegex(">1\\.1[5-8] GB/s<"));  // ingress
  EXPECT_THAT(dom, testing::ContainsRegex(">0\\.7[2-5][0-9]*/s<"));
  EXPECT_THAT(dom, HasSubstr("10.0.0.12"));
  EXPECT_THAT(dom, HasSubstr("151.101.1.69"));
  EXPECT_THAT(dom, HasSubstr("ml-research/llama-pretrain"));
  EXPECT_THAT(dom, HasSubstr("not a workload"));
}

}  // namespace
}  // namespace lens::test
