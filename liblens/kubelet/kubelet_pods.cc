// GPUs allocated to pods, from the kubelet's /pods (a v1 PodList).
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <charconv>

#include "lens/kubelet.h"

namespace lens {
namespace {

constexpr std::string_view kGpuResources[] = {"amd.com/gpu", "nvidia.com/gpu"};

// Extended resources are whole numbers; the API server prints them as strings
// ("8") and some clients as numbers.
StatusOr<int64_t> Quantity(const rapidjson::Value& v, const std::string& path) {
  if (v.IsInt64()) return v.GetInt64();
  if (v.IsString()) {
    std::string_view s(v.GetString(), v.GetStringLength());
    int64_t out = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec == std::errc() && end == s.data() + s.size() && out >= 0) return out;
  }
  return InvalidArgumentError(path + ": expected a whole GPU count");
}

// GPUs one container asks for.
StatusOr<int64_t> ContainerGpus(const rapidjson::Value& c,
                                const std::string& path) {
  if (!c.IsObject()) return InvalidArgumentError(path + ": expected an object");
  auto res = c.FindMember("resources");
  if (res == c.MemberEnd() || !res->value.IsObject()) return int64_t{0};
  int64_t total = 0;
  for (std::string_view resource : kGpuResources) {
    for (const char* kind : {"limits", "requests"}) {
      auto m = res->value.FindMember(kind);
      if (m == res->value.MemberEnd() || !m->value.IsObject()) continue;
      auto q = m->value.FindMember(rapidjson::Value(
          resource.data(), static_cast<rapidjson::SizeType>(resource.size())));
      if (q == m->value.MemberEnd()) continue;
      LENS_ASSIGN_OR_RETURN(
          int64_t n, Quantity(q->value, path + ".resources." + kind + "." +
                                            std::string(resource)));
      total += n;
      break;  // limits win over requests
    }
  }
  return total;
}

StatusOr<int64_t> PodGpus(const rapidjson::Value& pod,
                          const std::string& path) {
  auto spec = pod.FindMember("spec");
  if (spec == pod.MemberEnd() || !spec->value.IsObject()) return int64_t{0};
  int64_t sum = 0;
  int64_t init_max = 0;
  for (const char* list : {"containers", "initContainers"}) {
    auto m = spec->value.FindMember(list);
    if (m == spec->value.MemberEnd()) continue;
    if (!m->value.IsArray())
      return InvalidArgumentError(path + ".spec." + list +
                                  ": expected an array");
    for (rapidjson::SizeType i = 0; i < m->value.Size(); ++i) {
      LENS_ASSIGN_OR_RETURN(
          int64_t n, ContainerGpus(m->value[i], path + ".spec." + list + "[" +
                                                    std::to_string(i) + "]"));
      if (std::string_view(list) == "containers") {
        sum += n;
      } else {
        init_max = std::max(init_max, n);
      }
    }
  }
  return std::max(sum, init_max);
}

bool Finished(const rapidjson::Value& pod) {
  auto status = pod.FindMember("status");
  if (status == pod.MemberEnd() || !status->value.IsObject()) return false;
  auto phase = status->value.FindMember("phase");
  if (phase == status->value.MemberEnd() || !phase->value.IsString())
    return false;
  std::string_view p = phase->value.GetString();
  return p == "Succeeded" || p == "Failed";
}

}  // namespace

StatusOr<GpuAllocation> ParseKubeletPodsGpuAllocation(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError(
        "kubelet /pods: " +
        std::string(rapidjson::GetParseError_En(doc.GetParseError())) +
        " at offset " + std::to_string(doc.GetErrorOffset()));
  }
  if (!doc.IsObject())
    return InvalidArgumentError("kubelet /pods: expected a PodList object");
  auto items = doc.FindMember("items");
  GpuAllocation out;
  if (items == doc.MemberEnd() || items->value.IsNull()) return out;
  if (!items->value.IsArray())
    return InvalidArgumentError("kubelet /pods: items: expected an array");
  for (rapidjson::SizeType i = 0; i < items->value.Size(); ++i) {
    const rapidjson::Value& pod = items->value[i];
    const std::string path = "items[" + std::to_string(i) + "]";
    if (!pod.IsObject())
      return InvalidArgumentError("kubelet /pods: " + path +
                                  ": expected an object");
    if (Finished(pod)) continue;
    StatusOr<int64_t> gpus = PodGpus(pod, path);
    if (!gpus.ok()) return gpus.status().WithContext("kubelet /pods");
    if (*gpus > 0) {
      out.allocated += *gpus;
      ++out.pods;
    }
  }
  return out;
}

}  // namespace lens
