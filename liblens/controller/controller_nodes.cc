// The controller's writer, nodes: each node's Kubernetes columns, and the
// GPU model its pods' requests take from it. The writer thread only; every
// write first checks that this replica leads.
#include <set>
#include <string>
#include <vector>

#include "controller/controller_impl.h"
#include "lens/store.h"

namespace lens::controller {
namespace {

bool SameRow(const NodeRecord& a, const NodeRecord& b) {
  NodeRecord x = a;
  x.updated_at = b.updated_at;
  return x.name == b.name && x.address == b.address && x.status == b.status &&
         x.gpu_vendor == b.gpu_vendor && x.gpu_model == b.gpu_model &&
         x.gpu_count == b.gpu_count && x.gpu_allocatable == b.gpu_allocatable &&
         x.cpu_count == b.cpu_count && x.memory_bytes == b.memory_bytes &&
         x.kernel_version == b.kernel_version && x.os_image == b.os_image &&
         x.kubelet_version == b.kubelet_version &&
         x.container_runtime == b.container_runtime && x.labels == b.labels &&
         x.created_at == b.created_at;
}

}  // namespace

Status Controller::Impl::WriteNodes(std::vector<NodeRecord>& nodes) {
  const Timestamp now = Now();
  uint64_t wrote = 0;
  std::set<std::string> new_models;  // nodes whose GPU model is new to us
  for (NodeRecord& n : nodes) {
    n.updated_at = now;
    auto written = written_nodes.find(n.name);
    if (written != written_nodes.end() && SameRow(written->second, n)) continue;
    if (!Leading()) return AbortedError("no longer the leader");
    LENS_RETURN_IF_ERROR(
        store->nodes().UpsertNodes(std::span(&n, 1), NodeColumns::kKubernetes));
    if (written == written_nodes.end() ||
        written->second.gpu_model != n.gpu_model) {
      new_models.insert(n.name);
    }
    written_nodes[n.name] = n;
    ++wrote;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    stats.nodes_written += wrote;
  }
  return FillPodGpuModels(new_models);
}

// A pod's GPU model comes from its node's labels. Pods written before their
// node (the pod informer delivered first, or a batch filled before the node
// arrived) got none: give them the node's model now, and a new one when the
// node's labels change, without waiting for the pod to change.
Status Controller::Impl::FillPodGpuModels(const std::set<std::string>& nodes) {
  if (nodes.empty()) return OkStatus();
  std::vector<PodResourcesRecord> changed;
  for (const auto& [uid, pod] : written_pods) {
    if (!nodes.contains(pod.node)) continue;
    const std::string& model = written_nodes.at(pod.node).gpu_model;
    StatusOr<PodResourcesRecord> res = store->pods().GetPodResources(uid);
    if (!res.ok()) {
      if (res.status().code() == StatusCode::kNotFound) continue;
      return res.status();
    }
    if (res->gpu_model == model) continue;
    res->gpu_model = model;
    res->updated_at = Now();
    changed.push_back(std::move(*res));
  }
  if (changed.empty()) return OkStatus();
  if (!Leading()) return AbortedError("no longer the leader");
  return store->pods().UpsertPodResources(changed);
}

}  // namespace lens::controller
