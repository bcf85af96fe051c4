// The placement audit's readers: PCI functions' NUMA node and place in the
// PCIe tree, NUMA nodes' CPUs, a process's cpuset cgroup, all from sysfs
// and procfs under HostRoots. Layouts: the kernel's
// Documentation/ABI/testing/sysfs-bus-pci (numa_node, -1 when unknown),
// stable/sysfs-devices-node (node<N>/cpulist), cgroup-v2.rst
// (cpuset.cpus.effective) and cgroup-v1/cpusets.rst (effective_cpus, with
// the controller's "cpuset." prefix); the root bus device's name "pci%04x:%02x"
// is set in drivers/pci/probe.c (pci_register_host_bridge).
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/kernel_file.h"
#include "lens/insights_placement.h"

namespace lens {
namespace {

// The kernel's NR_CPUS tops out at 8192; anything far above is garbage.
constexpr int kPlacementMaxCpu = 65535;

bool PlacementIsHex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
           (c >= 'A' && c <= 'F');
  });
}

// "dddd:bb:dd.f" (the domain may be longer: VMD domains are 5 digits).
bool PlacementIsBdf(std::string_view s) {
  const size_t c1 = s.find(':');
  if (c1 == std::string_view::npos || c1 < 4 || c1 > 8) return false;
  std::string_view rest = s.substr(c1 + 1);
  return rest.size() == 7 && rest[2] == ':' && rest[5] == '.' &&
         PlacementIsHex(s.substr(0, c1)) && PlacementIsHex(rest.substr(0, 2)) &&
         PlacementIsHex(rest.substr(3, 2)) && PlacementIsHex(rest.substr(6, 1));
}

// "pci0000:00": a root bus (host bridge) device.
bool PlacementIsRootBus(std::string_view s) {
  if (s.substr(0, 3) != "pci") return false;
  s.remove_prefix(3);
  const size_t colon = s.find(':');
  return colon != std::string_view::npos && colon >= 4 &&
         PlacementIsHex(s.substr(0, colon)) && s.size() - colon == 3 &&
         PlacementIsHex(s.substr(colon + 1));
}

std::string PlacementLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

StatusOr<int> PlacementParseCpu(std::string_view s, std::string_view item) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty() || v < 0) {
    return InvalidArgumentError("CPU list item \"" + std::string(item) +
                                "\": not a CPU number");
  }
  if (v > kPlacementMaxCpu) {
    return InvalidArgumentError("CPU list item \"" + std::string(item) +
                                "\": CPU number above 65535");
  }
  return v;
}

Status PlacementWithPath(const Status& st, const std::string& path) {
  return Status(st.code(), path + ": " + std::string(st.message()));
}

}  // namespace

