#include "timeseries/downsample.h"

#include <cmath>

namespace lens::timeseries {
namespace {

// The index of the grid time whose step (t - step, t] holds `ms`: the
// smallest k with start + k * step >= ms. May be negative or >= steps.
int64_t StepIndex(int64_t ms, const StepGrid& grid) {
  const int64_t offset = ms - grid.start_ms;
  int64_t k = offset / grid.step_ms;
  if (offset % grid.step_ms > 0) ++k;  // ceil (truncation rounds up below 0)
  return k;
}

}  // namespace

std::vector<SamplePoint> LastPerStep(std::span<const SamplePoint> points,
                                     const StepGrid& grid) {
  std::vector<SamplePoint> out;
  for (size_t i = 0; i < points.size(); ++i) {
    const int64_t k = StepIndex(points[i].timestamp_ms, grid);
    if (k < 0) continue;
    if (k >= grid.steps) break;
    const SamplePoint at{grid.start_ms + k * grid.step_ms, points[i].value};
    // A later point of the same step replaces the earlier one.
    if (!out.empty() && out.back().timestamp_ms == at.timestamp_ms) {
      out.back() = at;
    } else {
      out.push_back(at);
    }
  }
  return out;
}

std::vector<SamplePoint> RatePerStep(std::span<const SamplePoint> points,
                                     const StepGrid& grid) {
  std::vector<SamplePoint> out;
  const double step_s = static_cast<double>(grid.step_ms) / 1000.0;
  const SamplePoint* prev = nullptr;
  for (const SamplePoint& p : points) {
    if (std::isnan(p.value)) continue;
    const SamplePoint* a = prev;
    prev = &p;
    if (!a) continue;
    const int64_t k = StepIndex(p.timestamp_ms, grid);
    if (k < 0) continue;
    if (k >= grid.steps) break;
    const int64_t t = grid.start_ms + k * grid.step_ms;
    if (a->timestamp_ms <= t - 2 * grid.step_ms) continue;  // a gap
    const double increase = p.value >= a->value ? p.value - a->value : p.value;
    // Summed first, divided once: the same rounding as (v1 - v0) / step.
    if (!out.empty() && out.back().timestamp_ms == t) {
      out.back().value += increase;
    } else {
      out.push_back({t, increase});
    }
  }
  for (SamplePoint& p : out) p.value /= step_s;
  return out;
}

}  // namespace lens::timeseries
