// The log streams' owners from the store, as the controller writes pods and
// their top-level workloads.
#include "telemetry/logs.h"

namespace lens::telemetry {

LogOwnerResolver MakeStoreWorkloadResolver(Store* store) {
  return [store](std::string_view pod_uid, std::string_view,
                 std::string_view) -> LogOwner {
    if (store == nullptr || pod_uid.empty()) return {};
    auto pod = store->pods().GetPod(pod_uid);
    if (!pod.ok() || pod->owner_uid.empty()) return {};
    auto w = store->pods().GetWorkload(pod->owner_uid);
    if (!w.ok()) return {};
    return {w->uid, w->name, w->kind, w->namespace_name};
  };
}

}  // namespace lens::telemetry
