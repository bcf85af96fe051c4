// Reads a PromQL server's /api/v1/query_range answer (the Prometheus HTTP
// API's JSON envelope, which VictoriaMetrics speaks too).
#ifndef LENS_TIMESERIES_PROMQL_RESPONSE_H_
#define LENS_TIMESERIES_PROMQL_RESPONSE_H_

#include <string>
#include <string_view>
#include <vector>

#include "lens/sample_history.h"
#include "lens/status.h"

namespace lens::timeseries {

// The series of a {"status":"success","data":{"resultType":"matrix",
// "result":[{"metric":{...},"values":[[<unix s>,"<value>"],...]}]}}
// answer: each named `metric`, its labels without __name__ (and without
// empty values), sorted by name; values "NaN", "+Inf", "-Inf" as such;
// series ordered by labels. `server` names the server in messages (no
// credentials). Errors: ResourceExhausted when more than `max_series` series
// came; Unavailable for an "error" answer (with its errorType and error) or
// a malformed one.
StatusOr<std::vector<SeriesSamples>> ParseQueryRangeResponse(
    std::string_view body, std::string_view metric, size_t max_series,
    std::string_view server);

// What an error answer says ("bad_data: parse error at char 5: ..."), or the
// start of a body that is not one, for messages about non-2xx answers.
std::string PromQlErrorText(std::string_view body);

}  // namespace lens::timeseries

#endif  // LENS_TIMESERIES_PROMQL_RESPONSE_H_
