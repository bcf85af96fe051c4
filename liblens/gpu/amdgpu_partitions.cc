// Which KFD topology nodes belong to which PCI GPU, and in what partition
// order. See MatchKfdNodes in amdgpu_sysfs.h for the rules and their sources.
#include <algorithm>
#include <tuple>

#include "gpu/amdgpu_sysfs.h"

namespace lens {
namespace {

// Bus and device of a PCI devid / KFD location_id, without the function bits
// (where the low-bit encoding puts the partition number) and without bits
// 16.. (where the high-bit encoding puts it).
constexpr uint64_t kBusDeviceMask = 0xfff8;

// Index of the GPU whose partition 0 (or only) node `node` is, or -1.
int FindPrimary(const std::vector<AmdKfdKey>& gpus, const KfdNode& node) {
  std::optional<uint64_t> minor = node.Property("drm_render_minor");
  std::optional<uint64_t> domain = node.Property("domain");
  std::optional<uint64_t> location = node.Property("location_id");
  for (size_t i = 0; i < gpus.size(); ++i) {
    const AmdKfdKey& gpu = gpus[i];
    if (minor && *minor != 0 && gpu.render_minor) {
      if (*minor == *gpu.render_minor) return static_cast<int>(i);
      continue;
    }
    // No render minor on one side: fall back to the exact PCI address.
    if (domain && location && *domain == gpu.pci_domain &&
        *location == gpu.pci_devid) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// Index of the GPU a further partition node belongs to, or -1 when none or
// more than one GPU fits.
int FindOwner(const std::vector<AmdKfdKey>& gpus,
              const std::vector<std::vector<const KfdNode*>>& primaries,
              const KfdNode& node) {
  std::optional<uint64_t> domain = node.Property("domain");
  std::optional<uint64_t> location = node.Property("location_id");
  std::optional<uint64_t> unique_id = node.Property("unique_id");
  if (!domain || !location) return -1;
  int owner = -1;
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (primaries[i].empty() || gpus[i].pci_domain != *domain) continue;
    if ((*location & kBusDeviceMask) != (gpus[i].pci_devid & kBusDeviceMask)) {
      continue;
    }
    std::optional<uint64_t> primary_unique_id =
        primaries[i].front()->Property("unique_id");
    if (unique_id && *unique_id != 0 && primary_unique_id &&
        *primary_unique_id != *unique_id) {
      continue;
    }
    if (owner >= 0) return -1;  // ambiguous
    owner = static_cast<int>(i);
  }
  return owner;
}

// A partition's DRM nodes belong to an amdgpu_xcp platform device; KFD
// gives its render minor, and the card sits beside the render node.
void FindPartitionNodes(const HostRoots& roots, uint64_t minor, GpuInfo* info) {
  const std::string render = "renderD" + std::to_string(minor);
  StatusOr<std::vector<std::string>> siblings =
      ListKernelDir(roots.sysfs + "/class/drm/" + render + "/device/drm");
  if (!siblings.ok()) return;
  info->drm_render = render;
  for (const std::string& name : *siblings) {
    if (name.size() > 4 && name.compare(0, 4, "card") == 0 &&
        name.find('-') == std::string::npos) {
      info->drm_card = name;
    }
  }
}

// Partition `partition_id` (1..) of `physical`, described by KFD `node`.
AmdGpuDevice MakePartition(const HostRoots& roots, const GpuInfo& physical,
                           const KfdNode& node, int partition_id) {
  AmdGpuDevice out;
  out.info = physical;
  out.info.partition_id = partition_id;
  out.info.kfd_gpu_id = node.gpu_id;
  // Device budgets, given once on partition 0 so that sums stay right.
  out.info.vram_total_bytes.reset();
  out.info.power_cap_watts.reset();
  out.info.drm_card.clear();
  out.info.drm_render.clear();
  if (std::optional<uint64_t> minor = node.Property("drm_render_minor")) {
    FindPartitionNodes(roots, *minor, &out.info);
  }
  out.reports_device_values = false;
  return out;
}

// The KFD topology, or nullopt when this host does not expose it.
StatusOr<std::optional<KfdTopology>> ReadTopologyIfPresent(
    const HostRoots& roots) {
  StatusOr<KfdTopology> topology = ReadKfdTopology(roots.sysfs);
  if (topology.ok()) return std::optional<KfdTopology>(std::move(*topology));
  switch (topology.status().code()) {
    case StatusCode::kNotFound:
    case StatusCode::kPermissionDenied:
      return std::optional<KfdTopology>();
    case StatusCode::kInvalidArgument:
      return topology.status();
    default:
      return UnavailableError("amdgpu-sysfs: KFD topology: " +
                              topology.status().message());
  }
}

}  // namespace

std::vector<std::vector<const KfdNode*>> MatchKfdNodes(
    const std::vector<AmdKfdKey>& gpus, const std::vector<KfdNode>& nodes) {
  std::vector<std::vector<const KfdNode*>> out(gpus.size());
  std::vector<const KfdNode*> partitions;
  for (const KfdNode& node : nodes) {
    if (!node.is_gpu()) continue;
    int primary = FindPrimary(gpus, node);
    if (primary >= 0 && out[primary].empty()) {
      out[primary].push_back(&node);
    } else {
      partitions.push_back(&node);
    }
  }
  for (const KfdNode* node : partitions) {
    int owner = FindOwner(gpus, out, *node);
    if (owner >= 0) out[owner].push_back(node);
  }
  // Both encodings grow location_id with the partition number.
  for (std::vector<const KfdNode*>& list : out) {
    if (list.size() < 3) continue;
    std::stable_sort(list.begin() + 1, list.end(),
                     [](const KfdNode* a, const KfdNode* b) {
                       return a->Property("location_id").value_or(0) <
                              b->Property("location_id").value_or(0);
                     });
  }
  return out;
}

StatusOr<std::vector<AmdGpuDevice>> ScanAmdGpus(const HostRoots& roots) {
  LENS_ASSIGN_OR_RETURN(std::vector<AmdPhysicalGpu> physical,
                        ScanPhysicalAmdGpus(roots));
  std::vector<AmdGpuDevice> out;
  if (physical.empty()) return out;
  LENS_ASSIGN_OR_RETURN(std::optional<KfdTopology> topology,
                        ReadTopologyIfPresent(roots));
  std::vector<AmdKfdKey> keys;
  for (const AmdPhysicalGpu& gpu : physical) keys.push_back(gpu.key);
  std::vector<std::vector<const KfdNode*>> nodes =
      topology ? MatchKfdNodes(keys, topology->nodes)
               : std::vector<std::vector<const KfdNode*>>(physical.size());
  for (size_t i = 0; i < physical.size(); ++i) {
    AmdGpuDevice& device = physical[i].device;
    if (!nodes[i].empty()) device.info.kfd_gpu_id = nodes[i][0]->gpu_id;
    const GpuInfo info = device.info;
    out.push_back(std::move(device));
    for (size_t k = 1; k < nodes[i].size(); ++k) {
      out.push_back(
          MakePartition(roots, info, *nodes[i][k], static_cast<int>(k)));
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const AmdGpuDevice& a, const AmdGpuDevice& b) {
                     return std::tie(a.info.bdf, a.info.partition_id) <
                            std::tie(b.info.bdf, b.info.partition_id);
                   });
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].info.index = static_cast<int>(i);
  }
  return out;
}

}  // namespace lens
