// Where the tracker's containers come from: one container runtime's list,
// get and event subscription (containerd's gRPC API or the Docker Engine
// API), behind one interface so ownership and the event stream to lens-jobs
// are the same whatever the runtime.
#ifndef LENS_CONTAINERS_RUNTIME_SOURCE_H_
#define LENS_CONTAINERS_RUNTIME_SOURCE_H_

#include <memory>
#include <string>
#include <vector>

#include "containers/containerd/containerd_client.h"
#include "lens/containers.h"
#include "lens/status.h"

namespace lens::containers {

// The containerd namespace Docker Engine keeps its containers in; records of
// Docker containers carry it as their runtime namespace.
inline constexpr char kDockerNamespace[] = "moby";

// One runtime's containers. Implementations are thread-safe: List() and
// Get() may run on the maintenance thread while a stream is read on the
// events thread.
class RuntimeSource {
 public:
  virtual ~RuntimeSource() = default;
  // Every container with its process state. NotFound when the socket does
  // not exist, Unavailable when the runtime does not answer; both name it.
  virtual StatusOr<std::vector<RuntimeContainer>> List() = 0;
  // One container; NotFound when it does not exist (any more).
  virtual StatusOr<RuntimeContainer> Get(const std::string& id) = 0;
  // Follows the runtime's container events. Established when this returns
  // OK, so a List() after it misses nothing.
  virtual StatusOr<std::unique_ptr<RuntimeEventStream>> Subscribe() = 0;
  // "containerd at /run/containerd/containerd.sock", for logs and errors.
  virtual std::string Describe() const = 0;
};

// `options` with kAuto resolved (ResolveContainerRuntime) and, for Docker,
// the runtime namespace set to kDockerNamespace.
ContainerTrackerOptions ForRuntime(ContainerTrackerOptions options);

// The source for options.runtime (which ForRuntime() has resolved; kAuto is
// resolved here too).
std::unique_ptr<RuntimeSource> NewRuntimeSource(
    const ContainerTrackerOptions& options);

}  // namespace lens::containers

#endif  // LENS_CONTAINERS_RUNTIME_SOURCE_H_
