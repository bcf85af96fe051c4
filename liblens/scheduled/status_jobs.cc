// Workload status and pod status, reconciled from what the store holds:
// the controller writes what the API server says; these jobs close what it
// could not see (a workload whose pods all ended without its owner saying
// so; a pod whose containers the node agents saw end while the API server
// did not tell, e.g. a node that went away).
#include <algorithm>

#include "controller/workload_model.h"
#include "scheduled/jobs_impl.h"

namespace lens::scheduled {
namespace {

// What a missed transition must have aged before a job closes it: the
// controller and the container stream get this long to report it first,
// and a container restarting in place is not a pod that ended.
constexpr auto kCloseAfter = std::chrono::seconds(60);
// Pods whose containers are read one by one per run, at most.
constexpr int kMaxPodReads = 200;

bool TerminalStatus(std::string_view s) {
  return s == "Succeeded" || s == "Failed" || s == "Deleted";
}

}  // namespace

Status JobsImpl::RunWorkloadStatus(SteadyTime deadline) {
  std::vector<WorkloadRecord> open;
  WorkloadQuery q;
  q.ended = false;
  q.sort.key = "name";
  q.page.page_size = 1000;
  for (q.page.page_num = 1;; ++q.page.page_num) {
    LENS_ASSIGN_OR_RETURN(Page<WorkloadRecord> page,
                          store_->pods().ListWorkloads(q));
    for (WorkloadRecord& w : page.items) open.push_back(std::move(w));
    if (static_cast<int64_t>(q.page.page_num) * q.page.page_size >=
        page.total) {
      break;
    }
  }
  LENS_ASSIGN_OR_RETURN(auto links, store_->pods().ListOpenWorkloadPods());
  std::map<std::string, std::vector<const PodRecord*>> pods_of;
  for (const auto& [workload, pod] : links) pods_of[workload].push_back(&pod);
  const Timestamp now = NowUs();
  std::vector<WorkloadRecord> changed;
  for (const WorkloadRecord& w : open) {
    static const std::vector<const PodRecord*> kNone;
    auto found = pods_of.find(w.uid);
    const std::vector<const PodRecord*>& pods =
        found == pods_of.end() ? kNone : found->second;
    std::vector<controller::PodOutcome> outcomes;
    int32_t active = 0, gpus = 0;
    std::optional<Timestamp> last_end;
    for (const PodRecord* p : pods) {
      outcomes.push_back({p->phase, p->ended_at, p->deleted});
      if (!p->deleted && !p->ended_at && !TerminalPhase(p->phase)) {
        ++active;
        gpus += p->gpu_allocated;
      } else if (p->ended_at) {
        last_end = std::max(last_end.value_or(Timestamp{}), *p->ended_at);
      }
    }
    WorkloadRecord next = w;
    next.active_pods = active;
    if (active > 0) next.gpu_request = gpus;
    if (!pods.empty() && active == 0 && !TerminalStatus(w.status) &&
        (!last_end || now - *last_end > kCloseAfter)) {
      std::string status;
      std::optional<Timestamp> ended;
      controller::WorkloadStatusFromPods(outcomes, &status, &ended);
      if (TerminalStatus(status)) {
        next.status = status;
        next.ended_at = ended.value_or(now);
      }
    }
    if (next.status != w.status || next.gpu_request != w.gpu_request ||
        next.active_pods != w.active_pods || next.ended_at != w.ended_at) {
      next.updated_at = now;
      changed.push_back(std::move(next));
    }
  }
  if (changed.empty()) return OkStatus();
  return store_->pods().UpdateWorkloadStatus(changed);
}

Status JobsImpl::RunPodStatus(SteadyTime deadline) {
  LENS_ASSIGN_OR_RETURN(std::vector<PodRecord> candidates,
                        store_->pods().ListLivePods());
  std::erase_if(candidates, [](const PodRecord& p) { return !p.running; });
  LENS_ASSIGN_OR_RETURN(std::vector<ContainerRecord> live_containers,
                        store_->containers().ListLiveContainers(false));
  std::set<std::string> live;
  for (const ContainerRecord& c : live_containers) live.insert(c.pod_uid);
  const Timestamp now = NowUs();
  std::vector<PodRecord> closed;
  int reads = 0;
  for (PodRecord& p : candidates) {
    if (live.count(p.uid)) continue;
    if (++reads > kMaxPodReads || std::chrono::steady_clock::now() > deadline) {
      break;  // the rest next run
    }
    ContainerQuery cq;
    cq.pod_uid = p.uid;
    cq.page.page_size = 1000;
    LENS_ASSIGN_OR_RETURN(Page<ContainerRecord> cs,
                          store_->containers().ListContainers(cq));
    if (cs.items.empty()) continue;  // no agent reported its containers
    std::optional<Timestamp> end;
    bool all_gone = true;
    for (const ContainerRecord& c : cs.items) {
      if (c.state != ContainerState::kExited &&
          c.state != ContainerState::kDeleted) {
        all_gone = false;
        break;
      }
      const Timestamp t = c.finished_at.value_or(c.updated_at);
      end = std::max(end.value_or(Timestamp{}), t);
    }
    if (!all_gone || !end || now - *end <= kCloseAfter) continue;
    p.running = false;
    p.ended_at = end;
    p.updated_at = now;
    closed.push_back(std::move(p));
  }
  if (closed.empty()) return OkStatus();
  return store_->pods().UpsertPods(closed);
}

}  // namespace lens::scheduled
