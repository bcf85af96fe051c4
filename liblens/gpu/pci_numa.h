// NUMA node of a PCI function from sysfs, for sources that do not see sysfs
// themselves (NVML).
#ifndef LENS_GPU_PCI_NUMA_H_
#define LENS_GPU_PCI_NUMA_H_

#include <vector>

#include "lens/gpu.h"

namespace lens::gpu {

// Sets numa_node of every GPU that lacks one from
// <sysfs>/bus/pci/devices/<bdf>/numa_node (-1, missing or unreadable: left
// unset).
void FillNumaNodes(const HostRoots& roots, std::vector<GpuInfo>* gpus);

}  // namespace lens::gpu

#endif  // LENS_GPU_PCI_NUMA_H_
