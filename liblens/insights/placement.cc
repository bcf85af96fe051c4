// The placement audit (lens/insights_placement.h): GPUs against the NICs
// they use for RDMA and against their container's CPUs.
#include <algorithm>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "lens/insights_placement.h"

namespace lens {
namespace {

// The node's topology, indexed for lookups.
struct PlacementIndex {
  std::vector<const PciPlacement*> by_bdf;  // sorted by BDF
  std::vector<int> cpu_node;                // CPU -> NUMA node, -1: none
};

PlacementIndex PlacementBuildIndex(const NodeTopology& topology) {
  PlacementIndex index;
  index.by_bdf.reserve(topology.devices.size());
  for (const PciPlacement& d : topology.devices) index.by_bdf.push_back(&d);
  std::sort(index.by_bdf.begin(), index.by_bdf.end(),
            [](const auto* a, const auto* b) { return a->bdf < b->bdf; });
  int max_cpu = -1;
  for (const NumaNodeCpus& n : topology.numa_nodes) {
    if (!n.cpus.empty()) max_cpu = std::max(max_cpu, n.cpus.back());
  }
  index.cpu_node.assign(static_cast<size_t>(max_cpu + 1), -1);
  for (const NumaNodeCpus& n : topology.numa_nodes) {
    for (int c : n.cpus) {
      if (c >= 0) index.cpu_node[static_cast<size_t>(c)] = n.node;
    }
  }
  return index;
}

const PciPlacement* PlacementFind(const PlacementIndex& index,
                                  const std::string& bdf) {
  auto it = std::lower_bound(
      index.by_bdf.begin(), index.by_bdf.end(), bdf,
      [](const PciPlacement* p, const std::string& b) { return p->bdf < b; });
  return it != index.by_bdf.end() && (*it)->bdf == bdf ? *it : nullptr;
}

int PlacementCpuNode(const PlacementIndex& index, int cpu) {
  return cpu >= 0 && static_cast<size_t>(cpu) < index.cpu_node.size()
             ? index.cpu_node[static_cast<size_t>(cpu)]
             : -1;
}

PcieDistance PlacementDistance(const PlacedDevice& a, const PlacedDevice& b) {
  if (!a.topology_known || !b.topology_known) return PcieDistance::kUnknown;
  if (a.root_complex == b.root_complex) {
    // Bridges run from the root port down: a shared first bridge is a
    // shared root port, and with it the switch below it, if any.
    if (!a.bridges.empty() && !b.bridges.empty() &&
        a.bridges.front() == b.bridges.front()) {
      return PcieDistance::kSameSwitch;
    }
    return PcieDistance::kSameRootComplex;
  }
  if (!a.numa_node || !b.numa_node) return PcieDistance::kUnknown;
  return *a.numa_node == *b.numa_node ? PcieDistance::kSameNumaNode
                                      : PcieDistance::kOtherNumaNode;
}

std::string PlacementNodeText(const std::optional<int>& node) {
  return node ? "NUMA node " + std::to_string(*node) : "NUMA node unknown";
}

std::string PlacementNodesText(const std::vector<int>& nodes) {
  std::string out = nodes.size() == 1 ? "NUMA node " : "NUMA nodes ";
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i > 0) out += i + 1 == nodes.size() ? " and " : ", ";
    out += std::to_string(nodes[i]);
  }
  return out;
}

// "GPU S123 (0000:0c:00.0)", or "GPU 0000:0c:00.0" when the key is the BDF.
std::string PlacementName(const PlacedDevice& d) {
  std::string out = d.kind == DeviceKind::kGpu ? "GPU " : "NIC ";
  if (d.device_key.empty() || d.device_key == d.bdf) return out + d.bdf;
  return out + d.device_key + " (" +
         (d.bdf.empty() ? "no PCI address" : d.bdf) + ")";
}

std::string PlacementWhere(const PlacedDevice& d) {
  return PlacementName(d) + " [" + PlacementNodeText(d.numa_node) + ", " +
         d.root_complex + "]";
}

