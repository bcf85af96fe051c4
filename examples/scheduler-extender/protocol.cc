#include "protocol.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <charconv>
#include <vector>

namespace extender {
namespace {

using rapidjson::Value;

lens::Status Invalid(std::string message) {
  return lens::Status(lens::StatusCode::kInvalidArgument, std::move(message));
}

// A container's quantity of `resource` from limits (extended resources have
// limits equal to requests), else requests; 0 when absent.
lens::StatusOr<int64_t> Quantity(const Value& container, const char* resource) {
  if (!container.HasMember("resources") || !container["resources"].IsObject())
    return int64_t{0};
  const Value& r = container["resources"];
  for (const char* part : {"limits", "requests"}) {
    if (!r.HasMember(part) || !r[part].IsObject() ||
        !r[part].HasMember(resource))
      continue;
    const Value& q = r[part][resource];
    if (q.IsInt64()) return q.GetInt64();
    if (q.IsString()) {
      int64_t n = 0;
      const char* s = q.GetString();
      const char* end = s + q.GetStringLength();
      const auto [ptr, ec] = std::from_chars(s, end, n);
      if (ec == std::errc() && ptr == end && n >= 0) return n;
    }
    return Invalid(std::string(part) + "[" + resource +
                   "] is not a whole number");
  }
  return int64_t{0};
}

bool WantsRdma(const Value& container) {
  if (!container.HasMember("resources") || !container["resources"].IsObject())
    return false;
  for (const char* part : {"limits", "requests"}) {
    const Value& r = container["resources"];
    if (!r.HasMember(part) || !r[part].IsObject()) continue;
    for (const auto& m : r[part].GetObject()) {
      if (std::string_view(m.name.GetString()).starts_with("rdma/"))
        return true;
    }
  }
  return false;
}

// The pod's effective request: the sum over containers, or the largest init
// container's when that is more (init containers run one at a time).
lens::StatusOr<PodRequest> ReadPod(const Value& pod) {
  if (!pod.IsObject() || !pod.HasMember("spec") || !pod["spec"].IsObject())
    return Invalid("pod: no spec");
  PodRequest out;
  const Value& spec = pod["spec"];
  for (const char* list : {"containers", "initContainers"}) {
    if (!spec.HasMember(list) || !spec[list].IsArray()) continue;
    int64_t gpus = 0;
    for (const Value& c : spec[list].GetArray()) {
      int64_t n = 0;
      for (const char* gpu : {"amd.com/gpu", "nvidia.com/gpu"}) {
        auto q = Quantity(c, gpu);
        if (!q.ok())
          return Invalid(std::string("pod: ") + list + ": " +
                         q.status().message());
        n += *q;
      }
      gpus =
          std::string_view(list) == "containers" ? gpus + n : std::max(gpus, n);
      out.rdma = out.rdma || WantsRdma(c);
    }
    out.gpus = std::max(out.gpus, gpus);
  }
  return out;
}

struct Args {
  rapidjson::Document doc;
  PodRequest pod;
  bool by_name = false;            // nodenames (nodeCacheCapable) or nodes
  std::vector<std::string> names;  // in the request's order
};

lens::StatusOr<Args> ReadArgs(std::string_view body) {
  Args a;
  a.doc.Parse(body.data(), body.size());
  if (a.doc.HasParseError() || !a.doc.IsObject())
    return Invalid("the body is not a JSON object (ExtenderArgs)");
  if (!a.doc.HasMember("pod")) return Invalid("ExtenderArgs: no pod");
  auto pod = ReadPod(a.doc["pod"]);
  if (!pod.ok()) return pod.status();
  a.pod = *pod;
  if (a.doc.HasMember("nodenames") && a.doc["nodenames"].IsArray()) {
    a.by_name = true;
    for (const Value& n : a.doc["nodenames"].GetArray()) {
      if (!n.IsString()) return Invalid("nodenames: not a string");
      a.names.emplace_back(n.GetString(), n.GetStringLength());
    }
  } else if (a.doc.HasMember("nodes") && a.doc["nodes"].IsObject() &&
             a.doc["nodes"].HasMember("items") &&
             a.doc["nodes"]["items"].IsArray()) {
    for (const Value& n : a.doc["nodes"]["items"].GetArray()) {
      if (!n.IsObject() || !n.HasMember("metadata") ||
          !n["metadata"].HasMember("name") || !n["metadata"]["name"].IsString())
        return Invalid("nodes.items: a node without metadata.name");
      a.names.emplace_back(n["metadata"]["name"].GetString());
    }
  } else {
    return Invalid("ExtenderArgs: neither nodes nor nodenames");
  }
  return a;
}

std::string Text(const Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return buffer.GetString();
}

}  // namespace

lens::StatusOr<std::string> AnswerFilter(std::string_view body,
                                         const NodeJudge& judge) {
  auto args = ReadArgs(body);
  if (!args.ok()) return args.status();
  rapidjson::Document out(rapidjson::kObjectType);
  auto& alloc = out.GetAllocator();
  Value kept(rapidjson::kArrayType), failed(rapidjson::kObjectType);
  for (size_t i = 0; i < args->names.size(); ++i) {
    const std::string& name = args->names[i];
    const Verdict v = judge.filter(args->pod, name);
    if (!v.fits) {
      failed.AddMember(Value(name.c_str(), alloc),
                       Value(v.reason.c_str(), alloc), alloc);
    } else if (args->by_name) {
      kept.PushBack(Value(name.c_str(), alloc), alloc);
    } else {
      kept.PushBack(
          Value(args->doc["nodes"]["items"][static_cast<unsigned>(i)], alloc),
          alloc);
    }
  }
  if (args->by_name) {
    out.AddMember("nodenames", kept, alloc);
  } else {
    Value list(rapidjson::kObjectType);
    list.AddMember("metadata", Value(rapidjson::kObjectType), alloc);
    list.AddMember("items", kept, alloc);
    out.AddMember("nodes", list, alloc);
  }
  out.AddMember("failedNodes", failed, alloc);
  out.AddMember("error", "", alloc);
  return Text(out);
}

lens::StatusOr<std::string> AnswerPrioritize(std::string_view body,
                                             const NodeJudge& judge) {
  auto args = ReadArgs(body);
  if (!args.ok()) return args.status();
  rapidjson::Document out(rapidjson::kArrayType);
  auto& alloc = out.GetAllocator();
  for (const std::string& name : args->names) {
    Value host(rapidjson::kObjectType);
    host.AddMember("host", Value(name.c_str(), alloc), alloc);
    host.AddMember("score", judge.score(args->pod, name), alloc);
    out.PushBack(host, alloc);
  }
  return Text(out);
}

}  // namespace extender
