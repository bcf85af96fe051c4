// InsightGauges: the insights on lens-api's /metrics, computed on a thread
// of their own so that a slow store or PromQL server never holds a scrape.
#include "service/insight_metrics.h"

#include <exception>
#include <system_error>

#include "core/metric_writer.h"
#include "lens/insights_stragglers.h"
#include "lens/log.h"

namespace lens::service {
namespace {

constexpr int32_t kGoodputWorkloads = 1000;   // per computation, at most
constexpr int32_t kStragglerWorkloads = 100;  // the largest, at most

Timestamp NowUs() {
  return std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
}

// The series of one family per workload, from `rows`.
template <typename Row, typename Value>
void WorkloadFamily(MetricWriter& w, const std::vector<Row>& rows,
                    Value value) {
  for (const Row& r : rows) {
    const std::optional<double> v = value(r);
    if (!v) continue;
    w.Sample({{"namespace", r.namespace_name},
              {"workload", r.name},
              {"workload_uid", r.uid}},
             *v);
  }
}

}  // namespace

Status InsightGauges::Start(Store* store, TimeSeriesSource* series,
                            std::chrono::milliseconds interval) {
  store_ = store;
  series_ = series;
  try {
    thread_ = std::thread([this, interval] { Run(interval); });
  } catch (const std::system_error& e) {
    return InternalError(std::string("insight metrics thread: ") + e.what());
  }
  return OkStatus();
}

void InsightGauges::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool InsightGauges::stopping() const {
  std::lock_guard lock(mu_);
  return stop_;
}

void InsightGauges::Run(std::chrono::milliseconds interval) {
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    // Nothing thrown below may end lens-api: the part is counted as failed
    // and the next minute tries again.
    try {
      ComputeAll();
    } catch (const std::exception& e) {
      LENS_LOG(ERROR).Field("error", e.what())
          << "insight metrics computation threw (the last values stay)";
      std::lock_guard failed(mu_);
      ++errors_;
    }
    lock.lock();
    wake_.wait_for(lock, interval, [this] { return stop_; });
  }
}

void InsightGauges::ComputeAll() {
  const auto started = std::chrono::steady_clock::now();
  const Timestamp now = NowUs();
  auto idle = ComputeIdle(now);
  auto goodput = ComputeGoodput(now);
  auto stragglers = ComputeStragglers(now);
  std::lock_guard lock(mu_);
  if (stop_) return;  // cut short: keep what was there
  int failed = 0;
  for (const Status* st :
       {&idle.status(), &goodput.status(), &stragglers.status()}) {
    if (st->ok()) continue;
    ++failed;
    LENS_LOG(WARN).Field("error", st->message())
        << "insight metrics not computed (the last values stay)";
  }
  errors_ += failed;
  if (idle.ok()) idle_ = std::move(*idle);
  if (goodput.ok()) goodput_ = std::move(*goodput);
  if (stragglers.ok()) stragglers_ = std::move(*stragglers);
  if (failed == 0) last_success_ = now;
  last_duration_s_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
}

std::string InsightGauges::Render() const {
  std::lock_guard lock(mu_);
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
  WorkloadFamily(w, goodput_, [](const WorkloadGoodput& g) {
    return std::optional<double>(g.goodput);
  });
  w.Family("lens_workload_mfu_ratio",
           "A running workload's model FLOPs utilisation: its logged TFLOP/s "
           "per GPU over the GPU model's peak dense BF16 TFLOP/s.",
           "gauge");
  WorkloadFamily(w, goodput_, [](const WorkloadGoodput& g) { return g.mfu; });
  w.Family("lens_workload_straggler_suspects",
           "GPUs or nodes of a running workload whose utilisation was out of "
           "line with the job's over the last 30 minutes (median and MAD; "
           "GET /api/v1/workloads/{uid}/stragglers has the evidence).",
           "gauge");
  WorkloadFamily(w, stragglers_, [](const WorkloadSuspects& s) {
    return std::optional<double>(s.suspects);
  });
  w.Family("lens_insight_metrics_errors_total",
           "Parts of the insight metrics that could not be computed (the "
           "store or the time series failed; their last values stay).",
           "counter");
  w.Sample({}, static_cast<double>(errors_));
  w.Family("lens_insight_metrics_last_success_timestamp_seconds",
           "When every insight metric was last computed (0: not yet).",
           "gauge");
  w.Sample(
      {},
      std::chrono::duration<double>(last_success_.time_since_epoch()).count());
  w.Family("lens_insight_metrics_duration_seconds",
           "How long the last computation of the insight metrics took.",
           "gauge");
  w.Sample({}, last_duration_s_);
  return out;
}

