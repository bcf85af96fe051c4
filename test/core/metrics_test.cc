#include "core/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/metric_writer.h"

namespace lens {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename T>
T Must(StatusOr<T> v) {
  EXPECT_TRUE(v.ok()) << v.status();
  return std::move(v).value();
}

std::string Value(double v) {
  std::string out;
  AppendMetricValue(v, &out);
  return out;
}

// One parsed sample line of the text format.
struct Sample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // unescaped values
  double value = 0;
};

// A strict parser for what Render() emits: returns false on anything
// unexpected.
bool ParseSampleLine(const std::string& line, Sample* out) {
  size_t i = line.find_first_of("{ ");
  if (i == std::string::npos) return false;
  out->name = line.substr(0, i);
  if (!ValidateMetricName(out->name).ok()) return false;
  if (line[i] == '{') {
    ++i;
    while (line[i] != '}') {
      const size_t eq = line.find("=\"", i);
      if (eq == std::string::npos) return false;
      std::string name = line.substr(i, eq - i), value;
      for (i = eq + 2; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\') {
          const char e = line[++i];
          if (e == 'n') {
            value.push_back('\n');
          } else if (e == '\\' || e == '"') {
            value.push_back(e);
          } else {
            return false;
          }
        } else if (line[i] == '\n') {
          return false;
        } else {
          value.push_back(line[i]);
        }
      }
      if (i >= line.size()) return false;
      out->labels.emplace_back(name, value);
      ++i;  // closing quote
      if (line[i] == ',') ++i;
    }
    ++i;  // closing brace
  }
  if (line[i] != ' ') return false;
  const std::string number = line.substr(i + 1);
  char* end = nullptr;
  out->value = std::strtod(number.c_str(), &end);
  return !number.empty() && *end == '\0';
}

// Registry with escaping and float edge cases used by the rendering tests.
void Populate(Registry* registry) {
  auto* requests = Must(registry->AddCounterFamily(
      "lens_test_requests_total",
      "Requests served.\nSecond line with a \\ backslash.", {"path", "code"}));
  Must(requests->WithLabels({"/a\"b", "200"}))->Add(3);
  Must(requests->WithLabels({"line\nbreak\\", "500"}))->Add(1.5);

  Must(registry->AddGauge("lens_test_temperature_celsius", "Temperature."))
      ->Set(-12.5);

  auto* special =
      Must(registry->AddGaugeFamily("lens_test_special", "", {"kind"}));
  Must(special->WithLabels({"nan"}))->Set(std::nan(""));
  Must(special->WithLabels({"inf"}))->Set(kInf);
  Must(special->WithLabels({"neg_inf"}))->Set(-kInf);
  Must(special->WithLabels({"big"}))->Set(1e6);
  Must(special->WithLabels({"tenth"}))->Set(0.1);

  auto* latency = Must(registry->AddHistogramFamily(
      "lens_test_latency_seconds", "Latency.", {"op"}, {0.125, 1}));
  auto read = Must(latency->WithLabels({"read"}));
  for (double v : {0.0625, 0.125, 0.5, 4.0}) read->Observe(v);

  // A labelled family without children is not rendered at all.
  Must(registry->AddCounterFamily("lens_test_unused_total", "Unused.", {"x"}));
}

