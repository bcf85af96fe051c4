// From containerd's view of a container (plus the kubelet's allocations) to
// Lens's ContainerRecord, and the change between two records. Pure.
#ifndef LENS_CONTAINERS_CONTAINER_RECORD_H_
#define LENS_CONTAINERS_CONTAINER_RECORD_H_

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "containers/containerd/containerd_client.h"
#include "containers/oci_spec.h"
#include "containers/pod_resources.h"
#include "lens/containers.h"
#include "lens/host.h"
#include "lens/model.h"

namespace lens::containers {

// The CRI labels that name a container's pod.
inline constexpr char kPodNameLabel[] = "io.kubernetes.pod.name";
inline constexpr char kPodNamespaceLabel[] = "io.kubernetes.pod.namespace";
inline constexpr char kPodUidLabel[] = "io.kubernetes.pod.uid";
inline constexpr char kContainerNameLabel[] = "io.kubernetes.container.name";

// Pod-resources allocations by (pod namespace, pod name, container name).
using PodAllocations =
    std::map<std::tuple<std::string, std::string, std::string>,
             std::vector<PodResourceDevices>>;
PodAllocations IndexAllocations(
    const std::vector<PodResourcesContainer>& containers);

// What the record is built from; the spec is parsed once per container.
struct RecordContext {
  const ContainerTrackerOptions* options = nullptr;
  const DeviceInventory* inventory = nullptr;
  const PodAllocations* allocations = nullptr;
};

// Record state from the task: no task -> created; stopped -> exited;
// pausing -> paused; otherwise the task status (unknown when containerd says
// something else).
ContainerState StateOf(const RuntimeContainer& c);

// The labels a record keeps: at most 64, each key and value together at
// most 4 KiB, all of them at most 48 KiB as JSON (so the store, which
// refuses a labels column over 64 KiB, always takes them). What does not fit
// is left out, never truncated mid-value.
Labels LimitLabels(const std::map<std::string, std::string>& labels);

// When process `pid` started, from <procfs>/<pid>/stat (start time in clock
// ticks since boot) and <procfs>/stat (btime); nullopt when unreadable. The
// same for every reader, so a start seen live and one seen in a list after a
// restart carry the same time (and are stored once).
std::optional<Timestamp> ProcessStartTime(const HostRoots& roots, int64_t pid);

// The full record. `spec` is ParseOciSpec(c.spec_json) (empty facts when the
// spec did not parse). started_at is the task process's start time when it
// runs.
ContainerRecord BuildRecord(const RuntimeContainer& c, const OciSpecFacts& spec,
                            const RecordContext& ctx, Timestamp now);

// The devices of a record, resolved again (after an inventory or allocation
// change).
std::vector<ContainerDeviceRecord> ResolveDevices(const ContainerRecord& record,
                                                  const OciSpecFacts& spec,
                                                  const RecordContext& ctx);

// The event that turns `before` into `after` as seen by a full list: start
// when it began running, exit when it stopped, pause/resume, update for any
// other difference, nullopt when nothing that matters changed.
std::optional<ContainerEventType> DiffEventType(const ContainerRecord& before,
                                                const ContainerRecord& after);

}  // namespace lens::containers

#endif  // LENS_CONTAINERS_CONTAINER_RECORD_H_
