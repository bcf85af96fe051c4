// The insight routes (docs/insights.md): idle allocated GPUs over a range,
// a workload's goodput and MFU, and device health from the agents' series.
#include "lens/insights.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <utility>

#include "api/api_json.h"
#include "api/insight_window.h"
#include "api/params.h"
#include "api/routes.h"
#include "lens/insights_health.h"
#include "lens/insights_placement.h"

namespace lens::api {
namespace {

constexpr int64_t kInsightDayS = 86400;
constexpr int64_t kIdleMaxPoints = 1500000;  // per idle-GPU answer, all GPUs

StatusOr<int64_t> InsightBoundedInt(const HttpRequest& req,
                                    std::string_view name, int64_t fallback,
                                    int64_t lo, int64_t hi) {
  LENS_ASSIGN_OR_RETURN(std::optional<int64_t> v, IntParam(req, name));
  if (!v) return fallback;
  if (*v < lo || *v > hi) {
    return InvalidArgumentError(std::string(name) + ": " + std::to_string(*v) +
                                " is not in " + std::to_string(lo) + ".." +
                                std::to_string(hi));
  }
  return *v;
}

void WriteGoodputBreakdown(JsonWriter& w, const char* key,
                           const GoodputBreakdown& b) {
  w.Key(key);
  w.StartObject();
  Num(w, "wallSeconds", b.wall_s);
  Num(w, "schedulingSeconds", b.scheduling_s);
  Num(w, "startupSeconds", b.startup_s);
  Num(w, "productiveSeconds", b.productive_s);
  Num(w, "checkpointSeconds", b.checkpoint_s);
  Num(w, "restartSeconds", b.restart_s);
  Num(w, "idleSeconds", b.idle_s);
  Num(w, "goodput", b.goodput);
  Int(w, "iterationsRedone", b.iterations_redone);
  w.EndObject();
}

// from and to (default: `default_s` up to now), at most 7 days: Unix seconds.
}  // namespace

Status GetIdleGpus(const ApiContext& ctx, const RouteSpec&,
                   const HttpRequest& req, JsonWriter& w) {
  LENS_ASSIGN_OR_RETURN(const InsightWindow win,
                        ParseInsightWindow(req, kInsightDayS));
  LENS_ASSIGN_OR_RETURN(int64_t percent,
                        InsightBoundedInt(req, "thresholdPercent", 5, 1, 100));
  LENS_ASSIGN_OR_RETURN(
      int64_t window_min,
      InsightBoundedInt(req, "windowMinutes", 30, 1, 7 * 24 * 60));
  LENS_ASSIGN_OR_RETURN(std::vector<GpuHolding> holdings,
                        ReadGpuHoldings(*ctx.store, win.from(), win.to()));
  // Samples every 30 s are read at their own pace while the answer stays
  // small (about 1.5 M points in all, some 50 MB from a PromQL server:
  // a day of 500 GPUs); more GPUs or a longer range at a coarser step.
  std::set<std::pair<std::string, std::string>> gpus;
  for (const GpuHolding& h : holdings) gpus.emplace(h.node, h.gpu);
  const int64_t points_s =
      (win.to_s - win.from_s) * static_cast<int64_t>(gpus.size());
  const int64_t step_s = std::max<int64_t>(
      win.StepSeconds(30), (points_s + kIdleMaxPoints - 1) / kIdleMaxPoints);
  IdleGpuOptions options;
  options.threshold = static_cast<double>(percent) / 100;
  options.window = std::chrono::minutes(window_min);
  options.max_sample_gap =
      std::chrono::seconds(std::max<int64_t>(120, 2 * step_s));
  options.now = win.to();
  LENS_ASSIGN_OR_RETURN(std::vector<GpuUtilizationSeries> series,
                        ReadGpuUtilization(*ctx.series, win.from(), win.to(),
                                           std::chrono::seconds(step_s)));
  LENS_ASSIGN_OR_RETURN(std::vector<IdleGpuEpisode> episodes,
                        FindIdleAllocatedGpus(holdings, series, options));
  w.StartObject();
  Int(w, "from", win.from_s);
  Int(w, "to", win.to_s);
  Num(w, "thresholdRatio", options.threshold);
  Int(w, "windowSeconds", window_min * 60);
  w.Key("episodes");
  w.StartArray();
  for (const IdleGpuEpisode& e : episodes) {
    w.StartObject();
    Str(w, "node", e.node);
    Str(w, "gpu", e.gpu);
    Str(w, "serial", e.serial);
    Str(w, "podUid", e.pod_uid);
    Str(w, "podName", e.pod_name);
    Str(w, "namespace", e.namespace_name);
    Str(w, "workloadUid", e.workload_uid);
    Str(w, "workloadName", e.workload_name);
    Time(w, "since", e.since);
    Time(w, "until", e.until);
    w.Key("ongoing");
    w.Bool(e.ongoing);
    Num(w, "meanUtilization", e.mean_utilization);
    Num(w, "gpuHours", e.gpu_hours);
    w.EndObject();
  }
  w.EndArray();
  w.Key("workloads");
  w.StartArray();
  for (const IdleGpuWorkload& wl : IdleGpusByWorkload(episodes)) {
    w.StartObject();
    Str(w, "workloadUid", wl.workload_uid);
    Str(w, "workloadName", wl.workload_name);
    Str(w, "namespace", wl.namespace_name);
    Int(w, "idleGpusNow", wl.idle_gpus_now);
    Num(w, "gpuHours", wl.gpu_hours);
    Int(w, "episodes", wl.episodes);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return OkStatus();
}

Status GetWorkloadGoodput(const ApiContext& ctx, const RouteSpec&,
                          const HttpRequest& req, JsonWriter& w) {
  const std::string uid = PathParam(req, "uid");
  const Timestamp now = std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
  LENS_ASSIGN_OR_RETURN(GoodputInput in,
                        ReadGoodputInput(*ctx.store, uid, now));
  LENS_ASSIGN_OR_RETURN(GoodputReport r, ComputeGoodput(in));
  w.StartObject();
  WriteGoodputBreakdown(w, "total", r.total);
  Num(w, "tflopsPerGpu", r.tflops_per_gpu);
  Num(w, "mfu", r.mfu);
  Str(w, "gpuModel", in.gpu_model);
  Num(w, "peakTflops",
      r.peak ? std::optional<double>(r.peak->dense_bf16_tflops) : std::nullopt);
  Str(w, "peakSource", r.peak ? r.peak->source : std::string_view());
  Int(w, "restarts", r.restarts);
  Int(w, "iterationsUsed", r.iterations_used);
  Int(w, "iterationsWithoutTime", r.iterations_without_time);
  w.Key("runs");
  w.StartArray();
  for (const RunGoodput& run : r.runs) {
    w.StartObject();
    Int(w, "run", run.run);
    Int(w, "firstIteration", run.first_iteration);
    Int(w, "lastIteration", run.last_iteration);
    Time(w, "firstIterationAt", run.first_iteration_at);
    Time(w, "lastIterationAt", run.last_iteration_at);
    Num(w, "tflopsPerGpu", run.tflops_per_gpu);
    Num(w, "mfu", run.mfu);
    WriteGoodputBreakdown(w, "breakdown", run.breakdown);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return OkStatus();
}

Status GetDeviceHealth(const ApiContext& ctx, const RouteSpec&,
                       const HttpRequest& req, JsonWriter& w) {
  LENS_ASSIGN_OR_RETURN(const InsightWindow win,
                        ParseInsightWindow(req, kInsightDayS));
  const int64_t step_s = win.StepSeconds(60);
  LENS_ASSIGN_OR_RETURN(
      DeviceHealthHistory h,
      ReadDeviceHealthHistory(*ctx.series, win.from(), win.to(),
                              std::chrono::seconds(step_s)));
  auto device = [&w](HealthDeviceKind kind, const std::string& node,
                     const std::string& dev, int port, const std::string& id) {
    Str(w, "kind", HealthDeviceKindName(kind));
    Str(w, "node", node);
    Str(w, "device", dev);
    Int(w, "port", port);
    Str(w, "id", id);
  };
  w.StartObject();
  Int(w, "from", win.from_s);
  Int(w, "to", win.to_s);
  w.Key("devices");
  w.StartArray();
  for (const DeviceHealthSeen& d : h.devices) {
    w.StartObject();
    device(d.kind, d.node, d.device, d.port, d.id);
    Str(w, "state", DeviceHealthName(d.state));
    Time(w, "since", d.since);
    Time(w, "lastSeen", d.last_seen);
    Int(w, "changes", d.changes);
    w.EndObject();
  }
  w.EndArray();
  w.Key("changes");
  w.StartArray();
  for (const DeviceHealthChange& c : h.changes) {
    w.StartObject();
    device(c.kind, c.node, c.device, c.port, c.id);
    Time(w, "at", c.at);
    Str(w, "from", DeviceHealthName(c.from));
    Str(w, "to", DeviceHealthName(c.to));
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return OkStatus();
}

Status GetPlacementIssues(const ApiContext& ctx, const RouteSpec&,
                          const HttpRequest& req, JsonWriter& w) {
  LENS_ASSIGN_OR_RETURN(const InsightWindow win, ParseInsightWindow(req, 3600));
  const int64_t step_s = win.StepSeconds(60);
  LENS_ASSIGN_OR_RETURN(std::vector<PodPlacementIssues> pods,
                        ReadPlacementIssues(*ctx.series, win.from(), win.to(),
                                            std::chrono::seconds(step_s)));
  w.StartObject();
  Int(w, "from", win.from_s);
  Int(w, "to", win.to_s);
  w.Key("pods");
  w.StartArray();
  for (const PodPlacementIssues& p : pods) {
    w.StartObject();
    Str(w, "node", p.node);
    Str(w, "namespace", p.pod_namespace);
    Str(w, "pod", p.pod_name);
    Time(w, "lastSeen", p.last_seen);
    w.Key("issues");
    w.StartArray();
    for (const auto& [issue, n] : p.issues) {
      w.StartObject();
      Str(w, "issue", issue);
      Int(w, "flags", n);
      w.EndObject();
    }
    w.EndArray();
    w.Key("devices");
    w.StartArray();
    for (const PodPlacementDevice& d : p.devices) {
      w.StartObject();
      Str(w, "kind", d.kind);
      Str(w, "device", d.device);
      Str(w, "bdf", d.bdf);
      Str(w, "numaNode", d.numa_node);
      Str(w, "rootComplex", d.root_complex);
      Str(w, "nic", d.nic);
      Str(w, "nicDistance", d.nic_distance);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return OkStatus();
}

}  // namespace lens::api
