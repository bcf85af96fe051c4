// NewPromQlSource against a real VictoriaMetrics started by the test (the
// shared data set and answers of timeseries_testing.h), and against an
// in-process server for what a real one will not do on request (check the
// credentials it is sent, answer garbage).
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "http/http.h"
#include "lens/timeseries.h"
#include "loopback_traffic.h"
#include "timeseries_testing.h"
#include "victoria_metrics.h"

namespace lens::test {
namespace {

class PromQlSourceTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (VictoriaMetrics::Binary().empty()) return;
    auto vm = VictoriaMetrics::Start();
    ASSERT_TRUE(vm.ok()) << vm.status();
    vm_ = std::move(*vm).release();
    const std::vector<MetricSample> samples = SharedSamples();
    auto imported = vm_->Post("/api/v1/import", ImportJsonLines(samples),
                              "application/json");
    ASSERT_TRUE(imported.ok()) << imported.status();
    ASSERT_TRUE(vm_->Get("/internal/force_flush").ok());
  }
  static void TearDownTestSuite() {
    delete vm_;
    vm_ = nullptr;
  }

  void SetUp() override {
    if (VictoriaMetrics::Binary().empty()) {
      GTEST_SKIP()
          << "victoria-metrics not installed (scripts/install-deps.sh)";
    }
    ASSERT_NE(vm_, nullptr);
    source_ = Source(vm_->url());
  }

  static std::unique_ptr<TimeSeriesSource> Source(
      const std::string& url, size_t max_response_bytes = size_t{1} << 20) {
    PromQlSourceOptions o;
    o.url = url;
    o.timeout = std::chrono::seconds(10);
    o.max_response_bytes = max_response_bytes;
    auto source = NewPromQlSource(o);
    EXPECT_TRUE(source.ok()) << source.status();
    return source.ok() ? std::move(*source) : nullptr;
  }

  static VictoriaMetrics* vm_;
  std::unique_ptr<TimeSeriesSource> source_;
};

VictoriaMetrics* PromQlSourceTest::vm_ = nullptr;

TEST_F(PromQlSourceTest, AnswersTheSharedExpectations) {
  EXPECT_EQ(source_->backend(), "promql");
  for (const Expectation& e : SharedExpectations()) {
    SCOPED_TRACE(e.name);
    auto got = source_->QueryRange(e.query);
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectSeries(*got, e.want);
  }
}

TEST_F(PromQlSourceTest, LabelValuesComeBackByteForByte) {
  auto got = source_->QueryRange(Query("lens_ts_escape_info", {}));
  ASSERT_TRUE(got.ok()) << got.status();
  std::vector<std::string> paths;
  for (const SeriesSamples& s : *got) {
    ASSERT_EQ(s.labels.size(), 1u);
    paths.push_back(s.labels[0].second);
  }
  // Ordered by labels: byte order of the values.
  EXPECT_EQ(paths, (std::vector<std::string>{"a\"b\\c", kTrickyPath,
                                             "a\\\"b\\\\c\\nd\\te\\x01z",
                                             "pl\xc3\xa4in"}));
  // Each decoy matches only itself.
  for (const std::string& path : paths) {
    auto one =
        source_->QueryRange(Query("lens_ts_escape_info", {{"path", path}}));
    ASSERT_TRUE(one.ok()) << one.status();
    ASSERT_EQ(one->size(), 1u) << path;
    EXPECT_EQ((*one)[0].labels[0].second, path);
  }
}

TEST_F(PromQlSourceTest, MoreSeriesThanMaxSeriesIsResourceExhausted) {
  RangeQuery q = Query("lens_ts_gpu_utilization_ratio", {});
  q.max_series = 2;
  auto got = source_->QueryRange(q);
  EXPECT_EQ(got.status().code(), StatusCode::kResourceExhausted)
      << got.status();
  EXPECT_NE(got.status().message().find("max_series"), std::string::npos);
  q.max_series = 3;
  EXPECT_TRUE(source_->QueryRange(q).ok());
}

TEST_F(PromQlSourceTest, AnswerOverMaxResponseBytesIsResourceExhausted) {
  auto small = Source(vm_->url(), 1024);
  RangeQuery q = Query("lens_ts_gpu_utilization_ratio", {});
  q.step = std::chrono::seconds(1);  // 601 points a series
  auto got = small->QueryRange(q);
  EXPECT_EQ(got.status().code(), StatusCode::kResourceExhausted)
      << got.status();
  EXPECT_NE(got.status().message().find("max_response_bytes"),
            std::string::npos);
}

