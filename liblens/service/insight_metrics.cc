// InsightGauges: the insights on lens-api's /metrics.
#include "service/insight_metrics.h"

#include "core/metric_writer.h"
#include "lens/insights_stragglers.h"
#include "lens/log.h"

namespace lens::service {
namespace {

constexpr int32_t kGoodputWorkloads = 1000;   // per computation, at most
constexpr int32_t kStragglerWorkloads = 100;  // the largest, at most

}  // namespace

std::string InsightGauges::Render(Store& store, TimeSeriesSource& series) {
  std::lock_guard lock(mu_);
  const Timestamp now = std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
  if (now - computed_at_ >= std::chrono::minutes(1)) {
    computed_at_ = now;
    for (Status st :
         {ComputeIdle(store, series, now), ComputeGoodput(store, now),
          ComputeStragglers(store, series, now)}) {
      if (st.ok()) continue;
      ++errors_;
      LENS_LOG(WARN).Field("error", st.message())
          << "insight metrics not computed (the last values stay)";
    }
  }
  std::string out;
  MetricWriter w(&out);
  w.Family("lens_gpu_idle_allocated",
           "GPUs held by a running container of the workload whose "
           "utilisation stayed under 5% for the last 30 minutes.",
           "gauge");
  for (const IdleGpuWorkload& wl : idle_) {
    w.Sample({{"namespace", wl.namespace_name},
              {"workload", wl.workload_name},
              {"workload_uid", wl.workload_uid}},
             wl.idle_gpus_now);
  }
  w.Family("lens_workload_goodput_ratio",
           "The share of a running workload's wall time spent on training "
           "progress (docs/insights.md, goodput).",
           "gauge");
  for (const WorkloadGoodput& g : goodput_) {
    w.Sample({{"namespace", g.namespace_name},
              {"workload", g.name},
              {"workload_uid", g.uid}},
             g.goodput);
  }
  w.Family("lens_workload_mfu_ratio",
           "A running workload's model FLOPs utilisation: its logged TFLOP/s "
           "per GPU over the GPU model's peak dense BF16 TFLOP/s.",
           "gauge");
  for (const WorkloadGoodput& g : goodput_) {
    if (!g.mfu) continue;
    w.Sample({{"namespace", g.namespace_name},
              {"workload", g.name},
              {"workload_uid", g.uid}},
             *g.mfu);
  }
  w.Family("lens_workload_straggler_suspects",
           "GPUs or nodes of a running workload whose utilisation was out of "
           "line with the job's over the last 30 minutes (median and MAD; "
           "GET /api/v1/workloads/{uid}/stragglers has the evidence).",
           "gauge");
  for (const WorkloadSuspects& ws : stragglers_) {
    w.Sample({{"namespace", ws.namespace_name},
              {"workload", ws.name},
              {"workload_uid", ws.uid}},
             ws.suspects);
  }
  w.Family("lens_insight_metrics_errors_total",
           "Times the insight metrics could not be computed (the store or "
           "the time series failed; the last values stay).",
           "counter");
  w.Sample({}, static_cast<double>(errors_));
  return out;
}

Status InsightGauges::ComputeIdle(Store& store, TimeSeriesSource& series,
                                  Timestamp now) {
  IdleGpuOptions options;
  options.now = now;
  const Timestamp from = now - options.window - std::chrono::minutes(10);
  LENS_ASSIGN_OR_RETURN(std::vector<GpuHolding> holdings,
                        ReadGpuHoldings(store, from, now));
  LENS_ASSIGN_OR_RETURN(
      std::vector<GpuUtilizationSeries> utilization,
      ReadGpuUtilization(series, from, now, std::chrono::seconds(30)));
  LENS_ASSIGN_OR_RETURN(std::vector<IdleGpuEpisode> episodes,
                        FindIdleAllocatedGpus(holdings, utilization, options));
  std::vector<IdleGpuWorkload> all = IdleGpusByWorkload(episodes);
  idle_.clear();
  for (IdleGpuWorkload& wl : all) {
    if (wl.idle_gpus_now > 0) idle_.push_back(std::move(wl));
  }
  return OkStatus();
}

Status InsightGauges::ComputeGoodput(Store& store, Timestamp now) {
  WorkloadQuery q;
  q.parent_uid = "";
  q.ended = false;
  q.page = {1, kGoodputWorkloads};
  LENS_ASSIGN_OR_RETURN(Page<WorkloadRecord> running,
                        store.pods().ListWorkloads(q));
  std::vector<WorkloadGoodput> out;
  out.reserve(running.items.size());
  for (const WorkloadRecord& w : running.items) {
    StatusOr<GoodputInput> in = ReadGoodputInput(store, w.uid, now);
    if (!in.ok()) {
      if (in.status().code() == StatusCode::kNotFound) continue;  // just gone
      return in.status();
    }
    LENS_ASSIGN_OR_RETURN(GoodputReport r, lens::ComputeGoodput(*in));
    out.push_back({w.uid, w.name, w.namespace_name, r.total.goodput, r.mfu});
  }
  goodput_ = std::move(out);
  return OkStatus();
}

Status InsightGauges::ComputeStragglers(Store& store, TimeSeriesSource& series,
                                        Timestamp now) {
  WorkloadQuery q;
  q.parent_uid = "";
  q.ended = false;
  q.sort = {"gpu_request", true};
  q.page = {1, kStragglerWorkloads};
  LENS_ASSIGN_OR_RETURN(Page<WorkloadRecord> running,
                        store.pods().ListWorkloads(q));
  std::vector<WorkloadSuspects> out;
  for (const WorkloadRecord& w : running.items) {
    if (w.gpu_request < 3) continue;  // too few GPUs to compare
    StatusOr<WorkloadStragglers> found = FindWorkloadStragglers(
        store, series, w.uid, now - std::chrono::minutes(30), now,
        std::chrono::seconds(30));
    if (!found.ok()) {
      if (found.status().code() == StatusCode::kNotFound) continue;
      return found.status();
    }
    out.push_back({w.uid, w.name, w.namespace_name,
                   static_cast<int32_t>(found->report.suspects.size())});
  }
  stragglers_ = std::move(out);
  return OkStatus();
}

}  // namespace lens::service
