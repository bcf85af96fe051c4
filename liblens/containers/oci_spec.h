// The device facts of an OCI runtime spec (config.json, as containerd stores
// it in Container.spec): device nodes, device cgroup rules, and whether the
// container is privileged. Pure parsing, no I/O.
#ifndef LENS_CONTAINERS_OCI_SPEC_H_
#define LENS_CONTAINERS_OCI_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"

namespace lens::containers {

// linux.devices[]: a device node created in the container.
struct OciDeviceNode {
  std::string path;  // path inside the container, "/dev/dri/renderD128"
  std::string type;  // "c", "b", "u", "p"
  std::optional<int64_t> major;
  std::optional<int64_t> minor;
  bool operator==(const OciDeviceNode&) const = default;
};

// linux.resources.devices[]: a device cgroup rule.
struct OciDeviceRule {
  bool allow = false;
  std::string type;              // "a", "c", "b"; empty means all
  std::optional<int64_t> major;  // absent means all
  std::optional<int64_t> minor;
  std::string access;  // "rwm"
  bool operator==(const OciDeviceRule&) const = default;
};

struct OciSpecFacts {
  std::vector<OciDeviceNode> devices;  // in spec order
  std::vector<OciDeviceRule> rules;    // in spec order
  // AllowsEveryDevice(rules): what privileged containers get (containerd's
  // CRI plugin and `ctr run --privileged` write the single rule
  // {"allow": true, "access": "rwm"}; other containers get a deny-all rule
  // followed by one allow per device).
  bool privileged = false;
  // linux.cgroupsPath: "kubepods-besteffort-pod<uid>.slice:cri-containerd:<id>"
  // (systemd driver) or "/kubepods/besteffort/pod<uid>/<id>" (cgroupfs).
  std::string cgroups_path;
};

// Whether the rules, applied in order as the device cgroup applies them,
// end allowing every device: a rule for every device (type "a" or empty, no
// major, no minor) sets the default and drops earlier exceptions, a
// narrower rule adds or removes an exception; the result is an allowing
// default with no exception left. Access letters are not considered. No
// rule at all is not privileged (the runtime then applies its own short
// allow list).
bool AllowsEveryDevice(const std::vector<OciDeviceRule>& rules);

// Parses a config.json (UTF-8; the caller bounds its size). Unknown fields
// are ignored; absent or null fields keep their defaults. Errors:
// InvalidArgument "OCI runtime spec: invalid JSON at offset <n>: <reason>",
// or naming the field with the wrong type ("OCI runtime spec:
// linux.devices[2].major: expected integer"). A spec without a linux section
// yields empty facts. Thread-safe (no shared state).
StatusOr<OciSpecFacts> ParseOciSpec(std::string_view spec_json);

}  // namespace lens::containers

#endif  // LENS_CONTAINERS_OCI_SPEC_H_
