// Stragglers: the evidence series of the suspects' nodes from a
// TimeSeriesSource, by the names and labels the node agent
// (liblens/agent/metrics_render.cc) and lens-netflow
// (liblens/flow/flow_metrics.cc) export.
#include <algorithm>
#include <string>
#include <utility>

#include "lens/insights_stragglers.h"
#include "lens/timeseries.h"

namespace lens {
namespace {

std::string_view StragglerLabel(const SeriesSamples& s, std::string_view name) {
  for (const auto& [k, v] : s.labels) {
    if (k == name) return v;
  }
  return {};
}

// How one metric family becomes evidence series.
struct StragglerFamily {
  std::string_view metric;
  StragglerEvidenceKind kind;
  bool per_gpu;
  std::string_view name_label;  // "" when the series has no name
};

constexpr StragglerFamily kStragglerFamilies[] = {
    {"lens_gpu_throttled", StragglerEvidenceKind::kGpuThrottle, true, "reason"},
    {"lens_gpu_temperature_celsius", StragglerEvidenceKind::kGpuTemperature,
     true, "sensor"},
    {"lens_gpu_power_watts", StragglerEvidenceKind::kGpuPower, true, ""},
    {"lens_gpu_power_cap_watts", StragglerEvidenceKind::kGpuPowerCap, true, ""},
    {"lens_gpu_ecc_errors_total", StragglerEvidenceKind::kGpuEccErrors, true,
     "type"},
    // The kind comes from the counter (ClassifyRdmaCounter).
    {"lens_rdma_port_stat_total", StragglerEvidenceKind::kRdmaPortErrors, false,
     "counter"},
    {"lens_rdma_port_hw_stat_total", StragglerEvidenceKind::kRdmaPortErrors,
     false, "counter"},
    {"lens_tcp_flow_retransmits_total", StragglerEvidenceKind::kTcpRetransmits,
     false, ""},
};

// The series of one family's answer that are evidence, or nullopt.
std::optional<StragglerEvidenceSeries> StragglerSeriesOf(
    const StragglerFamily& f, SeriesSamples& s, std::string_view node,
    std::span<const std::string> pods) {
  StragglerEvidenceSeries e;
  e.kind = f.kind;
  e.node = std::string(node);
  if (f.per_gpu) {
    e.gpu = StragglerLabel(s, "gpu");
    if (e.gpu.empty()) return std::nullopt;
  }
  if (!f.name_label.empty()) {
    e.name = StragglerLabel(s, f.name_label);
    if (e.name.empty()) return std::nullopt;
  }
  if (f.kind == StragglerEvidenceKind::kRdmaPortErrors) {
    const std::optional<StragglerEvidenceKind> kind =
        ClassifyRdmaCounter(e.name);
    const std::string_view device = StragglerLabel(s, "device");
    if (!kind || device.empty()) return std::nullopt;
    e.kind = *kind;
    e.device =
        std::string(device) + "/" + std::string(StragglerLabel(s, "port"));
  } else if (f.kind == StragglerEvidenceKind::kTcpRetransmits) {
    const std::string_view pod = StragglerLabel(s, "workload");
    if (std::find(pods.begin(), pods.end(), pod) == pods.end())
      return std::nullopt;
    e.device = pod;
    e.name = std::string(StragglerLabel(s, "class")) + " " +
             std::string(StragglerLabel(s, "direction"));
  }
  e.points = std::move(s.points);
  return e;
}

}  // namespace

StatusOr<std::vector<StragglerEvidenceSeries>> ReadStragglerEvidence(
    TimeSeriesSource& source, std::span<const std::string> nodes,
    std::span<const std::string> pods, Timestamp from, Timestamp to,
    std::chrono::milliseconds step) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  std::vector<StragglerEvidenceSeries> out;
  for (const std::string& node : nodes) {
    for (const StragglerFamily& f : kStragglerFamilies) {
      if (f.kind == StragglerEvidenceKind::kTcpRetransmits && pods.empty())
        continue;
      RangeQuery q;
      q.metric = std::string(f.metric);
      q.matchers = {{"node", node}};
      q.from_ms = std::max<int64_t>(
          0,
          duration_cast<milliseconds>(from.time_since_epoch() - step).count());
      q.to_ms = duration_cast<milliseconds>(to.time_since_epoch()).count();
      q.step = step;
      q.max_series = 10000;
      StatusOr<std::vector<SeriesSamples>> series = source.QueryRange(q);
      if (!series.ok()) {
        return Status(series.status().code(), "stragglers: read " + q.metric +
                                                  " of node " + node + ": " +
                                                  series.status().message());
      }
      for (SeriesSamples& s : *series) {
        if (auto e = StragglerSeriesOf(f, s, node, pods))
          out.push_back(std::move(*e));
      }
    }
  }
  return out;
}

}  // namespace lens
