#include "flow/attribution.h"

#include <sys/stat.h>

#include "core/kernel_file.h"

namespace lens::flow {
namespace {

// The cgroup2 mount point from mountinfo ("... - cgroup2 cgroup2 rw"):
// field 5 is the mount point, the filesystem type follows " - ".
std::string FindCgroup2Mount(const std::string& proc_root) {
  auto text = ReadKernelFile(proc_root + "/self/mountinfo", 4 << 20);
  if (!text.ok()) return "";
  std::string_view rest = *text;
  while (!rest.empty()) {
    size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view()
                                         : rest.substr(eol + 1);
    if (line.find(" - cgroup2 ") == std::string_view::npos) continue;
    size_t pos = 0;
    for (int field = 0; field < 4 && pos != std::string_view::npos; ++field) {
      pos = line.find(' ', pos + 1);
    }
    if (pos == std::string_view::npos) continue;
    size_t end = line.find(' ', pos + 1);
    return std::string(line.substr(pos + 1, end - pos - 1));
  }
  return "";
}

// The "0::<path>" entry of a /proc/<pid>/cgroup text; empty when absent.
std::string UnifiedPath(std::string_view cgroup_file) {
  size_t at = cgroup_file.rfind("0::", 0) == 0 ? 0 : cgroup_file.find("\n0::");
  if (at == std::string_view::npos) return "";
  if (at != 0) ++at;
  std::string_view path = cgroup_file.substr(at + 3);
  return std::string(path.substr(0, path.find('\n')));
}

}  // namespace

void Attribution::Refresh() {
  if (!provider_) return;
  containers_ = provider_();
  owners_.clear();
  for (const ContainerRecord& c : containers_) {
    owners_.push_back({c.container_id, c.pod_namespace, c.pod_name});
  }
  by_pid_.clear();
  IndexCgroups();
}

void Attribution::IndexCgroups() {
  by_cgroup_.clear();
  if (cgroup2_root_.empty()) cgroup2_root_ = FindCgroup2Mount(proc_root_);
  if (cgroup2_root_.empty()) return;
  for (size_t i = 0; i < containers_.size(); ++i) {
    if (containers_[i].pid <= 0) continue;
    auto text = ReadKernelFile(
        proc_root_ + "/" + std::to_string(containers_[i].pid) + "/cgroup",
        64 << 10);
    if (!text.ok()) continue;
    const std::string path = UnifiedPath(*text);
    struct stat st;
    // "/" is the root cgroup, shared by everything outside containers.
    if (path.empty() || path == "/" ||
        ::stat((cgroup2_root_ + path).c_str(), &st) != 0) {
      continue;
    }
    by_cgroup_.emplace(static_cast<uint64_t>(st.st_ino), static_cast<int>(i));
  }
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
  if (!provider_ || owners_.empty()) return;
  const Owner* o = nullptr;
  if (auto it = by_cgroup_.find(flow->cgroup_id); it != by_cgroup_.end()) {
    o = &owners_[it->second];
  } else if (flow->pid != 0) {
    o = OwnerOfPid(flow->pid);
  }
  if (o) {
    flow->container_id = o->container_id;
    flow->pod_namespace = o->pod_namespace;
    flow->pod_name = o->pod_name;
  }
}

}  // namespace lens::flow
