// ReadDeviceHealthHistory: the agents' device health series over a range.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "insights/series_query.h"
#include "lens/insights_health.h"
#include "lens/timeseries.h"

namespace lens {
namespace {

std::string_view HealthSeriesLabel(const SeriesSamples& s,
                                   std::string_view name) {
  for (const auto& [k, v] : s.labels) {
    if (k == name) return v;
  }
  return {};
}

Timestamp HealthSeriesAt(int64_t ms) {
  return Timestamp(std::chrono::milliseconds(ms));
}

std::optional<DeviceHealth> HealthSeriesState(double v) {
  if (!std::isfinite(v)) return std::nullopt;
  const long r = std::lround(v);
  if (r < 0 || r > 2) return std::nullopt;
  return static_cast<DeviceHealth>(r);
}

}  // namespace

StatusOr<DeviceHealthHistory> ReadDeviceHealthHistory(
    TimeSeriesSource& source, Timestamp from, Timestamp to,
    std::chrono::milliseconds step) {
  DeviceHealthHistory out;
  for (const HealthDeviceKind kind :
       {HealthDeviceKind::kGpu, HealthDeviceKind::kRdmaPort}) {
    const RangeQuery q = insights::SeriesQuery(kind == HealthDeviceKind::kGpu
                                                   ? "lens_gpu_health"
                                                   : "lens_rdma_port_health",
                                               from, to, step);
    LENS_ASSIGN_OR_RETURN(std::vector<SeriesSamples> series,
                          source.QueryRange(q));
    // One device can have several series (an agent restarted with another
    // instance or pod label): merged in time order, the worse state where
    // two have a point at one time.
    std::map<std::tuple<std::string, std::string, int, std::string>,
             std::vector<SamplePoint>>
        by_device;
    for (SeriesSamples& s : series) {
      const std::string device(HealthSeriesLabel(
          s, kind == HealthDeviceKind::kGpu ? "gpu" : "device"));
      const std::string_view port = HealthSeriesLabel(s, "port");
      std::vector<SamplePoint>& into =
          by_device[{std::string(HealthSeriesLabel(s, "node")), device,
                     port.empty() ? 0 : std::atoi(std::string(port).c_str()),
                     std::string(HealthSeriesLabel(s, "id"))}];
      into.insert(into.end(), s.points.begin(), s.points.end());
    }
    for (auto& [key, points] : by_device) {
      std::stable_sort(points.begin(), points.end(),
                       [](const SamplePoint& a, const SamplePoint& b) {
                         return a.timestamp_ms < b.timestamp_ms;
                       });
      DeviceHealthSeen d;
      d.kind = kind;
      d.node = std::get<0>(key);
      d.device = std::get<1>(key);
      d.port = std::get<2>(key);
      d.id = std::get<3>(key);
      std::optional<DeviceHealth> prev;
      for (size_t i = 0; i < points.size(); ++i) {
        std::optional<DeviceHealth> state = HealthSeriesState(points[i].value);
        // Points of one time: the worst.
        while (i + 1 < points.size() &&
               points[i + 1].timestamp_ms == points[i].timestamp_ms) {
          const std::optional<DeviceHealth> other =
              HealthSeriesState(points[++i].value);
          if (other && (!state || *other > *state)) state = other;
        }
        if (!state) continue;
        const Timestamp at = HealthSeriesAt(points[i].timestamp_ms);
        if (!prev || *state != *prev) {
          if (prev) {
            out.changes.push_back(
                {kind, d.node, d.device, d.port, d.id, at, *prev, *state});
            ++d.changes;
          }
          d.since = at;
        }
        prev = state;
        d.state = *state;
        d.last_seen = at;
      }
      if (prev) out.devices.push_back(std::move(d));
    }
  }
  std::sort(out.devices.begin(), out.devices.end(),
            [](const DeviceHealthSeen& a, const DeviceHealthSeen& b) {
              if (a.state != b.state) return a.state > b.state;
              if (a.node != b.node) return a.node < b.node;
              if (a.kind != b.kind) return a.kind < b.kind;
              if (a.device.size() != b.device.size()) {
                return a.device.size() < b.device.size();
              }
              if (a.device != b.device) return a.device < b.device;
              return a.port < b.port;
            });
  std::stable_sort(out.changes.begin(), out.changes.end(),
                   [](const DeviceHealthChange& a,
                      const DeviceHealthChange& b) { return a.at < b.at; });
  return out;
}

}  // namespace lens
