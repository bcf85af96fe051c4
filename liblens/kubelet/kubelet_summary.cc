// ParseKubeletStatsSummary: the kubelet's /stats/summary (summary API
// v1alpha1, k8s.io/kubelet/pkg/apis/stats/v1alpha1) reduced to ephemeral
// storage. Every field Lens reads is type-checked; errors name its JSON path.
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "core/json_reader.h"
#include "lens/kubelet.h"

namespace lens {
namespace {

using rapidjson::Value;

constexpr std::string_view kWhat = "kubelet /stats/summary: ";

Status TypeError(const std::string& path, std::string_view expected) {
  return JsonTypeError(kWhat, path, expected);
}

const Value* Member(const Value& object, const char* key) {
  return JsonMember(object, key);
}

Status OptionalBytes(const Value& object, const char* key,
                     const std::string& parent, std::optional<uint64_t>* out) {
  const Value* v = Member(object, key);
  if (v == nullptr) return OkStatus();
  const std::string path = parent + "." + key;
  if (v->IsUint64()) {
    *out = v->GetUint64();
    return OkStatus();
  }
  // Go encodes uint64 as an integer; accept an integral double as well.
  if (v->IsDouble()) {
    double d = v->GetDouble();
    if (d >= 0 && d < 18446744073709551616.0 && std::floor(d) == d) {
      *out = static_cast<uint64_t>(d);
      return OkStatus();
    }
  }
  return TypeError(path, v->IsNumber() ? "a non-negative integer" : "a number");
}

Status OptionalString(const Value& object, const char* key,
                      const std::string& parent, std::string* out) {
  const Value* v = Member(object, key);
  if (v == nullptr) return OkStatus();
  if (!v->IsString()) return TypeError(parent + "." + key, "a string");
  out->assign(v->GetString(), v->GetStringLength());
  return OkStatus();
}

Status RequiredString(const Value& object, const char* key,
                      const std::string& parent, std::string* out) {
  if (Member(object, key) == nullptr) {
    return InvalidArgumentError(std::string(kWhat) + parent + "." + key +
                                ": missing");
  }
  return OptionalString(object, key, parent, out);
}

// Reads {capacityBytes, usedBytes, availableBytes} of an FsStats object.
template <typename Storage>
Status ReadFsStats(const Value& fs, const std::string& path, Storage* out) {
  if (!fs.IsObject()) return TypeError(path, "an object");
  LENS_RETURN_IF_ERROR(
      OptionalBytes(fs, "capacityBytes", path, &out->capacity_bytes));
  LENS_RETURN_IF_ERROR(OptionalBytes(fs, "usedBytes", path, &out->used_bytes));
  return OptionalBytes(fs, "availableBytes", path, &out->available_bytes);
}

StatusOr<PodEphemeralStorage> ReadPod(const Value& pod,
                                      const std::string& path) {
  if (!pod.IsObject()) return TypeError(path, "an object");
  PodEphemeralStorage out;
  const std::string ref_path = path + ".podRef";
  const Value* ref = Member(pod, "podRef");
  if (ref == nullptr) {
    return InvalidArgumentError(std::string(kWhat) + ref_path + ": missing");
  }
  if (!ref->IsObject()) return TypeError(ref_path, "an object");
  LENS_RETURN_IF_ERROR(RequiredString(*ref, "name", ref_path, &out.name));
  LENS_RETURN_IF_ERROR(
      RequiredString(*ref, "namespace", ref_path, &out.namespace_name));
  LENS_RETURN_IF_ERROR(OptionalString(*ref, "uid", ref_path, &out.uid));
  // Absent while the kubelet has not measured the pod yet (or kubelets
  // older than 1.8).
  if (const Value* storage = Member(pod, "ephemeral-storage")) {
    LENS_RETURN_IF_ERROR(
        ReadFsStats(*storage, path + ".ephemeral-storage", &out));
  }
  return out;
}

Status ReadNode(const Value& node, NodeEphemeralStorage* out) {
  if (!node.IsObject()) return TypeError("node", "an object");
  LENS_RETURN_IF_ERROR(
      OptionalString(node, "nodeName", "node", &out->node_name));
  if (const Value* fs = Member(node, "fs")) {
    LENS_RETURN_IF_ERROR(ReadFsStats(*fs, "node.fs", out));
  }
  return OkStatus();
}

}  // namespace

StatusOr<NodeEphemeralStorage> ParseKubeletStatsSummary(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError(
        std::string(kWhat) + "invalid JSON at offset " +
        std::to_string(doc.GetErrorOffset()) + ": " +
        rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject()) return TypeError("(document)", "an object");
  const Value* node = Member(doc, "node");
  if (node == nullptr) {
    return InvalidArgumentError(std::string(kWhat) + "node: missing");
  }
  NodeEphemeralStorage out;
  LENS_RETURN_IF_ERROR(ReadNode(*node, &out));
  if (const Value* pods = Member(doc, "pods")) {
    if (!pods->IsArray()) return TypeError("pods", "an array");
    out.pods.reserve(pods->Size());
    for (rapidjson::SizeType i = 0; i < pods->Size(); ++i) {
      LENS_ASSIGN_OR_RETURN(
          PodEphemeralStorage pod,
          ReadPod((*pods)[i], "pods[" + std::to_string(i) + "]"));
      out.pods.push_back(std::move(pod));
    }
  }
  std::sort(out.pods.begin(), out.pods.end(),
            [](const PodEphemeralStorage& a, const PodEphemeralStorage& b) {
              return std::tie(a.namespace_name, a.name, a.uid) <
                     std::tie(b.namespace_name, b.name, b.uid);
            });
  return out;
}

}  // namespace lens
