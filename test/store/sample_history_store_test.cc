// The bounded sample history (Store::samples()), on both backends:
// resolution, matchers and ranges, label text that needs escaping, pruning,
// the series bound and non-finite values.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include "lens/store.h"
#include "store_test_env.h"

namespace lens::test {
namespace {

constexpr int64_t kMs0 = 1700000040000;  // a multiple of 15 s and 1 min
using Labels2 = std::vector<std::pair<std::string, std::string>>;

class SampleHistoryStore : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    db_ = std::make_unique<TestDatabase>(GetParam());
    ASSERT_FALSE(db_->url().empty());
    auto store = Store::Open(db_->url());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  static MetricSample Sample(std::string metric, Labels2 labels, int64_t ms,
                             double value) {
    return {std::move(metric), std::move(labels), ms, value};
  }

  StatusOr<std::vector<SeriesSamples>> Query(std::string metric,
                                             Labels2 matchers = {},
                                             int64_t from = 0,
                                             int64_t to = kMs0 * 2) {
    SampleQuery q;
    q.metric = std::move(metric);
    q.matchers = std::move(matchers);
    q.from_ms = from;
    q.to_ms = to;
    return store_->samples().QuerySamples(q);
  }

  std::unique_ptr<TestDatabase> db_;
  std::unique_ptr<Store> store_;
};

TEST_P(SampleHistoryStore, OnePointPerResolutionStepLastWriteWins) {
  SampleRepository& h = store_->samples();
  const Labels2 gpu = {{"gpu", "0"}, {"node", "n1"}};
  const MetricSample batch[] = {
      Sample("gpu_utilization", gpu, kMs0 + 1000, 0.25),
      Sample("gpu_utilization", gpu, kMs0 + 9000, 0.5),  // same step: wins
      Sample("gpu_utilization", gpu, kMs0 + 16000, 0.75),
  };
  ASSERT_TRUE(h.AppendSamples(batch).ok());
  auto got = Query("gpu_utilization");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].metric, "gpu_utilization");
  EXPECT_EQ((*got)[0].labels, gpu);
  ASSERT_EQ((*got)[0].points.size(), 2u);
  EXPECT_EQ((*got)[0].points[0].timestamp_ms, kMs0);  // the step's start
  EXPECT_EQ((*got)[0].points[0].value, 0.5);
  EXPECT_EQ((*got)[0].points[1].timestamp_ms, kMs0 + 15000);
  EXPECT_EQ((*got)[0].points[1].value, 0.75);
  // A later call replaces the step's point too.
  const MetricSample late = Sample("gpu_utilization", gpu, kMs0 + 14999, 1.0);
  ASSERT_TRUE(h.AppendSamples(std::span(&late, 1)).ok());
  EXPECT_EQ((*Query("gpu_utilization"))[0].points[0].value, 1.0);
  // Another resolution rounds to its own steps.
  SampleHistoryOptions minute;
  minute.resolution = std::chrono::minutes(1);
  const MetricSample m = Sample("temp_celsius", {}, kMs0 + 61000, 40);
  ASSERT_TRUE(h.AppendSamples(std::span(&m, 1), minute).ok());
  EXPECT_EQ((*Query("temp_celsius"))[0].points[0].timestamp_ms, kMs0 + 60000);
  EXPECT_EQ(h.stats().samples_written, 4u);
}

