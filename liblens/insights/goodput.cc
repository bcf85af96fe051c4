// Goodput: a workload's wall time split along its pods' lifecycle and its
// runs' iterations (docs/insights.md, "Goodput and MFU").
#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "lens/insights.h"

namespace lens {
namespace {

double GoodputSeconds(Timestamp t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

// One logged iteration, in seconds.
struct GoodputPoint {
  double t = 0;
  int64_t iteration = 0;
  std::optional<double> tflops;
};

struct GoodputRun {
  int32_t run = 0;  // an attempt: its first run's number
  std::vector<GoodputPoint> points;
};

bool GoodputEarlier(const GoodputPoint& a, const GoodputPoint& b) {
  return a.t != b.t ? a.t < b.t : a.iteration < b.iteration;
}

double GoodputMedian(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid),
                   v.end());
  return v[mid];
}

// Seconds of (a, b] covered by the sorted, disjoint `saves`.
double GoodputOverlap(const std::vector<std::pair<double, double>>& saves,
                      double a, double b) {
  double s = 0;
  auto it = std::lower_bound(saves.begin(), saves.end(), a,
                             [](const std::pair<double, double>& x, double v) {
                               return x.second < v;
                             });
  for (; it != saves.end() && it->first < b; ++it) {
    s += std::max(0.0, std::min(b, it->second) - std::max(a, it->first));
  }
  return s;
}

void GoodputAdd(GoodputBreakdown* into, const GoodputBreakdown& b) {
  into->scheduling_s += b.scheduling_s;
  into->startup_s += b.startup_s;
  into->productive_s += b.productive_s;
  into->checkpoint_s += b.checkpoint_s;
  into->restart_s += b.restart_s;
  into->idle_s += b.idle_s;
  into->iterations_redone += b.iterations_redone;
}

void GoodputFinish(GoodputBreakdown* b) {
  b->wall_s = b->scheduling_s + b->startup_s + b->productive_s +
              b->checkpoint_s + b->restart_s + b->idle_s;
  b->goodput = b->wall_s > 0 ? b->productive_s / b->wall_s : 0;
}

}  // namespace

