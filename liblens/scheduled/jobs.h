// The scheduled jobs of lens-jobs: from the store (what the controller and
// the container event stream wrote) and the node agents, they keep the
// cluster view current: GPU allocation per node and cluster (with a bounded
// history), GPU consumers per workload, node and device inventory with a
// change log, workload and pod status, and the storage systems in use.
//
//   lens::ScheduledJobsOptions options;
//   options.agents = {{"node-a", "http://10.0.0.5:8989"}};
//   auto jobs = lens::ScheduledJobs::Create(options, store.get(), nullptr);
//   (*jobs)->Start([] { return true; });   // leading: always
//   ... (*jobs)->RenderMetrics() ... (*jobs)->StatusJson() ...
//   (*jobs)->Stop();
//
// Each job runs on its own thread every interval, only while `leading`
// says so; a run that overruns its interval makes the next ticks skipped
// (counted), never two runs of one job at once. Metrics (docs/jobs.md):
// lens_job_* per job, lens_gpu_allocation_ratio, lens_workload_*.
#ifndef LENS_SCHEDULED_JOBS_H_
#define LENS_SCHEDULED_JOBS_H_

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"

namespace lens {

class Store;
class KubeClient;

// A node agent to read, by the node it runs on.
struct NodeAgentTarget {
  std::string node;  // Kubernetes node name (the store's nodes.name)
  std::string url;   // "http://10.0.0.5:8989"
};

// A mount point whose capacity the storage scan reports (statfs), with the
// storage system it belongs to. Never a credential.
struct StorageMount {
  std::string name;  // the storage row's key, e.g. "juicefs-data"
  std::string kind;  // "juicefs", "nfs", "cephfs", "lustre", "local", ...
  std::string path;  // where it is mounted on the jobs' host
};

// How often each job runs and how long one run may take.
struct JobSchedule {
  std::chrono::milliseconds interval;
  std::chrono::milliseconds timeout;

  // Every `interval`, a run taking at most 90% of it (at least 10ms): the
  // schedule of each `<job>Interval` key (docs/jobs.md).
  static JobSchedule Every(std::chrono::milliseconds interval) {
    return {interval,
            std::max(std::chrono::milliseconds(10), interval * 9 / 10)};
  }
};

// What the jobs read and how. Plain value; the `jobs:` section of the
// configuration file decodes its keys into one (scheduled/config.h).
struct ScheduledJobsOptions {
  // Node agents: this static list, or (empty list and a Kubernetes client)
  // the pods matching `agent_selector` in `agent_namespace`, reached at
  // their pod IP and `agent_port` (the DaemonSet runs on the host network
  // or exposes the port).
  std::vector<NodeAgentTarget> agents;
  std::string agent_namespace = "lens";
  std::string agent_selector = "app.kubernetes.io/name=lens-node-agent";
  int agent_port = 8989;
  std::string agent_scheme = "http";  // or "https"
  // The agents' bearer token and TLS trust (their CA; or no verification).
  std::string agent_token;
  std::string agent_ca_file;
  // The name the agents' certificate holds, verified in place of their pod
  // IP (KubeConnection::tls_server_name); empty: the address is verified.
  std::string agent_tls_server_name;
  bool agent_insecure_skip_tls_verify = false;
  std::chrono::milliseconds agent_timeout{5000};
  int agent_concurrency = 16;  // agents read at once

  JobSchedule gpu_allocation = JobSchedule::Every(std::chrono::seconds(30));
  JobSchedule gpu_consumers = JobSchedule::Every(std::chrono::seconds(30));
  JobSchedule node_info = JobSchedule::Every(std::chrono::seconds(10));
  JobSchedule device_info = JobSchedule::Every(std::chrono::seconds(10));
  JobSchedule workload_status = JobSchedule::Every(std::chrono::seconds(20));
  JobSchedule pod_status = JobSchedule::Every(std::chrono::seconds(5));
  JobSchedule storage_scan = JobSchedule::Every(std::chrono::seconds(60));
  // How long the allocation history is kept.
  std::chrono::hours allocation_history{24 * 7};
  // Storage the scan reports beside the cluster's CSI drivers and volumes.
  std::vector<StorageMount> storage_mounts;
  // Also export the original's metric names (gpu_allocation_rate,
  // node_k8s_gpu_allocation_rate, consumer_pod_*).
  bool compat_names = false;

  // InvalidArgument naming the field.
  Status Validate() const;
};

// The job names, as /jobs, the metrics' `job` label and RunOnce use them.
const std::vector<std::string_view>& ScheduledJobNames();

// The jobs of one process. Thread-safe.
class ScheduledJobs {
 public:
  // `store` must outlive the jobs; `client` (may be null: no cluster) too.
  static StatusOr<std::unique_ptr<ScheduledJobs>> Create(
      const ScheduledJobsOptions& options, Store* store, KubeClient* client);
  virtual ~ScheduledJobs();

  // Starts each job's thread; a job runs only while `leading()` is true
  // (empty: always). Stop() ends them (a run in progress finishes).
  virtual void Start(std::function<bool()> leading) = 0;
  virtual void Stop() = 0;

  // Runs one job now on the caller's thread, whoever leads (tests, tools).
  // NotFound for a name not in ScheduledJobNames(); otherwise the run's
  // result (Unavailable when the store is; a node agent that does not
  // answer is not a failure: its node is marked stale).
  virtual Status RunOnce(std::string_view job) = 0;

  // GET /jobs: [{"name","interval_seconds","runs","failures","skipped",
  // "running","last_start","last_duration_seconds","last_result",
  // "last_error","last_success"}] (times: Unix seconds, null when never).
  virtual std::string StatusJson() const = 0;
  // lens_job_* and the jobs' results, Prometheus text format.
  virtual std::string RenderMetrics() const = 0;
};

}  // namespace lens

#endif  // LENS_SCHEDULED_JOBS_H_
