// The log streams' owners from the store, as the controller writes pods and
// their top-level workloads.
#include <cstdlib>

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

Status RegisterLogFileWorkload(Store* store, const std::string& path,
                               Timestamp now) {
  std::string uid = path;
  if (char* real = ::realpath(path.c_str(), nullptr)) {
    uid = real;
    std::free(real);
  }
  auto existing = store->pods().GetWorkload(uid);
  if (existing.ok()) return OkStatus();
  if (existing.status().code() != StatusCode::kNotFound) {
    return existing.status();
  }
  WorkloadRecord w;
  w.uid = uid;
  w.kind = "LogFile";
  w.name = uid.substr(uid.rfind('/') + 1);
  w.namespace_name = "local";  // a file on this machine, in no cluster
  w.status = "Running";
  w.created_at = w.updated_at = now;
  return store->pods().UpsertWorkloads({&w, 1});
}

}  // namespace lens::telemetry
