// A pod as the controller needs it, decoded once from the API server's JSON:
// who it is, where it runs, what it asked for (the effective request
// Kubernetes schedules by, init and sidecar containers and overhead
// included), its owners, and the API's own timestamps of its life.
#ifndef LENS_CONTROLLER_POD_MODEL_H_
#define LENS_CONTROLLER_POD_MODEL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/model.h"
#include "lens/status.h"

namespace lens::controller {

// The vendor of a GPU resource name: "amd" for amd.com/..., "nvidia" for
// nvidia.com/..., otherwise its domain; "" without one.
std::string GpuVendorOf(std::string_view resource);

// Which extended resources count as GPUs: exact names ("amd.com/gpu") or
// prefixes ending in '*' ("nvidia.com/mig-*").
class GpuResourceMatcher {
 public:
  // amd.com/gpu, nvidia.com/gpu, nvidia.com/mig-*.
  static std::vector<std::string> Defaults();
  explicit GpuResourceMatcher(std::vector<std::string> patterns = Defaults());
  bool Matches(std::string_view resource) const;
  const std::vector<std::string>& patterns() const { return patterns_; }

 private:
  std::vector<std::string> patterns_;
};

// A resource.Quantity ("500m", "2", "1.5", "1Ki", "512Mi", "1Ti", "1G",
// "1e3", "12E") in thousandths, rounded up; InvalidArgument naming the text
// for anything else or a value that does not fit. Like Kubernetes it also
// takes "n" and "u" and signed exponents ("1e-3"); a negative value (which no
// request may be) is refused.
StatusOr<int64_t> ParseQuantityMillis(std::string_view text);
// The same as a whole number, rounded up (as Kubernetes rounds requests).
StatusOr<int64_t> ParseQuantity(std::string_view text);

// What a pod asks for: for each resource, max(sum over app containers plus
// restartable init (sidecar) containers, max over init containers of its
// own request plus the sidecars started before it), plus spec.overhead. A
// container's request is its requests[r], or limits[r] when only that is
// set (Kubernetes defaults requests to limits).
struct PodRequests {
  int32_t gpus = 0;          // the sum over matching GPU resources
  std::string gpu_resource;  // the largest matching one, "amd.com/gpu"
  std::string gpu_vendor;    // "amd", "nvidia", or the resource's domain
  int32_t rdma = 0;          // the sum over "rdma/*" resources
  int64_t cpu_millis = 0;
  int64_t memory_bytes = 0;
};

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
};

struct PodView {
  std::string uid;
  std::string namespace_name;
  std::string name;
  std::string resource_version;
  std::string node;   // spec.nodeName, "" before scheduling
  std::string phase;  // status.phase ("Pending" when absent)
  std::string ip;     // status.podIP
  Labels labels;
  std::vector<OwnerReference> owners;
  // The owner with controller: true, when there is one.
  std::optional<OwnerReference> controller;
  PodRequests requests;

  // The API's timestamps (RFC 3339, second or finer precision).
  Timestamp created_at{};  // metadata.creationTimestamp
  std::optional<Timestamp>
      scheduled_at;  // PodScheduled=True's lastTransitionTime
  // When its containers first ran: the earliest state.running.startedAt of
  // a container that never restarted, else status.startTime.
  std::optional<Timestamp> started_at;
  // For Succeeded/Failed: the latest state.terminated.finishedAt of its
  // containers (init containers included), else the Ready condition's
  // lastTransitionTime, else none.
  std::optional<Timestamp> ended_at;
  std::optional<Timestamp> deletion_at;  // metadata.deletionTimestamp
  // The sum of containers' restartCount (init containers included), and
  // the latest lastState.terminated.finishedAt among restarted containers.
  int32_t restarts = 0;
  std::optional<Timestamp> last_restart_at;
  bool ready = false;  // condition Ready=True

  // The watched fields as canonical JSON (same pod state, same text):
  // phase, node, ip, ready, restarts, deletionTimestamp, conditions
  // (type/status), and each container's name, state (waiting with reason,
  // running, terminated with exit code and reason) and restartCount. No
  // env, no command, no annotations: nothing secret.
  std::string snapshot_json;
};

// InvalidArgument (naming the pod when its name is known, and the field)
// for JSON that is not a pod or lacks metadata.uid/name, or a timestamp or
// quantity that does not parse.
StatusOr<PodView> DecodePod(std::string_view json,
                            const GpuResourceMatcher& gpus);

// A cheap test on the raw JSON, for deciding what to cache: false only when
// no GPU resource can be requested (no matching resource name appears).
bool MayRequestGpus(std::string_view json, const GpuResourceMatcher& gpus);

}  // namespace lens::controller

#endif  // LENS_CONTROLLER_POD_MODEL_H_
