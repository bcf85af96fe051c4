// The jobs' shared state: the store, the node agents, the scheduler, and
// what the allocation and consumer jobs found last (for /metrics and for
// the node info job). Each job is a member defined in its own file.
#ifndef LENS_SCHEDULED_JOBS_IMPL_H_
#define LENS_SCHEDULED_JOBS_IMPL_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lens/store.h"
#include "scheduled/agents.h"
#include "scheduled/jobs.h"
#include "scheduled/scheduler.h"

namespace lens::scheduled {

// GPUs held by pods over allocatable GPUs, per node and for the cluster.
struct Allocation {
  struct Node {
    int32_t allocated = 0;
    int32_t allocatable = 0;
  };
  Timestamp at{};
  std::map<std::string, Node> nodes;
  Node cluster;
};

// One top-level workload holding GPUs.
struct Consumer {
  std::string uid;  // the workload's, or the pod's when it has no owner
  std::string name;
  std::string kind;  // "Pod" for a pod without an owner
  std::string namespace_name;
  int32_t gpus = 0;
  int32_t pods = 0;
  std::optional<double> utilization_ratio;  // mean over the GPUs it holds
  int32_t gpus_measured = 0;                // of those, with a sample
};

// The pods that hold GPUs now: bound to a node, not terminal, not ended,
// not deleted.
StatusOr<std::vector<PodRecord>> ReadActivePods(Store& store);
// Every node in the store.
StatusOr<std::vector<NodeRecord>> ReadNodes(Store& store);
bool TerminalPhase(std::string_view phase);
Timestamp NowUs();

class JobsImpl : public ScheduledJobs {
 public:
  JobsImpl(const ScheduledJobsOptions& options, Store* store,
           KubeClient* client);
  ~JobsImpl() override;

  void Start(std::function<bool()> leading) override;
  void Stop() override;
  Status RunOnce(std::string_view job) override;
  std::string StatusJson() const override;
  std::string RenderMetrics() const override;

  // The jobs (each in its own file).
  Status RunAllocation(SteadyTime deadline);      // allocation.cc
  Status RunConsumers(SteadyTime deadline);       // consumers.cc
  Status RunNodeInfo(SteadyTime deadline);        // node_info.cc
  Status RunDeviceInfo(SteadyTime deadline);      // node_info.cc
  Status RunWorkloadStatus(SteadyTime deadline);  // status_jobs.cc
  Status RunPodStatus(SteadyTime deadline);       // status_jobs.cc
  Status RunStorageScan(SteadyTime deadline);     // jobs.cc

 private:
  // Reads the agents not read within half the shortest agent job's
  // interval, so node info and device info share one read per round.
  std::vector<AgentView> RefreshAgents(SteadyTime deadline, Status* discovery);

  ScheduledJobsOptions options_;
  Store* store_;
  KubeClient* client_;
  AgentPool agents_;
  std::unique_ptr<Scheduler> scheduler_;

  mutable std::mutex mu_;
  std::optional<Allocation> allocation_;  // GUARDED_BY(mu_)
  std::vector<Consumer> consumers_;       // GUARDED_BY(mu_)
  bool consumers_known_ = false;          // GUARDED_BY(mu_)
  std::function<bool()> leading_;         // set by Start, read by RenderMetrics
  // The last history point written per node.
  std::map<std::string, GpuAllocationRecord> history_points_;  // GUARDED_BY
  // Workload names, kinds and namespaces (they never change), by uid.
  std::map<std::string, Consumer> workload_names_;  // GUARDED_BY(mu_)
  // The inventory each node's devices were last synced to, so a round that
  // finds nothing changed writes nothing.
  std::map<std::string, std::string> synced_devices_;  // GUARDED_BY(mu_)
};

}  // namespace lens::scheduled

#endif  // LENS_SCHEDULED_JOBS_IMPL_H_