PlacedDevice PlacementPlace(const PlacementIndex& index,
                            const ContainerDeviceRecord& record,
                            const std::string& container_id,
                            std::vector<std::string>* unknowns) {
  PlacedDevice d;
  d.kind = record.kind;
  d.device_key = record.device_key;
  d.bdf = record.bdf;
  d.container_id = container_id;
  const PciPlacement* p = d.bdf.empty() ? nullptr : PlacementFind(index, d.bdf);
  if (p == nullptr) {
    unknowns->push_back(
        PlacementName(d) + ": " +
        (d.bdf.empty() ? "no PCI address" : "not in the node's PCI topology") +
        ", so its placement is unknown");
    return d;
  }
  d.topology_known = true;
  d.numa_node = p->numa_node;
  d.root_complex = p->root_complex;
  d.bridges = p->bridges;
  if (!d.numa_node) {
    unknowns->push_back(PlacementName(d) +
                        ": NUMA node unknown (sysfs numa_node is -1)");
  }
  return d;
}

void PlacementCheckNic(const PlacedDevice& gpu, const PlacedDevice& nic,
                       std::vector<PlacementFlag>* flags) {
  PlacementFlag f;
  if (gpu.numa_node && nic.numa_node && *gpu.numa_node != *nic.numa_node) {
    f.issue = PlacementIssue::kNicOnOtherNumaNode;
    f.message = PlacementWhere(gpu) + " uses " + PlacementWhere(nic) +
                " for RDMA, on another NUMA node: its traffic crosses the "
                "inter-socket link";
  } else if (gpu.topology_known && nic.topology_known &&
             gpu.root_complex != nic.root_complex) {
    f.issue = PlacementIssue::kNicUnderOtherRootComplex;
    f.message = PlacementWhere(gpu) + " uses " + PlacementWhere(nic) +
                " for RDMA, under another root complex: GPUDirect RDMA "
                "traffic goes through the CPU's data fabric";
  } else {
    return;
  }
  f.container_id = gpu.container_id;
  f.gpu_bdfs = {gpu.bdf};
  if (gpu.numa_node) f.gpu_numa_nodes = {*gpu.numa_node};
  f.nic_key = nic.device_key;
  f.nic_bdf = nic.bdf;
  f.nic_numa_node = nic.numa_node;
  f.gpu_root_complex = gpu.root_complex;
  f.nic_root_complex = nic.root_complex;
  flags->push_back(std::move(f));
}

// Picks each GPU's NIC among `nics` (both of one container).
void PlacementPickNics(std::span<PlacedDevice> gpus,
                       std::span<const PlacedDevice> nics,
                       std::vector<PlacementFlag>* flags) {
  if (nics.empty()) return;
  // Tied sets seen so far and how many GPUs took a NIC from each.
  std::vector<std::pair<std::vector<size_t>, size_t>> turns;
  std::vector<size_t> tied;
  for (PlacedDevice& gpu : gpus) {
    PcieDistance best = PcieDistance::kOtherNumaNode;
    tied.clear();
    for (size_t i = 0; i < nics.size(); ++i) {
      const PcieDistance d = PlacementDistance(gpu, nics[i]);
      if (tied.empty() || d < best) {
        best = d;
        tied.assign(1, i);
      } else if (d == best) {
        tied.push_back(i);
      }
    }
    auto turn = std::find_if(turns.begin(), turns.end(),
                             [&](const auto& t) { return t.first == tied; });
    if (turn == turns.end()) turn = turns.insert(turns.end(), {tied, 0});
    const PlacedDevice& nic = nics[tied[turn->second++ % tied.size()]];
    gpu.nic_key = nic.device_key;
    gpu.nic_bdf = nic.bdf;
    gpu.nic_distance = best;
    PlacementCheckNic(gpu, nic, flags);
  }
}

