// ParseOciSpec: the device facts of an OCI runtime spec (opencontainers
// runtime-spec, config-linux.md: linux.devices, linux.resources.devices,
// linux.cgroupsPath). Every field Lens reads is type-checked; errors name
// its JSON path.
#include "containers/oci_spec.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <string>

#include "core/json_reader.h"

namespace lens::containers {
namespace {

using rapidjson::Value;

constexpr std::string_view kWhat = "OCI runtime spec: ";

Status TypeError(const std::string& path, std::string_view expected) {
  return JsonTypeError(kWhat, path, expected);
}

const Value* Member(const Value& object, const char* key) {
  return JsonMember(object, key);
}

Status OptionalString(const Value& object, const char* key,
                      const std::string& parent, std::string* out) {
  const Value* v = Member(object, key);
  if (v == nullptr) return OkStatus();
  if (!v->IsString()) return TypeError(parent + "." + key, "string");
  out->assign(v->GetString(), v->GetStringLength());
  return OkStatus();
}

Status OptionalInt(const Value& object, const char* key,
                   const std::string& parent, std::optional<int64_t>* out) {
  const Value* v = Member(object, key);
  if (v == nullptr) return OkStatus();
  if (!v->IsInt64()) return TypeError(parent + "." + key, "integer");
  *out = v->GetInt64();
  return OkStatus();
}

Status OptionalBool(const Value& object, const char* key,
                    const std::string& parent, bool* out) {
  const Value* v = Member(object, key);
  if (v == nullptr) return OkStatus();
  if (!v->IsBool()) return TypeError(parent + "." + key, "boolean");
  *out = v->GetBool();
  return OkStatus();
}

// The array member `key` (nullptr when absent), or an error naming it.
StatusOr<const Value*> OptionalArray(const Value& object, const char* key,
                                     const std::string& path) {
  const Value* v = Member(object, key);
  if (v != nullptr && !v->IsArray()) return TypeError(path, "array");
  return v;
}

StatusOr<OciDeviceNode> ReadDeviceNode(const Value& v,
                                       const std::string& path) {
  if (!v.IsObject()) return TypeError(path, "object");
  OciDeviceNode node;
  LENS_RETURN_IF_ERROR(OptionalString(v, "path", path, &node.path));
  LENS_RETURN_IF_ERROR(OptionalString(v, "type", path, &node.type));
  LENS_RETURN_IF_ERROR(OptionalInt(v, "major", path, &node.major));
  LENS_RETURN_IF_ERROR(OptionalInt(v, "minor", path, &node.minor));
  return node;
}

StatusOr<OciDeviceRule> ReadDeviceRule(const Value& v,
                                       const std::string& path) {
  if (!v.IsObject()) return TypeError(path, "object");
  OciDeviceRule rule;
  LENS_RETURN_IF_ERROR(OptionalBool(v, "allow", path, &rule.allow));
  LENS_RETURN_IF_ERROR(OptionalString(v, "type", path, &rule.type));
  LENS_RETURN_IF_ERROR(OptionalInt(v, "major", path, &rule.major));
  LENS_RETURN_IF_ERROR(OptionalInt(v, "minor", path, &rule.minor));
  LENS_RETURN_IF_ERROR(OptionalString(v, "access", path, &rule.access));
  return rule;
}

Status ReadDevices(const Value& linux, OciSpecFacts* out) {
  LENS_ASSIGN_OR_RETURN(const Value* devices,
                        OptionalArray(linux, "devices", "linux.devices"));
  if (devices == nullptr) return OkStatus();
  out->devices.reserve(devices->Size());
  for (rapidjson::SizeType i = 0; i < devices->Size(); ++i) {
    LENS_ASSIGN_OR_RETURN(
        OciDeviceNode node,
        ReadDeviceNode((*devices)[i],
                       "linux.devices[" + std::to_string(i) + "]"));
    out->devices.push_back(std::move(node));
  }
  return OkStatus();
}

Status ReadRules(const Value& linux, OciSpecFacts* out) {
  const Value* resources = Member(linux, "resources");
  if (resources == nullptr) return OkStatus();
  if (!resources->IsObject()) return TypeError("linux.resources", "object");
  const std::string path = "linux.resources.devices";
  LENS_ASSIGN_OR_RETURN(const Value* rules,
                        OptionalArray(*resources, "devices", path));
  if (rules == nullptr) return OkStatus();
  out->rules.reserve(rules->Size());
  for (rapidjson::SizeType i = 0; i < rules->Size(); ++i) {
    LENS_ASSIGN_OR_RETURN(
        OciDeviceRule rule,
        ReadDeviceRule((*rules)[i], path + "[" + std::to_string(i) + "]"));
    out->rules.push_back(std::move(rule));
  }
  return OkStatus();
}

bool SameDevices(const OciDeviceRule& a, const OciDeviceRule& b) {
  return a.type == b.type && a.major == b.major && a.minor == b.minor;
}

}  // namespace

bool AllowsEveryDevice(const std::vector<OciDeviceRule>& rules) {
  // The device controller's model (runc's devices emulator, cgroup v1
  // devices.allow/deny): a rule for every device ("a", or no type, no major,
  // no minor) resets the default and drops the exceptions; a narrower rule
  // that agrees with the default removes its exception, one that disagrees
  // adds one. With no rule at all runc applies its own short allow list.
  bool default_allow = false;
  std::vector<OciDeviceRule> exceptions;
  for (const OciDeviceRule& rule : rules) {
    const bool every_type = rule.type.empty() || rule.type == "a";
    if (every_type && !rule.major && !rule.minor) {
      default_allow = rule.allow;
      exceptions.clear();
      continue;
    }
    std::erase_if(exceptions, [&rule](const OciDeviceRule& e) {
      return SameDevices(e, rule);
    });
    if (rule.allow != default_allow) exceptions.push_back(rule);
  }
  return default_allow && exceptions.empty();
}

StatusOr<OciSpecFacts> ParseOciSpec(std::string_view spec_json) {
  rapidjson::Document doc;
  // Iterative: a hostile spec nested thousands of levels deep cannot
  // exhaust the stack.
  doc.Parse<rapidjson::kParseIterativeFlag>(spec_json.data(), spec_json.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError(
        std::string(kWhat) + "invalid JSON at offset " +
        std::to_string(doc.GetErrorOffset()) + ": " +
        rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject()) return TypeError("(document)", "object");
  OciSpecFacts out;
  const Value* linux = Member(doc, "linux");
  if (linux == nullptr) return out;
  if (!linux->IsObject()) return TypeError("linux", "object");
  LENS_RETURN_IF_ERROR(ReadDevices(*linux, &out));
  LENS_RETURN_IF_ERROR(ReadRules(*linux, &out));
  LENS_RETURN_IF_ERROR(
      OptionalString(*linux, "cgroupsPath", "linux", &out.cgroups_path));
  out.privileged = AllowsEveryDevice(out.rules);
  return out;
}

}  // namespace lens::containers
