// Container tracking with device ownership: which container, pod and device
// go together on this node.
//
//   lens::ContainerTrackerOptions options;       // containerd socket,
//   namespace options.node = "gpu-node-7"; lens::ContainerTracker
//   tracker(options); tracker.SetInventory({gpus, rdma_devices});  // from the
//   probes tracker.SetListener([](const lens::ContainerChange& c) { ... });
//   lens::Status st = tracker.Start();           // list, then follow events
//   std::vector<lens::ContainerRecord> now = tracker.Containers();
//   tracker.Stop();
//
// Sources: containerd's gRPC API (containers, tasks, events; the OCI runtime
// spec's linux.devices and device cgroup rules) or the Docker Engine API
// (list, inspect, events; HostConfig.Devices and GPU DeviceRequests, with the
// same ownership rules; environment variables are never kept) and, when its
// socket exists,
// the kubelet pod-resources API, which is the authority for device-plugin
// allocations. Every device record names the source that established it.
// Privileged containers are marked and own no device through their spec: they
// see every device node, which proves nothing.
#ifndef LENS_CONTAINERS_H_
#define LENS_CONTAINERS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/export.h"
#include "lens/gpu.h"
#include "lens/host.h"
#include "lens/model.h"
#include "lens/rdma.h"
#include "lens/status.h"

namespace lens {

// Where ContainerDeviceRecord::source values come from.
inline constexpr std::string_view kDeviceSourcePodResources = "pod-resources";
inline constexpr std::string_view kDeviceSourceOciSpec = "oci-spec";

// The devices of the node that containers can hold. Plain value.
struct LENS_EXPORT DeviceInventory {
  std::vector<GpuInfo> gpus;
  std::vector<RdmaDevice> rdma;
};

// Which container runtime the tracker follows.
enum class ContainerRuntime : uint8_t {
  kContainerd,  // containerd's gRPC API at containerd_socket
  kDocker,      // the Docker Engine API at docker_socket
  kAuto,        // chosen at start: see ResolveContainerRuntime()
};
// "containerd", "docker", "auto".
LENS_EXPORT std::string_view ToString(ContainerRuntime runtime);
// The inverse of ToString; InvalidArgument naming the accepted values.
LENS_EXPORT StatusOr<ContainerRuntime> ParseContainerRuntime(
    std::string_view text);

struct LENS_EXPORT ContainerTrackerOptions {
  // Name of this node; written into every record.
  std::string node;
  ContainerRuntime runtime = ContainerRuntime::kContainerd;
  // The Docker Engine API socket (HTTP over a unix socket), for kDocker.
  // Docker's records carry the runtime namespace "moby".
  std::string docker_socket = "/var/run/docker.sock";
  std::string containerd_socket = "/run/containerd/containerd.sock";
  // containerd namespace the kubelet's containers live in.
  std::string containerd_namespace = "k8s.io";
  // The kubelet's pod-resources socket; empty disables it. A missing socket
  // is not an error: the tracker then relies on the OCI specs alone.
  std::string pod_resources_socket =
      "/var/lib/kubelet/pod-resources/kubelet.sock";
  // How often pod-resources is listed again (it has no watch).
  std::chrono::milliseconds pod_resources_interval{10000};
  // Reconnect backoff after containerd goes away: doubles up to the max.
  std::chrono::milliseconds reconnect_min{100};
  std::chrono::milliseconds reconnect_max{5000};
  // Deadline of each unary call to containerd or the kubelet.
  std::chrono::milliseconds call_timeout{5000};
  // Host device tree used to resolve device nodes (dev/dri/by-path, sysfs
  // class/infiniband_verbs, procfs driver/nvidia).
  HostRoots roots;
};

// kContainerd or kDocker for `options.runtime`. kAuto: the runtime whose
// socket exists when only one does (an agent container that mounts only
// Docker's socket gets Docker); when both do (Docker Engine runs on
// containerd, so a Docker host has both), Docker only if the kubelet runs
// its pods through cri-dockerd (/run/cri-dockerd.sock exists), else
// containerd; when neither does, containerd (which the tracker then keeps
// trying). A plain Docker host with both sockets names kDocker explicitly.
// Reads only the file system (stat); thread-safe.
LENS_EXPORT ContainerRuntime
ResolveContainerRuntime(const ContainerTrackerOptions& options);

// One change the tracker saw: the event and the container's full state after
// it. `event.event_type` is create, update, start, exit, oom, delete, pause or
// resume.
struct LENS_EXPORT ContainerChange {
  ContainerEventRecord event;
  ContainerRecord container;
};

// Follows one containerd namespace and keeps every container's current state
// with its devices. Thread-safe: Containers() and SetInventory() may be called
// from any thread while the tracker runs; the listener is called from the
// tracker's own thread, one change at a time, in order, and must not block
// for long (queue the change).
class LENS_EXPORT ContainerTracker {
 public:
  using Listener = std::function<void(const ContainerChange&)>;
  // Called after every full list (start and each reconnect) with the
  // complete current set; a consumer replaces its view with it.
  using ResyncListener =
      std::function<void(const std::vector<ContainerRecord>&)>;

  explicit ContainerTracker(ContainerTrackerOptions options);
  ~ContainerTracker();  // Stop()s
  ContainerTracker(const ContainerTracker&) = delete;
  ContainerTracker& operator=(const ContainerTracker&) = delete;

  // Devices to resolve against; may be updated at any time (re-resolves
  // every container; changes are reported as "update").
  void SetInventory(DeviceInventory inventory);
  // Set before Start().
  void SetListener(Listener listener);
  void SetResyncListener(ResyncListener listener);

  // Lists containers and tasks once, synchronously, then follows events on
  // a background thread, reconnecting and relisting after any loss. Returns
  // that first list's error (NotFound/Unavailable naming the socket) when
  // containerd cannot be reached now; the tracker keeps trying in the
  // background either way, until Stop().
  Status Start();
  // Idempotent; joins the thread.
  void Stop();

  // The current containers (deleted ones are dropped), sorted by id.
  std::vector<ContainerRecord> Containers() const;
  // Whether the event subscription is up right now.
  bool Connected() const;
  // How many times the tracker reconnected to containerd.
  uint64_t Reconnects() const;

  // One synchronous list (no events): what `lens containers` prints.
  static StatusOr<std::vector<ContainerRecord>> ListOnce(
      const ContainerTrackerOptions& options, const DeviceInventory& inventory);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// JSON for one container as the node REST API (/pods) and `lens containers
// --json` show it, in the one shape every Lens surface writes a container
// (the REST API's names: containerId, podUid, ..., devices[{kind, deviceKey,
// bdf, source}]) with what the node knows first hand (runtimeNamespace, pid,
// updatedAt, labels); times are Unix seconds with their microseconds. Never
// environment, mounts or the spec.
LENS_EXPORT std::string ContainerJson(const ContainerRecord& container);
// `{"containers":[...]}`
LENS_EXPORT std::string ContainersJson(
    const std::vector<ContainerRecord>& containers);
// An aligned table for terminals.
LENS_EXPORT std::string ContainersText(
    const std::vector<ContainerRecord>& containers);

}  // namespace lens

#endif  // LENS_CONTAINERS_H_
