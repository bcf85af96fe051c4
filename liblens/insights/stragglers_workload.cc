// FindWorkloadStragglers: a workload's histories from a Store and a
// TimeSeriesSource, then FindStragglers (docs/insights.md).
#include <map>
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
  // Holdings name the pods' top-level workload: a child's is its root's.
  for (int depth = 0; depth < 16 && !workload.parent_uid.empty(); ++depth) {
    StatusOr<WorkloadRecord> parent =
        store.pods().GetWorkload(workload.parent_uid);
    if (!parent.ok()) break;
    workload = std::move(*parent);
  }
  // The job's GPUs, each with the intervals the job held it, and its pods.
  LENS_ASSIGN_OR_RETURN(std::vector<GpuHolding> holdings,
                        ReadGpuHoldings(store, from, to));
  std::map<std::pair<std::string, std::string>,
           std::vector<std::pair<Timestamp, Timestamp>>>
      held;
  std::set<std::string> pod_set, node_set;
  for (const GpuHolding& h : holdings) {
    if (h.workload_uid != workload.uid) continue;
    held[{h.node, h.gpu}].emplace_back(std::max(h.from, from),
                                       std::min(h.to.value_or(to), to));
    pod_set.insert(h.namespace_name + "/" + h.pod_name);
    node_set.insert(h.node);
  }
  StragglerInput input;
  input.from = from;
  input.to = to;
  // Per node of the job (never the whole cluster's series), each GPU's
  // points only while the job held it.
  for (const std::string& node : node_set) {
    LENS_ASSIGN_OR_RETURN(std::vector<GpuUtilizationSeries> utilization,
                          ReadGpuUtilization(series, from, to, step, node));
    for (GpuUtilizationSeries& s : utilization) {
      auto it = held.find({s.node, s.gpu});
      if (it == held.end()) continue;
      std::erase_if(s.points, [&](const SamplePoint& p) {
        const Timestamp t{std::chrono::milliseconds(p.timestamp_ms)};
        for (const auto& [a, b] : it->second) {
          if (t >= a && t <= b) return false;
        }
        return true;
      });
      if (!s.points.empty()) input.utilization.push_back(std::move(s));
    }
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
  out.gpus = static_cast<int32_t>(held.size());
  LENS_ASSIGN_OR_RETURN(out.report, FindStragglers(input, options));
  return out;
}

}  // namespace lens
