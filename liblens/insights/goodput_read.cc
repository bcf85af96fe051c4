// The goodput input of one workload from the store.
#include <set>
#include <string>

#include "lens/insights.h"
#include "lens/store.h"

namespace lens {

StatusOr<GoodputInput> ReadGoodputInput(Store& store,
                                        std::string_view workload_uid,
                                        Timestamp now) {
  LENS_ASSIGN_OR_RETURN(WorkloadRecord w,
                        store.pods().GetWorkload(workload_uid));
  GoodputInput in;
  in.created_at = w.created_at;
  in.ended_at = w.ended_at;
  in.now = now;
  LENS_ASSIGN_OR_RETURN(std::vector<PodRecord> pods,
                        store.pods().ListWorkloadPods(workload_uid));
  std::set<std::string> nodes;
  for (const PodRecord& p : pods) {
    in.pods.push_back({p.uid, p.created_at, p.started_at, p.ended_at});
    if (!p.node.empty()) nodes.insert(p.node);
  }
  // Every run, thinned to at most 10,000 records each: the split needs
  // the pace and the iteration numbers, which thinning keeps.
  IterationSampleQuery q;
  q.workload_uid = std::string(workload_uid);
  q.max_points = 10000;
  LENS_ASSIGN_OR_RETURN(in.iterations, store.training().SampleIterations(q));
  LENS_ASSIGN_OR_RETURN(in.events, store.training().ListEvents(workload_uid));
  for (const std::string& node : nodes) {
    StatusOr<std::vector<GpuDeviceRecord>> gpus =
        store.nodes().ListGpuDevices(node);
    if (!gpus.ok()) return gpus.status();
    for (const GpuDeviceRecord& g : *gpus) {
      if (!g.model.empty()) {
        in.gpu_model = g.model;
        break;
      }
    }
    if (!in.gpu_model.empty()) break;
  }
  return in;
}

}  // namespace lens