constexpr char kExpected[] =
    "# HELP lens_test_latency_seconds Latency.\n"
    "# TYPE lens_test_latency_seconds histogram\n"
    "lens_test_latency_seconds_bucket{op=\"read\",le=\"0.125\"} 2\n"
    "lens_test_latency_seconds_bucket{op=\"read\",le=\"1\"} 3\n"
    "lens_test_latency_seconds_bucket{op=\"read\",le=\"+Inf\"} 4\n"
    "lens_test_latency_seconds_sum{op=\"read\"} 4.6875\n"
    "lens_test_latency_seconds_count{op=\"read\"} 4\n"
    "# HELP lens_test_requests_total Requests served.\\nSecond line with a "
    "\\\\ backslash.\n"
    "# TYPE lens_test_requests_total counter\n"
    "lens_test_requests_total{path=\"/a\\\"b\",code=\"200\"} 3\n"
    "lens_test_requests_total{path=\"line\\nbreak\\\\\",code=\"500\"} 1.5\n"
    "# TYPE lens_test_special gauge\n"
    "lens_test_special{kind=\"big\"} 1e+06\n"
    "lens_test_special{kind=\"inf\"} +Inf\n"
    "lens_test_special{kind=\"nan\"} NaN\n"
    "lens_test_special{kind=\"neg_inf\"} -Inf\n"
    "lens_test_special{kind=\"tenth\"} 0.1\n"
    "# HELP lens_test_temperature_celsius Temperature.\n"
    "# TYPE lens_test_temperature_celsius gauge\n"
    "lens_test_temperature_celsius -12.5\n";

TEST(MetricsRenderTest, ProducesExactExpositionText) {
  Registry registry;
  Populate(&registry);
  EXPECT_EQ(registry.Render(), kExpected);
  EXPECT_EQ(registry.Render(), kExpected)
      << "rendering is deterministic and side-effect free";
}

TEST(MetricsRenderTest, OutputParsesBackToTheSameSeries) {
  Registry registry;
  Populate(&registry);
  std::istringstream in(registry.Render());
  std::map<std::string, double> by_key;  // "name|k=v|k=v" -> value
  std::string line, last_type_family;
  int samples = 0;
  while (std::getline(in, line)) {
    ASSERT_FALSE(line.empty());
    if (line.starts_with("# TYPE ")) {
      last_type_family = line.substr(7, line.find(' ', 7) - 7);
      continue;
    }
    if (line.starts_with("# HELP ")) continue;
    Sample s;
    ASSERT_TRUE(ParseSampleLine(line, &s)) << line;
    EXPECT_TRUE(s.name.starts_with(last_type_family))
        << "sample before its TYPE line: " << line;
    std::string key = s.name;
    for (const auto& [k, v] : s.labels) key += "|" + k + "=" + v;
    by_key[key] = s.value;
    ++samples;
  }
  EXPECT_EQ(samples, 13);
  EXPECT_EQ(by_key.at("lens_test_requests_total|path=/a\"b|code=200"), 3);
  EXPECT_EQ(by_key.at("lens_test_requests_total|path=line\nbreak\\|code=500"),
            1.5);
  EXPECT_TRUE(std::isnan(by_key.at("lens_test_special|kind=nan")));
  EXPECT_EQ(by_key.at("lens_test_special|kind=inf"), kInf);
  EXPECT_EQ(by_key.at("lens_test_special|kind=neg_inf"), -kInf);
  EXPECT_EQ(by_key.at("lens_test_special|kind=big"), 1e6);
  EXPECT_EQ(by_key.at("lens_test_latency_seconds_bucket|op=read|le=+Inf"),
            by_key.at("lens_test_latency_seconds_count|op=read"));
}

