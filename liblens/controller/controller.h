// The controller's work: pods that request GPUs, their owner chains and the
// nodes, from informers on the API server into the store. Handlers only
// queue the newest state of each object; one writer drains the queue in
// batches, and only while this replica leads (checked before every write).
// Reads the API server (get/list/watch) and never writes to it.
#ifndef LENS_CONTROLLER_CONTROLLER_H_
#define LENS_CONTROLLER_CONTROLLER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "controller/pod_model.h"
#include "lens/kube.h"
#include "lens/status.h"

namespace lens {
class Store;
}

namespace lens::controller {

struct ControllerOptions {
  std::vector<std::string> gpu_resources = GpuResourceMatcher::Defaults();
  // Owner chains longer than this stop here (the last owner reached is
  // the top); cycles stop at the first repeat.
  int owner_depth = 10;
  // The writer drains the queue this often, or at once when it holds
  // `batch_size` objects.
  std::chrono::milliseconds flush_interval{250};
  size_t batch_size = 1000;
  // An owner is fetched again (after its pods are written, at most 32 per
  // batch) when a pod of it changes and it was fetched longer ago than
  // this; owners not ended are read again once older than
  // `workload_resync` (at most 16 per batch, the oldest first).
  std::chrono::seconds owner_refresh{5};
  std::chrono::seconds workload_resync{30};
  // Owners that ended or are gone leave the cache this long after they
  // were last read (their rows stay), so a controller that runs for weeks
  // holds only what is live.
  std::chrono::seconds forget_ended_after{600};
  // A replica that is not leading keeps watched deletions this long (a
  // leader that missed a renewal writes them with their own times when it
  // leads again); everything else it drops.
  std::chrono::seconds follower_keeps_deletions{60};
  // Informers (KubeInformerOptions).
  uint32_t page_size = 500;
  std::chrono::milliseconds initial_backoff{500};
  std::chrono::milliseconds max_backoff{30000};
  std::chrono::seconds min_watch_timeout{300};
  std::chrono::seconds max_watch_timeout{600};
};

// What the controller did, for /metrics. Plain value.
struct ControllerStats {
  KubeInformerStats pods;
  KubeInformerStats nodes;
  uint64_t gpu_pods = 0;  // GPU pods known now
  uint64_t queue_depth = 0;
  uint64_t pods_written = 0;
  uint64_t pod_events_written = 0;
  uint64_t snapshots_written = 0;
  uint64_t workloads_written = 0;
  uint64_t nodes_written = 0;
  uint64_t pods_seen_gone = 0;  // closed by a reconcile, not a watch event
  uint64_t decode_errors = 0;
  uint64_t owner_errors = 0;
  uint64_t write_errors = 0;
  uint64_t flushes = 0;
  uint64_t turns = 0;  // writer loop turns, leading or not
  double flush_seconds_total = 0;
  double last_flush_seconds = 0;
  bool leader = false;
  bool ready = false;
  std::string last_error;
};

class Controller {
 public:
  // `client` and `store` are not owned and must outlive it. `is_leader`:
  // whether this replica may write now (empty: always).
  Controller(KubeClient* client, Store* store, ControllerOptions options,
             std::function<bool()> is_leader = {});
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Watches and writes until Stop(); OK after Stop(). Errors only for
  // options that cannot work; API and store failures are retried.
  Status Run();
  void Stop();

  ControllerStats Stats() const;
  // Both informers have listed once, and (while leading) the store has
  // been reconciled with the API server once.
  bool Ready() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens::controller

#endif  // LENS_CONTROLLER_CONTROLLER_H_