StatusOr<std::vector<IdleGpuWorkload>> InsightGauges::ComputeIdle(
    Timestamp now) {
  IdleGpuOptions options;
  options.now = now;
  const Timestamp from = now - options.window - std::chrono::minutes(10);
  LENS_ASSIGN_OR_RETURN(std::vector<GpuHolding> holdings,
                        ReadGpuHoldings(*store_, from, now));
  LENS_ASSIGN_OR_RETURN(
      std::vector<GpuUtilizationSeries> utilization,
      ReadGpuUtilization(*series_, from, now, std::chrono::seconds(30)));
  LENS_ASSIGN_OR_RETURN(std::vector<IdleGpuEpisode> episodes,
                        FindIdleAllocatedGpus(holdings, utilization, options));
  std::vector<IdleGpuWorkload> out;
  for (IdleGpuWorkload& wl : IdleGpusByWorkload(episodes)) {
    if (wl.idle_gpus_now > 0) out.push_back(std::move(wl));
  }
  return out;
}

StatusOr<std::vector<InsightGauges::WorkloadGoodput>>
InsightGauges::ComputeGoodput(Timestamp now) {
  WorkloadQuery q;
  q.parent_uid = "";
  q.ended = false;
  q.page = {1, kGoodputWorkloads};
  LENS_ASSIGN_OR_RETURN(Page<WorkloadRecord> running,
                        store_->pods().ListWorkloads(q));
  std::vector<WorkloadGoodput> out;
  out.reserve(running.items.size());
  for (const WorkloadRecord& w : running.items) {
    if (stopping()) return CancelledError("lens-api is stopping");
    StatusOr<GoodputInput> in = ReadGoodputInput(*store_, w.uid, now);
    if (!in.ok()) {
      if (in.status().code() == StatusCode::kNotFound) continue;  // just gone
      return in.status();
    }
    LENS_ASSIGN_OR_RETURN(GoodputReport r, lens::ComputeGoodput(*in));
    out.push_back({w.uid, w.name, w.namespace_name, r.total.goodput, r.mfu});
  }
  return out;
}

StatusOr<std::vector<InsightGauges::WorkloadSuspects>>
InsightGauges::ComputeStragglers(Timestamp now) {
  WorkloadQuery q;
  q.parent_uid = "";
  q.ended = false;
  q.sort = {"gpu_request", true};
  q.page = {1, kStragglerWorkloads};
  LENS_ASSIGN_OR_RETURN(Page<WorkloadRecord> running,
                        store_->pods().ListWorkloads(q));
  std::vector<WorkloadSuspects> out;
  for (const WorkloadRecord& w : running.items) {
    if (w.gpu_request < 3) continue;  // too few GPUs to compare
    if (stopping()) return CancelledError("lens-api is stopping");
    StatusOr<WorkloadStragglers> found = FindWorkloadStragglers(
        *store_, *series_, w.uid, now - std::chrono::minutes(30), now,
        std::chrono::seconds(30));
    if (!found.ok()) {
      if (found.status().code() == StatusCode::kNotFound) continue;
      return found.status();
    }
    out.push_back({w.uid, w.name, w.namespace_name,
                   static_cast<int32_t>(found->report.suspects.size())});
  }
  return out;
}

}  // namespace lens::service