TEST_F(PromQlSourceTest, ErrorAnswerIsUnavailableNamingTheServer) {
  auto wrong =
      Source("http://lens:s3cret@127.0.0.1:" + std::to_string(vm_->port()) +
             "/nope?token=t0ken");
  auto got = wrong->QueryRange(Query("lens_ts_gpu_utilization_ratio", {}));
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << got.status();
  const std::string& m = got.status().message();
  EXPECT_NE(m.find("http://127.0.0.1:" + std::to_string(vm_->port()) +
                   "/nope/api/v1/query_range"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("HTTP 400"), std::string::npos) << m;
  // VictoriaMetrics quotes the request URI: the token is scrubbed.
  EXPECT_EQ(m.find("s3cret"), std::string::npos) << m;
  EXPECT_EQ(m.find("t0ken"), std::string::npos) << m;
}

TEST_F(PromQlSourceTest, UnreachableServerIsUnavailableWithoutPassword) {
  const int port = FreeLoopbackPort();
  auto gone = Source("http://lens:s3cret@127.0.0.1:" + std::to_string(port));
  auto got = gone->QueryRange(Query("lens_ts_gpu_utilization_ratio", {}));
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << got.status();
  const std::string& m = got.status().message();
  EXPECT_NE(m.find("http://127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("s3cret"), std::string::npos) << m;
  EXPECT_EQ(m.find("lens:"), std::string::npos) << m;
}

// One source, many threads: the handle pool hands each its own.
TEST_F(PromQlSourceTest, ConcurrentQueriesAnswerAlike) {
  const Expectation e = SharedExpectations()[0];
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        auto got = source_->QueryRange(e.query);
        if (!got.ok() || got->size() != e.want.size()) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(PromQlSourceTest, InvalidQueryIsRefusedBeforeAnyRequest) {
  RangeQuery q = Query("lens_ts_gpu_utilization_ratio", {{"no-dash", "x"}});
  EXPECT_EQ(source_->QueryRange(q).status().code(),
            StatusCode::kInvalidArgument);
}

// An in-process server: what the source sends, and garbage answers.
class FakePromQlServer {
 public:
  explicit FakePromQlServer(std::string answer) : answer_(std::move(answer)) {
    HttpServerOptions o;
    o.listen = "127.0.0.1:0";
    auto server = HttpServer::Create(o);
    EXPECT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    server_->Handle("POST", "/prom/api/v1/query_range",
                    [this](const HttpRequest& req, HttpResponse* r) {
                      std::lock_guard lock(mu_);
                      last_ = req;
                      r->body = answer_;
                    });
    EXPECT_TRUE(server_->Start().ok());
  }
  std::string url() const { return server_->url() + "/prom/"; }
  HttpRequest last() const {
    std::lock_guard lock(mu_);
    return last_;
  }

 private:
  const std::string answer_;
  mutable std::mutex mu_;
  HttpRequest last_;  // GUARDED_BY(mu_)
  std::unique_ptr<HttpServer> server_;
};

TEST(PromQlSourceRequestTest, SendsTheFormAndTheBearerToken) {
  FakePromQlServer server(
      R"({"status":"success","data":{"resultType":"matrix","result":[]}})");
  PromQlSourceOptions o;
  o.url = server.url();
  o.bearer_token = "tok-123";
  auto source = NewPromQlSource(o);
  ASSERT_TRUE(source.ok()) << source.status();
  RangeQuery q;
  q.metric = "lens_x_total";
  q.matchers = {{"pod", "a\"b"}};
  q.from_ms = 1700000042000;
  q.to_ms = 1700000050000;
  q.step = std::chrono::milliseconds(1500);
  q.function = RangeFunction::kRate;
  auto got = (*source)->QueryRange(q);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->empty());
  const HttpRequest req = server.last();
  EXPECT_EQ(req.Header("authorization"), "Bearer tok-123");
  // rate(lens_x_total{pod="a\"b"}[1500ms]), form-encoded; start aligned
  // down to a multiple of 1.5 s.
  EXPECT_EQ(req.body,
            "query=rate%28lens_x_total%7Bpod%3D%22a%5C%22b%22%7D%5B1500ms%5D%29"
            "&start=1700000041.5&end=1700000050&step=1.5");
}

PromQlSourceOptions Options(std::string url, std::string ca_file = "") {
  PromQlSourceOptions o;
  o.url = std::move(url);
  o.ca_file = std::move(ca_file);
  return o;
}

TEST(PromQlSourceRequestTest, MalformedAnswerIsUnavailable) {
  const char* answers[] = {
      "not json",
      R"({"status":"success","data":{"resultType":"vector"}})",
      // A series without its metric (one literal over two lines).
      (R"({"status":"success","data":{"resultType":"matrix",)"
       R"("result":[{"values":[[1,2]]}]}})"),
  };
  for (const char* answer : answers) {
    FakePromQlServer server(answer);
    auto source = NewPromQlSource(Options(server.url()));
    ASSERT_TRUE(source.ok());
    auto got = (*source)->QueryRange(Query("lens_x", {}));
    EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << answer;
  }
}

TEST(PromQlSourceRequestTest, BadOptionsAreInvalidArgument) {
  EXPECT_EQ(NewPromQlSource(Options("ftp://vm")).status().code(),
            StatusCode::kInvalidArgument);
  auto missing = NewPromQlSource(Options("https://vm", "/nonexistent/ca.pem"));
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("ca_file"), std::string::npos);
}

}  // namespace
}  // namespace lens::test
