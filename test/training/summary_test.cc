// TrainingSummaryBuilder: exact percentiles for short runs, bounded memory for
// long runs and for streams with many runs.
#include <gtest/gtest.h>

#include <cmath>

#include "lens/training.h"

namespace lens {
namespace {

IterationRecord Record(int32_t run, int64_t iteration, double elapsed_ms) {
  IterationRecord r;
  r.run = run;
  r.iteration = iteration;
  r.Set(IterationField::kElapsedMs, elapsed_ms);
  return r;
}

TEST(TrainingSummaryBuilderTest, KeepsTheLatestRunsAndCountsTheDropped) {
  TrainingSummaryBuilder b(/*max_runs=*/100);
  for (int32_t run = 1; run <= 250; ++run) {
    for (int it = 1; it <= 3; ++it) b.Add(Record(run, it, 1000 + run));
  }
  b.Add(Record(5, 4, 1));  // a record of a dropped run changes nothing
  std::vector<RunSummary> runs = b.Build();
  ASSERT_EQ(runs.size(), 100u);
  EXPECT_EQ(b.dropped_runs(), 150u);
  EXPECT_EQ(runs.front().run, 151);
  EXPECT_EQ(runs.back().run, 250);
  EXPECT_EQ(runs.back().iterations, 3u);
  EXPECT_EQ(*runs.back().step_ms_p50, 1250);
  const std::string text = FormatSummary(runs, {}, b.dropped_runs());
  EXPECT_NE(text.find("150 earlier runs not summarised"), std::string::npos)
      << text;
}

TEST(TrainingSummaryBuilderTest, RunsArrivingOutOfOrderAreMergedInOrder) {
  TrainingSummaryBuilder b;
  b.Add(Record(3, 1, 10));
  b.Add(Record(1, 1, 10));
  b.Add(Record(2, 1, 10));
  b.Add(Record(3, 2, 10));
  std::vector<RunSummary> runs = b.Build();
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].run, 1);
  EXPECT_EQ(runs[2].run, 3);
  EXPECT_EQ(runs[2].iterations, 2u);
}

TEST(TrainingSummaryBuilderTest, LongRunPercentilesStayWithinHalfAPercent) {
  TrainingSummaryBuilder b;
  // 100,000 step times 1000..100999 ms in a scrambled order.
  for (int64_t i = 0; i < 100000; ++i) {
    b.Add(Record(1, i, 1000.0 + static_cast<double>((i * 7919) % 100000)));
  }
  RunSummary s = b.Build().front();
  EXPECT_EQ(s.iterations, 100000u);
  EXPECT_NEAR(*s.step_ms_p10, 11000, 11000 * 0.005);
  EXPECT_NEAR(*s.step_ms_p50, 51000, 51000 * 0.005);
  EXPECT_NEAR(*s.step_ms_p90, 91000, 91000 * 0.005);
}

}  // namespace
}  // namespace lens
