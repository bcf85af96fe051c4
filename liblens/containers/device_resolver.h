// Resolving a container's devices to the node's inventory: OCI device nodes
// (by major:minor and the host's dev/dri/by-path, sysfs and procfs) and
// pod-resources device ids, merged with pod-resources as the authority.
#ifndef LENS_CONTAINERS_DEVICE_RESOLVER_H_
#define LENS_CONTAINERS_DEVICE_RESOLVER_H_

#include <span>
#include <vector>

#include "containers/oci_spec.h"
#include "containers/pod_resources.h"
#include "lens/containers.h"
#include "lens/host.h"
#include "lens/store_types.h"

namespace lens::containers {

// GPUs and RDMA devices the spec's device nodes point at, with source
// "oci-spec". /dev/kfd, /dev/nvidiactl, /dev/nvidia-uvm and other shared
// nodes prove nothing and yield nothing. A privileged spec yields nothing.
// Device keys: GPU serial, else BDF; RDMA device name.
std::vector<ContainerDeviceRecord> DevicesFromOciSpec(
    const OciSpecFacts& spec, const DeviceInventory& inventory,
    const HostRoots& roots);

// Devices the kubelet allocated, with source "pod-resources".
std::vector<ContainerDeviceRecord> DevicesFromPodResources(
    std::span<const PodResourceDevices> allocations,
    const DeviceInventory& inventory);

// The container's device set: every pod-resources record, plus OCI records
// of a kind pod-resources has none of for this container. Sorted by (kind,
// key), no duplicates.
std::vector<ContainerDeviceRecord> MergeDevices(
    std::vector<ContainerDeviceRecord> from_pod_resources,
    std::vector<ContainerDeviceRecord> from_oci_spec);

}  // namespace lens::containers

#endif  // LENS_CONTAINERS_DEVICE_RESOLVER_H_
