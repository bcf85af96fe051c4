// The step grid both backends answer on, and the order their series come in.
#ifndef LENS_TIMESERIES_RANGE_H_
#define LENS_TIMESERIES_RANGE_H_

#include <cstdint>

#include "lens/sample_history.h"
#include "lens/timeseries.h"

namespace lens::timeseries {

// Steps one query may span at most (Prometheus' own limit).
inline constexpr int64_t kMaxSteps = 11000;
// The longest step (366 days) and the latest time (9999-12-31T23:59:59.999Z):
// with these bounds no grid arithmetic overflows.
inline constexpr int64_t kMaxStepMs = int64_t{366} * 86400 * 1000;
inline constexpr int64_t kMaxTimeMs = 253402300799999;

// The first point of q's grid: q.from_ms rounded down to a multiple of
// q.step, as Prometheus' clients (Grafana) align a range, so that the same
// query always lands on the same times. q's times and step must be in
// range (RangeQuery::Validate).
inline int64_t AlignedStartMs(const RangeQuery& q) {
  return q.from_ms / q.step.count() * q.step.count();
}

// The points of q's grid, AlignedStartMs(q) + k * step for k < StepCount(q)
// (the last one at or before q.to_ms). As AlignedStartMs, q in range.
inline int64_t StepCount(const RangeQuery& q) {
  return q.to_ms / q.step.count() - q.from_ms / q.step.count() + 1;
}

// The order of QueryRange's answer: by labels (name, then value, pair by
// pair), as the sample history orders its series.
inline bool SeriesLess(const SeriesSamples& a, const SeriesSamples& b) {
  return a.labels < b.labels;
}

}  // namespace lens::timeseries

#endif  // LENS_TIMESERIES_RANGE_H_