// The one histogram renderer every family uses (the Registry's, the jobs',
// the forwarder's, the log path's, the flow monitor's): bounds as le after
// the series' own labels, then _sum and _count; the part names follow the
// current family.
TEST(MetricsWriterTest, HistogramSeriesWritesBucketsSumAndCount) {
  std::string out;
  MetricWriter w(&out);
  w.Family("lens_test_rtt_microseconds", "RTT.", "histogram");
  const double bounds[] = {2, 4, 1048576, kInf};
  const uint64_t cumulative[] = {1, 3, 3, 5};
  const Label labels[] = {{"class", "pod"}, {"direction", "out"}};
  w.HistogramSeries(labels, bounds, cumulative, 17, 5);
  w.Family("lens_test_job_seconds", "", "histogram");
  HistogramSnapshot snap;
  snap.upper_bounds = {0.005, 30, kInf};
  snap.cumulative_counts = {0, 2, 2};
  snap.sum = 12.5;
  snap.count = 2;
  w.HistogramSeries({{"job", "a\"b"}}, snap);
  EXPECT_EQ(
      out,
      "# HELP lens_test_rtt_microseconds RTT.\n"
      "# TYPE lens_test_rtt_microseconds histogram\n"
      "lens_test_rtt_microseconds_bucket{class=\"pod\",direction=\"out\","
      "le=\"2\"} 1\n"
      "lens_test_rtt_microseconds_bucket{class=\"pod\",direction=\"out\","
      "le=\"4\"} 3\n"
      "lens_test_rtt_microseconds_bucket{class=\"pod\",direction=\"out\","
      "le=\"1048576\"} 3\n"
      "lens_test_rtt_microseconds_bucket{class=\"pod\",direction=\"out\","
      "le=\"+Inf\"} 5\n"
      "lens_test_rtt_microseconds_sum{class=\"pod\",direction=\"out\"} 17\n"
      "lens_test_rtt_microseconds_count{class=\"pod\",direction=\"out\"} 5\n"
      "# TYPE lens_test_job_seconds histogram\n"
      "lens_test_job_seconds_bucket{job=\"a\\\"b\",le=\"0.005\"} 0\n"
      "lens_test_job_seconds_bucket{job=\"a\\\"b\",le=\"30\"} 2\n"
      "lens_test_job_seconds_bucket{job=\"a\\\"b\",le=\"+Inf\"} 2\n"
      "lens_test_job_seconds_sum{job=\"a\\\"b\"} 12.5\n"
      "lens_test_job_seconds_count{job=\"a\\\"b\"} 2\n");
}

