// The KFD (amdkfd) topology under <sysfs>/class/kfd/kfd/topology: one
// directory per HSA node (CPU sockets and GPUs), each with gpu_id, name and a
// properties file of "key value" lines. ROCm tools and the AMD Kubernetes
// device plugin identify GPUs by gpu_id, and a partitioned GPU (CPX/DPX
// compute partitions on MI300) appears here as one node per partition.
#ifndef LENS_GPU_KFD_TOPOLOGY_H_
#define LENS_GPU_KFD_TOPOLOGY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"

namespace lens {

// One HSA node. Plain value.
struct KfdNode {
  // Directory number under topology/nodes.
  int node = -1;
  // KFD gpu_id; 0 for CPU nodes.
  uint32_t gpu_id = 0;
  // Contents of the name file ("ip discovery", "gfx90a"); empty for CPUs.
  std::string name;
  // Every "key value" line of the properties file. KFD prints all values as
  // unsigned decimal integers.
  std::map<std::string, uint64_t, std::less<>> properties;

  bool is_gpu() const { return gpu_id != 0; }
  // The property `key`, or nullopt when the node does not list it (older
  // kernels lack unique_id and num_xcc, for example).
  std::optional<uint64_t> Property(std::string_view key) const;
};

// The whole topology. Plain value.
struct KfdTopology {
  // topology/generation_id: changes whenever KFD adds or removes nodes (a
  // device hot-plug, a compute-partition switch). nullopt when unreadable.
  std::optional<uint64_t> generation_id;
  // Sorted by node number.
  std::vector<KfdNode> nodes;
};

// Parses a properties file. Blank lines are ignored; every other line must be
// "<key> <unsigned integer>". InvalidArgument naming `where` and the line
// number otherwise.
StatusOr<std::map<std::string, uint64_t, std::less<>>> ParseKfdProperties(
    std::string_view text, std::string_view where);

// Reads <sysfs_root>/class/kfd/kfd/topology. A node whose properties file
// cannot be read (missing, permission denied) is left out, as ROCm's SMI
// library does. Errors: NotFound when the topology directory does not exist
// (amdkfd not loaded, or /sys/class/kfd not mounted into a container),
// InvalidArgument naming a malformed file, others from the file system.
StatusOr<KfdTopology> ReadKfdTopology(const std::string& sysfs_root);

}  // namespace lens

#endif  // LENS_GPU_KFD_TOPOLOGY_H_
