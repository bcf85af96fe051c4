// Stragglers: each rank's median step time and each GPU's mean utilisation
// over the interval, modified z-scores against the job's median and MAD
// (per entity, and per node over its entities' median), the outliers
// assembled into suspects, and the suspects' nodes' evidence attached.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "insights/stragglers_evidence.h"
#include "lens/insights_stragglers.h"

namespace lens {
namespace {

using insights::StragglerMedian;
using insights::StragglerWindow;

// MAD / 0.6745 estimates the standard deviation of normal data; the mean
// absolute deviation's factor is sqrt(pi / 2) (Iglewicz and Hoaglin).
constexpr double kStragglerMadConsistency = 0.6745;
constexpr double kStragglerMeanAdFactor = 1.253314;

struct StragglerEntity {
  std::string_view node;
  std::string_view gpu;
  std::optional<int32_t> rank;
  double value = 0;
};

// Median, MAD and the scale a z-score divides by (0: all alike).
struct StragglerRobust {
  double median = 0;
  double mad = 0;
  double scale = 0;
};

StragglerRobust StragglerRobustOf(std::vector<double> values) {
  StragglerRobust r;
  if (values.empty()) return r;
  r.median = StragglerMedian(values);
  double sum = 0;
  for (double& v : values) {
    v = std::abs(v - r.median);
    sum += v;
  }
  const double mean_ad = sum / values.size();
  r.mad = StragglerMedian(values);
  if (r.mad > 0) {
    r.scale = r.mad / kStragglerMadConsistency;
  } else if (mean_ad > 0) {
    r.scale = kStragglerMeanAdFactor * mean_ad;
  }
  return r;
}

// One measure over the job: its entities, the statistics, what is out.
struct StragglerMeasured {
  StragglerMeasure measure = StragglerMeasure::kStepTime;
  std::vector<StragglerEntity> entities;
  StragglerStats stats;
  std::vector<std::pair<size_t, StragglerFinding>> entities_out;
  std::map<std::string_view, StragglerFinding> nodes_out;
};

// The finding for `value` when it is out, oriented so slower is larger.
std::optional<StragglerFinding> StragglerOut(StragglerMeasure measure,
                                             double value,
                                             const StragglerRobust& r,
                                             size_t population,
                                             const StragglerOptions& o) {
  if (population < size_t(o.min_entities) || r.scale <= 0) return std::nullopt;
  const double orient = measure == StragglerMeasure::kStepTime ? 1 : -1;
  const double score = orient * (value - r.median) / r.scale;
  const double deviation = std::abs(value - r.median);
  if (!(score > o.z_threshold) ||
      deviation < o.min_deviation_ratio * std::abs(r.median))
    return std::nullopt;
  return StragglerFinding{
      .measure = measure,
      .value = value,
      .job_median = r.median,
      .score = score,
      .deviation_ratio = r.median != 0 ? deviation / std::abs(r.median) : 0};
}

void StragglerDetect(StragglerMeasured& m, const StragglerOptions& o) {
  std::vector<double> values;
  std::map<std::string_view, std::vector<double>> by_node;
  for (const StragglerEntity& e : m.entities) {
    values.push_back(e.value);
    by_node[e.node].push_back(e.value);
  }
  const StragglerRobust r = StragglerRobustOf(values);
  for (size_t i = 0; i < m.entities.size(); ++i) {
    if (auto f =
            StragglerOut(m.measure, m.entities[i].value, r, values.size(), o))
      m.entities_out.emplace_back(i, *f);
  }
  std::vector<double> node_values;
  for (auto& [node, v] : by_node) node_values.push_back(StragglerMedian(v));
  const StragglerRobust nr = StragglerRobustOf(node_values);
  size_t k = 0;
  for (const auto& [node, v] : by_node) {
    if (auto f = StragglerOut(m.measure, node_values[k++], nr,
                              node_values.size(), o))
      m.nodes_out.emplace(node, *f);
  }
  m.stats = StragglerStats{.measure = m.measure,
                           .entities = int32_t(values.size()),
                           .median = r.median,
                           .mad = r.mad,
                           .nodes = int32_t(node_values.size()),
                           .node_median = nr.median,
                           .node_mad = nr.mad};
}

bool StragglerUsable(const SamplePoint& p, const StragglerWindow& w) {
  return p.timestamp_ms >= w.from_ms && p.timestamp_ms <= w.to_ms &&
         std::isfinite(p.value);
}

// Each (node, rank)'s median step time (entries of one key merged).
StragglerMeasured StragglerMeasureSteps(const StragglerInput& in,
                                        const StragglerWindow& w,
                                        const StragglerOptions& o) {
  StragglerMeasured m;
  m.measure = StragglerMeasure::kStepTime;
  std::map<std::pair<std::string_view, int32_t>, std::vector<size_t>> keys;
  for (size_t i = 0; i < in.steps.size(); ++i)
    keys[{in.steps[i].node, in.steps[i].rank}].push_back(i);
  std::vector<double> scratch;
  for (const auto& [key, entries] : keys) {
    scratch.clear();
    std::string_view gpu;
    for (size_t i : entries) {
      if (gpu.empty()) gpu = in.steps[i].gpu;
      for (const SamplePoint& p : in.steps[i].steps) {
        if (StragglerUsable(p, w) && p.value > 0) scratch.push_back(p.value);
      }
    }
    if (scratch.size() < size_t(o.min_samples)) continue;
    m.entities.push_back(
        {key.first, gpu, key.second, StragglerMedian(scratch)});
  }
  return m;
}

// Each (node, GPU)'s mean utilisation (series of one GPU merged).
StragglerMeasured StragglerMeasureUtilization(const StragglerInput& in,
                                              const StragglerWindow& w,
                                              const StragglerOptions& o) {
  StragglerMeasured m;
  m.measure = StragglerMeasure::kUtilization;
  std::map<std::pair<std::string_view, std::string_view>,
           std::pair<double, int64_t>>
      sums;
  for (const GpuUtilizationSeries& s : in.utilization) {
    auto& [sum, count] = sums[{s.node, s.gpu}];
    for (const SamplePoint& p : s.points) {
      if (!StragglerUsable(p, w)) continue;
      sum += p.value;
      ++count;
    }
  }
  for (const auto& [key, sc] : sums) {
    if (sc.second < o.min_samples) continue;
    m.entities.push_back(
        {key.first, key.second, std::nullopt, sc.first / sc.second});
  }
  return m;
}

std::string StragglerKey(char scope, std::string_view node,
                         std::string_view gpu) {
  std::string key(1, scope);
  key.append(node).push_back('\0');
  key.append(gpu);
  return key;
}

// The suspects without evidence, and the job's statistics.
StatusOr<StragglerReport> StragglerSuspects(const StragglerInput& in,
                                            const StragglerOptions& o,
                                            StragglerWindow* window) {
  LENS_RETURN_IF_ERROR(o.Validate());
  if (in.from == Timestamp{}) {
    return InvalidArgumentError("stragglers: from is not set");
  }
  if (in.to < in.from) {
    return InvalidArgumentError("stragglers: to is before from");
  }
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  *window = StragglerWindow{
      .from_ms =
          duration_cast<milliseconds>(in.from.time_since_epoch()).count(),
      .to_ms = duration_cast<milliseconds>(in.to.time_since_epoch()).count(),
      .max_baseline_ms =
          duration_cast<milliseconds>(o.max_baseline_age).count()};
  StragglerMeasured measured[] = {StragglerMeasureSteps(in, *window, o),
                                  StragglerMeasureUtilization(in, *window, o)};
  StragglerReport report;
  std::unordered_map<std::string, size_t> by_key;
  auto suspect = [&](std::string key, StragglerScope scope,
                     std::string_view node,
                     std::string_view gpu) -> StragglerSuspect& {
    auto [it, added] = by_key.emplace(std::move(key), report.suspects.size());
    if (added) {
      StragglerSuspect& s = report.suspects.emplace_back();
      s.scope = scope;
      s.node = node;
      s.gpu = gpu;
    }
    return report.suspects[it->second];
  };
  for (StragglerMeasured& m : measured) {
    if (m.entities.empty()) continue;
    StragglerDetect(m, o);
    (m.measure == StragglerMeasure::kStepTime ? report.step_time
                                              : report.utilization) = m.stats;
    for (const auto& [node, finding] : m.nodes_out) {
      suspect(StragglerKey('N', node, {}), StragglerScope::kNode, node, {})
          .findings.push_back(finding);
    }
  }
  for (const StragglerMeasured& m : measured) {
    for (const auto& [index, finding] : m.entities_out) {
      const StragglerEntity& e = m.entities[index];
      if (m.nodes_out.count(e.node)) {  // folds into its node's suspect
        StragglerSuspect& s = suspect(StragglerKey('N', e.node, {}),
                                      StragglerScope::kNode, e.node, {});
        if (e.rank) s.ranks_out.push_back(*e.rank);
        if (!e.gpu.empty()) s.gpus_out.emplace_back(e.gpu);
        continue;
      }
      const std::string gpu_key = !e.gpu.empty() ? std::string(e.gpu)
                                  : e.rank       ? "#" + std::to_string(*e.rank)
                                                 : std::string("#");
      StragglerSuspect& s = suspect(StragglerKey('G', e.node, gpu_key),
                                    StragglerScope::kGpu, e.node, e.gpu);
      if (e.rank && !s.rank) s.rank = e.rank;
      s.findings.push_back(finding);
    }
  }
  for (StragglerSuspect& s : report.suspects) {
    std::sort(s.findings.begin(), s.findings.end(),
              [](const StragglerFinding& a, const StragglerFinding& b) {
                return a.score > b.score;
              });
    s.score = s.findings.front().score;
    std::sort(s.ranks_out.begin(), s.ranks_out.end());
    std::sort(s.gpus_out.begin(), s.gpus_out.end());
    s.gpus_out.erase(std::unique(s.gpus_out.begin(), s.gpus_out.end()),
                     s.gpus_out.end());
  }
  return report;
}

bool StragglerEvidenceBefore(const StragglerEvidence& a,
                             const StragglerEvidence& b) {
  if (a.kind != b.kind) return a.kind < b.kind;
  if (a.amount != b.amount) return a.amount > b.amount;
  return std::tie(a.gpu, a.device, a.name) < std::tie(b.gpu, b.device, b.name);
}

bool StragglerSuspectBefore(const StragglerSuspect& a,
                            const StragglerSuspect& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.evidence.size() != b.evidence.size())
    return a.evidence.size() > b.evidence.size();
  return std::tie(a.node, a.gpu, a.rank, a.scope) <
         std::tie(b.node, b.gpu, b.rank, b.scope);
}

}  // namespace