TEST_P(SampleHistoryStore, QueriesByMatchersAndInclusiveRange) {
  std::vector<MetricSample> batch;
  for (int step = 0; step < 4; ++step) {
    const int64_t t = kMs0 + step * 15000;
    batch.push_back(Sample("up", {{"job", "a"}, {"pod", "x"}}, t, 1));
    batch.push_back(Sample("up", {{"pod", "y"}, {"job", "a"}}, t, 2));
    batch.push_back(Sample("up", {{"job", "b"}}, t, 3));
    batch.push_back(Sample("down", {{"job", "a"}}, t, 4));
  }
  ASSERT_TRUE(store_->samples().AppendSamples(batch).ok());
  auto a = Query("up", {{"job", "a"}});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->size(), 2u);  // ordered by labels
  EXPECT_EQ((*a)[0].labels, (Labels2{{"job", "a"}, {"pod", "x"}}));
  EXPECT_EQ((*a)[1].labels, (Labels2{{"job", "a"}, {"pod", "y"}}));
  EXPECT_EQ((*a)[1].points.size(), 4u);
  // "" matches a series without the label.
  auto no_pod = Query("up", {{"pod", ""}});
  ASSERT_EQ(no_pod->size(), 1u);
  EXPECT_EQ((*no_pod)[0].labels, (Labels2{{"job", "b"}}));
  EXPECT_EQ(Query("up", {{"job", "a"}, {"pod", "y"}})->size(), 1u);
  EXPECT_TRUE(Query("up", {{"job", "c"}})->empty());
  EXPECT_TRUE(Query("sideways")->empty());
  EXPECT_EQ(Query("up")->size(), 3u);
  // Both ends inclusive; series without points in range are left out.
  auto range = Query("up", {{"job", "b"}}, kMs0 + 15000, kMs0 + 30000);
  ASSERT_EQ(range->size(), 1u);
  ASSERT_EQ((*range)[0].points.size(), 2u);
  EXPECT_EQ((*range)[0].points[0].timestamp_ms, kMs0 + 15000);
  EXPECT_EQ((*range)[0].points[1].timestamp_ms, kMs0 + 30000);
  EXPECT_TRUE(Query("up", {}, kMs0 + 60000, kMs0 + 90000)->empty());
  // Too many series for the caller's bound.
  SampleQuery q;
  q.metric = "up";
  q.to_ms = kMs0 * 2;
  q.max_series = 2;
  EXPECT_EQ(store_->samples().QuerySamples(q).status().code(),
            StatusCode::kResourceExhausted);
  q.from_ms = q.to_ms + 1;
  EXPECT_EQ(store_->samples().QuerySamples(q).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_P(SampleHistoryStore, LabelTextRoundTripsAndIsOnlyEverData) {
  const Labels2 odd = {
      {"quote", "say \"hi\" \\ back\\slash"},
      {"sql", "x' OR '1'='1"},
      {"unicode", "ñandú 日本 🚀"},
      {"newline", "a\nb\tc"},
      {"dropped", ""},  // an empty value is no label
  };
  const MetricSample s = Sample("odd_metric", odd, kMs0, 1);
  ASSERT_TRUE(store_->samples().AppendSamples(std::span(&s, 1)).ok());
  // The same labels in another order are the same series.
  Labels2 reordered(odd.rbegin(), odd.rend());
  const MetricSample again = Sample("odd_metric", reordered, kMs0, 2);
  ASSERT_TRUE(store_->samples().AppendSamples(std::span(&again, 1)).ok());
  auto got = Query("odd_metric", {{"sql", "x' OR '1'='1"},
                                  {"unicode", "ñandú 日本 🚀"},
                                  {"quote", "say \"hi\" \\ back\\slash"}});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  const Labels2 want = {{"newline", "a\nb\tc"},
                        {"quote", "say \"hi\" \\ back\\slash"},
                        {"sql", "x' OR '1'='1"},
                        {"unicode", "ñandú 日本 🚀"}};
  EXPECT_EQ((*got)[0].labels, want);
  ASSERT_EQ((*got)[0].points.size(), 1u);
  EXPECT_EQ((*got)[0].points[0].value, 2);
  EXPECT_TRUE(Query("odd_metric", {{"sql", "x"}})->empty());
  // Invalid UTF-8 is stored sanitised, and matched the same way.
  const MetricSample bad = Sample("odd_metric", {{"raw", "a\xff"}}, kMs0, 3);
  ASSERT_TRUE(store_->samples().AppendSamples(std::span(&bad, 1)).ok());
  auto sanitised = Query("odd_metric", {{"raw", "a\xff"}});
  ASSERT_EQ(sanitised->size(), 1u);
  EXPECT_EQ((*sanitised)[0].labels[0].second, "a\xEF\xBF\xBD");
}

TEST_P(SampleHistoryStore, BadSamplesAreRefusedWholeWithTheirIndex) {
  SampleRepository& h = store_->samples();
  auto refused = [&](MetricSample bad) {
    const MetricSample batch[] = {Sample("ok", {}, kMs0, 1), std::move(bad)};
    Status st = h.AppendSamples(batch);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st;
    EXPECT_NE(st.message().find("samples[1]"), std::string::npos) << st;
  };
  refused(Sample("", {}, kMs0, 1));
  refused(Sample("m", {{"a", "1"}, {"a", "2"}}, kMs0, 1));
  refused(Sample("m", {{"__name__", "m"}}, kMs0, 1));
  refused(Sample("m", {{"", "v"}}, kMs0, 1));
  refused(Sample("m", {{"big", std::string(3000, 'x')}}, kMs0, 1));
  refused(Sample("m", {}, -1, 1));
  EXPECT_TRUE(Query("ok")->empty());  // nothing of those batches written
  SampleHistoryOptions zero;
  zero.resolution = std::chrono::milliseconds(0);
  const MetricSample s = Sample("ok", {}, kMs0, 1);
  EXPECT_EQ(h.AppendSamples(std::span(&s, 1), zero).code(),
            StatusCode::kInvalidArgument);
}

TEST_P(SampleHistoryStore, NonFiniteValuesRoundTrip) {
  const double inf = std::numeric_limits<double>::infinity();
  // Prometheus' staleness marker is a NaN with its own payload.
  uint64_t stale_bits = 0x7ff0000000000002ull;
  double stale;
  std::memcpy(&stale, &stale_bits, sizeof stale);
  const MetricSample batch[] = {
      Sample("v", {{"k", "nan"}}, kMs0, std::nan("")),
      Sample("v", {{"k", "stale"}}, kMs0, stale),
      Sample("v", {{"k", "inf"}}, kMs0, inf),
      Sample("v", {{"k", "minf"}}, kMs0, -inf),
      Sample("v", {{"k", "tiny"}}, kMs0, 5e-324),
  };
  ASSERT_TRUE(store_->samples().AppendSamples(batch).ok());
  auto got = Query("v");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 5u);  // by labels: inf, minf, nan, stale, tiny
  EXPECT_EQ((*got)[0].points[0].value, inf);
  EXPECT_EQ((*got)[1].points[0].value, -inf);
  EXPECT_TRUE(std::isnan((*got)[2].points[0].value));
  EXPECT_TRUE(std::isnan((*got)[3].points[0].value));
  EXPECT_EQ((*got)[4].points[0].value, 5e-324);
}

