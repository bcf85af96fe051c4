// Device identifiers as the outside world writes them, for the device
// resolver: PCI addresses in their several spellings, "key: value" lines of
// kernel files, device-plugin resource names and NVIDIA MIG device ids.
// Pure functions; thread-safe.
#ifndef LENS_CONTAINERS_DEVICE_IDS_H_
#define LENS_CONTAINERS_DEVICE_IDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lens/model.h"

namespace lens::containers {

// ASCII lower case.
std::string Lower(std::string_view text);

// N when `name` is `prefix` followed by decimal digits only.
std::optional<int> NumberAfter(std::string_view name, std::string_view prefix);

// The value of the first "<key><separator><value>" line of `text`, both
// sides trimmed of spaces and tabs (uevent "DEVNAME=dri/card0", NVIDIA
// procfs "Device Minor: \t 0").
std::optional<std::string_view> FieldValue(std::string_view text,
                                           std::string_view key,
                                           char separator);

// A PCI address as the inventory writes it ("0000:0c:00.0"): lower case,
// "0c:00.0" gets domain 0, NVML's 8-digit "00000000:19:00.0" loses its
// extra zeros. Other text is only lower-cased.
std::string NormalizeBdf(std::string_view text);

// What a device-plugin resource allocates, and the record kind of each
// (DeviceKinds[kind]).
enum class ResourceKind { kGpu, kRdma, kOther };
inline constexpr DeviceKind kResourceDeviceKinds[] = {
    DeviceKind::kGpu, DeviceKind::kRdma, DeviceKind::kOther};

// GPU: "amd.com/gpu", other amd.com names with "gpu", the AMD partition
// resources ("amd.com/cpx_nps1" ...), "nvidia.com/gpu*" and
// "nvidia.com/mig-*"; RDMA: "rdma/*" and names with "rdma" or "hca";
// anything else kOther. Case-insensitive.
ResourceKind ClassifyResource(std::string_view resource_name);

// A MIG device id of the NVIDIA device plugin, as pod-resources lists it
// under "nvidia.com/mig-<profile>" (mixed strategy) or "nvidia.com/gpu"
// (single strategy): the MIG device's own UUID "MIG-<uuid>" (drivers R470
// and newer), or "MIG-GPU-<parent uuid>/<gpu instance>/<compute instance>"
// (older drivers).
struct MigId {
  std::string uuid;         // "MIG-<uuid>"; empty for the old form
  std::string parent_uuid;  // "GPU-<uuid>"; the old form only
  std::optional<uint32_t> gpu_instance_id;
  std::optional<uint32_t> compute_instance_id;
};
// nullopt when `id` is not a MIG id.
std::optional<MigId> ParseMigId(std::string_view id);

}  // namespace lens::containers

#endif  // LENS_CONTAINERS_DEVICE_IDS_H_