std::string_view StragglerMeasureName(StragglerMeasure measure) {
  switch (measure) {
    case StragglerMeasure::kStepTime:
      return "step_time";
    case StragglerMeasure::kUtilization:
      return "utilization";
  }
  return "unknown";
}

Status StragglerOptions::Validate() const {
  auto bad = [](std::string_view field, std::string_view rule, double v) {
    return InvalidArgumentError("stragglers: " + std::string(field) +
                                " must be " + std::string(rule) + ", got " +
                                std::to_string(v));
  };
  if (!(z_threshold > 0) || !std::isfinite(z_threshold))
    return bad("z_threshold", "positive", z_threshold);
  if (!(min_deviation_ratio >= 0) || !std::isfinite(min_deviation_ratio))
    return bad("min_deviation_ratio", "0 or more", min_deviation_ratio);
  if (min_samples < 1) return bad("min_samples", "at least 1", min_samples);
  if (min_entities < 3) return bad("min_entities", "at least 3", min_entities);
  if (max_baseline_age.count() < 0)
    return bad("max_baseline_age", "0 s or more", max_baseline_age.count());
  if (!std::isfinite(hot_celsius)) return bad("hot_celsius", "finite", 0);
  if (!(temperature_margin_celsius > 0))
    return bad("temperature_margin_celsius", "positive",
               temperature_margin_celsius);
  if (!(power_cap_ratio > 0 && power_cap_ratio <= 1))
    return bad("power_cap_ratio", "in (0, 1]", power_cap_ratio);
  if (!(power_share_margin > 0 && power_share_margin <= 1))
    return bad("power_share_margin", "in (0, 1]", power_share_margin);
  return OkStatus();
}

