// One data set and the answers both TimeSeriesSource backends must give for
// it, where their semantics agree (include/lens/timeseries.h): samples every
// 30 s on a 60 s grid, so each step holds a sample and a rate's window holds
// the point before it. promql_source_test.cc imports the samples into a real
// VictoriaMetrics; history_source_test.cc appends them to a store.
#ifndef LENS_TEST_TIMESERIES_TIMESERIES_TESTING_H_
#define LENS_TEST_TIMESERIES_TIMESERIES_TESTING_H_

#include <gtest/gtest.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "lens/sample_history.h"
#include "lens/timeseries.h"

namespace lens::test {

using Labels = std::vector<std::pair<std::string, std::string>>;

constexpr int64_t kT0Ms = 1700000040000;  // a multiple of 60 s (and 15 s)
constexpr int64_t kEveryMs = 30000;       // the samples' interval
constexpr int kSamples = 21;              // 0 s .. 600 s
constexpr int64_t kStepMs = 60000;        // the queries' step

// A label value that PromQL must escape: quote, backslash, newline, tab and
// a control character.
inline const std::string kTrickyPath = "a\"b\\c\nd\te\x01z";

// Every 30 s from kT0Ms: value(k) for k in [0, kSamples) where keep(k).
template <typename Value, typename Keep>
void AddSeries(std::vector<MetricSample>* out, const std::string& metric,
               const Labels& labels, Value value, Keep keep) {
  for (int k = 0; k < kSamples; ++k) {
    if (keep(k))
      out->push_back({metric, labels, kT0Ms + k * kEveryMs, value(k)});
  }
}

inline std::vector<MetricSample> SharedSamples() {
  std::vector<MetricSample> out;
  auto all = [](int) { return true; };
  const Labels gpus[] = {{{"gpu", "0"}, {"node", "n1"}},
                         {{"gpu", "1"}, {"node", "n1"}},
                         {{"gpu", "0"}, {"node", "n2"}}};
  for (int s = 0; s < 3; ++s) {
    AddSeries(
        &out, "lens_ts_gpu_utilization_ratio", gpus[s],
        [s](int k) { return 100.0 * s + k; }, all);
  }
  // No samples from 150 s to 270 s.
  AddSeries(
      &out, "lens_ts_gap_celsius", {{"node", "n1"}},
      [](int k) { return double(k); },
      [](int k) { return k < 5 || (k >= 10 && k < 15); });
  // 1/s, restarting at 300 s (270 -> 15): 15 + 30 in that step.
  AddSeries(
      &out, "lens_ts_rx_bytes_total", {{"node", "n1"}},
      [](int k) { return k < 10 ? 30.0 * k : 15.0 + 30 * (k - 10); }, all);
  AddSeries(
      &out, "lens_ts_rx_bytes_total", {{"node", "n2"}},
      [](int k) { return 60.0 * k; }, all);
  // The tricky value and its decoys: a prefix, its escaped text, another.
  const std::string paths[] = {kTrickyPath, "a\"b\\c",
                               "a\\\"b\\\\c\\nd\\te\\x01z", "pl\xc3\xa4in"};
  for (int s = 0; s < 4; ++s) {
    AddSeries(
        &out, "lens_ts_escape_info", {{"path", paths[s]}},
        [s](int k) { return 1000.0 * (s + 1) + k; },
        [](int k) { return k < 3; });
  }
  return out;
}

struct Expectation {
  std::string name;
  RangeQuery query;
  std::vector<SeriesSamples> want;
};

// Points at kT0Ms + j * kStepMs for j in [first, last] where keep(j).
template <typename Value, typename Keep>
std::vector<SamplePoint> Points(int first, int last, Value value, Keep keep) {
  std::vector<SamplePoint> out;
  for (int j = first; j <= last; ++j) {
    if (keep(j)) out.push_back({kT0Ms + j * kStepMs, value(j)});
  }
  return out;
}

inline RangeQuery Query(std::string metric, Labels matchers,
                        RangeFunction f = RangeFunction::kValue,
                        int64_t from = kT0Ms, int64_t to = kT0Ms + 600000) {
  RangeQuery q;
  q.metric = std::move(metric);
  q.matchers = std::move(matchers);
  q.from_ms = from;
  q.to_ms = to;
  q.step = std::chrono::milliseconds(kStepMs);
  q.function = f;
  return q;
}

inline std::vector<Expectation> SharedExpectations() {
  auto all = [](int) { return true; };
  const std::string gpu = "lens_ts_gpu_utilization_ratio";
  const std::string rx = "lens_ts_rx_bytes_total";
  std::vector<Expectation> out;
  // The last sample of each step: the even ones.
  out.push_back({"ValueWithMatcher",
                 Query(gpu, {{"node", "n1"}}),
                 {{gpu,
                   {{"gpu", "0"}, {"node", "n1"}},
                   Points(
                       0, 10, [](int j) { return 2.0 * j; }, all)},
                  {gpu,
                   {{"gpu", "1"}, {"node", "n1"}},
                   Points(
                       0, 10, [](int j) { return 100.0 + 2 * j; }, all)}}});
  // Steps without data left out: 180 s and 240 s, and 480 s on.
  out.push_back({"ValueLeavesOutStepsWithoutData",
                 Query("lens_ts_gap_celsius", {}),
                 {{"lens_ts_gap_celsius",
                   {{"node", "n1"}},
                   Points(
                       0, 10, [](int j) { return 2.0 * j; },
                       [](int j) { return j <= 2 || (j >= 5 && j <= 7); })}}});
  // From 10 s past the grid: the grid still starts at kT0Ms.
  out.push_back({"UnalignedFromIsAlignedDown",
                 Query("lens_ts_gap_celsius", {}, RangeFunction::kValue,
                       kT0Ms + 10000, kT0Ms + 130000),
                 {{"lens_ts_gap_celsius",
                   {{"node", "n1"}},
                   Points(
                       0, 2, [](int j) { return 2.0 * j; }, all)}}});
  // No point before the first step: the rate starts at 60 s.
  out.push_back(
      {"RateHandlesCounterReset",
       Query(rx, {{"node", "n1"}}, RangeFunction::kRate),
       {{rx,
         {{"node", "n1"}},
         Points(
             1, 10, [](int j) { return j == 5 ? 0.75 : 1.0; }, all)}}});
  out.push_back({"RateOfEverySeries",
                 Query(rx, {}, RangeFunction::kRate),
                 {{rx,
                   {{"node", "n1"}},
                   Points(
                       1, 10, [](int j) { return j == 5 ? 0.75 : 1.0; }, all)},
                  {rx,
                   {{"node", "n2"}},
                   Points(
                       1, 10, [](int) { return 2.0; }, all)}}});
  out.push_back({"EscapedLabelValueMatchesExactly",
                 Query("lens_ts_escape_info", {{"path", kTrickyPath}}),
                 {{"lens_ts_escape_info",
                   {{"path", kTrickyPath}},
                   Points(
                       0, 1, [](int j) { return 1000.0 + 2 * j; }, all)}}});
  out.push_back({"NoMatchIsEmpty", Query(gpu, {{"node", "n9"}}), {}});
  out.push_back({"UnknownMetricIsEmpty", Query("lens_ts_unknown", {}), {}});
  return out;
}

// /api/v1/import JSON lines (VictoriaMetrics' own format) for `samples`:
// one line per sample, which the server merges into series.
inline std::string ImportJsonLines(std::span<const MetricSample> samples) {
  std::string out;
  for (const MetricSample& s : samples) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("metric");
    w.StartObject();
    w.Key("__name__");
    w.String(s.metric.c_str());
    for (const auto& [name, value] : s.labels) {
      w.Key(name.c_str());
      w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
    }
    w.EndObject();
    w.Key("values");
    w.StartArray();
    w.Double(s.value);
    w.EndArray();
    w.Key("timestamps");
    w.StartArray();
    w.Int64(s.timestamp_ms);
    w.EndArray();
    w.EndObject();
    out.append(buf.GetString(), buf.GetSize());
    out.push_back('\n');
  }
  return out;
}

// got == want: names, labels, times exactly; values within 1e-9.
inline void ExpectSeries(const std::vector<SeriesSamples>& got,
                         const std::vector<SeriesSamples>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("series " + std::to_string(i));
    EXPECT_EQ(got[i].metric, want[i].metric);
    EXPECT_EQ(got[i].labels, want[i].labels);
    ASSERT_EQ(got[i].points.size(), want[i].points.size());
    for (size_t p = 0; p < want[i].points.size(); ++p) {
      EXPECT_EQ(got[i].points[p].timestamp_ms, want[i].points[p].timestamp_ms)
          << "point " << p;
      EXPECT_NEAR(got[i].points[p].value, want[i].points[p].value, 1e-9)
          << "point " << p;
    }
  }
}

}  // namespace lens::test

#endif  // LENS_TEST_TIMESERIES_TIMESERIES_TESTING_H_
