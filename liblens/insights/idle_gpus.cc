// Idle allocated GPUs: per GPU, its samples walked once against its holders
// (sorted by start), idle stretches kept per holder.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "lens/insights.h"

namespace lens {
namespace {

using Micros = std::chrono::microseconds;

int64_t IdleUs(Timestamp t) {
  return std::chrono::duration_cast<Micros>(t.time_since_epoch()).count();
}

Timestamp IdleAt(int64_t us) { return Timestamp(Micros(us)); }

std::string IdleGpuKey(std::string_view node, std::string_view gpu) {
  std::string key(node);
  key.push_back('\0');
  key.append(gpu);
  return key;
}

// One holder's current idle stretch.
struct IdleRun {
  const GpuHolding* holding = nullptr;
  int64_t start_us = 0;
  int64_t end_us = 0;
  double sum = 0;
  int64_t samples = 0;
};

bool IdleHolds(const GpuHolding& h, int64_t t) {
  return IdleUs(h.from) <= t && (!h.to || IdleUs(*h.to) > t);
}

// Who holds the GPU at `t`: the latest-started holding among holders[0..k]
// (started at or before `t`) that still covers it; an earlier one that
// outlasts a later, shorter one holds it again after that one ends. Null
// when nobody does.
const GpuHolding* IdleHolderAt(const std::vector<const GpuHolding*>& holders,
                               size_t k, int64_t t) {
  if (holders.empty()) return nullptr;
  for (size_t j = k + 1; j-- > 0;) {
    if (IdleHolds(*holders[j], t)) return holders[j];
  }
  return nullptr;
}

class IdleScanner {
 public:
  IdleScanner(const IdleGpuOptions& o, std::vector<IdleGpuEpisode>* out)
      : threshold_(o.threshold),
        window_us_(std::chrono::duration_cast<Micros>(o.window).count()),
        max_gap_us_(
            std::chrono::duration_cast<Micros>(o.max_sample_gap).count()),
        now_us_(IdleUs(o.now)),
        out_(out) {}

  // `holders`: one GPU's holdings, by start.
  void Scan(const std::vector<const GpuHolding*>& holders,
            const std::vector<SamplePoint>& points) {
    run_ = IdleRun{};
    size_t k = 0;  // the latest holding started at or before the sample
    int64_t prev_us = -1, prev_step_us = max_gap_us_;
    for (size_t i = 0; i < points.size(); ++i) {
      const int64_t t = points[i].timestamp_ms * 1000;
      if (t > now_us_) break;
      if (prev_us >= 0 && t <= prev_us) continue;  // out of order: skip
      // The time this sample stands for: until the next one, at most the
      // largest gap; the last one, as long as the spacing before it.
      if (prev_us >= 0) prev_step_us = t - prev_us;
      prev_us = t;
      int64_t end;
      if (i + 1 < points.size()) {
        end = std::min(points[i + 1].timestamp_ms * 1000, t + max_gap_us_);
      } else {
        end = t + std::min(prev_step_us, max_gap_us_);
      }
      end = std::min(end, now_us_);
      while (k + 1 < holders.size() && IdleUs(holders[k + 1]->from) <= t) ++k;
      const GpuHolding* h = IdleHolderAt(holders, k, t);
      if (h && h->to) end = std::min(end, IdleUs(*h->to));
      const double v = points[i].value;
      const bool idle = h && std::isfinite(v) && v < threshold_;
      // Unknown time since the run's last sample, or another holder: the
      // run ends before this sample.
      if (run_.holding && (run_.holding != h || run_.end_us < t)) Close(false);
      if (!idle) {
        Close(false);
        continue;
      }
      if (!run_.holding) {
        run_.holding = h;
        run_.start_us = t;
      }
      run_.end_us = std::max(end, t);
      run_.sum += v;
      ++run_.samples;
    }
    Close(true);
  }

 private:
  // at_end: the samples ended with the run still idle.
  void Close(bool at_end) {
    if (!run_.holding) return;
    const IdleRun r = run_;
    run_ = IdleRun{};
    if (r.end_us - r.start_us < window_us_) return;
    const GpuHolding& h = *r.holding;
    IdleGpuEpisode e;
    e.node = h.node;
    e.gpu = h.gpu;
    e.serial = h.serial;
    e.container_id = h.container_id;
    e.pod_uid = h.pod_uid;
    e.pod_name = h.pod_name;
    e.namespace_name = h.namespace_name;
    e.workload_uid = h.workload_uid;
    e.workload_name = h.workload_name;
    e.since = IdleAt(r.start_us);
    e.until = IdleAt(r.end_us);
    e.ongoing = at_end && (!h.to || IdleUs(*h.to) > now_us_) &&
                now_us_ - r.end_us <= max_gap_us_;
    e.mean_utilization = r.samples ? r.sum / static_cast<double>(r.samples) : 0;
    e.gpu_hours = static_cast<double>(r.end_us - r.start_us) / 3.6e9;
    out_->push_back(std::move(e));
  }

