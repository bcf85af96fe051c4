// The Docker Engine API's JSON (API 1.41, moby api/types): the container
// list, container inspect and the event stream, decoded into plain structs.
// Pure parsing, no I/O. Environment variables (Config.Env) are never read:
// no field of these structs can hold them.
#ifndef LENS_CONTAINERS_DOCKER_DOCKER_JSON_H_
#define LENS_CONTAINERS_DOCKER_DOCKER_JSON_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/model.h"
#include "lens/status.h"

namespace lens::containers::docker {

// HostConfig.Devices[]: `--device /dev/dri/renderD128[:/in/container[:rwm]]`.
struct DockerDevice {
  std::string path_on_host;
  std::string path_in_container;
  std::string permissions;  // CgroupPermissions, "rwm"
};

// HostConfig.DeviceRequests[]: `--gpus`.
struct DockerDeviceRequest {
  std::string driver;  // "nvidia", or "" (any driver with the capability)
  int64_t count = 0;   // -1: all
  std::vector<std::string> device_ids;                 // indexes or UUIDs
  std::vector<std::vector<std::string>> capabilities;  // [["gpu"]]
};

// What Lens keeps of GET /containers/{id}/json.
struct DockerContainer {
  std::string id;
  std::string image;  // Config.Image as the user named it, else Image (id)
  std::map<std::string, std::string> labels;  // Config.Labels
  // State.Status: "created", "running", "paused", "restarting", "removing",
  // "exited" or "dead".
  std::string status;
  int64_t pid = 0;
  int32_t exit_code = 0;
  Timestamp created_at{};
  std::optional<Timestamp> started_at;   // absent: never started
  std::optional<Timestamp> finished_at;  // absent: never finished
  bool privileged = false;
  std::vector<DockerDevice> devices;
  std::vector<std::string> device_cgroup_rules;  // "c 226:* rwm"
  std::vector<DockerDeviceRequest> device_requests;
};

// The actions of /events the tracker follows (the rest are dropped where
// they enter).
enum class DockerAction : uint8_t {
  kCreate,
  kStart,
  kDie,
  kDestroy,
  kPause,
  kUnpause,
  kOom,
  kUpdate,
};

struct DockerEvent {
  DockerAction action = DockerAction::kCreate;
  std::string id;
  int64_t time_nano = 0;
  std::optional<int32_t> exit_code;  // die: Actor.Attributes.exitCode
};

// The ids of GET /containers/json. InvalidArgument "Docker container list:
// ..." naming the offset or the element.
StatusOr<std::vector<std::string>> ParseContainerIds(std::string_view json);

// GET /containers/{id}/json. InvalidArgument "Docker inspect: <field>:
// expected <type>" (or the JSON offset); Id and Created are required.
StatusOr<DockerContainer> ParseInspect(std::string_view json);

// One line of the event stream. nullopt for events the tracker does not
// follow (other types, exec_*, kill, attach, ...). InvalidArgument for a
// line that is not an event object.
StatusOr<std::optional<DockerEvent>> ParseEvent(std::string_view json);

// An RFC 3339 time as Docker writes it ("2026-11-26T05:00:10.339659712Z",
// an offset "+02:00" too), truncated to microseconds. nullopt for Go's zero
// time ("0001-01-01T00:00:00Z": never). InvalidArgument otherwise.
StatusOr<std::optional<Timestamp>> ParseDockerTime(std::string_view text);

// The message of an API error body ({"message":"..."}), else the body's
// first 200 bytes.
std::string ErrorMessage(std::string_view body);

}  // namespace lens::containers::docker

#endif  // LENS_CONTAINERS_DOCKER_DOCKER_JSON_H_
