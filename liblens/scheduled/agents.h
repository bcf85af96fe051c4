// The node agents as lens-jobs reads them: where they are (a static list,
// or the agent DaemonSet's pods from the API server), their `/report`
// decoded, and a pool that reads them all in parallel with a timeout each,
// keeping a node's last good answer when it stops answering (stale, not
// erased).
#ifndef LENS_SCHEDULED_AGENTS_H_
#define LENS_SCHEDULED_AGENTS_H_

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/kube.h"
#include "lens/model.h"
#include "lens/status.h"
#include "scheduled/jobs.h"
#include "scheduled/scheduler.h"

namespace lens::scheduled {

// A GPU of a report: its inventory and the latest utilisation (0..1).
struct AgentGpu {
  GpuDeviceRecord device;  // node and updated_at left to the caller
  std::optional<double> utilization_ratio;
};

// GET /report of one node agent, decoded.
struct AgentReport {
  std::string node_name;
  std::string hostname;
  std::string kernel_release;
  std::string os_name;
  std::string cpu_model;
  int32_t cpu_count = 0;
  int64_t memory_bytes = 0;
  std::string driver_version;
  std::vector<AgentGpu> gpus;
  std::vector<RdmaDeviceRecord> rdma;  // node and updated_at left unset
};

// The report from the agent's answer (the {"code","data","message"}
// envelope). InvalidArgument saying what is wrong for anything else: not
// JSON, wrong types, a GPU without an index, more than 1024 devices.
StatusOr<AgentReport> ParseAgentReport(std::string_view body);

// One agent as last read. Plain value.
struct AgentView {
  std::string node;
  std::string url;
  bool ok = false;  // the last read succeeded
  std::string error;
  std::optional<AgentReport> report;  // the last good one (may be stale)
  std::optional<Timestamp> seen_at;   // when it was read
};

class AgentPool {
 public:
  // `client`: the API server for discovery (null: the static list only).
  AgentPool(const ScheduledJobsOptions& options, KubeClient* client);
  ~AgentPool();
  AgentPool(const AgentPool&) = delete;
  AgentPool& operator=(const AgentPool&) = delete;

  // Finds the agents (a discovery failure keeps the last known set and is
  // put in `*discovery`), then reads each whose answer is older than
  // `max_age`, at most `agent_concurrency` at once, none started past
  // `deadline`. Returns every known agent's view, by node.
  std::vector<AgentView> Refresh(std::chrono::milliseconds max_age,
                                 SteadyTime deadline,
                                 Status* discovery = nullptr);
  // The views as last read, without reading.
  std::vector<AgentView> Views() const;

 private:
  struct Agent;
  Status Discover();
  void Read(Agent* agent, SteadyTime deadline);

  ScheduledJobsOptions options_;
  KubeClient* client_;
  std::mutex refresh_mu_;  // one Refresh at a time
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Agent>> agents_;  // GUARDED_BY(mu_)
};

}  // namespace lens::scheduled

#endif  // LENS_SCHEDULED_AGENTS_H_
