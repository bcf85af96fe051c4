// The insights lens-api exports on /metrics (docs/insights.md): idle
// allocated GPUs, goodput/MFU and straggler suspects per workload, computed
// from the store and the time series on a thread of their own, once a
// minute. A scrape renders the last values and never waits for the store or
// the time-series backend. Internal to the service area.
#ifndef LENS_SERVICE_INSIGHT_METRICS_H_
#define LENS_SERVICE_INSIGHT_METRICS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "lens/insights.h"
#include "lens/store.h"
#include "lens/timeseries.h"

namespace lens::service {

// Thread-safe.
class InsightGauges {
 public:
  InsightGauges() = default;
  InsightGauges(const InsightGauges&) = delete;
  InsightGauges& operator=(const InsightGauges&) = delete;
  ~InsightGauges() { Stop(); }

  // Starts the computing thread over `store` and `series`, which must
  // outlive Stop(): the first computation at once, then one every
  // `interval` (scraped or not). Call once. Internal when the thread cannot
  // be started.
  Status Start(Store* store, TimeSeriesSource* series,
               std::chrono::milliseconds interval = std::chrono::minutes(1));
  // Stops the thread; a computation under way ends at its next workload,
  // but a query in flight runs to its own timeout (PromQL: 10 s by
  // default), so this may wait that long. Idempotent.
  void Stop();

  // lens_gpu_idle_allocated{namespace, workload, workload_uid},
  // lens_workload_goodput_ratio and lens_workload_mfu_ratio (running
  // top-level workloads, at most 1,000), lens_workload_straggler_suspects
  // (over the last 30 minutes; the 100 running workloads requesting the
  // most GPUs, 3 or more), and the computation's own errors, last success
  // and duration. The last values computed; none before the first.
  std::string Render() const;

 private:
  struct WorkloadGoodput {
    std::string uid, name, namespace_name;
    double goodput = 0;
    std::optional<double> mfu;
  };
  struct WorkloadSuspects {
    std::string uid, name, namespace_name;
    int32_t suspects = 0;
  };
  void Run(std::chrono::milliseconds interval);
  // One computation; each part that succeeds replaces its values.
  void ComputeAll();
  StatusOr<std::vector<IdleGpuWorkload>> ComputeIdle(Timestamp now);
  StatusOr<std::vector<WorkloadGoodput>> ComputeGoodput(Timestamp now);
  StatusOr<std::vector<WorkloadSuspects>> ComputeStragglers(Timestamp now);
  bool stopping() const;

  Store* store_ = nullptr;              // set by Start, then read-only
  TimeSeriesSource* series_ = nullptr;  // set by Start, then read-only
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;                         // GUARDED_BY(mu_)
  std::vector<IdleGpuWorkload> idle_;         // GUARDED_BY(mu_)
  std::vector<WorkloadGoodput> goodput_;      // GUARDED_BY(mu_)
  std::vector<WorkloadSuspects> stragglers_;  // GUARDED_BY(mu_)
  uint64_t errors_ = 0;                       // GUARDED_BY(mu_)
  Timestamp last_success_{};                  // GUARDED_BY(mu_)
  double last_duration_s_ = 0;                // GUARDED_BY(mu_)
};

}  // namespace lens::service

#endif  // LENS_SERVICE_INSIGHT_METRICS_H_
