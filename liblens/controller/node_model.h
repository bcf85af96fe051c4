// A Node from the API server as the store's nodes row: Ready state,
// addresses, GPU capacity and allocatable, versions and labels.
#ifndef LENS_CONTROLLER_NODE_MODEL_H_
#define LENS_CONTROLLER_NODE_MODEL_H_

#include <string_view>

#include "controller/pod_model.h"
#include "lens/model.h"
#include "lens/status.h"

namespace lens::controller {

// status "Ready" or "NotReady" (the Ready condition), address the first
// InternalIP (else the first address), GPUs summed over the matching
// resources of capacity and allocatable, the vendor of the largest, the
// model from the device plugins' node labels (nvidia.com/gpu.product,
// amd.com/gpu.product-name), cpu_count and memory_bytes from capacity.
// updated_at is left to the caller. InvalidArgument naming the node or
// the field.
StatusOr<NodeRecord> DecodeNode(std::string_view json,
                                const GpuResourceMatcher& gpus);

}  // namespace lens::controller

#endif  // LENS_CONTROLLER_NODE_MODEL_H_
