// The state of Controller shared by controller.cc (informers, queue,
// lifecycle) and controller_write.cc (owner chains and the store).
#ifndef LENS_CONTROLLER_CONTROLLER_IMPL_H_
#define LENS_CONTROLLER_CONTROLLER_IMPL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "controller/controller.h"
#include "controller/pod_model.h"
#include "controller/workload_model.h"
#include "lens/kube.h"
#include "lens/model.h"

namespace lens::controller {

// The wall clock at the store's resolution (microseconds).
inline Timestamp Now() {
  return std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
}

// The newest state of one GPU pod, waiting to be written.
struct PendingPod {
  PodView view;
  bool gone = false;
  bool seen_gone = false;  // closed by a reconcile: the owners are unknown
  Timestamp gone_at{};
  std::string top_owner_uid;  // for seen-gone pods: the stored owner
};

// What the store already holds of a pod's events (loaded on first sight).
struct KnownEvents {
  std::set<std::string> types;
  int32_t max_restarts = 0;
};

// An owner as last fetched.
struct CachedOwner {
  OwnerView view;
  std::chrono::steady_clock::time_point fetched{};
  bool gone = false;  // the API server no longer has it
  // Never read (forbidden, an unknown kind, the server failing): known only
  // from a pod's reference, read again when a pod of it changes.
  bool unreadable = false;
};

struct Controller::Impl {
  class PodHandler;
  class NodeHandler;

  Impl(KubeClient* client, Store* store, ControllerOptions options,
       std::function<bool()> is_leader);
  ~Impl();

  // controller.cc.
  std::optional<PodView> Decode(const KubeObject& object);
  void CountDecodeError(const Status& status);
  void Enqueue(PendingPod pod);
  void EnqueueNode(NodeRecord node);
  void PodsSynced();
  void NodesSynced();
  bool Leading() const;
  void QueueEverything();
  Status ReconcileGone();

  // controller_write.cc: the writer thread only.
  void Flush();
  // One batch; on error nothing of it counts as written (the caller puts
  // it back).
  Status WritePods(std::vector<PendingPod>& pods,
                   std::set<std::string>* workloads);
  Status WriteWorkloads(const std::set<std::string>& uids);
  Status WriteNodes(std::vector<NodeRecord>& nodes);
  Status FillPodGpuModels(const std::set<std::string>& nodes);
  // Reads again (at most 32 of) these owners fetched longer ago than
  // owner_refresh.
  void RefreshOwners(const std::set<std::string>& uids);
  void ResyncWorkloads();
  // The pod's owners, its controller first, the top last.
  std::vector<const CachedOwner*> OwnerChain(const PodView& pod);
  // The cached owner, read from the API server when not cached (or
  // `force`); an owner that cannot be read is kept as its reference says.
  const CachedOwner* FetchOwner(const OwnerReference& ref,
                                const std::string& pod_namespace, bool force);
  StatusOr<KnownEvents*> Known(const std::string& pod_uid);
  void RecordWriteError(const Status& status);

  KubeClient* client;
  Store* store;
  const ControllerOptions options;
  const std::function<bool()> is_leader;
  const GpuResourceMatcher matcher;
  KubeDiscovery discovery;
  std::unique_ptr<PodHandler> pod_handler;
  std::unique_ptr<NodeHandler> node_handler;
  std::unique_ptr<KubeInformer> pod_informer;
  std::unique_ptr<KubeInformer> node_informer;

  mutable std::mutex mu;
  std::condition_variable wake;
  bool stop = false;                                          // GUARDED_BY(mu)
  std::unordered_map<std::string, PendingPod> pending_pods;   // GUARDED_BY(mu)
  std::unordered_map<std::string, NodeRecord> pending_nodes;  // GUARDED_BY(mu)
  bool pods_synced = false;                                   // GUARDED_BY(mu)
  bool nodes_synced = false;                                  // GUARDED_BY(mu)
  bool reconcile_needed = false;                              // GUARDED_BY(mu)
  bool reconciled = false;                                    // GUARDED_BY(mu)
  ControllerStats stats;                                      // GUARDED_BY(mu)
  // The writer thread only: rows as last written (unchanged ones are not
  // written again), events known per pod, owners by uid, and backoff.
  std::unordered_map<std::string, PodRecord> written_pods;
  std::unordered_map<std::string, NodeRecord> written_nodes;
  std::unordered_map<std::string, KnownEvents> known;
  std::unordered_map<std::string, CachedOwner> owners;
  std::unordered_map<std::string, int32_t> last_gpu_request;
  std::chrono::steady_clock::time_point retry_after{};
  std::chrono::milliseconds write_backoff{0};
};

}  // namespace lens::controller

#endif  // LENS_CONTROLLER_CONTROLLER_IMPL_H_
