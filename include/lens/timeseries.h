// Time series for the API and the dashboard, from one interface over two
// backends: a PromQL server (VictoriaMetrics or Prometheus, its
// /api/v1/query_range) in a cluster, or the store's sample history
// (lens/sample_history.h) on one machine. Both hold the same series: the
// node agent's and netflow's metrics as scraped (with a `node` label added
// by the scrape), enriched by lens-telemetry with their workload.
//
//   auto series = lens::NewPromQlSource({.url = "http://vm:8428"});
//   lens::RangeQuery q{.metric = "lens_gpu_utilization_ratio",
//                      .matchers = {{"node", "gpu-1"}},
//                      .from_ms = from, .to_ms = to,
//                      .step = std::chrono::seconds(60)};
//   auto result = (*series)->QueryRange(q);
#ifndef LENS_TIMESERIES_H_
#define LENS_TIMESERIES_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lens/export.h"
#include "lens/sample_history.h"
#include "lens/status.h"

namespace lens {

class Store;

enum class RangeFunction : uint8_t {
  // The series' value at each step (the last sample at or before it, within
  // the lookback): PromQL `metric{...}`. The sample history looks back one
  // step (the last point in (t - step, t]); a PromQL server looks back by
  // its own rule (Prometheus 5 minutes, VictoriaMetrics about a step), so
  // the two agree where a series has a sample in every step.
  kValue,
  // A counter's per-second increase over each step, resets handled:
  // PromQL `rate(metric{...}[step])`. The sample history divides the
  // increase over (t - step, t] (counted from the point before the step, if
  // at most a step older) by the step; VictoriaMetrics does the same with
  // samples on the grid, while Prometheus extrapolates to the window's ends.
  kRate,
};

struct LENS_EXPORT RangeQuery {
  std::string metric;  // required, a valid metric name
  // Label equality matchers, all of which must hold. Values are escaped
  // (PromQL string literals) or bound (SQL), never spliced in raw.
  std::vector<std::pair<std::string, std::string>> matchers;
  int64_t from_ms = 0;  // inclusive, Unix milliseconds
  int64_t to_ms = 0;    // inclusive
  std::chrono::milliseconds step{60000};
  RangeFunction function = RangeFunction::kValue;
  // More matching series than this is kResourceExhausted.
  size_t max_series = 1000;

  // InvalidArgument naming the field: empty or invalid metric or label
  // name (a reserved "__" name too), a matcher value that is not UTF-8,
  // from_ms < 0, to_ms after 9999, from_ms > to_ms, step <= 0 or over 366
  // days, more than 11,000 steps, max_series 0.
  Status Validate() const;
};

// Thread-safe.
class LENS_EXPORT TimeSeriesSource {
 public:
  virtual ~TimeSeriesSource() = default;
  // The series matching q, each with one point per step in [from, to]
  // (steps without data left out, series without points too), ordered by
  // labels (name, then value, pair by pair); each named q.metric, its
  // labels sorted by name, without __name__. Points are aligned to
  // multiples of q.step: the grid starts at from_ms rounded down to one (so
  // its first point may lie up to a step before from_ms), as Grafana aligns
  // its queries. A matcher with value "" matches series without the label.
  // Errors: InvalidArgument (q), ResourceExhausted (too many series, or an
  // answer over max_response_bytes), Unavailable (the backend cannot be
  // reached, times out, or answers with an error or malformed JSON; the
  // message names it, never its credentials).
  virtual StatusOr<std::vector<SeriesSamples>> QueryRange(
      const RangeQuery& q) = 0;
  // "promql" or "sample-history".
  virtual std::string_view backend() const = 0;
};

struct LENS_EXPORT PromQlSourceOptions {
  std::string url;           // base URL: "http://victoria-metrics:8428"
  std::string bearer_token;  // sent as Authorization: Bearer when set
  std::string ca_file;       // PEM CA bundle for https (default: system)
  std::chrono::milliseconds timeout{10000};
  size_t max_response_bytes = size_t{64} << 20;

  // InvalidArgument naming the field.
  Status Validate() const;
};

// A PromQL server's /api/v1/query_range (Prometheus, VictoriaMetrics): a
// POSTed form with the query (label values escaped as PromQL string
// literals), start, end and step in seconds; kept-alive connections.
// Credentials may sit in the URL (user:password@, sent as basic auth) or in
// bearer_token; no message shows them. InvalidArgument for bad options or
// an unreadable ca_file.
LENS_EXPORT StatusOr<std::unique_ptr<TimeSeriesSource>> NewPromQlSource(
    const PromQlSourceOptions& options);

// The store's sample history (Store::samples()), downsampled to the step as
// RangeFunction says. A point's time there is the start of its resolution
// step (15 s by default): a value shows up to that much earlier than in
// PromQL. NaN points are values for kValue and skipped by kRate. At most
// 100,000 series (the history's query bound) whatever q.max_series says.
// `store` is borrowed and outlives the source.
LENS_EXPORT std::unique_ptr<TimeSeriesSource> NewSampleHistorySource(
    Store* store);

}  // namespace lens

#endif  // LENS_TIMESERIES_H_
