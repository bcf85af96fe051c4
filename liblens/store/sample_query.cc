// The sample history's reads and its pruning (the writer: samples.cc).
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "core/text.h"
#include "lens/store.h"
#include "store/db.h"
#include "store/sample_history_state.h"
#include "store/sample_series.h"
#include "store/text.h"

namespace lens {
namespace {

using store::Conn;
using store::Param;
using store::Rows;

constexpr size_t kMaxQuerySeries = 100000;
// Series ids per statement; chunks are padded to a power of two so that a
// few statement texts serve every query (both engines cache them by text).
constexpr size_t kIdsPerStatement = 256;

struct Matched {
  int64_t id;
  store::LabelPairs labels;
};

bool Matches(const store::LabelPairs& labels,
             const store::LabelPairs& matchers) {
  for (const auto& [name, value] : matchers) {
    auto it = std::lower_bound(
        labels.begin(), labels.end(), name,
        [](const auto& l, const std::string& n) { return l.first < n; });
    const bool has = it != labels.end() && it->first == name;
    if ((has ? it->second : std::string()) != value) return false;
  }
  return true;
}

// The points in [from, to] of `series`, by id, in time order.
Status ReadPoints(Conn& c, const std::vector<Matched>& series, int64_t from,
                  int64_t to,
                  std::unordered_map<int64_t, std::vector<SamplePoint>>* out) {
  for (size_t start = 0; start < series.size(); start += kIdsPerStatement) {
    const size_t n = std::min(kIdsPerStatement, series.size() - start);
    const size_t padded = std::bit_ceil(n);
    std::vector<Param> p = {from, to};
    std::string sql =
        "SELECT series_id, ts_ms, value FROM samples WHERE ts_ms >= $1 AND "
        "ts_ms <= $2 AND series_id IN (";
    for (size_t i = 0; i < padded; ++i) {
      p.push_back(series[start + std::min(i, n - 1)].id);
      sql += (i ? ", $" : "$") + std::to_string(p.size());
    }
    sql += ") ORDER BY series_id, ts_ms";
    Rows rows;
    LENS_RETURN_IF_ERROR(c.Execute(sql, p, &rows));
    for (size_t r = 0; r < rows.size(); ++r) {
      // NULL is a NaN that was written (AppendSamples).
      (*out)[rows.Int(r, 0)].push_back(
          {rows.Int(r, 1), rows.IsNull(r, 2)
                               ? std::numeric_limits<double>::quiet_NaN()
                               : rows.Double(r, 2)});
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::vector<SeriesSamples>> SampleRepository::QuerySamples(
    const SampleQuery& q) {
  std::string metric;
  LENS_RETURN_IF_ERROR(store::SeriesMetric("sample query", q.metric, &metric));
  if (q.from_ms > q.to_ms) {
    return InvalidArgumentError("sample query: from_ms " +
                                std::to_string(q.from_ms) + " is after to_ms " +
                                std::to_string(q.to_ms));
  }
  if (q.max_series < 1 || q.max_series > kMaxQuerySeries) {
    return InvalidArgumentError("sample query: max_series must be 1.." +
                                std::to_string(kMaxQuerySeries));
  }
  // Matched as the writer stored them: sanitised text.
  store::LabelPairs matchers;
  for (const auto& [name, value] : q.matchers) {
    matchers.emplace_back(ValidUtf8(name), ValidUtf8(value));
  }
  std::vector<Matched> series;
  std::unordered_map<int64_t, std::vector<SamplePoint>> points;
  LENS_RETURN_IF_ERROR(state_->db->Read([&](Conn& c) -> Status {
    series.clear();
    points.clear();
    Rows rows;
    const Param p[] = {std::string_view(metric)};
    LENS_RETURN_IF_ERROR(c.Execute(
        "SELECT id, labels FROM sample_series WHERE metric = $1", p, &rows));
    for (size_t r = 0; r < rows.size(); ++r) {
      store::LabelPairs labels = store::ReadSeriesLabels(rows.Text(r, 1));
      if (!Matches(labels, matchers)) continue;
      if (series.size() == q.max_series) {
        return ResourceExhaustedError(
            "sample query: more than " + std::to_string(q.max_series) +
            " series of " + metric + " match (max_series); add label matchers");
      }
      series.push_back({rows.Int(r, 0), std::move(labels)});
    }
    return ReadPoints(c, series, q.from_ms, q.to_ms, &points);
  }));
  std::vector<SeriesSamples> out;
  for (Matched& m : series) {
    auto it = points.find(m.id);
    if (it == points.end()) continue;
    out.push_back({metric, std::move(m.labels), std::move(it->second)});
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.labels < b.labels; });
  return out;
}

StatusOr<int64_t> SampleRepository::PruneSamples(int64_t older_than_ms) {
  int64_t deleted = 0;
  LENS_RETURN_IF_ERROR(state_->db->Write([&](Conn& c) -> Status {
    LENS_RETURN_IF_ERROR(store::LockSampleHistory(c).status());
    Rows count;
    const Param p[] = {older_than_ms};
    LENS_RETURN_IF_ERROR(
        c.Execute("SELECT count(*) FROM samples WHERE ts_ms < $1", p, &count));
    deleted = count.Int(0, 0);
    if (deleted == 0) return OkStatus();
    LENS_RETURN_IF_ERROR(c.Execute("DELETE FROM samples WHERE ts_ms < $1", p));
    Rows gone;
    LENS_RETURN_IF_ERROR(c.Execute(
        "DELETE FROM sample_series WHERE NOT EXISTS (SELECT 1 FROM samples "
        "WHERE samples.series_id = sample_series.id) RETURNING id",
        {}, &gone));
    if (gone.empty()) return OkStatus();
    // Writers drop the ids they cached (sample_history_state.h).
    return c.Execute(
        "UPDATE sample_history_state SET generation = generation + 1", {});
  }));
  return deleted;
}

}  // namespace lens