StatusOr<std::vector<int>> ParseCpuList(std::string_view text) {
  text = TrimKernelValue(text);
  std::vector<int> cpus;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view()
                                           : text.substr(comma + 1);
    const size_t dash = item.find('-');
    LENS_ASSIGN_OR_RETURN(int first,
                          PlacementParseCpu(item.substr(0, dash), item));
    int last = first;
    if (dash != std::string_view::npos) {
      LENS_ASSIGN_OR_RETURN(last,
                            PlacementParseCpu(item.substr(dash + 1), item));
      if (last < first) {
        return InvalidArgumentError("CPU list item \"" + std::string(item) +
                                    "\": range ends below its start");
      }
    }
    for (int c = first; c <= last; ++c) cpus.push_back(c);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(std::span<const int> cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out.push_back(',');
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

StatusOr<PciPlacement> ReadPciPlacement(const HostRoots& roots,
                                        std::string_view bdf_in) {
  if (!PlacementIsBdf(bdf_in)) {
    return InvalidArgumentError("\"" + std::string(bdf_in) +
                                "\" is not a PCI address (dddd:bb:dd.f)");
  }
  PciPlacement out;
  out.bdf = PlacementLower(bdf_in);
  const std::string dir = roots.sysfs + "/bus/pci/devices/" + out.bdf;
  LENS_ASSIGN_OR_RETURN(std::string target, ReadKernelLink(dir));
  // devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:00.0/0000:03:00.0
  std::vector<std::string_view> parts;
  for (std::string_view rest = target; !rest.empty();) {
    const size_t slash = rest.find('/');
    std::string_view part = rest.substr(0, slash);
    if (!part.empty()) parts.push_back(part);
    rest = slash == std::string_view::npos ? std::string_view()
                                           : rest.substr(slash + 1);
  }
  size_t root = parts.size();
  for (size_t i = 0; i < parts.size(); ++i) {
    if (PlacementIsRootBus(parts[i])) root = i;
  }
  if (root == parts.size() || parts.back() != out.bdf) {
    return InvalidArgumentError(dir + " -> " + target +
                                ": no pci<domain>:<bus> root bus above " +
                                out.bdf);
  }
  out.root_complex = std::string(parts[root]);
  for (size_t i = root + 1; i + 1 < parts.size(); ++i) {
    if (!PlacementIsBdf(parts[i])) {
      return InvalidArgumentError(dir + " -> " + target + ": \"" +
                                  std::string(parts[i]) +
                                  "\" between the root bus and the "
                                  "device is not a PCI bridge");
    }
    out.bridges.emplace_back(parts[i]);
  }
  const std::string numa_path = dir + "/numa_node";
  auto numa = ReadKernelValue(numa_path);
  if (numa.ok()) {
    LENS_ASSIGN_OR_RETURN(int64_t node, ParseKernelInt64(*numa, numa_path));
    if (node >= 0) out.numa_node = static_cast<int>(node);
  } else if (numa.status().code() != StatusCode::kNotFound) {
    return numa.status();
  }
  return out;
}

StatusOr<std::vector<NumaNodeCpus>> ReadNumaNodeCpus(const HostRoots& roots) {
  const std::string dir = roots.sysfs + "/devices/system/node";
  auto names = ListKernelDir(dir);
  if (!names.ok() && names.status().code() == StatusCode::kNotFound) {
    return std::vector<NumaNodeCpus>{};
  }
  if (!names.ok()) return names.status();
  std::vector<NumaNodeCpus> out;
  for (const std::string& name : *names) {
    std::string_view digits = std::string_view(name).substr(4);
    if (name.rfind("node", 0) != 0 || digits.empty() ||
        !std::all_of(digits.begin(), digits.end(),
                     [](char c) { return c >= '0' && c <= '9'; })) {
      continue;  // has_cpu, online, possible, power, uevent, ...
    }
    const std::string path = dir + "/" + name + "/cpulist";
    LENS_ASSIGN_OR_RETURN(std::string text, ReadKernelFile(path, 64 << 10));
    auto cpus = ParseCpuList(text);
    if (!cpus.ok()) return PlacementWithPath(cpus.status(), path);
    NumaNodeCpus node;
    std::from_chars(digits.data(), digits.data() + digits.size(), node.node);
    node.cpus = std::move(*cpus);
    out.push_back(std::move(node));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.node < b.node; });
  return out;
}

StatusOr<NodeTopology> ReadNodeTopology(const HostRoots& roots,
                                        std::span<const std::string> bdfs) {
  NodeTopology out;
  std::set<std::string> seen;
  for (const std::string& bdf : bdfs) {
    if (bdf.empty() || !seen.insert(PlacementLower(bdf)).second) continue;
    auto placement = ReadPciPlacement(roots, bdf);
    if (!placement.ok() && placement.status().code() == StatusCode::kNotFound) {
      continue;
    }
    if (!placement.ok()) return placement.status();
    out.devices.push_back(std::move(*placement));
  }
  LENS_ASSIGN_OR_RETURN(out.numa_nodes, ReadNumaNodeCpus(roots));
  return out;
}

namespace {

// The cgroup below `base` whose path ends with `suffix` ("/a/b.scope"),
// relative to `base`: breadth first, at most 8 levels and 50,000
// directories. NotFound when none does.
StatusOr<std::string> PlacementFindCgroup(const std::string& base,
                                          std::string_view suffix) {
  if (suffix.empty() || suffix[0] != '/' ||
      suffix.find("/..") != std::string_view::npos) {
    return InvalidArgumentError("cgroup path \"" + std::string(suffix) +
                                "\" is not a path below a common ancestor");
  }
  std::vector<std::string> level = {""};
  size_t seen = 0;
  for (int depth = 0; depth < 8 && !level.empty(); ++depth) {
    std::vector<std::string> next;
    for (const std::string& rel : level) {
      if (rel.size() >= suffix.size() && rel.ends_with(suffix)) return rel;
      std::error_code ec;
      for (const auto& e :
           std::filesystem::directory_iterator(base + rel, ec)) {
        if (++seen > 50000) break;
        std::error_code dir_ec;
        if (e.is_directory(dir_ec) && !e.is_symlink(dir_ec)) {
          next.push_back(rel + "/" + e.path().filename().string());
        }
      }
    }
    level = std::move(next);
  }
  return NotFoundError(base + ": no cgroup ending in " + std::string(suffix));
}

}  // namespace

StatusOr<std::vector<int>> ReadProcessCpuset(const HostRoots& roots,
                                             int64_t pid) {
  const std::string cgroup_file =
      roots.procfs + "/" + std::to_string(pid) + "/cgroup";
  LENS_ASSIGN_OR_RETURN(std::string text,
                        ReadKernelFile(cgroup_file, 64 << 10));
  // cgroup.controllers exists only at the root of a cgroup v2 mount; a v1
  // or hybrid host has a tmpfs of per-controller mounts there instead, the
  // cpuset one at cpuset/ with cpuset.effective_cpus (Linux 4.2+) in each
  // cgroup.
  std::string base = roots.sysfs + "/fs/cgroup";
  const bool v2 = ReadKernelFile(base + "/cgroup.controllers").ok();
  if (!v2) base += "/cpuset";
  const std::string_view leaf =
      v2 ? "/cpuset.cpus.effective" : "/cpuset.effective_cpus";
  std::string path;
  bool found = false;
  for (std::string_view rest = text; !rest.empty() && !found;) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest =
        nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    // hierarchy-ID:controller-list:cgroup-path (cgroups(7)).
    const size_t c1 = line.find(':');
    const size_t c2 =
        c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    bool wanted = v2 && line.substr(0, c1) == "0" && controllers.empty();
    for (std::string_view cs = controllers; !v2 && !cs.empty();) {
      const size_t comma = cs.find(',');
      wanted |= cs.substr(0, comma) == "cpuset";
      cs = comma == std::string_view::npos ? std::string_view()
                                           : cs.substr(comma + 1);
    }
    if (wanted) {
      path = std::string(line.substr(c2 + 1));
      found = true;
    }
  }
  if (!found) {
    return NotFoundError(cgroup_file + ": no " +
                         (v2 ? "cgroup v2 (\"0::\")" : "cgroup v1 cpuset") +
                         " line for " + base);
  }
  // Read from a cgroup namespace of its own (an agent not in the host's),
  // another namespace's path starts with "/.." up to their common ancestor:
  // "/../../kubepods-podZ.slice/cri-containerd-W.scope". The rest is found
  // below the mount by its end (the pod uid and container id make it
  // unique).
  if (path.starts_with("/..")) {
    std::string_view rest = path;
    while (rest.starts_with("/..")) rest.remove_prefix(3);
    LENS_ASSIGN_OR_RETURN(path, PlacementFindCgroup(base, rest));
  }
  if (path.empty() || path[0] != '/' || path.find("/..") != std::string::npos) {
    return InvalidArgumentError(cgroup_file + ": cgroup path \"" + path +
                                "\" is not an absolute path");
  }
  while (!path.empty() && path.back() == '/') path.pop_back();
  // Without the cpuset controller enabled down to the process's cgroup
  // (v2), the nearest ancestor's cpuset applies.
  for (;;) {
    const std::string file = base + path + std::string(leaf);
    auto value = ReadKernelFile(file, 64 << 10);
    if (value.ok()) {
      auto cpus = ParseCpuList(*value);
      if (!cpus.ok()) return PlacementWithPath(cpus.status(), file);
      return cpus;
    }
    if (value.status().code() != StatusCode::kNotFound) return value.status();
    if (path.empty()) {
      return NotFoundError(base + ": no " + std::string(leaf.substr(1)) +
                           " from the process's cgroup up to the root (is "
                           "the cpuset controller mounted?)");
    }
    path.resize(path.rfind('/'));
  }
}

}  // namespace lens
