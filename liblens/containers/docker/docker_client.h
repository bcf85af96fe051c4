// The Docker Engine API as a container source: list, inspect and the event
// stream over Docker's unix socket (HTTP/1.1), the API version negotiated
// with GET /_ping. Works with Engine 20.10 (API 1.41) and later; API
// versions below 1.24 are refused.
#ifndef LENS_CONTAINERS_DOCKER_DOCKER_CLIENT_H_
#define LENS_CONTAINERS_DOCKER_DOCKER_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "containers/docker/docker_json.h"
#include "containers/runtime_source.h"
#include "lens/host.h"

namespace lens::containers::docker {

// Size limits of what the Engine sends back.
inline constexpr size_t kMaxListBytes = 32 << 20;    // /containers/json
inline constexpr size_t kMaxInspectBytes = 4 << 20;  // one inspect
inline constexpr size_t kMaxEventBytes = 256 << 10;  // one event line
// The newest API version whose JSON this client was written against.
inline constexpr std::string_view kMaxApiVersion = "1.41";
inline constexpr std::string_view kMinApiVersion = "1.24";

// Thread-safe: each call opens its own connection.
class DockerClient final : public RuntimeSource {
 public:
  // `roots` locate the host's /dev (device numbers of HostConfig.Devices) and
  // /proc (NVIDIA GPUs for DeviceRequests); `timeout` bounds each request
  // (not the event stream).
  DockerClient(std::string socket_path, HostRoots roots,
               std::chrono::milliseconds timeout);

  // GET /containers/json?all=1, then an inspect of each (containers removed
  // in between are left out).
  StatusOr<std::vector<RuntimeContainer>> List() override;
  // GET /containers/{id}/json. InvalidArgument for an id with characters
  // outside [A-Za-z0-9_.-]; NotFound when Docker has no such container.
  StatusOr<RuntimeContainer> Get(const std::string& id) override;
  // GET /events for container events (create, start, die, destroy, pause,
  // unpause, oom, update) since now, so nothing between this call and the
  // Engine's registration of the subscriber is missed. Negotiates the API
  // version again (the Engine may have been upgraded).
  StatusOr<std::unique_ptr<RuntimeEventStream>> Subscribe() override;
  std::string Describe() const override;

  // The inspect output, decoded (no devices resolved). `http_status`, when
  // given, receives the HTTP status (0 when no answer came).
  StatusOr<DockerContainer> Inspect(const std::string& id,
                                    int* http_status = nullptr);
  // GET /_ping's Api-Version, capped at kMaxApiVersion; FailedPrecondition
  // below kMinApiVersion. Requests use it from then on.
  StatusOr<std::string> Negotiate();

  // One request on a new connection; the body of a 2xx answer (at most
  // `max_bytes`), else NotFound for 404 and Unavailable/Internal naming the
  // Engine's message. `path` is versioned here ("/containers/json").
  StatusOr<std::string> Call(std::string_view method, const std::string& path,
                             size_t max_bytes, int* http_status = nullptr);

 private:
  StatusOr<std::string> Version();
  std::string Where(std::string_view method, const std::string& path) const;

  const std::string socket_path_;
  const HostRoots roots_;
  const std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::string version_;  // GUARDED_BY(mu_); "" until negotiated
};

// A Docker API version "1.41" as a comparable number (1041); -1 when
// malformed.
int ApiVersionNumber(std::string_view version);

}  // namespace lens::containers::docker

#endif  // LENS_CONTAINERS_DOCKER_DOCKER_CLIENT_H_