void PlacementSortUnique(std::vector<int>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

// A container's CPUs against its GPUs' NUMA nodes.
struct PlacementCpuSplit {
  std::vector<int> off;        // on nodes without its GPUs
  std::vector<int> off_nodes;  // those nodes
  std::vector<int> nowhere;    // on no listed node
  size_t on = 0;               // how many sit with its GPUs
};

// Splits cs->cpus and fills cs->numa_nodes.
PlacementCpuSplit PlacementSplitCpus(const PlacementIndex& index,
                                     PlacedCpuset* cs) {
  PlacementCpuSplit split;
  for (int c : cs->cpus) {
    const int node = PlacementCpuNode(index, c);
    if (node < 0) {
      split.nowhere.push_back(c);
      continue;
    }
    cs->numa_nodes.push_back(node);
    if (std::binary_search(cs->gpu_numa_nodes.begin(), cs->gpu_numa_nodes.end(),
                           node)) {
      ++split.on;
    } else {
      split.off.push_back(c);
      split.off_nodes.push_back(node);
    }
  }
  PlacementSortUnique(&cs->numa_nodes);
  PlacementSortUnique(&split.off_nodes);
  return split;
}

PlacementFlag PlacementOffCpusFlag(const std::string& who,
                                   const PlacedCpuset& cs,
                                   const PlacementCpuSplit& split,
                                   std::span<const PlacedDevice> gpus) {
  PlacementFlag f;
  f.issue = PlacementIssue::kCpusOffGpuNumaNodes;
  f.container_id = cs.container_id;
  f.partial = split.on > 0;
  for (const PlacedDevice& g : gpus) {
    if (g.numa_node) f.gpu_bdfs.push_back(g.bdf);
  }
  f.gpu_numa_nodes = cs.gpu_numa_nodes;
  f.cpus = split.off;
  f.cpu_numa_nodes = split.off_nodes;
  const std::string off = FormatCpuList(split.off);
  const std::string n = std::to_string(split.off.size());
  f.message = who + ": " +
              (f.partial ? n + " of the " + std::to_string(cs.cpus.size()) +
                               " CPUs of its cpuset " + FormatCpuList(cs.cpus) +
                               ", CPUs " + off + ", are"
                         : "all " + n + " CPUs of its cpuset " + off + " are") +
              " on " + PlacementNodesText(split.off_nodes) +
              ", away from its GPUs on " +
              PlacementNodesText(cs.gpu_numa_nodes);
  return f;
}

PlacementFlag PlacementGpuNodeFlag(const std::string& who,
                                   const PlacedCpuset& cs, int node,
                                   std::span<const PlacedDevice> gpus) {
  PlacementFlag f;
  f.issue = PlacementIssue::kGpusWithoutLocalCpus;
  f.container_id = cs.container_id;
  std::string names;
  for (const PlacedDevice& g : gpus) {
    if (g.numa_node != node) continue;
    f.gpu_bdfs.push_back(g.bdf);
    names += (names.empty() ? "" : ", ") + PlacementName(g);
  }
  f.gpu_numa_nodes = {node};
  f.cpus = cs.cpus;
  f.cpu_numa_nodes = cs.numa_nodes;
  f.message = who + ": " + names + " on NUMA node " + std::to_string(node) +
              (f.gpu_bdfs.size() == 1 ? " has" : " have") +
              " none of its CPUs (cpuset " + FormatCpuList(cs.cpus) +
              " is on " + PlacementNodesText(cs.numa_nodes) + ")";
  return f;
}

// The CPU side of one container: its cpuset against its GPUs' nodes.
void PlacementCheckCpus(const PlacementIndex& index,
                        const PlacementContainer& container,
                        std::span<const PlacedDevice> gpus, PodPlacement* out) {
  PlacedCpuset cs;
  cs.container_id = container.container_id;
  cs.container_name = container.container_name;
  const std::string who = "container " + (container.container_name.empty()
                                              ? container.container_id
                                              : container.container_name);
  for (const PlacedDevice& g : gpus) {
    if (g.numa_node) cs.gpu_numa_nodes.push_back(*g.numa_node);
  }
  PlacementSortUnique(&cs.gpu_numa_nodes);
  cs.known = container.cpus.has_value();
  if (cs.known) cs.cpus = *container.cpus;
  const PlacementCpuSplit split = PlacementSplitCpus(index, &cs);
  if (!cs.known) {
    out->unknowns.push_back(who +
                            ": cpuset unknown, so CPU placement is "
                            "not checked");
  } else if (cs.gpu_numa_nodes.empty()) {
    out->unknowns.push_back(who +
                            ": the NUMA nodes of its GPUs are unknown, "
                            "so CPU placement is not checked");
  } else {
    if (!split.nowhere.empty()) {
      out->unknowns.push_back(who + ": CPUs " + FormatCpuList(split.nowhere) +
                              " are on no NUMA node the node lists");
    }
    if (!split.off.empty()) {
      out->flags.push_back(PlacementOffCpusFlag(who, cs, split, gpus));
    }
    // Only when some CPUs are with the GPUs: a cpuset wholly elsewhere is
    // the flag above already.
    for (int node : split.on > 0 ? cs.gpu_numa_nodes : std::vector<int>{}) {
      if (!std::binary_search(cs.numa_nodes.begin(), cs.numa_nodes.end(),
                              node)) {
        out->flags.push_back(PlacementGpuNodeFlag(who, cs, node, gpus));
      }
    }
  }
  out->cpusets.push_back(std::move(cs));
}

bool PlacementDeviceLess(const ContainerDeviceRecord* a,
                         const ContainerDeviceRecord* b) {
  return std::tie(a->bdf, a->device_key) < std::tie(b->bdf, b->device_key);
}

// Sorts one kind of a container's records by BDF and key, drops repeats,
// and places them.
void PlacementPlaceAll(const PlacementIndex& index,
                       std::vector<const ContainerDeviceRecord*>* records,
                       const std::string& container_id,
                       std::vector<PlacedDevice>* placed,
                       std::vector<std::string>* unknowns) {
  std::sort(records->begin(), records->end(), PlacementDeviceLess);
  records->erase(std::unique(records->begin(), records->end(),
                             [](const auto* a, const auto* b) {
                               return !PlacementDeviceLess(a, b) &&
                                      !PlacementDeviceLess(b, a);
                             }),
                 records->end());
  for (const ContainerDeviceRecord* r : *records) {
    placed->push_back(PlacementPlace(index, *r, container_id, unknowns));
  }
}

void PlacementAuditContainer(const PlacementIndex& index,
                             const PlacementContainer& c,
                             PodPlacement* report) {
  std::vector<const ContainerDeviceRecord*> gpu_records, nic_records;
  for (const ContainerDeviceRecord& d : c.devices) {
    if (d.kind == DeviceKind::kGpu) gpu_records.push_back(&d);
    if (d.kind == DeviceKind::kRdma) nic_records.push_back(&d);
  }
  if (gpu_records.empty()) return;
  const size_t gpu_begin = report->gpus.size();
  const size_t nic_begin = report->nics.size();
  PlacementPlaceAll(index, &gpu_records, c.container_id, &report->gpus,
                    &report->unknowns);
  PlacementPlaceAll(index, &nic_records, c.container_id, &report->nics,
                    &report->unknowns);
  // Spans into report->gpus/nics: nothing below appends to those.
  std::span<PlacedDevice> gpus(report->gpus.begin() + gpu_begin,
                               report->gpus.end());
  std::span<const PlacedDevice> nics(report->nics.begin() + nic_begin,
                                     report->nics.end());
  PlacementPickNics(gpus, nics, &report->flags);
  PlacementCheckCpus(index, c, gpus, report);
}

}  // namespace