  const double threshold_;
  const int64_t window_us_;
  const int64_t max_gap_us_;
  const int64_t now_us_;
  std::vector<IdleGpuEpisode>* out_;
  IdleRun run_;
};

}  // namespace

Status IdleGpuOptions::Validate() const {
  if (!(threshold > 0 && threshold <= 1)) {
    return InvalidArgumentError("idle GPUs: threshold must be in (0, 1], got " +
                                std::to_string(threshold));
  }
  if (window.count() <= 0) {
    return InvalidArgumentError("idle GPUs: window must be positive, got " +
                                std::to_string(window.count()) + " s");
  }
  if (max_sample_gap.count() <= 0) {
    return InvalidArgumentError(
        "idle GPUs: max_sample_gap must be positive, got " +
        std::to_string(max_sample_gap.count()) + " s");
  }
  if (now == Timestamp{}) {
    return InvalidArgumentError("idle GPUs: now is not set");
  }
  return OkStatus();
}

StatusOr<std::vector<IdleGpuEpisode>> FindIdleAllocatedGpus(
    std::span<const GpuHolding> holdings,
    std::span<const GpuUtilizationSeries> series,
    const IdleGpuOptions& options) {
  LENS_RETURN_IF_ERROR(options.Validate());
  std::unordered_map<std::string, std::vector<const GpuHolding*>> by_gpu;
  by_gpu.reserve(holdings.size());
  for (const GpuHolding& h : holdings) {
    if (h.to && *h.to <= h.from) continue;  // held for no time
    by_gpu[IdleGpuKey(h.node, h.gpu)].push_back(&h);
  }
  for (auto& [key, list] : by_gpu) {
    std::sort(list.begin(), list.end(),
              [](const GpuHolding* a, const GpuHolding* b) {
                return a->from < b->from;
              });
  }
  std::vector<IdleGpuEpisode> out;
  IdleScanner scanner(options, &out);
  for (const GpuUtilizationSeries& s : series) {
    auto it = by_gpu.find(IdleGpuKey(s.node, s.gpu));
    if (it == by_gpu.end()) continue;
    scanner.Scan(it->second, s.points);
  }
  std::sort(out.begin(), out.end(),
            [](const IdleGpuEpisode& a, const IdleGpuEpisode& b) {
              if (a.ongoing != b.ongoing) return a.ongoing;
              if (a.gpu_hours != b.gpu_hours) return a.gpu_hours > b.gpu_hours;
              if (a.node != b.node) return a.node < b.node;
              if (a.gpu != b.gpu) return a.gpu < b.gpu;
              return a.since < b.since;
            });
  return out;
}

std::vector<IdleGpuWorkload> IdleGpusByWorkload(
    std::span<const IdleGpuEpisode> episodes) {
  std::map<std::string, IdleGpuWorkload> by;
  for (const IdleGpuEpisode& e : episodes) {
    const std::string& key =
        e.workload_uid.empty() ? e.pod_uid : e.workload_uid;
    IdleGpuWorkload& w = by[key];
    if (w.episodes == 0) {
      w.workload_uid = e.workload_uid;
      w.workload_name = e.workload_uid.empty() ? e.pod_name : e.workload_name;
      w.namespace_name = e.namespace_name;
    }
    ++w.episodes;
    w.gpu_hours += e.gpu_hours;
    if (e.ongoing) ++w.idle_gpus_now;
  }
  std::vector<IdleGpuWorkload> out;
  out.reserve(by.size());
  for (auto& [key, w] : by) out.push_back(std::move(w));
  std::sort(out.begin(), out.end(),
            [](const IdleGpuWorkload& a, const IdleGpuWorkload& b) {
              if (a.idle_gpus_now != b.idle_gpus_now) {
                return a.idle_gpus_now > b.idle_gpus_now;
              }
              return a.gpu_hours > b.gpu_hours;
            });
  return out;
}

}  // namespace lens
