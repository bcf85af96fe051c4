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
  std::string type;  // "a", "c", "b"; empty means all
  std::optional<int64_t> major;  // absent means all
  std::optional<int64_t> minor;
  std::string access;  // "rwm"
  bool operator==(const OciDeviceRule&) const = default;
};

struct OciSpecFacts {
  std::vector<OciDeviceNode> devices;
  std::vector<OciDeviceRule> rules;
  // The spec allows every device (a rule with allow, type "a" or empty, no
  // major/minor, that no later rule narrows): what privileged containers get.
  bool privileged = false;
  // linux.cgroupsPath, e.g. "kubepods-besteffort-pod<uid>.slice:cri-containerd:<id>".
  std::string cgroups_path;
};

// Errors: InvalidArgument naming the JSON offset or the field that has the
// wrong type. A spec without a linux section yields empty facts.
StatusOr<OciSpecFacts> ParseOciSpec(std::string_view spec_json);

}  // namespace lens::containers

#endif  // LENS_CONTAINERS_OCI_SPEC_H_
