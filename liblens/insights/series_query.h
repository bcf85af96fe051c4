// The range query the insight readers send: one metric over [from, to] at
// `step`, as many series as the source allows. Internal to the insights
// area.
#ifndef LENS_INSIGHTS_SERIES_QUERY_H_
#define LENS_INSIGHTS_SERIES_QUERY_H_

#include <chrono>
#include <string>

#include "lens/model.h"
#include "lens/timeseries.h"

namespace lens::insights {

inline RangeQuery SeriesQuery(std::string metric, Timestamp from, Timestamp to,
                              std::chrono::milliseconds step) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  RangeQuery q;
  q.metric = std::move(metric);
  q.from_ms = duration_cast<milliseconds>(from.time_since_epoch()).count();
  q.to_ms = duration_cast<milliseconds>(to.time_since_epoch()).count();
  q.step = step;
  q.max_series = 100000;
  return q;
}

}  // namespace lens::insights

#endif  // LENS_INSIGHTS_SERIES_QUERY_H_
