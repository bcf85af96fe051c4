// FindWorkloadStragglers: a workload's histories from a Store and a
// TimeSeriesSource, then FindStragglers (docs/insights.md).
#include <set>
#include <utility>

#include "lens/insights_stragglers.h"
#include "lens/store.h"

namespace lens {

StatusOr<WorkloadStragglers> FindWorkloadStragglers(
    Store& store, TimeSeriesSource& series, std::string_view workload_uid,
    Timestamp from, Timestamp to, std::chrono::milliseconds step,
    const StragglerOptions& options) {
  LENS_ASSIGN_OR_RETURN(WorkloadRecord workload,
                        store.pods().GetWorkload(workload_uid));
  // The job's GPUs and pods: its pods' containers' holdings in the range.
  LENS_ASSIGN_OR_RETURN(std::vector<GpuHolding> holdings,
                        ReadGpuHoldings(store, from, to));
  std::set<std::pair<std::string, std::string>> gpus;
  std::set<std::string> pod_set;
  for (const GpuHolding& h : holdings) {
    if (h.workload_uid != workload.uid) continue;
    gpus.emplace(h.node, h.gpu);
    pod_set.insert(h.namespace_name + "/" + h.pod_name);
  }
  StragglerInput input;
  input.from = from;
  input.to = to;
  LENS_ASSIGN_OR_RETURN(std::vector<GpuUtilizationSeries> utilization,
                        ReadGpuUtilization(series, from, to, step));
  for (GpuUtilizationSeries& s : utilization) {
    if (gpus.count({s.node, s.gpu})) input.utilization.push_back(std::move(s));
  }
  LENS_ASSIGN_OR_RETURN(std::vector<std::string> nodes,
                        FindStragglerSuspectNodes(input, options));
  if (!nodes.empty()) {
    const std::vector<std::string> pods(pod_set.begin(), pod_set.end());
    LENS_ASSIGN_OR_RETURN(
        input.evidence,
        ReadStragglerEvidence(series, nodes, pods, from, to, step));
  }
  WorkloadStragglers out;
  out.gpus = static_cast<int32_t>(gpus.size());
  LENS_ASSIGN_OR_RETURN(out.report, FindStragglers(input, options));
  return out;
}

}  // namespace lens
