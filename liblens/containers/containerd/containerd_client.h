// Adapter for containerd's gRPC API (containers, tasks and events services)
// over its unix socket, in one namespace. gRPC and generated types stay in
// containerd_client.cc.
#ifndef LENS_CONTAINERS_CONTAINERD_CONTAINERD_CLIENT_H_
#define LENS_CONTAINERS_CONTAINERD_CONTAINERD_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lens/model.h"
#include "lens/status.h"

namespace lens::containers {

// A container's record (containers service) and its task (tasks service).
struct RuntimeContainer {
  std::string id;
  std::string image;
  std::map<std::string, std::string> labels;
  std::string spec_json;  // the OCI runtime spec (Container.spec's value)
  Timestamp created_at{};
  Timestamp updated_at{};
  // The task, when one exists.
  bool has_task = false;
  std::string task_status;  // "created", "running", "stopped", "paused", ...
  int64_t pid = 0;
  std::optional<int32_t> exit_status;  // when stopped
  std::optional<Timestamp> exited_at;
};

// The containerd topics the tracker follows, decoded once where events
// enter (containerd's "/containers/create", "/tasks/start", ...).
enum class RuntimeTopic : uint8_t {
  kContainerCreate,
  kContainerUpdate,
  kContainerDelete,
  kTaskCreate,
  kTaskStart,
  kTaskExit,
  kTaskDelete,
  kTaskOom,
  kTaskPaused,
  kTaskResumed,
};

// One event of the namespace, decoded. Only the fields of its topic are set.
struct RuntimeEvent {
  RuntimeTopic topic = RuntimeTopic::kContainerCreate;
  Timestamp at{};
  std::string container_id;
  // Task events: the process; `exec` is true for an exec'd process (its
  // exit is not the container's).
  int64_t pid = 0;
  bool exec = false;
  std::optional<int32_t> exit_status;
  std::optional<Timestamp> exited_at;
};

// An open event subscription. Next() blocks; Cancel() (any thread) makes it
// return false.
class RuntimeEventStream {
 public:
  virtual ~RuntimeEventStream() = default;
  // False when the stream ended (containerd gone, cancelled); then
  // Finish() says why.
  virtual bool Next(RuntimeEvent* event) = 0;
  virtual void Cancel() = 0;
  virtual Status Finish() = 0;
};

// Thread-safe: calls may run concurrently (gRPC channels are).
class ContainerdClient {
 public:
  // `timeout` bounds each unary call.
  ContainerdClient(std::string socket_path, std::string runtime_namespace,
                   std::chrono::milliseconds timeout);
  ~ContainerdClient();
  ContainerdClient(const ContainerdClient&) = delete;
  ContainerdClient& operator=(const ContainerdClient&) = delete;

  // Every container with its task. Unavailable (naming the socket) when
  // containerd does not answer; NotFound when the socket does not exist.
  StatusOr<std::vector<RuntimeContainer>> List();
  // One container with its task; NotFound when it does not exist.
  StatusOr<RuntimeContainer> Get(const std::string& id);
  // Subscribes to the namespace's container and task events. The stream is
  // established when this returns OK, so a List() after it misses nothing.
  StatusOr<std::unique_ptr<RuntimeEventStream>> Subscribe();

  const std::string& socket_path() const { return socket_path_; }

 private:
  class Impl;
  std::string socket_path_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens::containers

#endif  // LENS_CONTAINERS_CONTAINERD_CONTAINERD_CLIENT_H_
