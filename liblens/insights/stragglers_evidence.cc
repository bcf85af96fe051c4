// Stragglers: what one node's evidence series say over an interval, the
// RDMA counter table, and step times from training-log records.
#include "insights/stragglers_evidence.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>

namespace lens {
namespace {

struct StragglerRdmaCounterClass {
  std::string_view counter;
  StragglerEvidenceKind kind;
};

constexpr auto kStragglerErr = StragglerEvidenceKind::kRdmaPortErrors;
constexpr auto kStragglerCong = StragglerEvidenceKind::kRdmaCongestion;

// Port counters (counters/, the InfiniBand PortCounters attribute) and the
// mlx5 driver's hw_counters (drivers/infiniband/hw/mlx5/counters.c) that
// are evidence: link and packet errors, retransmissions that mean loss,
// and congestion (waits, CNPs, ECN marks, rate control). Sorted by name.
constexpr std::array kStragglerRdmaCounters = {
    StragglerRdmaCounterClass{"VL15_dropped", kStragglerErr},
    StragglerRdmaCounterClass{"duplicate_request", kStragglerErr},
    StragglerRdmaCounterClass{"excessive_buffer_overrun_errors", kStragglerErr},
    StragglerRdmaCounterClass{"implied_nak_seq_err", kStragglerErr},
    StragglerRdmaCounterClass{"link_downed", kStragglerErr},
    StragglerRdmaCounterClass{"link_error_recovery", kStragglerErr},
    StragglerRdmaCounterClass{"local_ack_timeout_err", kStragglerErr},
    StragglerRdmaCounterClass{"local_link_integrity_errors", kStragglerErr},
    StragglerRdmaCounterClass{"np_cnp_sent", kStragglerCong},
    StragglerRdmaCounterClass{"np_ecn_marked_roce_packets", kStragglerCong},
    StragglerRdmaCounterClass{"out_of_buffer", kStragglerErr},
    StragglerRdmaCounterClass{"out_of_sequence", kStragglerErr},
    StragglerRdmaCounterClass{"packet_seq_err", kStragglerErr},
    StragglerRdmaCounterClass{"port_rcv_constraint_errors", kStragglerErr},
    StragglerRdmaCounterClass{"port_rcv_errors", kStragglerErr},
    StragglerRdmaCounterClass{"port_rcv_remote_physical_errors", kStragglerErr},
    StragglerRdmaCounterClass{"port_rcv_switch_relay_errors", kStragglerErr},
    StragglerRdmaCounterClass{"port_xmit_constraint_errors", kStragglerErr},
    StragglerRdmaCounterClass{"port_xmit_discards", kStragglerErr},
    StragglerRdmaCounterClass{"port_xmit_wait", kStragglerCong},
    StragglerRdmaCounterClass{"req_cqe_error", kStragglerErr},
    StragglerRdmaCounterClass{"resp_cqe_error", kStragglerErr},
    StragglerRdmaCounterClass{"rnr_nak_retry_err", kStragglerErr},
    StragglerRdmaCounterClass{"roce_adp_retrans", kStragglerErr},
    StragglerRdmaCounterClass{"roce_adp_retrans_to", kStragglerErr},
    StragglerRdmaCounterClass{"roce_slow_restart", kStragglerCong},
    StragglerRdmaCounterClass{"roce_slow_restart_cnps", kStragglerCong},
    StragglerRdmaCounterClass{"roce_slow_restart_trans", kStragglerCong},
    StragglerRdmaCounterClass{"rp_cnp_handled", kStragglerCong},
    StragglerRdmaCounterClass{"rp_cnp_ignored", kStragglerCong},
    StragglerRdmaCounterClass{"rx_icrc_encapsulated", kStragglerErr},
    StragglerRdmaCounterClass{"symbol_error", kStragglerErr},
};

// Throttle reasons that are settings or idleness, not a slowdown (NVML's
// GpuIdle, ApplicationsClocksSetting, DisplayClockSetting, SyncBoost), and
// the power and current limits a job at full load reaches on every GPU
// (the power rule compares those against the node's other GPUs instead).
constexpr std::array<std::string_view, 7> kStragglerBenignThrottle = {
    "applications_clocks", "current",      "display_clocks", "idle",
    "power_cap",           "sw_power_cap", "sync_boost"};

bool StragglerInWindow(const SamplePoint& p,
                       const insights::StragglerWindow& w) {
  return p.timestamp_ms >= w.from_ms && p.timestamp_ms <= w.to_ms &&
         std::isfinite(p.value);
}

// The largest value in the window; nullopt without points there.
std::optional<double> StragglerGaugeMax(std::span<const SamplePoint> points,
                                        const insights::StragglerWindow& w) {
  std::optional<double> max;
  for (const SamplePoint& p : points) {
    if (StragglerInWindow(p, w) && (!max || p.value > *max)) max = p.value;
  }
  return max;
}

// Each figure's median over the other entries (its node peers).
void StragglerPeerMedians(const std::vector<double>& values,
                          std::vector<std::optional<double>>* out) {
  out->assign(values.size(), std::nullopt);
  std::vector<double> others;
  for (size_t i = 0; i < values.size(); ++i) {
    others.clear();
    for (size_t j = 0; j < values.size(); ++j) {
      if (j != i) others.push_back(values[j]);
    }
    if (!others.empty()) (*out)[i] = insights::StragglerMedian(others);
  }
}

StragglerEvidence StragglerItem(const StragglerEvidenceSeries& s,
                                double amount) {
  return StragglerEvidence{.kind = s.kind,
                           .gpu = s.gpu,
                           .device = s.device,
                           .name = s.name,
                           .amount = amount,
                           .peer_median = std::nullopt};
}

// One GPU figure read against its node peers (temperature, power).
struct StragglerGpuFigure {
  const StragglerEvidenceSeries* series;
  double value;
};

void StragglerAddPeerEvidence(const std::vector<StragglerGpuFigure>& figures,
                              double absolute_limit, double margin,
                              std::vector<StragglerEvidence>* out) {
  std::vector<double> values;
  for (const StragglerGpuFigure& f : figures) values.push_back(f.value);
  std::vector<std::optional<double>> peers;
  StragglerPeerMedians(values, &peers);
  for (size_t i = 0; i < figures.size(); ++i) {
    const double v = figures[i].value;
    const bool over_peers = peers[i] && v - *peers[i] >= margin && v > 0;
    if (v >= absolute_limit || over_peers) {
      StragglerEvidence e = StragglerItem(*figures[i].series, v);
      e.peer_median = peers[i];
      out->push_back(std::move(e));
    }
  }
}

}  // namespace

std::string_view StragglerEvidenceKindName(StragglerEvidenceKind kind) {
  switch (kind) {
    case StragglerEvidenceKind::kGpuThrottle:
      return "gpu_throttle";
    case StragglerEvidenceKind::kGpuTemperature:
      return "gpu_temperature";
    case StragglerEvidenceKind::kGpuPower:
      return "gpu_power";
    case StragglerEvidenceKind::kGpuPowerCap:
      return "gpu_power_cap";
    case StragglerEvidenceKind::kGpuEccErrors:
      return "gpu_ecc_errors";
    case StragglerEvidenceKind::kRdmaPortErrors:
      return "rdma_port_errors";
    case StragglerEvidenceKind::kRdmaCongestion:
      return "rdma_congestion";
    case StragglerEvidenceKind::kTcpRetransmits:
      return "tcp_retransmits";
  }
  return "unknown";
}

std::optional<StragglerEvidenceKind> ClassifyRdmaCounter(
    std::string_view counter) {
  auto it = std::lower_bound(
      kStragglerRdmaCounters.begin(), kStragglerRdmaCounters.end(), counter,
      [](const StragglerRdmaCounterClass& c, std::string_view name) {
        return c.counter < name;
      });
  if (it == kStragglerRdmaCounters.end() || it->counter != counter)
    return std::nullopt;
  return it->kind;
}

void AppendStragglerSteps(std::span<const IterationRecord> records,
                          std::string_view node,
                          std::vector<StragglerRankSteps>* out) {
  std::map<int32_t, size_t> index;  // rank -> entry of this node in `out`
  for (size_t i = 0; i < out->size(); ++i) {
    if ((*out)[i].node == node) index.emplace((*out)[i].rank, i);
  }
  std::vector<bool> touched(out->size(), false);
  for (const IterationRecord& r : records) {
    const std::optional<double> elapsed = r.Get(IterationField::kElapsedMs);
    if (!r.rank || !elapsed || !r.timestamp_s) continue;
    auto [it, added] = index.emplace(*r.rank, out->size());
    if (added) {
      out->push_back(StragglerRankSteps{
          .node = std::string(node), .gpu = {}, .rank = *r.rank, .steps = {}});
      touched.push_back(false);
    }
    (*out)[it->second].steps.push_back(
        SamplePoint{.timestamp_ms = std::llround(*r.timestamp_s * 1000),
                    .value = *elapsed});
    touched[it->second] = true;
  }
  for (size_t i = 0; i < out->size(); ++i) {
    if (!touched[i]) continue;
    std::stable_sort((*out)[i].steps.begin(), (*out)[i].steps.end(),
                     [](const SamplePoint& a, const SamplePoint& b) {
                       return a.timestamp_ms < b.timestamp_ms;
                     });
  }
}

namespace insights {

double StragglerMedian(std::vector<double>& values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (values.size() % 2) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

double StragglerCounterIncrease(std::span<const SamplePoint> points,
                                const StragglerWindow& w) {
  double increase = 0;
  std::optional<double> prev;
  int64_t last_ms = std::numeric_limits<int64_t>::min();
  for (const SamplePoint& p : points) {
    if (!std::isfinite(p.value) || p.timestamp_ms <= last_ms) continue;
    if (p.timestamp_ms > w.to_ms) break;
    last_ms = p.timestamp_ms;
    if (p.timestamp_ms < w.from_ms) {
      // Only a recent point is a baseline: an older one would count what
      // happened before the window.
      if (w.from_ms - p.timestamp_ms <= w.max_baseline_ms) {
        prev = p.value;
      } else {
        prev.reset();
      }
      continue;
    }
    if (prev) increase += p.value >= *prev ? p.value - *prev : p.value;
    prev = p.value;
  }
  return increase;
}

std::vector<StragglerEvidence> StragglerNodeEvidence(
    std::span<const StragglerEvidenceSeries* const> series,
    const StragglerWindow& w, const StragglerOptions& options) {
  std::vector<StragglerEvidence> out;
  std::map<std::string_view, std::vector<StragglerGpuFigure>> temperatures;
  std::map<std::string_view, double> caps;  // by GPU
  std::vector<const StragglerEvidenceSeries*> powers;
  for (const StragglerEvidenceSeries* s : series) {
    switch (s->kind) {
      case StragglerEvidenceKind::kGpuThrottle: {
        if (std::find(kStragglerBenignThrottle.begin(),
                      kStragglerBenignThrottle.end(),
                      s->name) != kStragglerBenignThrottle.end())
          break;
        int64_t total = 0, active = 0;
        for (const SamplePoint& p : s->points) {
          if (!StragglerInWindow(p, w)) continue;
          ++total;
          active += p.value >= 0.5;
        }
        if (active) out.push_back(StragglerItem(*s, double(active) / total));
        break;
      }
      case StragglerEvidenceKind::kGpuTemperature:
        if (auto max = StragglerGaugeMax(s->points, w))
          temperatures[s->name].push_back({s, *max});
        break;
      case StragglerEvidenceKind::kGpuPower:
        powers.push_back(s);
        break;
      case StragglerEvidenceKind::kGpuPowerCap:
        if (auto max = StragglerGaugeMax(s->points, w)) {
          double& cap = caps[s->gpu];
          cap = std::max(cap, *max);
        }
        break;
      case StragglerEvidenceKind::kGpuEccErrors:
      case StragglerEvidenceKind::kRdmaPortErrors:
      case StragglerEvidenceKind::kRdmaCongestion:
      case StragglerEvidenceKind::kTcpRetransmits: {
        const double increase = StragglerCounterIncrease(s->points, w);
        if (increase > 0) out.push_back(StragglerItem(*s, increase));
        break;
      }
    }
  }
  for (const auto& [sensor, figures] : temperatures) {
    StragglerAddPeerEvidence(figures, options.hot_celsius,
                             options.temperature_margin_celsius, &out);
  }
  std::vector<StragglerGpuFigure> at_cap;
  for (const StragglerEvidenceSeries* s : powers) {
    auto cap = caps.find(s->gpu);
    if (cap == caps.end() || !(cap->second > 0)) continue;
    const double limit = options.power_cap_ratio * cap->second;
    int64_t total = 0, capped = 0;
    for (const SamplePoint& p : s->points) {
      if (!StragglerInWindow(p, w)) continue;
      ++total;
      capped += p.value >= limit;
    }
    if (total) at_cap.push_back({s, double(capped) / total});
  }
  // A share can never reach an absolute limit above 1: peers decide.
  StragglerAddPeerEvidence(at_cap, 2, options.power_share_margin, &out);
  return out;
}

}  // namespace insights
}  // namespace lens