StatusOr<StragglerReport> FindStragglers(const StragglerInput& input,
                                         const StragglerOptions& options) {
  StragglerWindow window;
  LENS_ASSIGN_OR_RETURN(StragglerReport report,
                        StragglerSuspects(input, options, &window));
  // Only the suspects' nodes' series are read.
  std::unordered_map<std::string_view,
                     std::vector<const StragglerEvidenceSeries*>>
      series;
  for (const StragglerSuspect& s : report.suspects) series[s.node];
  for (const StragglerEvidenceSeries& e : input.evidence) {
    auto it = series.find(e.node);
    if (it != series.end()) it->second.push_back(&e);
  }
  std::unordered_map<std::string_view, std::vector<StragglerEvidence>> by_node;
  for (const auto& [node, list] : series)
    by_node[node] = insights::StragglerNodeEvidence(list, window, options);
  for (StragglerSuspect& s : report.suspects) {
    for (const StragglerEvidence& e : by_node[s.node]) {
      const bool mine = s.scope == StragglerScope::kNode || s.gpu.empty() ||
                        e.gpu.empty() || e.gpu == s.gpu;
      if (mine) s.evidence.push_back(e);
    }
    std::sort(s.evidence.begin(), s.evidence.end(), StragglerEvidenceBefore);
  }
  std::sort(report.suspects.begin(), report.suspects.end(),
            StragglerSuspectBefore);
  return report;
}

StatusOr<std::vector<std::string>> FindStragglerSuspectNodes(
    const StragglerInput& input, const StragglerOptions& options) {
  StragglerWindow window;
  LENS_ASSIGN_OR_RETURN(StragglerReport report,
                        StragglerSuspects(input, options, &window));
  std::vector<std::string> nodes;
  for (StragglerSuspect& s : report.suspects)
    nodes.push_back(std::move(s.node));
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

}  // namespace lens
