// The sample history's points on a query's step grid: what the sample
// history source answers (NewSampleHistorySource), kept free of the store so
// that it is tested on plain points.
#ifndef LENS_TIMESERIES_DOWNSAMPLE_H_
#define LENS_TIMESERIES_DOWNSAMPLE_H_

#include <cstdint>
#include <span>
#include <vector>

#include "lens/sample_history.h"

namespace lens::timeseries {

// The grid start + k * step_ms for 0 <= k < steps; step_ms > 0.
struct StepGrid {
  int64_t start_ms = 0;
  int64_t step_ms = 0;
  int64_t steps = 0;
};

// For each grid time t, the last point in (t - step, t] (NaN included, as
// stored); times without one are left out. `points` in time order.
std::vector<SamplePoint> LastPerStep(std::span<const SamplePoint> points,
                                     const StepGrid& grid);

// For each grid time t, a counter's increase over (t - step, t] divided by
// the step in seconds. The increase sums each point in (t - step, t] minus
// the point before it, when that one is in (t - 2 step, t] (no gap of more
// than a step is bridged); a value below the one before it is a restart
// from 0, so the whole value counts (Prometheus' reset rule). NaN points
// (staleness markers) are skipped. Times without such a pair are left out.
// `points` in time order.
std::vector<SamplePoint> RatePerStep(std::span<const SamplePoint> points,
                                     const StepGrid& grid);

}  // namespace lens::timeseries

#endif  // LENS_TIMESERIES_DOWNSAMPLE_H_
