// The GPU time-series routes: the utilisation heatmap and the GPU metrics
// of a node or a workload, read from ApiContext::series (the node agent's
// lens_gpu_* gauges, labelled `node` and `gpu` by the scrape and
// `workload_uid` by lens-telemetry).
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/api_json.h"
#include "api/params.h"
#include "api/routes.h"

namespace lens::api {
namespace {

constexpr int64_t kMaxHeatmapColumns = 1000;
constexpr int64_t kMaxMetricSteps = 11000;  // RangeQuery's bound
constexpr size_t kMaxHeatmapSeries = 20000;
constexpr size_t kMaxWorkloadSeries = 10000;
// GPUs x columns one heatmap answers at most (about 10 MB of JSON).
constexpr int64_t kMaxHeatmapCells = 2000000;

constexpr std::string_view kUtilization = "lens_gpu_utilization_ratio";
// The GPU metrics routes answer, in this order.
constexpr std::string_view kGpuMetrics[] = {
    "lens_gpu_utilization_ratio",
    "lens_gpu_memory_used_bytes",
    "lens_gpu_power_watts",
    "lens_gpu_temperature_celsius",
};

std::string_view Label(const SeriesSamples& s, std::string_view name) {
  for (const auto& [key, value] : s.labels) {
    if (key == name) return value;
  }
  return {};
}

std::optional<int64_t> Index(std::string_view gpu) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(gpu.data(), gpu.data() + gpu.size(), v);
  if (ec != std::errc() || ptr != gpu.data() + gpu.size()) return std::nullopt;
  return v;
}

// GPU labels are indexes: "2" before "10"; labels that are not numbers
// come after them, by text.
bool GpuLess(std::string_view a, std::string_view b) {
  const std::optional<int64_t> na = Index(a), nb = Index(b);
  if (na && nb && *na != *nb) return *na < *nb;
  if (na.has_value() != nb.has_value()) return na.has_value();
  return a < b;
}

struct GpuKey {
  std::string node;
  std::string gpu;
};

struct GpuKeyLess {
  bool operator()(const GpuKey& a, const GpuKey& b) const {
    if (a.node != b.node) return a.node < b.node;
    return GpuLess(a.gpu, b.gpu);
  }
};

using GpuSeries = std::map<GpuKey, std::vector<SamplePoint>, GpuKeyLess>;

// Merges `b` into `a`, both in time order. One GPU can have several series
// (an agent restarted with another `instance`, a new workload's labels);
// where two have a point at one time the larger finite value is kept.
void MergePoints(std::vector<SamplePoint>& a, std::vector<SamplePoint>&& b) {
  if (a.empty()) {
    a = std::move(b);
    return;
  }
  std::vector<SamplePoint> out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() ||
        (i < a.size() && a[i].timestamp_ms < b[j].timestamp_ms)) {
      out.push_back(a[i++]);
    } else if (i == a.size() || b[j].timestamp_ms < a[i].timestamp_ms) {
      out.push_back(b[j++]);
    } else {
      SamplePoint p = a[i++];
      const double v = b[j++].value;
      if (std::isnan(p.value) || (!std::isnan(v) && v > p.value)) p.value = v;
      out.push_back(p);
    }
  }
  a = std::move(out);
}

// q's series by node and GPU; series without either label are left out.
StatusOr<GpuSeries> QueryGpus(TimeSeriesSource& source, const RangeQuery& q) {
  LENS_ASSIGN_OR_RETURN(std::vector<SeriesSamples> series,
                        source.QueryRange(q));
  GpuSeries out;
  for (SeriesSamples& s : series) {
    const std::string_view node = Label(s, "node"), gpu = Label(s, "gpu");
    if (node.empty() || gpu.empty()) continue;
    MergePoints(out[GpuKey{std::string(node), std::string(gpu)}],
                std::move(s.points));
  }
  return out;
}

void WritePoints(JsonWriter& w, const std::vector<SamplePoint>& points) {
  w.Key("points");
  w.StartArray();
  for (const SamplePoint& p : points) {
    w.StartArray();
    w.Int64(p.timestamp_ms / 1000);
    std::isfinite(p.value) ? w.Double(p.value) : w.Null();
    w.EndArray();
  }
  w.EndArray();
}