TEST_P(SampleHistoryStore, PruneDropsOldPointsAndEmptySeries) {
  SampleRepository& h = store_->samples();
  std::vector<MetricSample> batch;
  for (int step = 0; step < 4; ++step) {
    batch.push_back(Sample("m", {{"s", "old"}}, kMs0 + step * 15000, step));
    batch.push_back(
        Sample("m", {{"s", "new"}}, kMs0 + 60000 + step * 15000, step));
  }
  batch.push_back(Sample("m", {{"s", "both"}}, kMs0, 0));
  batch.push_back(Sample("m", {{"s", "both"}}, kMs0 + 90000, 1));
  ASSERT_TRUE(h.AppendSamples(batch).ok());
  auto pruned = h.PruneSamples(kMs0 + 60000);
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  EXPECT_EQ(*pruned, 5);  // old's four and both's first
  auto left = Query("m");
  ASSERT_EQ(left->size(), 2u);
  EXPECT_EQ((*left)[0].labels[0].second, "both");
  EXPECT_EQ((*left)[0].points.size(), 1u);
  EXPECT_EQ((*left)[1].points.size(), 4u);
  EXPECT_EQ(*h.PruneSamples(kMs0 + 60000), 0);
  // The pruned series comes back when written again: the writer's cached
  // id for it is dropped.
  const MetricSample back = Sample("m", {{"s", "old"}}, kMs0 + 120000, 7);
  ASSERT_TRUE(h.AppendSamples(std::span(&back, 1)).ok());
  auto revived = Query("m", {{"s", "old"}});
  ASSERT_EQ(revived->size(), 1u);
  EXPECT_EQ((*revived)[0].points[0].value, 7);
}