TEST(MetricsFormatTest, FormatsValuesAsTheExpositionFormatWants) {
  EXPECT_EQ(Value(0), "0");
  EXPECT_EQ(Value(3), "3");
  EXPECT_EQ(Value(123456), "123456");
  EXPECT_EQ(Value(0.1), "0.1");
  EXPECT_EQ(Value(1e-7), "1e-07");
  EXPECT_EQ(Value(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(Value(std::nan("")), "NaN");
  EXPECT_EQ(Value(kInf), "+Inf");
  EXPECT_EQ(Value(-kInf), "-Inf");
}

// Label values from the outside world (a pod name in a log stream) with
// invalid UTF-8 or NUL: written as U+FFFD, so the scrape stays parseable.
TEST(MetricsFormatTest, LabelValuesAreAlwaysValidUtf8) {
  auto escaped = [](std::string_view v) {
    std::string out;
    AppendEscapedLabelValue(v, &out);
    return out;
  };
  EXPECT_EQ(escaped("pod-\xff\xfe"), "pod-\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(escaped(std::string_view("a\0b", 3)),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(escaped("caf\xc3\xa9 \"q\"\n"), "caf\xc3\xa9 \\\"q\\\"\\n");
  EXPECT_TRUE(ValidateLabelValue(escaped("\xed\xa0\x80")).ok());
}

TEST(MetricsNamesTest, ValidatesMetricAndLabelNames) {
  EXPECT_TRUE(ValidateMetricName("lens_gpu:util_ratio").ok());
  EXPECT_TRUE(ValidateMetricName("_x").ok());
  for (const char* bad : {"", "1abc", "a-b", "a b", "gpu.util", "é"}) {
    Status s = ValidateMetricName(bad);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ValidateMetricName("a-b").message(),
            "invalid metric name \"a-b\" (want [a-zA-Z_:][a-zA-Z0-9_:]*)");
  EXPECT_TRUE(ValidateLabelName("gpu_index").ok());
  EXPECT_TRUE(ValidateLabelName("_x").ok());
  for (const char* bad : {"", "a:b", "0a", "a-b"})
    EXPECT_FALSE(ValidateLabelName(bad).ok()) << bad;
  EXPECT_EQ(ValidateLabelName("__name__").message(),
            "label name \"__name__\" is reserved (starts with __)");
  EXPECT_TRUE(ValidateLabelValue("ünïcødé ✓ \n\"").ok());
  EXPECT_FALSE(ValidateLabelValue("\xff").ok());
  EXPECT_FALSE(ValidateLabelValue("\xc3").ok());          // truncated sequence
  EXPECT_FALSE(ValidateLabelValue("\xc0\xaf").ok());      // overlong '/'
  EXPECT_FALSE(ValidateLabelValue("\xed\xa0\x80").ok());  // surrogate
}

TEST(MetricsRegistryTest, RejectsBadRegistrations) {
  Registry registry;
  EXPECT_EQ(registry.AddCounterFamily("bad-name", "", {}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      registry.AddCounterFamily("x_total", "", {"a", "a"}).status().message(),
      "x_total: duplicate label name \"a\"");
  EXPECT_EQ(
      registry.AddHistogramFamily("h", "", {"le"}, {1}).status().message(),
      "h: label name \"le\" is reserved for histogram buckets");
  EXPECT_EQ(registry.AddHistogramFamily("h", "", {}, {1, 1}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.AddHistogramFamily("h", "", {}, {std::nan(""), 1})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(registry.AddHistogramFamily("h_ok", "", {}, {1, 2, kInf}).ok());

  ASSERT_TRUE(registry.AddCounterFamily("dup_total", "", {}).ok());
  EXPECT_EQ(registry.AddGaugeFamily("dup_total", "", {}).status().code(),
            StatusCode::kAlreadyExists);
  // A histogram owns its _bucket/_sum/_count names, in both registration
  // orders.
  ASSERT_TRUE(registry.AddHistogramFamily("lat", "", {}, {1}).ok());
  EXPECT_EQ(registry.AddGaugeFamily("lat_sum", "", {}).status().code(),
            StatusCode::kAlreadyExists);
  ASSERT_TRUE(registry.AddGaugeFamily("req_count", "", {}).ok());
  EXPECT_EQ(registry.AddHistogramFamily("req", "", {}, {1}).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(registry.AddCounter("lens_metrics_series_rejected_total", "")
                .status()
                .code(),
            StatusCode::kAlreadyExists);
}

TEST(MetricsFamilyTest, RejectsWrongLabelValues) {
  Registry registry;
  auto* f = Must(registry.AddGaugeFamily("g", "", {"node", "gpu"}));
  auto one = f->WithLabels({"n1"});
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.status().message(),
            "g: got 1 label values, want 2 (node, gpu)");
  auto utf = f->WithLabels({"n1", "\xff"});
  ASSERT_FALSE(utf.ok());
  EXPECT_EQ(utf.status().message(),
            "g label gpu: label value is not valid UTF-8 (byte 0)");
  EXPECT_EQ(f->size(), 0u);
}

TEST(MetricsFamilyTest, SameLabelsGiveTheSameChildAndRemoveStopsExport) {
  Registry registry;
  auto* f = Must(registry.AddCounterFamily("c_total", "C.", {"consumer"}));
  auto a = Must(f->WithLabels({"pod-a"}));
  EXPECT_EQ(a, Must(f->WithLabels({"pod-a"})));
  a->Add(2);
  Must(f->WithLabels({"pod-b"}))->Inc();
  EXPECT_EQ(f->size(), 2u);

  EXPECT_TRUE(f->Remove({"pod-a"}));
  EXPECT_FALSE(f->Remove({"pod-a"}));
  a->Inc();  // the old handle stays safe to use
  EXPECT_EQ(registry.Render(),
            "# HELP c_total C.\n# TYPE c_total "
            "counter\nc_total{consumer=\"pod-b\"} 1\n");
  EXPECT_EQ(Must(f->WithLabels({"pod-a"}))->Value(), 0)
      << "re-created from zero";
  f->Clear();
  EXPECT_EQ(registry.Render(), "");
}

TEST(MetricsFamilyTest, MaxChildrenRejectsNewSeriesAndCountsThem) {
  Registry registry;
  FamilyOptions options;
  options.max_children = 2;
  auto* f = Must(registry.AddGaugeFamily("flows", "Flows.", {"peer"}, options));
  ASSERT_TRUE(f->WithLabels({"a"}).ok());
  ASSERT_TRUE(f->WithLabels({"b"}).ok());
  auto c = f->WithLabels({"c"});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(c.status().message(), "flows: series limit of 2 reached");
  EXPECT_TRUE(f->WithLabels({"a"}).ok()) << "existing series still work";
  EXPECT_FALSE(f->WithLabels({"d"}).ok());
  EXPECT_EQ(f->rejected_series(), 2u);
  EXPECT_NE(registry.Render().find(
                "lens_metrics_series_rejected_total{family=\"flows\"} 2\n"),
            std::string::npos)
      << registry.Render();
  ASSERT_TRUE(f->Remove({"b"}));
  EXPECT_TRUE(f->WithLabels({"c"}).ok()) << "removal frees room";
}

TEST(MetricsValueTest, CountersOnlyGoUpUnlessSetFromOutside) {
  Counter c;
  c.Inc();
  c.Add(2.5);
  c.Add(-10);
  c.Add(std::nan(""));
  EXPECT_EQ(c.Value(), 3.5);
  c.SetTotal(100);
  EXPECT_EQ(c.Value(), 100);
  c.Inc();
  EXPECT_EQ(c.Value(), 101);

  Gauge g;
  g.Set(5);
  g.Dec();
  g.Add(-10);
  EXPECT_EQ(g.Value(), -6);
}

TEST(MetricsValueTest, HistogramBucketsAreInclusiveAndIgnoreNaN) {
  Histogram h(
      std::make_shared<const std::vector<double>>(std::vector<double>{1, 2}));
  for (double v : {-5.0, 1.0, 1.5, 2.0, 3.0, std::nan("")}) h.Observe(v);
  HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.upper_bounds, (std::vector<double>{1, 2, kInf}));
  EXPECT_EQ(s.cumulative_counts, (std::vector<uint64_t>{2, 4, 5}));
  EXPECT_EQ(s.count, 5u);
  EXPECT_EQ(s.sum, 2.5);
  EXPECT_EQ(LinearBuckets(1, 2, 3), (std::vector<double>{1, 3, 5}));
  EXPECT_EQ(ExponentialBuckets(1, 10, 3), (std::vector<double>{1, 10, 100}));
  EXPECT_EQ(DefaultBuckets().size(), 11u);
}

TEST(MetricsConcurrencyTest, ConcurrentUpdatesCreationAndRenderLoseNothing) {
  Registry registry;
  auto* f = Must(registry.AddCounterFamily("ops_total", "Ops.", {"worker"}));
  auto shared = Must(registry.AddCounter("shared_total", "Shared."));
  auto hist = Must(registry.AddHistogram("lat", "Lat.", {0.5}));
  constexpr int kThreads = 4, kIters = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIters; ++i) {
        shared->Inc();
        hist->Observe(i % 2);
        if (i % 1000 == 0) Must(f->WithLabels({std::to_string(t)}))->Add(1000);
      }
    });
  }
  std::thread renderer([&] {
    for (int i = 0; i < 50; ++i) EXPECT_FALSE(registry.Render().empty());
  });
  for (auto& th : threads) th.join();
  renderer.join();
  EXPECT_EQ(shared->Value(), kThreads * kIters);
  EXPECT_EQ(hist->Snapshot().count, static_cast<uint64_t>(kThreads * kIters));
  EXPECT_EQ(hist->Snapshot().cumulative_counts[0],
            static_cast<uint64_t>(kThreads * kIters / 2));
  EXPECT_EQ(f->size(), static_cast<size_t>(kThreads));
  EXPECT_EQ(Must(f->WithLabels({"0"}))->Value(), kIters);
}

}  // namespace
}  // namespace lens
