#include "api/insight_window.h"

#include <algorithm>
#include <optional>

#include "api/api_json.h"
#include "api/params.h"

namespace lens::api {
namespace {

constexpr int64_t kWindowMaxRangeS = 7 * 86400;
constexpr int64_t kWindowMaxSteps = 11000;  // RangeQuery's bound

}  // namespace

int64_t InsightWindow::StepSeconds(int64_t min_step_s) const {
  return std::max<int64_t>(
      min_step_s, (to_s - from_s + kWindowMaxSteps - 1) / kWindowMaxSteps);
}

StatusOr<InsightWindow> ParseInsightWindow(const HttpRequest& req,
                                           int64_t default_s) {
  LENS_ASSIGN_OR_RETURN(std::optional<Timestamp> to_param,
                        TimeParam(req, "to"));
  LENS_ASSIGN_OR_RETURN(std::optional<Timestamp> from_param,
                        TimeParam(req, "from"));
  InsightWindow w;
  w.to_s = UnixSeconds(
      to_param ? *to_param
               : std::chrono::time_point_cast<std::chrono::microseconds>(
                     std::chrono::system_clock::now()));
  w.from_s = from_param ? UnixSeconds(*from_param) : w.to_s - default_s;
  if (w.from_s >= w.to_s)
    return InvalidArgumentError("from: must be before to");
  if (w.to_s - w.from_s > kWindowMaxRangeS) {
    return InvalidArgumentError("from: the range is over 7 days");
  }
  return w;
}

}  // namespace lens::api