StatusOr<GoodputReport> ComputeGoodput(const GoodputInput& in) {
  if (in.now == Timestamp{}) {
    return InvalidArgumentError("goodput: now is not set");
  }
  if (in.now < in.created_at) {
    return InvalidArgumentError(
        "goodput: now is before the workload's creation");
  }
  if (!(in.stall_factor > 1)) {
    return InvalidArgumentError("goodput: stall_factor must be above 1");
  }
  const double t0 = GoodputSeconds(in.created_at);
  // An end recorded before the creation (clocks apart) ends at the creation.
  const double t_end = std::max(
      t0,
      GoodputSeconds(in.ended_at ? std::min(*in.ended_at, in.now) : in.now));
  auto clip = [&](double t) { return std::clamp(t, t0, std::max(t0, t_end)); };

  GoodputReport report;
  // Each stored run's timed records, in time order.
  std::map<int32_t, GoodputRun> runs;
  for (const IterationRecord& r : in.iterations) {
    if (!r.timestamp_s || !std::isfinite(*r.timestamp_s)) {
      ++report.iterations_without_time;
      continue;
    }
    GoodputRun& run = runs[r.run];
    run.run = r.run;
    run.points.push_back(
        {*r.timestamp_s, r.iteration, r.Get(IterationField::kTflopsPerGpu)});
  }
  std::vector<GoodputRun*> by_start;
  for (auto& [n, run] : runs) {
    std::sort(run.points.begin(), run.points.end(), GoodputEarlier);
    by_start.push_back(&run);
  }
  std::sort(by_start.begin(), by_start.end(),
            [](const GoodputRun* a, const GoodputRun* b) {
              return a->points.front().t < b->points.front().t;
            });
  // Attempts: runs that overlap in time are one attempt (every pod, or
  // every rank, of a job logs its own run); a run that starts after the
  // attempt's last record is the next attempt, a restart. Within one, the
  // records merge into one stream of rising iterations: a step another log
  // already reported adds nothing.
  std::vector<GoodputRun> attempts;
  for (GoodputRun* run : by_start) {
    if (attempts.empty() ||
        run->points.front().t > attempts.back().points.back().t) {
      attempts.push_back({run->run, std::move(run->points)});
      continue;
    }
    GoodputRun& a = attempts.back();
    a.points.insert(a.points.end(), run->points.begin(), run->points.end());
    std::sort(a.points.begin(), a.points.end(), GoodputEarlier);
  }
  std::vector<GoodputRun*> ordered;
  for (GoodputRun& a : attempts) {
    std::vector<GoodputPoint> rising;
    rising.reserve(a.points.size());
    for (const GoodputPoint& p : a.points) {
      if (rising.empty() || p.iteration > rising.back().iteration) {
        rising.push_back(p);
      }
    }
    a.points = std::move(rising);
    report.iterations_used += static_cast<int64_t>(a.points.size());
    ordered.push_back(&a);
  }
  // Checkpoint saves as time intervals: [end - duration, end].
  std::vector<std::pair<double, double>> saves;
  for (const TrainingEvent& e : in.events) {
    if (e.type != TrainingEventType::kCheckpointSaveEnd || !e.timestamp_s ||
        !e.duration_s || !(*e.duration_s > 0)) {
      continue;
    }
    saves.emplace_back(*e.timestamp_s - *e.duration_s, *e.timestamp_s);
  }
  std::sort(saves.begin(), saves.end());
  std::vector<std::pair<double, double>> merged;
  for (const auto& s : saves) {
    if (!merged.empty() && s.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, s.second);
    } else {
      merged.push_back(s);
    }
  }

  std::optional<double> first_running;
  for (const PodLifecycle& p : in.pods) {
    if (!p.started_at) continue;
    const double t = clip(GoodputSeconds(*p.started_at));
    if (!first_running || t < *first_running) first_running = t;
  }
  GoodputBreakdown lead;  // time before the first run's first iteration
  double running = first_running.value_or(t_end);
  // Training logged before any pod was seen running (pods not tracked, or
  // clocks apart): it was running by then.
  if (!ordered.empty()) {
    running = std::min(running, clip(ordered.front()->points.front().t));
  }
  lead.scheduling_s = running - t0;
  if (ordered.empty()) {
    lead.startup_s = t_end - running;  // never logged an iteration
  } else {
    lead.startup_s =
        std::max(0.0, clip(ordered.front()->points.front().t) - running);
  }

  const GpuPeak* peak =
      in.gpu_model.empty() ? nullptr : FindGpuPeak(in.gpu_model);
  report.peak = peak;
  int64_t done = INT64_MIN;  // the highest iteration reached so far
  double prev_last = 0;
  double all_tflops_s = 0, all_tflops_w = 0;
  for (size_t j = 0; j < ordered.size(); ++j) {
    const GoodputRun& run = *ordered[j];
    RunGoodput out;
    out.run = run.run;
    const GoodputPoint& first = run.points.front();
    const GoodputPoint& last = run.points.back();
    out.first_iteration = first.iteration;
    out.last_iteration = last.iteration;
    out.first_iteration_at = Timestamp(std::chrono::microseconds(
        static_cast<int64_t>(std::llround(first.t * 1e6))));
    out.last_iteration_at = Timestamp(std::chrono::microseconds(
        static_cast<int64_t>(std::llround(last.t * 1e6))));
    GoodputBreakdown& b = out.breakdown;
    if (j == 0) {
      b = lead;
    } else {
      // From the previous run's last iteration to this run's first.
      b.restart_s = std::max(0.0, clip(first.t) - clip(prev_last));
    }
    // Seconds per iteration between logged points, for the stall rule.
    std::vector<double> per_iteration;
    for (size_t i = 1; i < run.points.size(); ++i) {
      const int64_t d = run.points[i].iteration - run.points[i - 1].iteration;
      if (d > 0) {
        per_iteration.push_back((run.points[i].t - run.points[i - 1].t) /
                                static_cast<double>(d));
      }
    }
    const double median = GoodputMedian(std::move(per_iteration));
    double tflops_s = 0, tflops_w = 0;
    int64_t run_done = done;
    for (size_t i = 1; i < run.points.size(); ++i) {
      const GoodputPoint& a = run.points[i - 1];
      const GoodputPoint& p = run.points[i];
      const double ta = clip(a.t), tb = clip(p.t);
      if (tb <= ta) continue;
      double dt = tb - ta;
      const double ckpt = GoodputOverlap(merged, ta, tb);
      b.checkpoint_s += ckpt;
      dt -= ckpt;
      const int64_t d = p.iteration - a.iteration;
      if (d <= 0) {  // no progress logged: a repeat or a step back
        b.idle_s += dt;
        continue;
      }
      const double expected = median * static_cast<double>(d);
      if (median > 0 && dt > in.stall_factor * expected) {
        b.idle_s += dt - expected;  // a stall: beyond the usual pace
        dt = expected;
      }
      // Iterations an earlier run already did are redone: restart loss.
      const int64_t redo = std::clamp<int64_t>(
          run_done == INT64_MIN ? 0 : run_done - a.iteration, 0, d);
      const double redo_s =
          dt * static_cast<double>(redo) / static_cast<double>(d);
      b.restart_s += redo_s;
      b.iterations_redone += redo;
      const double productive = dt - redo_s;
      b.productive_s += productive;
      if (p.tflops && std::isfinite(*p.tflops) && productive > 0) {
        tflops_s += *p.tflops * productive;
        tflops_w += productive;
      }
    }
    done = std::max(done, last.iteration);
    if (tflops_w > 0) {
      out.tflops_per_gpu = tflops_s / tflops_w;
      if (peak) out.mfu = *out.tflops_per_gpu / peak->dense_bf16_tflops;
      all_tflops_s += tflops_s;
      all_tflops_w += tflops_w;
    }
    prev_last = last.t;
    if (j + 1 == ordered.size()) {
      b.idle_s += std::max(0.0, t_end - clip(last.t));  // after the last one
    }
    GoodputFinish(&b);
    GoodputAdd(&report.total, b);
    report.runs.push_back(std::move(out));
  }
  if (ordered.empty()) GoodputAdd(&report.total, lead);
  GoodputFinish(&report.total);
  // Parts measured on clipped times add up to the wall time; anything the
  // clock skews past it goes to idle, never below zero.
  const double wall = t_end - t0;
  if (wall > report.total.wall_s)
    report.total.idle_s += wall - report.total.wall_s;
  GoodputFinish(&report.total);
  report.restarts =
      ordered.empty() ? 0 : static_cast<int32_t>(ordered.size()) - 1;
  if (all_tflops_w > 0) {
    report.tflops_per_gpu = all_tflops_s / all_tflops_w;
    if (peak) report.mfu = *report.tflops_per_gpu / peak->dense_bf16_tflops;
  }
  return report;
}

}  // namespace lens
