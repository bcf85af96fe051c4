// The dashboard tests' fixture (dashboard_test.cc, dashboard_pages_test.cc):
// the API over a freshly seeded store, the dashboard, and pages loaded in
// headless Chromium with their recorded errors and console messages.
#ifndef LENS_TEST_WEB_DASHBOARD_FIXTURE_H_
#define LENS_TEST_WEB_DASHBOARD_FIXTURE_H_

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

#include "api/api.h"
#include "chromium.h"
#include "dashboard_env.h"
#include "http/http.h"
#include "lens/store.h"
#include "lens/timeseries.h"
#include "web/dashboard.h"

namespace lens::test {
// Each test file gets its own copy (one executable, two translation
// units).
namespace {

using testing::HasSubstr;
using testing::Not;

#define LENS_NEEDS_CHROMIUM()                                      \
  if (ChromiumPath().empty())                                      \
  GTEST_SKIP() << "no headless browser: /usr/bin/chromium is not " \
                  "installed (Debian package chromium)"

constexpr char kToken[] = "dashboard-test-token";

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

}  // namespace
}  // namespace lens::test

#endif  // LENS_TEST_WEB_DASHBOARD_FIXTURE_H_
