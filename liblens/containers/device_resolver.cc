// Device numbers used here: DRM major 226 with primary minors 0..127 and
// render minors 128..255 (drm_drv.c); uverbs major 231, minors 192..223 for
// uverbs0..31, a dynamic major beyond (drivers/infiniband/core/
// uverbs_main.c); NVIDIA major 195 with nvidiactl 255 and nvidia-modeset 254
// (nv.c NV_MAJOR_DEVICE_NUMBER, NV_MINOR_DEVICE_NUMBER_*). The NVIDIA
// procfs file is nv_procfs_read_gpu_info() of kernel-open/nvidia/
// nv-procfs.c: "Bus Location: \t %04x:%02x:%02x.%x", "Device Minor: \t %u".
#include "containers/device_resolver.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "containers/device_ids.h"
#include "core/kernel_file.h"

namespace lens::containers {
namespace {

// ---- device nodes -------------------------------------------------------

// The kernel's name of a node under /dev ("dri/renderD128",
// "infiniband/uverbs0", "nvidia0") from the fixed majors; "" for others.
std::string NameFromNumbers(int64_t major, int64_t minor) {
  if (major == 226 && minor >= 0 && minor < 128) {
    return "dri/card" + std::to_string(minor);
  }
  if (major == 226 && minor >= 128 && minor < 256) {
    return "dri/renderD" + std::to_string(minor);
  }
  if (major == 231 && minor >= 192 && minor < 224) {
    return "infiniband/uverbs" + std::to_string(minor - 192);
  }
  if (major == 195 && minor >= 0 && minor < 254) {
    return "nvidia" + std::to_string(minor);
  }
  return "";
}

// DEVNAME of sysfs dev/char/<major>:<minor>/uevent: the kernel's own name
// for the node, whatever its major (dynamic majors included).
std::optional<std::string> SysfsDevName(const std::string& sysfs, int64_t major,
                                        int64_t minor) {
  StatusOr<std::string> uevent =
      ReadKernelFile(sysfs + "/dev/char/" + std::to_string(major) + ":" +
                         std::to_string(minor) + "/uevent",
                     size_t{64} << 10);
  if (!uevent.ok()) return std::nullopt;
  auto devname = FieldValue(*uevent, "DEVNAME", '=');
  if (!devname) return std::nullopt;
  return std::string(*devname);
}

// The host's name of a character device node of the spec, "" when unknown.
std::string HostDevName(const OciDeviceNode& node, const std::string& sysfs) {
  if (node.type != "c" && node.type != "u") return "";
  if (node.major && node.minor) {
    if (auto devname = SysfsDevName(sysfs, *node.major, *node.minor)) {
      return *devname;
    }
    return NameFromNumbers(*node.major, *node.minor);
  }
  std::string_view path = node.path;
  return path.starts_with("/dev/") ? std::string(path.substr(5)) : "";
}

// ---- inventory lookups ----------------------------------------------------

// The lowest partition at `bdf` (the PCI function's own DRM nodes).
const GpuInfo* GpuAtBdf(const DeviceInventory& inventory, std::string_view bdf,
                        std::optional<GpuVendor> vendor = std::nullopt) {
  const std::string want = NormalizeBdf(bdf);
  const GpuInfo* best = nullptr;
  for (const GpuInfo& g : inventory.gpus) {
    if (NormalizeBdf(g.bdf) != want || (vendor && g.vendor != *vendor)) {
      continue;
    }
    if (best == nullptr || g.partition_id < best->partition_id) best = &g;
  }
  return best;
}

const GpuInfo* GpuWithDrmNode(const DeviceInventory& inventory,
                              std::string_view name) {
  for (const GpuInfo& g : inventory.gpus) {
    if (g.drm_card == name || g.drm_render == name) return &g;
  }
  return nullptr;
}

ContainerDeviceRecord GpuRecord(const GpuInfo& gpu,
                                const DeviceInventory& inventory,
                                std::string_view source) {
  return {DeviceKind::kGpu, GpuDeviceKey(gpu, inventory), gpu.bdf,
          std::string(source)};
}

ContainerDeviceRecord RdmaRecord(const RdmaDevice& device,
                                 std::string_view source) {
  return {DeviceKind::kRdma, device.name, device.bdf, std::string(source)};
}

// Minor -> BDF of every GPU under procfs driver/nvidia/gpus.
std::map<int, std::string> ReadNvidiaMinors(const std::string& procfs) {
  std::map<int, std::string> out;
  const std::string dir = procfs + "/driver/nvidia/gpus";
  StatusOr<std::vector<std::string>> names = ListKernelDir(dir);
  if (!names.ok()) return out;
  for (const std::string& name : *names) {
    StatusOr<std::string> text =
        ReadKernelFile(dir + "/" + name + "/information", size_t{64} << 10);
    if (!text.ok()) continue;
    auto minor = FieldValue(*text, "Device Minor", ':');
    auto bdf = FieldValue(*text, "Bus Location", ':');
    if (!minor) continue;
    if (std::optional<int> n = NumberAfter(*minor, "")) {
      out.insert_or_assign(*n, NormalizeBdf(bdf ? *bdf : name));
    }
  }
  return out;
}

// Resolves the nodes of one spec; host files are read once, on first use.
class NodeResolver {
 public:
  NodeResolver(const DeviceInventory& inventory, const HostRoots& roots)
      : inventory_(inventory), roots_(roots) {}

