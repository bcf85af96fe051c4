#include "flow/attribution.h"

#include "core/kernel_file.h"

namespace lens::flow {

void Attribution::Refresh() {
  if (!provider_) return;
  containers_ = provider_();
  owners_.clear();
  for (const ContainerRecord& c : containers_) {
    owners_.push_back({c.container_id, c.pod_namespace, c.pod_name});
  }
  by_pid_.clear();
}

const Attribution::Owner* Attribution::OwnerOfPid(uint32_t pid) {
  if (auto it = by_pid_.find(pid); it != by_pid_.end()) {
    return it->second >= 0 ? &owners_[it->second] : nullptr;
  }
  if (by_pid_.size() >= kMaxPids) by_pid_.clear();
  int found = -1;
  auto text = ReadKernelFile(proc_root_ + "/" + std::to_string(pid) + "/cgroup",
                             64 << 10);
  if (text.ok()) {
    for (size_t i = 0; i < owners_.size() && found < 0; ++i) {
      const std::string& id = owners_[i].container_id;
      if (id.size() >= 12 && text->find(id) != std::string::npos) {
        found = static_cast<int>(i);
      }
    }
  }
  by_pid_[pid] = found;
  return found >= 0 ? &owners_[found] : nullptr;
}

void Attribution::Attribute(TcpFlow* flow) {
  if (!provider_ || flow->pid == 0 || owners_.empty()) return;
  if (const Owner* o = OwnerOfPid(flow->pid)) {
    flow->container_id = o->container_id;
    flow->pod_namespace = o->pod_namespace;
    flow->pod_name = o->pod_name;
  }
}

}  // namespace lens::flow
