// Nodes decoded from the API server's JSON.
#include "controller/node_model.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <string>

#include "controller/kube_time.h"
#include "core/json_reader.h"

namespace lens::controller {
namespace {

// The GPUs of a capacity or allocatable map: their sum, and the largest
// resource's name.
Status SumGpus(const rapidjson::Value* amounts, const GpuResourceMatcher& gpus,
               const std::string& where, int32_t* total, std::string* largest) {
  *total = 0;
  if (!amounts || !amounts->IsObject()) return OkStatus();
  int64_t best = 0;
  for (const auto& m : amounts->GetObject()) {
    const std::string_view name(m.name.GetString(), m.name.GetStringLength());
    if (!gpus.Matches(name) || !m.value.IsString()) continue;
    auto n = ParseQuantity(m.value.GetString());
    if (!n.ok()) {
      return InvalidArgumentError(where + "." + std::string(name) + ": " +
                                  n.status().message());
    }
    *total += static_cast<int32_t>(std::min<int64_t>(*n, 1 << 20));
    if (largest && *n > best) {
      best = *n;
      *largest = std::string(name);
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<NodeRecord> DecodeNode(std::string_view json,
                                const GpuResourceMatcher& gpus) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError("node: not a JSON object");
  }
  const rapidjson::Value* meta = JsonMember(doc, "metadata");
  NodeRecord out;
  if (meta && meta->IsObject()) out.name = JsonString(*meta, "name");
  if (out.name.empty()) return InvalidArgumentError("node: no metadata.name");
  const std::string where = "node " + out.name;
  if (auto t = ParseKubeTime(JsonString(*meta, "creationTimestamp")); t.ok()) {
    out.created_at = *t;
  }
  if (const rapidjson::Value* labels = JsonMember(*meta, "labels");
      labels && labels->IsObject()) {
    for (const auto& m : labels->GetObject()) {
      if (m.value.IsString()) {
        out.labels[m.name.GetString()] = m.value.GetString();
      }
    }
  }
  for (const char* key : {"nvidia.com/gpu.product", "amd.com/gpu.product-name",
                          "amd.com/gpu.product", "amd.com/gpu.device-id"}) {
    auto it = out.labels.find(key);
    if (it != out.labels.end() && !it->second.empty()) {
      out.gpu_model = it->second;
      break;
    }
  }
  const rapidjson::Value* status = JsonMember(doc, "status");
  if (!status || !status->IsObject()) {
    out.status = "NotReady";
    return out;
  }
  out.status = "NotReady";
  if (const rapidjson::Value* conditions = JsonMember(*status, "conditions");
      conditions && conditions->IsArray()) {
    for (const rapidjson::Value& c : conditions->GetArray()) {
      if (c.IsObject() && JsonString(c, "type") == "Ready") {
        out.status = JsonString(c, "status") == "True" ? "Ready" : "NotReady";
      }
    }
  }
  if (const rapidjson::Value* addresses = JsonMember(*status, "addresses");
      addresses && addresses->IsArray()) {
    for (const rapidjson::Value& a : addresses->GetArray()) {
      if (!a.IsObject()) continue;
      if (out.address.empty()) out.address = JsonString(a, "address");
      if (JsonString(a, "type") == "InternalIP") {
        out.address = JsonString(a, "address");
        break;
      }
    }
  }
  const rapidjson::Value* capacity = JsonMember(*status, "capacity");
  std::string resource;
  LENS_RETURN_IF_ERROR(SumGpus(capacity, gpus, where + ": status.capacity",
                               &out.gpu_count, &resource));
  LENS_RETURN_IF_ERROR(SumGpus(JsonMember(*status, "allocatable"), gpus,
                               where + ": status.allocatable",
                               &out.gpu_allocatable, nullptr));
  if (!resource.empty()) out.gpu_vendor = GpuVendorOf(resource);
  if (capacity && capacity->IsObject()) {
    if (std::string cpu = JsonString(*capacity, "cpu"); !cpu.empty()) {
      auto n = ParseQuantity(cpu);
      if (!n.ok()) {
        return InvalidArgumentError(
            where + ": status.capacity.cpu: " + n.status().message());
      }
      out.cpu_count = static_cast<int32_t>(*n);
    }
    if (std::string memory = JsonString(*capacity, "memory"); !memory.empty()) {
      auto n = ParseQuantity(memory);
      if (!n.ok()) {
        return InvalidArgumentError(
            where + ": status.capacity.memory: " + n.status().message());
      }
      out.memory_bytes = *n;
    }
  }
  if (const rapidjson::Value* info = JsonMember(*status, "nodeInfo");
      info && info->IsObject()) {
    out.kernel_version = JsonString(*info, "kernelVersion");
    out.os_image = JsonString(*info, "osImage");
    out.kubelet_version = JsonString(*info, "kubeletVersion");
    out.container_runtime = JsonString(*info, "containerRuntimeVersion");
  }
  return out;
}

}  // namespace lens::controller