  std::optional<ContainerDeviceRecord> Resolve(std::string_view devname) {
    const GpuInfo* g = nullptr;
    const RdmaDevice* d = nullptr;
    std::string_view drm =
        devname.substr(0, 4) == "dri/" ? devname.substr(4) : std::string_view();
    if (NumberAfter(drm, "card") || NumberAfter(drm, "renderD")) {
      g = DrmGpu(std::string(drm));
    } else if (auto n = NumberAfter(devname, "infiniband/uverbs")) {
      d = UverbsRdma("uverbs" + std::to_string(*n));
    } else if (auto n = NumberAfter(devname, "nvidia")) {
      g = NvidiaGpu(*n);
    }
    if (g != nullptr) return GpuRecord(*g, inventory_, kDeviceSourceOciSpec);
    if (d != nullptr) return RdmaRecord(*d, kDeviceSourceOciSpec);
    return std::nullopt;
  }

 private:
  // A partition's nodes are platform devices without a PCI address, so the
  // inventory's own node names come first; by-path covers GPUs whose source
  // does not report DRM nodes (NVIDIA with nvidia-drm).
  const GpuInfo* DrmGpu(const std::string& name) {
    if (const GpuInfo* g = GpuWithDrmNode(inventory_, name)) return g;
    if (!dri_) {
      StatusOr<std::vector<DriMapping>> read = ReadDriMapping(roots_);
      dri_ = read.ok() ? *std::move(read) : std::vector<DriMapping>{};
    }
    for (const DriMapping& m : *dri_) {
      if (m.card == name || m.render == name) {
        return GpuAtBdf(inventory_, m.bdf);
      }
    }
    return nullptr;
  }

  const RdmaDevice* UverbsRdma(const std::string& uverbs) const {
    StatusOr<std::string> ibdev = ReadKernelValue(
        roots_.sysfs + "/class/infiniband_verbs/" + uverbs + "/ibdev");
    if (!ibdev.ok()) return nullptr;
    for (const RdmaDevice& d : inventory_.rdma) {
      if (d.name == *ibdev) return &d;
    }
    return nullptr;
  }

  // NVML's minor first (the inventory has it with no host file to read);
  // procfs for GPUs whose source does not report it.
  const GpuInfo* NvidiaGpu(int minor) {
    for (const GpuInfo& g : inventory_.gpus) {
      if (g.vendor == GpuVendor::kNvidia && g.nvidia_minor == minor) return &g;
    }
    if (!nvidia_) nvidia_ = ReadNvidiaMinors(roots_.procfs);
    auto it = nvidia_->find(minor);
    if (it == nvidia_->end()) return nullptr;
    return GpuAtBdf(inventory_, it->second, GpuVendor::kNvidia);
  }

