// GPUs allocated to pods, from the kubelet's /pods (a v1 PodList).
#ifndef LENS_AGENT_GPU_ALLOCATION_H_
#define LENS_AGENT_GPU_ALLOCATION_H_

#include <string_view>

#include "lens/node_agent.h"

namespace lens::agent {

// Sums the GPU resources (amd.com/gpu, nvidia.com/gpu; limits, else requests)
// of every container of pods whose phase is not Succeeded or Failed. Init
// containers run before the others, so a pod holds max(largest init
// container, sum of containers). InvalidArgument naming the JSON path of a bad
// field.
StatusOr<GpuAllocation> ParseKubeletPodsGpuAllocation(std::string_view json);

}  // namespace lens::agent

#endif  // LENS_AGENT_GPU_ALLOCATION_H_
