// The PromQL text of a RangeQuery: a selector whose label values are PromQL
// string literals (escaped, never spliced in raw), and the numbers of a
// /api/v1/query_range request.
#ifndef LENS_TIMESERIES_PROMQL_TEXT_H_
#define LENS_TIMESERIES_PROMQL_TEXT_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "lens/timeseries.h"

namespace lens::timeseries {

// Appends `value` as a double-quoted PromQL string literal: backslash,
// double quote and the C escapes (\n, \t, \r, ...) escaped, every other
// control character (and DEL) as \xNN; UTF-8 text kept as it is. PromQL
// (Prometheus' and MetricsQL's parsers, both Go's strconv.Unquote rules)
// reads it back byte for byte.
void AppendPromQlString(std::string_view value, std::string* out);

// `metric{name="value",...}` for kValue, `rate(metric{...}[<step>])` for
// kRate. q must be valid (RangeQuery::Validate): names are spliced as they
// are, which is safe only for valid names.
std::string PromQlExpression(const RangeQuery& q);

// A PromQL duration: whole seconds as "60s", anything else in
// milliseconds ("1500ms"), which Prometheus and VictoriaMetrics both
// accept (Prometheus rejects "1.5s").
std::string PromQlDuration(std::chrono::milliseconds d);

// Unix milliseconds as the seconds query_range takes: "1700000040",
// "1700000040.5", "-0.25".
std::string PromQlSeconds(int64_t ms);

}  // namespace lens::timeseries

#endif  // LENS_TIMESERIES_PROMQL_TEXT_H_
