// Resolving a container's devices to the node's inventory: OCI device nodes
// (by major:minor and the host's dev/dri/by-path, sysfs and procfs) and
// pod-resources device ids, merged with pod-resources as the authority.
//
// Device keys (ContainerDeviceRecord::device_key):
//   MIG   an NVIDIA MIG device: its UUID "MIG-<uuid>" (the record's BDF is
//         its parent GPU's, which is how the parent is found).
//   GPU   its serial, else its BDF. When that does not single out one GpuInfo
//         of the inventory, qualifiers are appended: "@<bdf>" when GPUs at
//         different BDFs share the serial (the two dies of an MI250 module
//         carry the board's serial), then "/p<partition_id>" when logical
//         GPUs share the BDF (CPX/DPX compute partitions; partition 0 too):
//         "692351001124/p3". Stable while the inventory does not change.
//   RDMA  the device name ("mlx5_0").
// Every record carries the BDF of the device it names ("" when unknown).
#ifndef LENS_CONTAINERS_DEVICE_RESOLVER_H_
#define LENS_CONTAINERS_DEVICE_RESOLVER_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "containers/oci_spec.h"
#include "containers/pod_resources.h"
#include "lens/containers.h"
#include "lens/gpu.h"
#include "lens/host.h"
#include "lens/model.h"

namespace lens::containers {

// ContainerDeviceRecord::kind: DeviceKind::kOther ("device") is a
// device-plugin resource that is neither a GPU nor an RDMA resource, kept as
// the plugin named it.

// The device key of `gpu` (an element of `inventory.gpus`, or equal to one)
// as described above.
std::string GpuDeviceKey(const GpuInfo& gpu, const DeviceInventory& inventory);

// GPUs and RDMA devices the spec's character device nodes point at, with
// source "oci-spec", sorted by (kind, key), one record per device (card1 and
// renderD128 of one GPU are one record). A node is identified by its
// major:minor (sysfs dev/char/<major>:<minor>/uevent DEVNAME where the host
// has it, else the fixed majors: DRM 226, uverbs 231 from minor 192, NVIDIA
// 195), or by its path under /dev when the spec has no numbers. Then:
// cardN/renderDN -> the GpuInfo with that DRM node, else the GPU at the BDF
// dev/dri/by-path names; uverbsN -> sysfs class/infiniband_verbs/uverbsN/
// ibdev -> the RdmaDevice of that name; nvidiaN -> the NVIDIA GPU whose
// GpuInfo::nvidia_minor is N (NVML), else whose procfs
// driver/nvidia/gpus/<bdf>/information says "Device Minor: N" (a MIG
// device's nvidia-caps nodes name no device: its parent's nvidiaN does).
// /dev/kfd, /dev/nvidiactl, /dev/nvidia-uvm, rdma_cm and other shared nodes
// prove nothing and yield nothing, as do nodes of devices the inventory
// lacks (a BMC's display) and unreadable host files. A privileged spec
// yields nothing: seeing every device proves no ownership. Reads files
// under `roots`; thread-safe.
std::vector<ContainerDeviceRecord> DevicesFromOciSpec(
    const OciSpecFacts& spec, const DeviceInventory& inventory,
    const HostRoots& roots);

// Devices the kubelet allocated, with source "pod-resources", sorted by
// (kind, key), without duplicates. Resources: GPU ("amd.com/gpu", other
// amd.com names with "gpu" and the partition resources "amd.com/cpx_nps1"
// ...; "nvidia.com/gpu", "nvidia.com/gpu.shared", "nvidia.com/mig-*"), RDMA
// ("rdma/*", names containing "rdma" or "hca"), anything else is "device"
// (unless its ids name an inventory GPU or RDMA device). A GPU id matches
// GpuInfo.unique_id (NVIDIA "GPU-<uuid>", a "::<replica>" suffix of shared
// GPUs ignored), bdf (case-insensitive, domain optional: what the AMD
// device plugin uses), serial or kfd_gpu_id (decimal); ids that match
// logical GPUs of one BDF name its partition 0, ids that match GPUs at
// several BDFs are ambiguous. RDMA ids match RdmaDevice name or bdf. An id
// that matches nothing is still an allocation: its record has the
// resource's kind, the id as key and an empty BDF. MIG ids (under
// "nvidia.com/mig-<profile>" or, single strategy, "nvidia.com/gpu"):
// "MIG-<uuid>" names the inventory's MigDevice of that UUID, and the old
// "MIG-GPU-<parent uuid>/<gi>/<ci>" the MigDevice of those instance ids;
// either gives the record {gpu, the MIG UUID, the parent GPU's BDF}. An
// old-style id whose instance the inventory lacks keeps its id as key with
// the parent's BDF. Pure; thread-safe.
std::vector<ContainerDeviceRecord> DevicesFromPodResources(
    std::span<const PodResourceDevices> allocations,
    const DeviceInventory& inventory);

// The same, also resolving the AMD device plugin's partition ids
// ("amdgpu_xcp_<n>", CPX/DPX mode) through sysfs
// devices/platform/amdgpu_xcp_<n>/drm to the partition's GpuInfo.
std::vector<ContainerDeviceRecord> DevicesFromPodResources(
    std::span<const PodResourceDevices> allocations,
    const DeviceInventory& inventory, const HostRoots& roots);

// The container's device set: every pod-resources record, plus OCI records
// of a kind pod-resources has none of for this container (pod-resources is
// the authority for GPUs; the spec fills in RDMA devices that no device
// plugin allocated). Sorted by (kind, key), no duplicates (the first record
// of a (kind, key) wins, pod-resources first).
std::vector<ContainerDeviceRecord> MergeDevices(
    std::vector<ContainerDeviceRecord> from_pod_resources,
    std::vector<ContainerDeviceRecord> from_oci_spec);

}  // namespace lens::containers

#endif  // LENS_CONTAINERS_DEVICE_RESOLVER_H_
