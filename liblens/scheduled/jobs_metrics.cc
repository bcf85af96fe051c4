// The jobs' metrics: per job (runs, failures, skipped ticks, durations, last
// success) and what the allocation and consumer jobs found last. Only the
// leader has results, so replicas never export the same series twice; a
// workload's series are gone from the first scrape after it ended.

#include "core/metric_writer.h"
#include "scheduled/jobs_impl.h"

namespace lens::scheduled {
namespace {

double Ratio(int32_t num, int32_t den) {
  return den > 0 ? static_cast<double>(num) / den : 0;
}

void RenderJobs(const std::vector<JobState>& states, MetricWriter& w) {
  struct Counter {
    const char* name;
    const char* help;
    uint64_t JobState::*field;
  };
  static constexpr Counter kCounters[] = {
      {"lens_job_runs_total", "Runs of a scheduled job", &JobState::runs},
      {"lens_job_failures_total", "Runs that failed or overran their timeout",
       &JobState::failures},
      {"lens_job_skipped_total",
       "Ticks skipped because the previous run was still going",
       &JobState::skipped}};
  for (const Counter& c : kCounters) {
    w.Family(c.name, c.help, "counter");
    for (const JobState& s : states) {
      w.Sample({{"job", s.name}}, static_cast<double>(s.*c.field));
    }
  }
  w.Family("lens_job_running", "1 while a run of the job is in progress",
           "gauge");
  for (const JobState& s : states) w.Sample({{"job", s.name}}, s.running);
  w.Family("lens_job_last_success_timestamp_seconds",
           "When the job last succeeded (Unix seconds)", "gauge");
  for (const JobState& s : states) {
    if (!s.last_success) continue;
    w.Sample({{"job", s.name}},
             std::chrono::duration<double>(s.last_success->time_since_epoch())
                 .count());
  }
  w.Family("lens_job_duration_seconds", "How long the job's runs took",
           "histogram");
  for (const JobState& s : states) {
    w.HistogramSeries({{"job", s.name}}, s.durations);
  }
}

void RenderAllocation(const Allocation& a, bool compat, MetricWriter& w) {
  w.Family("lens_gpu_allocation_ratio",
           "GPUs held by bound, non-terminal pods over allocatable GPUs, per "
           "node",
           "gauge");
  for (const auto& [node, n] : a.nodes) {
    if (n.allocatable > 0) {
      w.Sample({{"node", node}}, Ratio(n.allocated, n.allocatable));
    }
  }
  w.Family("lens_gpu_allocated", "GPUs held by bound, non-terminal pods",
           "gauge");
  for (const auto& [node, n] : a.nodes) {
    w.Sample({{"node", node}}, n.allocated);
  }
  w.Family("lens_gpu_allocatable", "GPUs the node can allocate", "gauge");
  for (const auto& [node, n] : a.nodes) {
    w.Sample({{"node", node}}, n.allocatable);
  }
  w.Family("lens_cluster_gpu_allocation_ratio",
           "GPUs held by pods over allocatable GPUs, whole cluster", "gauge");
  w.Sample({}, Ratio(a.cluster.allocated, a.cluster.allocatable));
  w.Family("lens_cluster_gpus_allocated", "GPUs held by pods, whole cluster",
           "gauge");
  w.Sample({}, a.cluster.allocated);
  w.Family("lens_cluster_gpus_allocatable", "Allocatable GPUs, whole cluster",
           "gauge");
  w.Sample({}, a.cluster.allocatable);
  if (!compat) return;
  w.Family("gpu_allocation_rate",
           "Cluster GPU allocation (0..1; lens_cluster_gpu_allocation_ratio)",
           "gauge");
  w.Sample({}, Ratio(a.cluster.allocated, a.cluster.allocatable));
  w.Family("node_k8s_gpu_allocation_rate",
           "Node GPU allocation (0..1; lens_gpu_allocation_ratio)", "gauge");
  for (const auto& [node, n] : a.nodes) {
    if (n.allocatable > 0) {
      w.Sample({{"node", node}}, Ratio(n.allocated, n.allocatable));
    }
  }
}

void RenderConsumers(const std::vector<Consumer>& consumers, bool compat,
                     MetricWriter& w) {
  struct Family {
    const char* name;
    const char* compat_name;
    const char* help;
  };
  static constexpr Family kFamilies[] = {
      {"lens_workload_gpus", "consumer_pod_gpu_allocated",
       "GPUs held by the workload's active pods"},
      {"lens_workload_pods", "consumer_pod_active_pods",
       "Active pods of the workload that hold GPUs"},
      {"lens_workload_gpu_utilization_ratio", "consumer_pod_gpu_utilization",
       "Mean utilisation (0..1) of exactly the GPUs the workload's containers "
       "hold"}};
  for (int compat_pass = 0; compat_pass < (compat ? 2 : 1); ++compat_pass) {
    for (int f = 0; f < 3; ++f) {
      const Family& fam = kFamilies[f];
      w.Family(compat_pass ? fam.compat_name : fam.name, fam.help, "gauge");
      for (const Consumer& c : consumers) {
        double v = f == 0 ? c.gpus : c.pods;
        if (f == 2) {
          if (!c.utilization_ratio) continue;
          v = *c.utilization_ratio;
        }
        w.Sample({{"workload_uid", c.uid},
                  {"workload_name", c.name},
                  {"workload_kind", c.kind},
                  {"namespace", c.namespace_name}},
                 v);
      }
    }
  }
}

}  // namespace

std::string JobsImpl::RenderMetrics() const {
  std::string out;
  MetricWriter w(&out);
  RenderJobs(scheduler_->States(), w);
  std::optional<Allocation> allocation;
  std::vector<Consumer> consumers;
  bool known = false;
  std::function<bool()> leading;
  {
    std::lock_guard lock(mu_);
    allocation = allocation_;
    consumers = consumers_;
    known = consumers_known_;
    leading = leading_;
  }
  const bool lead = !leading || leading();
  w.Family("lens_jobs_leader", "1 while this replica runs the jobs", "gauge");
  w.Sample({}, lead);
  // A replica that stopped leading exports no results: the leader does.
  if (!lead) return out;
  if (allocation) RenderAllocation(*allocation, options_.compat_names, w);
  if (known) RenderConsumers(consumers, options_.compat_names, w);
  w.Family("lens_node_agent_up",
           "1 when the node's agent answered the last read, 0 when its data is "
           "stale",
           "gauge");
  for (const AgentView& v : agents_.Views()) {
    w.Sample({{"node", v.node}}, v.ok);
  }
  return out;
}

}  // namespace lens::scheduled