std::string_view ToString(PcieDistance distance) {
  switch (distance) {
    case PcieDistance::kSameSwitch:
      return "same-switch";
    case PcieDistance::kSameRootComplex:
      return "same-root-complex";
    case PcieDistance::kSameNumaNode:
      return "same-numa-node";
    case PcieDistance::kUnknown:
      return "unknown";
    case PcieDistance::kOtherNumaNode:
      return "other-numa-node";
  }
  return "unknown";
}

std::string_view ToString(PlacementIssue issue) {
  switch (issue) {
    case PlacementIssue::kNicOnOtherNumaNode:
      return "nic-on-other-numa-node";
    case PlacementIssue::kNicUnderOtherRootComplex:
      return "nic-under-other-root-complex";
    case PlacementIssue::kCpusOffGpuNumaNodes:
      return "cpus-off-gpu-numa-nodes";
    case PlacementIssue::kGpusWithoutLocalCpus:
      return "gpus-without-local-cpus";
  }
  return "unknown";
}

std::vector<PodPlacement> AuditPlacement(const NodeTopology& topology,
                                         std::span<const PlacementPod> pods) {
  const PlacementIndex index = PlacementBuildIndex(topology);
  std::vector<PodPlacement> out;
  for (const PlacementPod& pod : pods) {
    PodPlacement report;
    report.pod_uid = pod.pod_uid;
    report.pod_namespace = pod.pod_namespace;
    report.pod_name = pod.pod_name;
    for (const PlacementContainer& c : pod.containers) {
      PlacementAuditContainer(index, c, &report);
    }
    if (!report.gpus.empty()) out.push_back(std::move(report));
  }
  return out;
}

}  // namespace lens
