// The sample history's points on a step grid: the last point per step, and
// a counter's rate per step with resets and gaps.
#include "timeseries/downsample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace lens::timeseries {
namespace {

using Points = std::vector<SamplePoint>;

constexpr StepGrid kGrid{.start_ms = 60000, .step_ms = 60000, .steps = 4};

void ExpectPoints(const Points& got, const Points& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].timestamp_ms, want[i].timestamp_ms) << i;
    EXPECT_DOUBLE_EQ(got[i].value, want[i].value) << i;
  }
}

TEST(DownsampleTest, LastPointOfEachStep) {
  // Steps (0,60], (60,120], (120,180], (180,240] s end at the grid times.
  const Points in = {{0, 1},      {60000, 2},  {61000, 3},  {119999, 4},
                     {120000, 5}, {200000, 6}, {240000, 7}, {240001, 8}};
  ExpectPoints(LastPerStep(in, kGrid), {{60000, 2}, {120000, 5}, {240000, 7}});
  EXPECT_TRUE(LastPerStep({}, kGrid).empty());
}

TEST(DownsampleTest, LastPointKeepsNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Points got = LastPerStep(Points{{60000, nan}}, kGrid);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(std::isnan(got[0].value));
}

TEST(DownsampleTest, RateIsIncreasePerStepSecond) {
  // 1/s, sampled every 30 s from 0.
  Points in;
  for (int k = 0; k <= 8; ++k) in.push_back({k * 30000, 30.0 * k});
  ExpectPoints(RatePerStep(in, kGrid),
               {{60000, 1}, {120000, 1}, {180000, 1}, {240000, 1}});
}

TEST(DownsampleTest, RateTreatsADropAsARestartFromZero) {
  const Points in = {{0, 100}, {30000, 130}, {60000, 10}, {90000, 40}};
  // (0,60]: +30, then 130 -> 10 counts 10: 40 over 60 s.
  // (60,120]: +30 over 60 s.
  ExpectPoints(RatePerStep(in, kGrid), {{60000, 40.0 / 60}, {120000, 0.5}});
}

TEST(DownsampleTest, RateNeedsThePointBeforeAndBridgesNoGap) {
  // One point per step: each rate counts from the previous step's point.
  ExpectPoints(RatePerStep(Points{{60000, 0}, {120000, 60}}, kGrid),
               {{120000, 1}});
  // A first point alone is no rate.
  EXPECT_TRUE(RatePerStep(Points{{60000, 5}}, kGrid).empty());
  // A point more than a step before the step's start is not used.
  EXPECT_TRUE(RatePerStep(Points{{0, 0}, {180000, 60}}, kGrid).empty());
}

TEST(DownsampleTest, RateSkipsNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Points in = {{30000, 0}, {60000, nan}, {90000, 30}, {120000, 60}};
  ExpectPoints(RatePerStep(in, kGrid), {{120000, 1}});
}

}  // namespace
}  // namespace lens::timeseries
