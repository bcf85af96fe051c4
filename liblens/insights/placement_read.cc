// ReadPlacementIssues: the agents' placement flags over a range.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "insights/series_query.h"
#include "lens/insights_placement.h"

namespace lens {
namespace {

std::string_view PlacementSeriesLabel(const SeriesSamples& s,
                                      std::string_view name) {
  for (const auto& [k, v] : s.labels) {
    if (k == name) return v;
  }
  return {};
}

}  // namespace

StatusOr<std::vector<PodPlacementIssues>> ReadPlacementIssues(
    TimeSeriesSource& source, Timestamp from, Timestamp to,
    std::chrono::milliseconds step) {
  LENS_ASSIGN_OR_RETURN(std::vector<SeriesSamples> series,
                        source.QueryRange(insights::SeriesQuery(
                            "lens_pod_placement_issues", from, to, step)));
  // Per pod, each issue's last point (several series of one pod and issue,
  // as after an agent restart: the latest point wins).
  struct Last {
    int64_t at_ms = -1;
    double value = 0;
  };
  std::map<std::tuple<std::string, std::string, std::string>,
           std::map<std::string, Last>>
      pods;
  for (const SeriesSamples& s : series) {
    if (s.points.empty()) continue;
    const SamplePoint& p = s.points.back();
    Last& last = pods[{std::string(PlacementSeriesLabel(s, "node")),
                       std::string(PlacementSeriesLabel(s, "namespace")),
                       std::string(PlacementSeriesLabel(s, "pod"))}]
                     [std::string(PlacementSeriesLabel(s, "issue"))];
    if (p.timestamp_ms > last.at_ms) last = {p.timestamp_ms, p.value};
  }
  // A pod still flagged at the range's end: seen within two steps (at
  // least 5 minutes) of it. A pod that ended, or whose flags all cleared,
  // is no longer exported.
  const int64_t fresh_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(
          to.time_since_epoch())
          .count() -
      std::max<int64_t>(2 * step.count(), 300000);
  std::vector<PodPlacementIssues> out;
  for (const auto& [key, issues] : pods) {
    // The pod's last scrape: issues not in it have cleared.
    int64_t newest = -1;
    for (const auto& [issue, last] : issues)
      newest = std::max(newest, last.at_ms);
    if (newest < fresh_ms) continue;
    PodPlacementIssues p;
    std::tie(p.node, p.pod_namespace, p.pod_name) = key;
    p.last_seen = Timestamp(std::chrono::milliseconds(newest));
    for (const auto& [issue, last] : issues) {
      if (last.at_ms == newest && std::isfinite(last.value) && last.value > 0) {
        p.issues.emplace_back(issue, static_cast<int32_t>(last.value));
      }
    }
    if (!p.issues.empty()) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace lens