// {"metrics":[{"metric","series":[{["node",]"gpu","points"}]}]}: each GPU
// metric's series matching `matcher`.
Status WriteGpuMetrics(const ApiContext& ctx, const SeriesRange& range,
                       std::pair<std::string, std::string> matcher,
                       size_t max_series, bool with_node, JsonWriter& w) {
  w.StartObject();
  w.Key("metrics");
  w.StartArray();
  for (std::string_view metric : kGpuMetrics) {
    RangeQuery q = range.Query(std::string(metric), RangeFunction::kValue);
    q.matchers = {matcher};
    q.max_series = max_series;
    LENS_ASSIGN_OR_RETURN(GpuSeries series, QueryGpus(*ctx.series, q));
    w.StartObject();
    Str(w, "metric", metric);
    w.Key("series");
    w.StartArray();
    for (const auto& [key, points] : series) {
      w.StartObject();
      if (with_node) Str(w, "node", key.node);
      Str(w, "gpu", key.gpu);
      WritePoints(w, points);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return OkStatus();
}

// One GPU's row: its value at each column, null where it has none.
void WriteRow(JsonWriter& w, const SeriesRange& range,
              const std::vector<SamplePoint>& points) {
  w.StartArray();
  size_t i = 0;
  for (int64_t k = 0; k < range.steps; ++k) {
    const int64_t t_ms = (range.start_s + k * range.step_s) * 1000;
    while (i < points.size() && points[i].timestamp_ms < t_ms) ++i;
    if (i < points.size() && points[i].timestamp_ms == t_ms &&
        std::isfinite(points[i].value)) {
      w.Double(points[i].value);
    } else {
      w.Null();
    }
  }
  w.EndArray();
}

// "nodes": the rows of `series` grouped by node.
void WriteNodes(JsonWriter& w, const SeriesRange& range,
                const GpuSeries& series) {
  w.Key("nodes");
  w.StartArray();
  const std::string* open = nullptr;  // the node whose "gpus" is open
  for (const auto& [key, points] : series) {
    if (open == nullptr || *open != key.node) {
      if (open != nullptr) {
        w.EndArray();
        w.EndObject();
      }
      w.StartObject();
      Str(w, "node", key.node);
      w.Key("gpus");
      w.StartArray();
      open = &key.node;
    }
    w.StartObject();
    Str(w, "gpu", key.gpu);
    w.Key("values");
    WriteRow(w, range, points);
    w.EndObject();
  }
  if (open != nullptr) {
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

Status GetGpuHeatmap(const ApiContext& ctx, const RouteSpec&,
                     const HttpRequest& req, JsonWriter& w) {
  LENS_ASSIGN_OR_RETURN(SeriesRange range,
                        SeriesRangeParams(req, true, kMaxHeatmapColumns));
  RangeQuery q = range.Query(std::string(kUtilization), RangeFunction::kValue);
  if (std::optional<std::string> node = StringParam(req, "node"))
    q.matchers.emplace_back("node", *node);
  q.max_series = kMaxHeatmapSeries;
  LENS_ASSIGN_OR_RETURN(GpuSeries series, QueryGpus(*ctx.series, q));
  const int64_t cells = static_cast<int64_t>(series.size()) * range.steps;
  if (cells > kMaxHeatmapCells) {
    return ResourceExhaustedError(
        "gpu-heatmap: " + std::to_string(series.size()) + " GPUs x " +
        std::to_string(range.steps) + " columns is over " +
        std::to_string(kMaxHeatmapCells) +
        " cells; filter by node or use a larger step");
  }
  w.StartObject();
  w.Key("times");
  w.StartArray();
  for (int64_t k = 0; k < range.steps; ++k)
    w.Int64(range.start_s + k * range.step_s);
  w.EndArray();
  WriteNodes(w, range, series);
  w.EndObject();
  return OkStatus();
}

Status GetNodeGpuMetrics(const ApiContext& ctx, const RouteSpec&,
                         const HttpRequest& req, JsonWriter& w) {
  LENS_ASSIGN_OR_RETURN(SeriesRange range,
                        SeriesRangeParams(req, true, kMaxMetricSteps));
  const std::string name = PathParam(req, "name");
  LENS_RETURN_IF_ERROR(ctx.store->nodes().GetNode(name).status());
  return WriteGpuMetrics(ctx, range, {"node", name}, RangeQuery().max_series,
                         false, w);
}

Status GetWorkloadGpuMetrics(const ApiContext& ctx, const RouteSpec&,
                             const HttpRequest& req, JsonWriter& w) {
  LENS_ASSIGN_OR_RETURN(SeriesRange range,
                        SeriesRangeParams(req, true, kMaxMetricSteps));
  const std::string uid = PathParam(req, "uid");
  LENS_RETURN_IF_ERROR(ctx.store->pods().GetWorkload(uid).status());
  return WriteGpuMetrics(ctx, range, {"workload_uid", uid}, kMaxWorkloadSeries,
                         true, w);
}

}  // namespace lens::api
