// The time window of the insight routes (insights.cc, stragglers.cc): the
// `from`/`to` parameters in Unix seconds, at most 7 days, and the step that
// keeps a range query within RangeQuery's bound.
#ifndef LENS_API_INSIGHT_WINDOW_H_
#define LENS_API_INSIGHT_WINDOW_H_

#include <chrono>
#include <cstdint>

#include "http/http.h"
#include "lens/model.h"
#include "lens/status.h"

namespace lens::api {

struct InsightWindow {
  int64_t from_s = 0;
  int64_t to_s = 0;

  Timestamp from() const { return Timestamp(std::chrono::seconds(from_s)); }
  Timestamp to() const { return Timestamp(std::chrono::seconds(to_s)); }
  // At least `min_step_s`, and coarse enough for at most 11,000 steps.
  int64_t StepSeconds(int64_t min_step_s) const;
};

// `to` defaults to now and `from` to `default_s` before `to`.
// InvalidArgument naming the parameter for bad times, from >= to or a range
// over 7 days.
StatusOr<InsightWindow> ParseInsightWindow(const HttpRequest& req,
                                           int64_t default_s);

}  // namespace lens::api

#endif  // LENS_API_INSIGHT_WINDOW_H_