TEST_P(SampleHistoryStore, APruneByAnotherStoreInvalidatesCachedSeries) {
  const MetricSample first = Sample("m", {{"s", "a"}}, kMs0, 1);
  ASSERT_TRUE(store_->samples().AppendSamples(std::span(&first, 1)).ok());
  auto other = Store::Open(db_->url());
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_EQ(*(*other)->samples().PruneSamples(kMs0 + 1), 1);
  // store_ cached the series' id; the series is gone and comes back anew.
  const MetricSample next = Sample("m", {{"s", "a"}}, kMs0 + 15000, 2);
  ASSERT_TRUE(store_->samples().AppendSamples(std::span(&next, 1)).ok());
  auto got = (*other)->samples().QuerySamples({"m", {}, 0, kMs0 * 2});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].points[0].value, 2);
}

TEST_P(SampleHistoryStore, NewSeriesOverTheBoundAreRefusedAndCounted) {
  SampleRepository& h = store_->samples();
  SampleHistoryOptions small;
  small.max_series = 2;
  small.evict_after = std::chrono::milliseconds(0);  // kMs0 is long past
  const MetricSample batch[] = {
      Sample("m", {{"s", "1"}}, kMs0, 1), Sample("m", {{"s", "2"}}, kMs0, 2),
      Sample("m", {{"s", "3"}}, kMs0, 3), Sample("m", {{"s", "3"}}, kMs0, 4)};
  Status st = h.AppendSamples(batch, small);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st;
  EXPECT_NE(st.message().find("max_series"), std::string::npos) << st;
  EXPECT_EQ(Query("m")->size(), 2u);  // the others were written
  EXPECT_EQ(h.stats().series_refused, 1u);
  EXPECT_EQ(h.stats().samples_refused, 2u);
  // Known series are still written; a new one is still refused.
  const MetricSample known = Sample("m", {{"s", "1"}}, kMs0 + 15000, 5);
  EXPECT_TRUE(h.AppendSamples(std::span(&known, 1), small).ok());
  EXPECT_EQ((*Query("m", {{"s", "1"}}))[0].points.size(), 2u);
  const MetricSample fresh = Sample("other", {}, kMs0, 1);
  EXPECT_EQ(h.AppendSamples(std::span(&fresh, 1), small).code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(h.stats().series_refused, 2u);
  // A larger bound lets it in.
  EXPECT_TRUE(h.AppendSamples(std::span(&fresh, 1)).ok());
}

TEST_P(SampleHistoryStore, ConcurrentWritersKeepTheBoundExactly) {
  SampleHistoryOptions bound;
  bound.max_series = 120;
  bound.evict_after = std::chrono::milliseconds(0);
  std::vector<std::thread> threads;
  std::atomic<int> exhausted{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        std::vector<MetricSample> batch;
        const int64_t at = kMs0 + round * 15000;
        for (int s = 0; s < 10; ++s) {  // each writer's own series
          batch.push_back(Sample(
              "m",
              {{"t", std::to_string(t)}, {"s", std::to_string(round * 10 + s)}},
              at, t));
        }
        for (int s = 0; s < 10; ++s) {  // and series all of them write
          batch.push_back(Sample("m", {{"shared", std::to_string(s)}}, at, t));
        }
        Status st = store_->samples().AppendSamples(batch, bound);
        if (st.code() == StatusCode::kResourceExhausted) {
          ++exhausted;
        } else {
          EXPECT_TRUE(st.ok()) << st;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  auto got = Query("m");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->size(), 120u);  // 4 x 50 own + 10 shared wanted
  EXPECT_GT(exhausted.load(), 0);
  EXPECT_EQ(store_->samples().stats().series_refused, 90u);
  EXPECT_EQ((*Query("m", {{"shared", "3"}}))[0].points.size(), 5u);
}

// A flood of series written once cannot lock live ones out: at the bound, a
// new series takes the place of the oldest series with no recent point (or
// one dated far ahead), never of a live one or of a series the same write
// brings samples for.
TEST_P(SampleHistoryStore, StaleSeriesMakeRoomForNewOnesLiveOnesDoNot) {
  SampleRepository& h = store_->samples();
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const int64_t hour = 3600000;
  SampleHistoryOptions o;
  o.max_series = 4;
  o.evict_after = std::chrono::minutes(15);
  // The junk: written an hour ago, and one dated a day ahead.
  const MetricSample junk[] = {
      Sample("m", {{"junk", "1"}}, now - hour, 1),
      Sample("m", {{"junk", "2"}}, now - hour, 2),
      Sample("m", {{"junk", "3"}}, now + 24 * hour, 3)};
  ASSERT_TRUE(h.AppendSamples(junk, o).ok());
  const MetricSample live = Sample("m", {{"real", "0"}}, now, 0);
  ASSERT_TRUE(h.AppendSamples(std::span(&live, 1), o).ok());  // 4 of 4
  // Three new live series arrive at the bound: the three junk series go,
  // oldest first; the live one stays.
  const MetricSample real[] = {Sample("m", {{"real", "1"}}, now, 1),
                               Sample("m", {{"real", "2"}}, now, 2),
                               Sample("m", {{"real", "3"}}, now, 3)};
  ASSERT_TRUE(h.AppendSamples(real, o).ok());
  EXPECT_EQ(h.stats().series_evicted, 3u);
  auto got = Query("m", {}, 0, now + 48 * hour);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 4u);
  for (const SeriesSamples& s : *got) {
    EXPECT_EQ(s.labels[0].first, "real") << s.labels[0].second;
  }
  // Full of live series: a new one is refused, nothing evicted.
  const MetricSample more = Sample("m", {{"real", "4"}}, now, 4);
  EXPECT_EQ(h.AppendSamples(std::span(&more, 1), o).code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(h.stats().series_evicted, 3u);
  EXPECT_EQ(Query("m", {}, 0, now + hour)->size(), 4u);
  // A stale series that this very write brings a (late) sample for is not
  // evicted to make room for another series in the same write.
  SampleHistoryOptions one;
  one.max_series = 1;
  one.evict_after = std::chrono::minutes(15);
  auto fresh_store = Store::Open(db_->url());
  ASSERT_TRUE(fresh_store.ok());
  ASSERT_TRUE((*fresh_store)->samples().PruneSamples(now + 48 * hour).ok());
  const MetricSample old = Sample("k", {{"s", "old"}}, now - hour, 1);
  ASSERT_TRUE(h.AppendSamples(std::span(&old, 1), one).ok());
  const MetricSample both[] = {
      Sample("k", {{"s", "old"}}, now - hour + 15000, 2),
      Sample("k", {{"s", "new"}}, now, 3)};
  EXPECT_EQ(h.AppendSamples(both, one).code(), StatusCode::kResourceExhausted);
  auto k = Query("k", {}, 0, now + hour);
  ASSERT_TRUE(k.ok()) << k.status();
  ASSERT_EQ(k->size(), 1u);
  EXPECT_EQ((*k)[0].labels[0].second, "old");
  EXPECT_EQ((*k)[0].points.size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Backends, SampleHistoryStore,
                         testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace lens::test
