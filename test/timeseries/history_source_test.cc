// NewSampleHistorySource on both store backends: the shared data set and
// answers of timeseries_testing.h (the same as a real VictoriaMetrics
// gives), and what only the sample history does (its one-step lookback,
// its resolution).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "lens/store.h"
#include "lens/timeseries.h"
#include "store_test_env.h"
#include "timeseries_testing.h"

namespace lens::test {
namespace {

class HistorySourceTest : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    db_ = std::make_unique<TestDatabase>(GetParam());
    ASSERT_FALSE(db_->url().empty());
    auto store = Store::Open(db_->url());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    const std::vector<MetricSample> samples = SharedSamples();
    ASSERT_TRUE(store_->samples().AppendSamples(samples).ok());
    source_ = NewSampleHistorySource(store_.get());
  }

  std::unique_ptr<TestDatabase> db_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<TimeSeriesSource> source_;
};

TEST_P(HistorySourceTest, AnswersTheSharedExpectations) {
  EXPECT_EQ(source_->backend(), "sample-history");
  for (const Expectation& e : SharedExpectations()) {
    SCOPED_TRACE(e.name);
    auto got = source_->QueryRange(e.query);
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectSeries(*got, e.want);
  }
}

TEST_P(HistorySourceTest, MoreSeriesThanMaxSeriesIsResourceExhausted) {
  RangeQuery q = Query("lens_ts_gpu_utilization_ratio", {});
  q.max_series = 2;
  auto got = source_->QueryRange(q);
  EXPECT_EQ(got.status().code(), StatusCode::kResourceExhausted)
      << got.status();
  q.max_series = 3;
  EXPECT_TRUE(source_->QueryRange(q).ok());
}

TEST_P(HistorySourceTest, InvalidQueryIsInvalidArgument) {
  RangeQuery q = Query("lens_ts_gpu_utilization_ratio", {});
  q.step = std::chrono::milliseconds(0);
  auto got = source_->QueryRange(q);
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find("step"), std::string::npos);
}

// A step shorter than the samples' interval: the history looks back one
// step only, so every other step is empty (a PromQL server would repeat
// the last sample within its lookback).
TEST_P(HistorySourceTest, LooksBackOneStepOnly) {
  RangeQuery q =
      Query("lens_ts_gpu_utilization_ratio", {{"gpu", "0"}, {"node", "n1"}},
            RangeFunction::kValue, kT0Ms, kT0Ms + 60000);
  q.step = std::chrono::seconds(15);
  auto got = source_->QueryRange(q);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  const std::vector<SamplePoint>& p = (*got)[0].points;
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].timestamp_ms, kT0Ms);
  EXPECT_EQ(p[1].timestamp_ms, kT0Ms + 30000);
  EXPECT_EQ(p[1].value, 1.0);
  EXPECT_EQ(p[2].timestamp_ms, kT0Ms + 60000);
}

// A sample's time is the start of its resolution step (15 s), and a NaN
// is a value to kValue and nothing to kRate.
TEST_P(HistorySourceTest, ResolutionAndNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const MetricSample samples[] = {
      {"lens_ts_nan_total", {}, kT0Ms + 14000, 10},  // stored at kT0Ms
      {"lens_ts_nan_total", {}, kT0Ms + 30000, nan},
      {"lens_ts_nan_total", {}, kT0Ms + 60000, 40},
  };
  ASSERT_TRUE(store_->samples().AppendSamples(samples).ok());
  RangeQuery q = Query("lens_ts_nan_total", {}, RangeFunction::kValue, kT0Ms,
                       kT0Ms + 60000);
  q.step = std::chrono::seconds(30);
  auto value = source_->QueryRange(q);
  ASSERT_TRUE(value.ok()) << value.status();
  ASSERT_EQ(value->size(), 1u);
  const std::vector<SamplePoint>& v = (*value)[0].points;
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].timestamp_ms, kT0Ms);
  EXPECT_EQ(v[0].value, 10);
  EXPECT_TRUE(std::isnan(v[1].value));
  EXPECT_EQ(v[2].value, 40);
  q.function = RangeFunction::kRate;
  q.step = std::chrono::seconds(60);
  auto rate = source_->QueryRange(q);
  ASSERT_TRUE(rate.ok()) << rate.status();
  ASSERT_EQ(rate->size(), 1u);
  ASSERT_EQ((*rate)[0].points.size(), 1u);
  EXPECT_EQ((*rate)[0].points[0].timestamp_ms, kT0Ms + 60000);
  EXPECT_DOUBLE_EQ((*rate)[0].points[0].value, 0.5);  // 30 over 60 s
}

INSTANTIATE_TEST_SUITE_P(Backends, HistorySourceTest,
                         testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace lens::test
