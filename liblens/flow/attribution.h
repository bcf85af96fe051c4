// Which container a flow belongs to. First by the socket's cgroup v2 id: the
// id of a cgroup is its directory's inode number on the cgroup2 mount, so
// each container's cgroup (its init process's "0::" line) is stat'ed once
// per refresh. Then, for sockets whose cgroup says nothing (cgroup v1 hosts,
// the root cgroup), by the socket's process: containerd's cgroup paths
// contain the container id in every driver ("/k8s.io/<id>" with cgroupfs,
// "cri-containerd-<id>.scope" with systemd) and on v1 and v2, so the id is
// searched for in /proc/<pid>/cgroup.
#ifndef LENS_FLOW_ATTRIBUTION_H_
#define LENS_FLOW_ATTRIBUTION_H_

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "lens/flow.h"
#include "lens/model.h"

namespace lens::flow {

class Attribution {
 public:
  using Provider = std::function<std::vector<ContainerRecord>()>;
  // `provider` may be empty (no attribution). Not thread-safe: one drain
  // thread uses it.
  // `cgroup2_root`: where the cgroup v2 hierarchy is mounted; empty: found
  // in <proc_root>/self/mountinfo.
  Attribution(Provider provider, std::string proc_root,
              std::string cgroup2_root = "")
      : provider_(std::move(provider)),
        proc_root_(std::move(proc_root)),
        cgroup2_root_(std::move(cgroup2_root)) {}

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

  void IndexCgroups();

  Provider provider_;
  std::string proc_root_;
  std::string cgroup2_root_;
  // cgroup v2 id -> index into owners_.
  std::unordered_map<uint64_t, int> by_cgroup_;
  std::vector<ContainerRecord> containers_;
  // pid -> index into containers_ (-1: none); cleared on Refresh and when
  // it reaches kMaxPids.
  std::unordered_map<uint32_t, int> by_pid_;
  std::vector<Owner> owners_;
  static constexpr size_t kMaxPids = 4096;
};

}  // namespace lens::flow

#endif  // LENS_FLOW_ATTRIBUTION_H_
