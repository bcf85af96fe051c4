// AuditNodePlacement: the node agent's containers grouped by pod, their
// cpusets and devices' topology read from the host, then audited.
#include <map>
#include <set>

#include "lens/insights_placement.h"

namespace lens {

StatusOr<std::vector<PodPlacement>> AuditNodePlacement(
    const HostRoots& roots, std::span<const ContainerRecord> containers) {
  std::map<std::string, PlacementPod> pods;  // by pod uid (or container id)
  std::set<std::string> bdfs;
  for (const ContainerRecord& c : containers) {
    if (c.state != ContainerState::kRunning &&
        c.state != ContainerState::kPaused) {
      continue;
    }
    bool has_gpu = false;
    for (const ContainerDeviceRecord& d : c.devices) {
      has_gpu |= d.kind == DeviceKind::kGpu;
    }
    if (!has_gpu) continue;
    const std::string key = c.pod_uid.empty() ? c.container_id : c.pod_uid;
    PlacementPod& pod = pods[key];
    pod.pod_uid = c.pod_uid;
    pod.pod_namespace = c.pod_namespace;
    pod.pod_name = c.pod_name;
    PlacementContainer pc;
    pc.container_id = c.container_id;
    pc.container_name = c.container_name;
    pc.devices = c.devices;
    for (const ContainerDeviceRecord& d : c.devices) {
      if (!d.bdf.empty()) bdfs.insert(d.bdf);
    }
    if (c.pid > 0) {
      StatusOr<std::vector<int>> cpus = ReadProcessCpuset(roots, c.pid);
      if (cpus.ok()) pc.cpus = std::move(*cpus);  // else: unknown, reported
    }
    pod.containers.push_back(std::move(pc));
  }
  const std::vector<std::string> list(bdfs.begin(), bdfs.end());
  LENS_ASSIGN_OR_RETURN(NodeTopology topology, ReadNodeTopology(roots, list));
  std::vector<PlacementPod> all;
  all.reserve(pods.size());
  for (auto& [key, pod] : pods) all.push_back(std::move(pod));
  return AuditPlacement(topology, all);
}

}  // namespace lens
