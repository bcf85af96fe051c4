// The insights lens-api exports on /metrics (docs/insights.md): idle
// allocated GPUs and goodput/MFU per workload, computed from the store and
// the time series at most once a minute, on a scrape. Internal to the
// service area.
#ifndef LENS_SERVICE_INSIGHT_METRICS_H_
#define LENS_SERVICE_INSIGHT_METRICS_H_

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lens/insights.h"
#include "lens/store.h"
#include "lens/timeseries.h"

namespace lens::service {

// Thread-safe.
class InsightGauges {
 public:
  // lens_gpu_idle_allocated{namespace, workload, workload_uid},
  // lens_workload_goodput_ratio and lens_workload_mfu_ratio (running
  // top-level workloads, at most 1,000), lens_workload_straggler_suspects
  // (over the last 30 minutes; the 100 running workloads requesting the
  // most GPUs, 3 or more), and the errors counter.
  std::string Render(Store& store, TimeSeriesSource& series);

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
  Status ComputeIdle(Store& store, TimeSeriesSource& series, Timestamp now);
  Status ComputeGoodput(Store& store, Timestamp now);
  Status ComputeStragglers(Store& store, TimeSeriesSource& series,
                           Timestamp now);

  std::mutex mu_;
  Timestamp computed_at_{};                   // GUARDED_BY(mu_)
  std::vector<IdleGpuWorkload> idle_;         // GUARDED_BY(mu_)
  std::vector<WorkloadGoodput> goodput_;      // GUARDED_BY(mu_)
  std::vector<WorkloadSuspects> stragglers_;  // GUARDED_BY(mu_)
  uint64_t errors_ = 0;                       // GUARDED_BY(mu_)
};

}  // namespace lens::service

#endif  // LENS_SERVICE_INSIGHT_METRICS_H_
