// The controller's metrics, through the one text writer.
#include "controller/controller_metrics.h"

#include "core/metric_writer.h"

namespace lens::controller {

std::string RenderControllerMetrics(const ControllerStats& s,
                                    uint64_t leader_transitions) {
  std::string out;
  MetricWriter w(&out);
  auto gauge = [&](std::string_view name, std::string_view help, double v) {
    w.Family(name, help, "gauge");
    w.Sample({}, v);
  };
  auto counter = [&](std::string_view name, std::string_view help, double v) {
    w.Family(name, help, "counter");
    w.Sample({}, v);
  };
  gauge("lens_controller_leader", "1 while this replica writes", s.leader);
  counter("lens_controller_leader_transitions_total",
          "Times this replica became or stopped being the leader",
          static_cast<double>(leader_transitions));
  gauge("lens_controller_ready",
        "1 once pods and nodes are listed and the store reconciled", s.ready);
  struct PerResource {
    const char* name;
    const char* help;
    uint64_t KubeInformerStats::*field;
  };
  static constexpr PerResource kPerResource[] = {
      {"lens_controller_lists_total", "Full lists of a resource",
       &KubeInformerStats::lists},
      {"lens_controller_relists_total",
       "Lists after a watch expired (410 Gone)", &KubeInformerStats::relists},
      {"lens_controller_watch_restarts_total",
       "Watches resumed after the API server ended them",
       &KubeInformerStats::watch_restarts},
      {"lens_controller_watch_events_total",
       "Watch events processed (bookmarks excluded)",
       &KubeInformerStats::events},
      {"lens_controller_api_errors_total",
       "Failed list or watch requests (each followed by a backoff)",
       &KubeInformerStats::errors},
      {"lens_controller_objects", "Objects in the informer's cache",
       &KubeInformerStats::objects},
  };
  for (const PerResource& m : kPerResource) {
    w.Family(m.name, m.help,
             m.field == &KubeInformerStats::objects ? "gauge" : "counter");
    w.Sample({{"resource", "pods"}}, static_cast<double>(s.pods.*m.field));
    w.Sample({{"resource", "nodes"}}, static_cast<double>(s.nodes.*m.field));
  }
  gauge("lens_controller_queue_depth", "Objects waiting to be written",
        static_cast<double>(s.queue_depth));
  gauge("lens_controller_gpu_pods", "GPU pods known and not deleted",
        static_cast<double>(s.gpu_pods));
  w.Family("lens_controller_rows_written_total", "Rows written, per table",
           "counter");
  w.Sample({{"table", "gpu_pods"}}, static_cast<double>(s.pods_written));
  w.Sample({{"table", "gpu_pods_events"}},
           static_cast<double>(s.pod_events_written));
  w.Sample({{"table", "pod_snapshots"}},
           static_cast<double>(s.snapshots_written));
  w.Sample({{"table", "gpu_workloads"}},
           static_cast<double>(s.workloads_written));
  w.Sample({{"table", "nodes"}}, static_cast<double>(s.nodes_written));
  counter("lens_controller_pods_seen_gone_total",
          "Pods closed by a reconcile because they vanished unobserved",
          static_cast<double>(s.pods_seen_gone));
  w.Family("lens_controller_errors_total", "Errors, per kind", "counter");
  w.Sample({{"kind", "decode"}}, static_cast<double>(s.decode_errors));
  w.Sample({{"kind", "owner"}}, static_cast<double>(s.owner_errors));
  w.Sample({{"kind", "write"}}, static_cast<double>(s.write_errors));
  counter("lens_controller_reconcile_seconds_total",
          "Time spent writing batches to the store", s.flush_seconds_total);
  counter("lens_controller_reconciles_total", "Batches written",
          static_cast<double>(s.flushes));
  gauge("lens_controller_last_reconcile_seconds", "Duration of the last batch",
        s.last_flush_seconds);
  return out;
}

}  // namespace lens::controller
