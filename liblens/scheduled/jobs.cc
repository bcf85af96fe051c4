// The jobs' scheduler wiring, /jobs, the store reads they share, and the
// storage scan's write.

#include "core/json.h"
#include "scheduled/jobs_impl.h"
#include "scheduled/storage_scan.h"

namespace lens {
namespace {

constexpr std::string_view kAllocation = "gpu-allocation";
constexpr std::string_view kConsumers = "gpu-consumers";
constexpr std::string_view kNodeInfo = "node-info";
constexpr std::string_view kDeviceInfo = "device-info";
constexpr std::string_view kWorkloadStatus = "workload-status";
constexpr std::string_view kPodStatus = "pod-status";
constexpr std::string_view kStorageScan = "storage-scan";

Status CheckSchedule(std::string_view name, const JobSchedule& s) {
  if (s.interval < std::chrono::milliseconds(100)) {
    return InvalidArgumentError(std::string(name) +
                                ".interval: must be at least 100ms");
  }
  if (s.timeout < std::chrono::milliseconds(10)) {
    return InvalidArgumentError(std::string(name) +
                                ".timeout: must be at least 10ms");
  }
  return OkStatus();
}

}  // namespace

const std::vector<std::string_view>& ScheduledJobNames() {
  static const std::vector<std::string_view> names = {
      kAllocation,     kConsumers, kNodeInfo,   kDeviceInfo,
      kWorkloadStatus, kPodStatus, kStorageScan};
  return names;
}

Status ScheduledJobsOptions::Validate() const {
  for (const NodeAgentTarget& a : agents) {
    if (a.node.empty()) return InvalidArgumentError("agents: a node is empty");
    if (a.url.rfind("http://", 0) != 0 && a.url.rfind("https://", 0) != 0) {
      return InvalidArgumentError("agents: \"" + a.url + "\" (node " + a.node +
                                  ") is not an http:// or https:// URL");
    }
  }
  if (agent_port < 1 || agent_port > 65535) {
    return InvalidArgumentError("agentPort: must be in 1..65535");
  }
  if (agent_scheme != "http" && agent_scheme != "https") {
    return InvalidArgumentError("agentScheme: must be http or https");
  }
  if (agent_timeout < std::chrono::milliseconds(10)) {
    return InvalidArgumentError("agentTimeout: must be at least 10ms");
  }
  if (agent_concurrency < 1 || agent_concurrency > 256) {
    return InvalidArgumentError("agentConcurrency: must be in 1..256");
  }
  const std::pair<std::string_view, const JobSchedule*> schedules[] = {
      {"gpuAllocation", &gpu_allocation},
      {"gpuConsumers", &gpu_consumers},
      {"nodeInfo", &node_info},
      {"deviceInfo", &device_info},
      {"workloadStatus", &workload_status},
      {"podStatus", &pod_status},
      {"storageScan", &storage_scan}};
  for (const auto& [name, s] : schedules) {
    LENS_RETURN_IF_ERROR(CheckSchedule(name, *s));
  }
  if (allocation_history < std::chrono::hours(1)) {
    return InvalidArgumentError("allocationHistory: must be at least 1h");
  }
  for (const StorageMount& m : storage_mounts) {
    if (m.name.empty() || m.path.empty() || m.path[0] != '/') {
      return InvalidArgumentError(
          "storageMounts: each needs a name and an absolute path");
    }
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<ScheduledJobs>> ScheduledJobs::Create(
    const ScheduledJobsOptions& options, Store* store, KubeClient* client) {
  LENS_RETURN_IF_ERROR(options.Validate());
  if (!store) return InvalidArgumentError("scheduled jobs: no store");
  return std::unique_ptr<ScheduledJobs>(
      new scheduled::JobsImpl(options, store, client));
}

ScheduledJobs::~ScheduledJobs() = default;

namespace scheduled {

Timestamp NowUs() {
  return std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
}

bool TerminalPhase(std::string_view phase) {
  return phase == "Succeeded" || phase == "Failed";
}

StatusOr<std::vector<PodRecord>> ReadActivePods(Store& store) {
  LENS_ASSIGN_OR_RETURN(std::vector<PodRecord> live,
                        store.pods().ListLivePods());
  std::erase_if(live, [](const PodRecord& p) {
    return p.node.empty() || TerminalPhase(p.phase);
  });
  return live;
}

StatusOr<std::vector<NodeRecord>> ReadNodes(Store& store) {
  std::vector<NodeRecord> out;
  NodeQuery q;
  q.page.page_size = 1000;
  for (q.page.page_num = 1;; ++q.page.page_num) {
    LENS_ASSIGN_OR_RETURN(Page<NodeRecord> page, store.nodes().ListNodes(q));
    for (NodeRecord& n : page.items) out.push_back(std::move(n));
    if (static_cast<int64_t>(q.page.page_num) * q.page.page_size >=
        page.total) {
      break;
    }
  }
  return out;
}

JobsImpl::JobsImpl(const ScheduledJobsOptions& options, Store* store,
                   KubeClient* client)
    : options_(options),
      store_(store),
      client_(client),
      agents_(options, client) {
  auto spec = [this](std::string_view name, const JobSchedule& s,
                     Status (JobsImpl::*run)(SteadyTime)) {
    return JobSpec{std::string(name), s.interval, s.timeout,
                   [this, run](SteadyTime d) { return (this->*run)(d); }};
  };
  const ScheduledJobsOptions& o = options_;
  std::vector<JobSpec> specs;
  specs.push_back(
      spec(kAllocation, o.gpu_allocation, &JobsImpl::RunAllocation));
  specs.push_back(spec(kConsumers, o.gpu_consumers, &JobsImpl::RunConsumers));
  specs.push_back(spec(kNodeInfo, o.node_info, &JobsImpl::RunNodeInfo));
  specs.push_back(spec(kDeviceInfo, o.device_info, &JobsImpl::RunDeviceInfo));
  specs.push_back(
      spec(kWorkloadStatus, o.workload_status, &JobsImpl::RunWorkloadStatus));
  specs.push_back(spec(kPodStatus, o.pod_status, &JobsImpl::RunPodStatus));
  specs.push_back(
      spec(kStorageScan, o.storage_scan, &JobsImpl::RunStorageScan));
  scheduler_ = std::make_unique<Scheduler>(std::move(specs));
}

JobsImpl::~JobsImpl() { Stop(); }

void JobsImpl::Start(std::function<bool()> leading) {
  {
    std::lock_guard lock(mu_);
    leading_ = leading;
  }
  scheduler_->Start(std::move(leading));
}
void JobsImpl::Stop() { scheduler_->Stop(); }
Status JobsImpl::RunOnce(std::string_view job) {
  return scheduler_->RunOnce(job);
}

std::vector<AgentView> JobsImpl::RefreshAgents(SteadyTime deadline,
                                               Status* discovery) {
  const auto shortest =
      std::min(options_.node_info.interval, options_.device_info.interval);
  return agents_.Refresh(shortest / 2, deadline, discovery);
}

Status JobsImpl::RunStorageScan(SteadyTime deadline) {
  LENS_ASSIGN_OR_RETURN(
      std::vector<StorageRecord> rows,
      ScanStorage(client_, options_.storage_mounts, NowUs(), deadline));
  for (const StorageRecord& r : rows) {
    LENS_RETURN_IF_ERROR(store_->storage().UpsertStorage(r));
  }
  return OkStatus();
}

std::string JobsImpl::StatusJson() const {
  JsonWriter w;
  auto seconds =
      [&w](const std::optional<std::chrono::system_clock::time_point>& t) {
        if (!t) {
          w.Null();
          return;
        }
        w.Double(std::chrono::duration<double>(t->time_since_epoch()).count());
      };
  w.StartArray();
  for (const JobState& s : scheduler_->States()) {
    w.StartObject();
    w.Key("name");
    w.String(s.name.c_str());
    w.Key("interval_seconds");
    w.Double(std::chrono::duration<double>(s.interval).count());
    w.Key("runs");
    w.Uint64(s.runs);
    w.Key("failures");
    w.Uint64(s.failures);
    w.Key("skipped");
    w.Uint64(s.skipped);
    w.Key("running");
    w.Bool(s.running);
    w.Key("last_start");
    seconds(s.last_start);
    w.Key("last_duration_seconds");
    w.Double(std::chrono::duration<double>(s.last_duration).count());
    w.Key("last_result");
    w.String(s.runs == 0            ? "never run"
             : s.last_error.empty() ? "ok"
                                    : "failed");
    w.Key("last_error");
    w.String(s.last_error.c_str());
    w.Key("last_success");
    seconds(s.last_success);
    w.EndObject();
  }
  w.EndArray();
  return w.Take();
}

}  // namespace scheduled
}  // namespace lens