  const DeviceInventory& inventory_;
  const HostRoots& roots_;
  std::optional<std::vector<DriMapping>> dri_;
  std::optional<std::map<int, std::string>> nvidia_;
};

bool SameKey(const ContainerDeviceRecord& a, const ContainerDeviceRecord& b) {
  return a.kind == b.kind && a.device_key == b.device_key;
}

// Sorted by (kind as text, key), the order the store reads them back in;
// of records with one key the first stays.
void SortUnique(std::vector<ContainerDeviceRecord>* records) {
  std::stable_sort(
      records->begin(), records->end(),
      [](const ContainerDeviceRecord& a, const ContainerDeviceRecord& b) {
        return std::tuple(ToString(a.kind), std::string_view(a.device_key)) <
               std::tuple(ToString(b.kind), std::string_view(b.device_key));
      });
  records->erase(std::unique(records->begin(), records->end(), SameKey),
                 records->end());
}

// ---- pod-resources ----------------------------------------------------------

bool GpuHasId(const GpuInfo& g, std::string_view id, const std::string& bdf) {
  if (!g.unique_id.empty() && Lower(g.unique_id) == Lower(id)) return true;
  if (NormalizeBdf(g.bdf) == bdf) return true;
  if (!g.serial.empty() && g.serial == id) return true;
  return g.kfd_gpu_id && std::to_string(*g.kfd_gpu_id) == id;
}

// The GpuInfo a device id names; nullptr when none, or when GPUs at
// different BDFs match (the two dies of an MI250 share a serial).
const GpuInfo* MatchGpu(std::string_view id, const DeviceInventory& inventory) {
  id = id.substr(0, id.find("::"));  // a shared GPU's "<uuid>::<replica>"
  const std::string bdf = NormalizeBdf(id);
  const GpuInfo* best = nullptr;
  for (const GpuInfo& g : inventory.gpus) {
    if (!GpuHasId(g, id, bdf)) continue;
    if (best != nullptr && best->bdf != g.bdf) return nullptr;
    if (best == nullptr || g.partition_id < best->partition_id) best = &g;
  }
  return best;
}

// "amdgpu_xcp_<n>": the partition whose DRM nodes sysfs lists under
// devices/platform/amdgpu_xcp_<n>/drm.
const GpuInfo* MatchXcpGpu(std::string_view id,
                           const DeviceInventory& inventory,
                           const HostRoots& roots) {
  if (!NumberAfter(id, "amdgpu_xcp_")) return nullptr;
  StatusOr<std::vector<std::string>> nodes = ListKernelDir(
      roots.sysfs + "/devices/platform/" + std::string(id) + "/drm");
  if (!nodes.ok()) return nullptr;
  for (const std::string& node : *nodes) {
    if (const GpuInfo* g = GpuWithDrmNode(inventory, node)) return g;
  }
  return nullptr;
}

const RdmaDevice* MatchRdma(std::string_view id,
                            const DeviceInventory& inventory) {
  const std::string bdf = NormalizeBdf(id);
  for (const RdmaDevice& d : inventory.rdma) {
    if (d.name == id || (!d.bdf.empty() && NormalizeBdf(d.bdf) == bdf)) {
      return &d;
    }
  }
  return nullptr;
}

// A MIG device id: the record of the MIG device it names (key its MIG UUID,
// BDF its parent GPU's); when only the parent is known (an old-style id of
// an instance not in the inventory), the id with the parent's BDF.
std::optional<ContainerDeviceRecord> ResolveMig(
    const MigId& mig, const std::string& id, const DeviceInventory& inventory) {
  const std::string source(kDeviceSourcePodResources);
  for (const GpuInfo& g : inventory.gpus) {
    const bool parent = !mig.parent_uuid.empty() &&
                        Lower(g.unique_id) == Lower(mig.parent_uuid);
    for (const MigDevice& m : g.mig_devices) {
      const bool match =
          mig.uuid.empty()
              ? parent && mig.gpu_instance_id == m.gpu_instance_id &&
                    mig.compute_instance_id == m.compute_instance_id
              : !m.uuid.empty() && Lower(m.uuid) == Lower(mig.uuid);
      if (match && !m.uuid.empty()) {
        return ContainerDeviceRecord{DeviceKind::kGpu, m.uuid, g.bdf, source};
      }
    }
    if (parent)
      return ContainerDeviceRecord{DeviceKind::kGpu, id, g.bdf, source};
  }
  return std::nullopt;
}

ContainerDeviceRecord ResolvePodDevice(ResourceKind kind, const std::string& id,
                                       const DeviceInventory& inventory,
                                       const HostRoots* roots) {
  const std::string_view source = kDeviceSourcePodResources;
  if (std::optional<MigId> mig = ParseMigId(id);
      mig && kind != ResourceKind::kRdma) {
    if (auto record = ResolveMig(*mig, id, inventory)) return *record;
  }
  if (kind != ResourceKind::kRdma) {
    const GpuInfo* g = MatchGpu(id, inventory);
    if (g == nullptr && roots != nullptr) {
      g = MatchXcpGpu(id, inventory, *roots);
    }
    if (g != nullptr) return GpuRecord(*g, inventory, source);
  }
  if (kind != ResourceKind::kGpu) {
    if (const RdmaDevice* d = MatchRdma(id, inventory)) {
      return RdmaRecord(*d, source);
    }
  }
  return ContainerDeviceRecord{kResourceDeviceKinds[static_cast<int>(kind)], id,
                               "", std::string(source)};
}

std::vector<ContainerDeviceRecord> ResolvePodResources(
    std::span<const PodResourceDevices> allocations,
    const DeviceInventory& inventory, const HostRoots* roots) {
  std::vector<ContainerDeviceRecord> out;
  for (const PodResourceDevices& resource : allocations) {
    const ResourceKind kind = ClassifyResource(resource.resource_name);
    for (const std::string& id : resource.device_ids) {
      if (id.empty()) continue;
      out.push_back(ResolvePodDevice(kind, id, inventory, roots));
    }
  }
  SortUnique(&out);
  return out;
}

}  // namespace

std::string GpuDeviceKey(const GpuInfo& gpu, const DeviceInventory& inventory) {
  const std::string& base = gpu.serial.empty() ? gpu.bdf : gpu.serial;
  bool other_bdf = false;
  bool same_bdf = false;
  for (const GpuInfo& g : inventory.gpus) {
    if ((g.serial.empty() ? g.bdf : g.serial) != base) continue;
    if (g.bdf != gpu.bdf) {
      other_bdf = true;
    } else if (g.partition_id != gpu.partition_id) {
      same_bdf = true;
    }
  }
  std::string key = base;
  if (other_bdf) key += "@" + gpu.bdf;
  if (same_bdf) key += "/p" + std::to_string(gpu.partition_id);
  return key;
}

std::vector<ContainerDeviceRecord> DevicesFromOciSpec(
    const OciSpecFacts& spec, const DeviceInventory& inventory,
    const HostRoots& roots) {
  std::vector<ContainerDeviceRecord> out;
  if (spec.privileged) return out;
  NodeResolver resolver(inventory, roots);
  for (const OciDeviceNode& node : spec.devices) {
    if (auto record = resolver.Resolve(HostDevName(node, roots.sysfs))) {
      out.push_back(*std::move(record));
    }
  }
  SortUnique(&out);
  return out;
}

std::vector<ContainerDeviceRecord> DevicesFromPodResources(
    std::span<const PodResourceDevices> allocations,
    const DeviceInventory& inventory) {
  return ResolvePodResources(allocations, inventory, nullptr);
}

std::vector<ContainerDeviceRecord> DevicesFromPodResources(
    std::span<const PodResourceDevices> allocations,
    const DeviceInventory& inventory, const HostRoots& roots) {
  return ResolvePodResources(allocations, inventory, &roots);
}

std::vector<ContainerDeviceRecord> MergeDevices(
    std::vector<ContainerDeviceRecord> from_pod_resources,
    std::vector<ContainerDeviceRecord> from_oci_spec) {
  std::set<DeviceKind> pod_kinds;
  for (const ContainerDeviceRecord& r : from_pod_resources) {
    pod_kinds.insert(r.kind);
  }
  std::vector<ContainerDeviceRecord> out = std::move(from_pod_resources);
  for (ContainerDeviceRecord& r : from_oci_spec) {
    if (pod_kinds.count(r.kind) == 0) out.push_back(std::move(r));
  }
  SortUnique(&out);
  return out;
}

}  // namespace lens::containers
