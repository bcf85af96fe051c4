// Which container a flow belongs to: the socket's process, found in a
// container's cgroup. containerd's cgroup paths contain the container id in
// every driver ("/k8s.io/<id>" with cgroupfs, "cri-containerd-<id>.scope"
// with systemd) and on cgroup v1 and v2, so the id is searched for in
// /proc/<pid>/cgroup.
#ifndef LENS_FLOW_ATTRIBUTION_H_
#define LENS_FLOW_ATTRIBUTION_H_

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "lens/flow.h"
#include "lens/store_types.h"

namespace lens::flow {

class Attribution {
 public:
  using Provider = std::function<std::vector<ContainerRecord>()>;
  // `provider` may be empty (no attribution). Not thread-safe: one drain
  // thread uses it.
  Attribution(Provider provider, std::string proc_root)
      : provider_(std::move(provider)), proc_root_(std::move(proc_root)) {}

  // Fetches the current containers (once per drain).
  void Refresh();
  // Fills container_id, pod_namespace and pod_name of `flow` when its pid
  // runs in a known container.
  void Attribute(TcpFlow* flow);

 private:
  struct Owner {
    std::string container_id, pod_namespace, pod_name;
  };
  const Owner* OwnerOfPid(uint32_t pid);

  Provider provider_;
  std::string proc_root_;
  std::vector<ContainerRecord> containers_;
  // pid -> index into containers_ (-1: none); cleared on Refresh and when
  // it reaches kMaxPids.
  std::unordered_map<uint32_t, int> by_pid_;
  std::vector<Owner> owners_;
  static constexpr size_t kMaxPids = 4096;
};

}  // namespace lens::flow

#endif  // LENS_FLOW_ATTRIBUTION_H_
