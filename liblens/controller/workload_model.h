// An owner of GPU pods (a Job, a PyTorchJob, a ReplicaSet, any custom
// kind) as the controller stores it: who it is, who owns it, and its
// status and end time read from its own status where the kind has one
// Lens understands (conditions, RayJob's jobStatus), "" otherwise (the
// status then comes from its pods: WorkloadStatusFromPods).
#ifndef LENS_CONTROLLER_WORKLOAD_MODEL_H_
#define LENS_CONTROLLER_WORKLOAD_MODEL_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/pod_model.h"
#include "lens/model.h"
#include "lens/status.h"

namespace lens::controller {

struct OwnerView {
  std::string uid;
  std::string api_version;
  std::string kind;
  std::string namespace_name;
  std::string name;
  Labels labels;
  Timestamp created_at{};
  std::optional<OwnerReference> controller;  // its own controlling owner
  // "Pending", "Running", "Succeeded", "Failed", "Suspended", or "" when its
  // status says nothing Lens understands.
  std::string status;
  std::optional<Timestamp> ended_at;
};

// InvalidArgument naming the object for JSON without metadata.uid/name.
StatusOr<OwnerView> DecodeOwner(std::string_view json);

// For kinds without a status Lens understands: "Succeeded" when every pod
// ended and none failed, "Failed" when every pod ended and one failed,
// "Running" when one runs, "Pending" otherwise; the end time is the last
// pod's. A deleted pod counts as ended, failed only if it failed.
struct PodOutcome {
  std::string phase;
  std::optional<Timestamp> ended_at;
  bool deleted = false;
};
void WorkloadStatusFromPods(const std::vector<PodOutcome>& pods,
                            std::string* status,
                            std::optional<Timestamp>* ended_at);

}  // namespace lens::controller

#endif  // LENS_CONTROLLER_WORKLOAD_MODEL_H_
