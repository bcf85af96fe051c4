// The effective request of a pod spec (pod_model.h's PodRequests), computed
// from the decoded JSON: the part of DecodePod that knows Kubernetes'
// resource rules. Quantities themselves are parsed by ParseQuantity*.
#ifndef LENS_CONTROLLER_POD_REQUESTS_H_
#define LENS_CONTROLLER_POD_REQUESTS_H_

#include <rapidjson/document.h>

#include "controller/pod_model.h"
#include "lens/status.h"

namespace lens::controller {

// Fills `out` from `spec` (a pod's spec object) as k8s.io/component-helpers'
// PodRequests does: containers, init and sidecar containers, pod-level
// resources (cpu, memory) and overhead. Only cpu, memory, GPU (per `gpus`)
// and rdma/* resources are read; others are ignored. InvalidArgument naming
// the field ("spec.containers[1].resources.requests[\"cpu\"]: ...") for a
// bad quantity, a wrong type, or a total that does not fit.
Status ComputePodRequests(const rapidjson::Value& spec,
                          const GpuResourceMatcher& gpus, PodRequests* out);

}  // namespace lens::controller

#endif  // LENS_CONTROLLER_POD_REQUESTS_H_
