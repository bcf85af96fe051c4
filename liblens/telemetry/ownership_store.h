// The ownership index from the store: pods (gpu_pods with their top-level
// workloads) and the GPUs their containers held (node_containers and their
// device rows, with every identity gpu_devices knows each GPU by), over a
// window of history, so that late samples still find the owner of their
// time.
#ifndef LENS_TELEMETRY_OWNERSHIP_STORE_H_
#define LENS_TELEMETRY_OWNERSHIP_STORE_H_

#include <chrono>
#include <memory>

#include "lens/store.h"
#include "telemetry/ownership.h"

namespace lens::telemetry {

// What the index holds: every live pod and container, and those that ended
// within `history` before `now`. A pod holds its (namespace, name) from its
// start (or creation) to its end (or deletion); a container that is not
// privileged holds each GPU its device rows name, on its node, from its
// start to its finish, under the GPU's serial, BDF, UUID and "index:<n>".
// The owner is the pod's top-level workload (a pod without one is its own,
// kind "Pod"). Errors: the store's.
StatusOr<std::shared_ptr<const OwnershipIndex>> BuildOwnershipIndex(
    Store& store, Timestamp now, std::chrono::milliseconds history);

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_OWNERSHIP_STORE_H_
