// ReadPlacementIssues: the agents' placement series over a range.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "insights/series_query.h"
#include "lens/insights_placement.h"

namespace lens {
namespace {

std::string PlacementSeriesLabel(const SeriesSamples& s,
                                 std::string_view name) {
  for (const auto& [k, v] : s.labels) {
    if (k == name) return v;
  }
  return {};
}

using PlacementPodKey = std::tuple<std::string, std::string, std::string>;

PlacementPodKey PlacementKeyOf(const SeriesSamples& s) {
  return {PlacementSeriesLabel(s, "node"), PlacementSeriesLabel(s, "namespace"),
          PlacementSeriesLabel(s, "pod")};
}

// A series' last point (several series of one thing, as after an agent
// restart: the latest wins).
struct PlacementLast {
  int64_t at_ms = -1;
  double value = 0;
};

}  // namespace

StatusOr<std::vector<PodPlacementIssues>> ReadPlacementIssues(
    TimeSeriesSource& source, Timestamp from, Timestamp to,
    std::chrono::milliseconds step) {
  LENS_ASSIGN_OR_RETURN(std::vector<SeriesSamples> issue_series,
                        source.QueryRange(insights::SeriesQuery(
                            "lens_pod_placement_issues", from, to, step)));
  LENS_ASSIGN_OR_RETURN(std::vector<SeriesSamples> device_series,
                        source.QueryRange(insights::SeriesQuery(
                            "lens_pod_placement_device_info", from, to, step)));
  struct Pod {
    std::map<std::string, PlacementLast> issues;
    // By (kind, bdf, device): the device and its last point.
    std::map<std::tuple<std::string, std::string, std::string>,
             std::pair<PodPlacementDevice, int64_t>>
        devices;
    int64_t newest = -1;
  };
  std::map<PlacementPodKey, Pod> pods;
  for (const SeriesSamples& s : issue_series) {
    if (s.points.empty()) continue;
    const SamplePoint& p = s.points.back();
    Pod& pod = pods[PlacementKeyOf(s)];
    PlacementLast& last = pod.issues[PlacementSeriesLabel(s, "issue")];
    if (p.timestamp_ms > last.at_ms) last = {p.timestamp_ms, p.value};
    pod.newest = std::max(pod.newest, p.timestamp_ms);
  }
  for (const SeriesSamples& s : device_series) {
    if (s.points.empty()) continue;
    const int64_t at = s.points.back().timestamp_ms;
    Pod& pod = pods[PlacementKeyOf(s)];
    PodPlacementDevice d{PlacementSeriesLabel(s, "kind"),
                         PlacementSeriesLabel(s, "device"),
                         PlacementSeriesLabel(s, "bdf"),
                         PlacementSeriesLabel(s, "numa_node"),
                         PlacementSeriesLabel(s, "root_complex"),
                         PlacementSeriesLabel(s, "nic"),
                         PlacementSeriesLabel(s, "nic_distance")};
    auto& slot = pod.devices[{d.kind, d.bdf, d.device}];
    if (at > slot.second) slot = {std::move(d), at};
    pod.newest = std::max(pod.newest, at);
  }
  // A pod at the range's end: seen within two steps (at least 5 minutes)
  // of it. A pod that ended is no longer exported.
  const int64_t fresh_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(
          to.time_since_epoch())
          .count() -
      std::max<int64_t>(2 * step.count(), 300000);
  std::vector<PodPlacementIssues> out;
  for (auto& [key, pod] : pods) {
    if (pod.newest < fresh_ms) continue;
    PodPlacementIssues p;
    std::tie(p.node, p.pod_namespace, p.pod_name) = key;
    p.last_seen = Timestamp(std::chrono::milliseconds(pod.newest));
    // Issues and devices not in the pod's last scrape have cleared or gone.
    for (const auto& [issue, last] : pod.issues) {
      if (last.at_ms == pod.newest && std::isfinite(last.value) &&
          last.value > 0) {
        p.issues.emplace_back(issue, static_cast<int32_t>(last.value));
      }
    }
    for (auto& [dkey, slot] : pod.devices) {
      if (slot.second == pod.newest) p.devices.push_back(std::move(slot.first));
    }
    std::stable_sort(
        p.devices.begin(), p.devices.end(),
        [](const PodPlacementDevice& a, const PodPlacementDevice& b) {
          return (a.kind == "gpu") > (b.kind == "gpu");
        });
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace lens
