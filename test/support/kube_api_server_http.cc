// KubeApiServer's request handling: routing, the bearer token, injected
// failures, the request log, Status errors and discovery documents. Lists
// are served in kube_api_server_list.cc, single objects (get and the write
// verbs) in kube_api_server_objects.cc, watches in kube_api_server_watch.cc.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kube_api_server_impl.h"

namespace lens::test {
namespace kube {
namespace {

struct KnownStatus {
  int code;
  const char* reason;
  const char* message;
};

// The reasons and default messages the API server answers with.
constexpr KnownStatus kKnownStatuses[] = {
    {400, "BadRequest", "the request is invalid"},
    {401, "Unauthorized", "Unauthorized"},
    {403, "Forbidden", "forbidden"},
    {404, "NotFound", "the server could not find the requested resource"},
    {405, "MethodNotAllowed",
     "the server does not allow this method on the requested resource"},
    {409, "Conflict", "the object has been modified"},
    {410, "Expired", "the resource version is too old"},
    {415, "UnsupportedMediaType",
     "the body of the request was in an unknown format"},
    {422, "Invalid", "the object is invalid"},
    {429, "TooManyRequests", "Too many requests, please try again later."},
    {500, "InternalError", "Internal error occurred: injected failure"},
    {503, "ServiceUnavailable",
     "the server is currently unable to handle the request"},
    {504, "Timeout",
     "the server was unable to return a response in the time allotted"},
};

// Splits at `sep`, dropping empty parts.
std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  while (!s.empty()) {
    const size_t at = s.find(sep);
    if (at != 0) parts.push_back(s.substr(0, at));
    if (at == std::string_view::npos) break;
    s.remove_prefix(at + 1);
  }
  return parts;
}

}  // namespace

std::string JsonQuote(std::string_view text) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return std::string(buffer.GetString(), buffer.GetSize());
}

bool ParseBool(std::string_view s) {
  return s == "1" || s == "t" || s == "T" || s == "true" || s == "True" ||
         s == "TRUE";
}

StatusSpec StatusOf(int code, std::string message) {
  StatusSpec s;
  s.code = code;
  s.message = std::move(message);
  return s;
}

void Answer(httplib::Response& res, int status, std::string body) {
  res.status = status;
  res.set_content(std::move(body), "application/json");
}

void AnswerStatus(httplib::Response& res, const StatusSpec& status) {
  if (status.retry_after_seconds > 0) {
    res.set_header("Retry-After", std::to_string(status.retry_after_seconds));
  }
  Answer(res, status.code, StatusJson(status));
}

std::string StatusJson(const StatusSpec& s) {
  const KnownStatus* known = nullptr;
  for (const auto& k : kKnownStatuses) {
    if (k.code == s.code) known = &k;
  }
  const std::string reason = !s.reason.empty() ? s.reason
                             : known           ? known->reason
                                               : "";
  const std::string message = !s.message.empty() ? s.message
                              : known            ? known->message
                                                 : "";
  std::string out = R"({"kind":"Status","apiVersion":"v1","metadata":{)";
  if (!s.continue_token.empty()) {
    out += R"("continue":)" + JsonQuote(s.continue_token);
  }
  out += R"(},"status":"Failure","message":)" + JsonQuote(message);
  if (!reason.empty()) out += R"(,"reason":)" + JsonQuote(reason);
  std::string details;
  auto add = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    details +=
        (details.empty() ? "\"" : ",\"") + std::string(key) + "\":" + value;
  };
  add("name", s.name.empty() ? "" : JsonQuote(s.name));
  add("group", s.group.empty() ? "" : JsonQuote(s.group));
  add("kind", s.kind.empty() ? "" : JsonQuote(s.kind));
  add("retryAfterSeconds",
      s.retry_after_seconds > 0 ? std::to_string(s.retry_after_seconds) : "");
  if (!details.empty() || s.code == 404)
    out += ",\"details\":{" + details + "}";
  return out + ",\"code\":" + std::to_string(s.code) + "}";
}

bool WantsMetadataOnly(std::string_view accept) {
  for (std::string_view range : Split(accept, ',')) {
    while (!range.empty() && range.front() == ' ') range.remove_prefix(1);
    if (range.find("as=") == std::string_view::npos) return false;
    if (range.find("as=PartialObjectMetadata") != std::string_view::npos &&
        range.find("g=meta.k8s.io") != std::string_view::npos) {
      return true;
    }
    // Another conversion (Table): not served, try the next.
  }
  return false;
}

}  // namespace kube

using kube::ChangeResult;
using kube::Outcome;
using kube::StatusSpec;
using kube::Target;

using kube::Answer;
using kube::AnswerStatus;
using kube::StatusOf;

namespace {

std::string VerbOf(const httplib::Request& req, const Target& target) {
  switch (target.kind) {
    case Target::Kind::kUnknown:
      return "";
    case Target::Kind::kCollection:
    case Target::Kind::kObject:
      break;
    default:
      return "discovery";
  }
  const bool object = target.kind == Target::Kind::kObject;
  if (req.method == "GET") {
    if (kube::ParseBool(req.get_param_value("watch"))) return "watch";
    return object ? "get" : "list";
  }
  if (req.method == "POST") return "create";
  if (req.method == "PUT") return "update";
  if (req.method == "PATCH") return "patch";
  if (req.method == "DELETE") return object ? "delete" : "deletecollection";
  return "";
}

bool Authorized(const httplib::Request& req, const std::string& token) {
  if (token.empty()) return true;
  const std::string header = req.get_header_value("Authorization");
  const size_t space = header.find(' ');
  return space != std::string::npos &&
         strncasecmp(header.c_str(), "bearer", space) == 0 && space == 6 &&
         header.substr(space + 1) == token;
}

}  // namespace

void KubeApiServer::Impl::Serve(const httplib::Request& req,
                                httplib::Response& res) {
  KubeRequest entry;
  entry.method = req.method;
  entry.path = req.path;
  const size_t question = req.target.find('?');
  if (question != std::string::npos) {
    entry.query = req.target.substr(question + 1);
  }
  Target target;
  {
    std::lock_guard lock(mu_);
    target = ParsePath(req.path);
  }
  entry.verb = VerbOf(req, target);
  const std::string entry_verb = entry.verb;
  if (entry.verb != "discovery") {
    entry.group = target.group;
    entry.resource = target.resource;
    entry.namespace_name = target.namespace_name;
    entry.name = target.name;
  }
  // Recorded before it is served: a watch is open (open_watches()) from
  // inside ServeParsed, and a test that saw it open must find its request.
  size_t index = 0;
  uint64_t generation = 0;
  {
    std::lock_guard lock(mu_);
    index = requests_.size();
    generation = requests_cleared_;
    requests_.push_back(std::move(entry));
  }
  if (!Authorized(req, options_.token)) {
    AnswerStatus(res, StatusOf(401));
  } else if (!TakeFailure(req.path, res)) {
    ServeParsed(req, res, target, entry_verb);
  }
  std::lock_guard lock(mu_);
  if (requests_cleared_ == generation && index < requests_.size()) {
    requests_[index].status = res.status;
  }
}

bool KubeApiServer::Impl::TakeFailure(const std::string& path,
                                      httplib::Response& res) {
  StatusSpec status;
  std::string body;
  {
    std::lock_guard lock(mu_);
    auto it = failures_.begin();
    while (it != failures_.end() &&
           (it->count <= 0 || path.find(it->path_part) == std::string::npos)) {
      ++it;
    }
    if (it == failures_.end()) return false;
    status.code = it->status;
    body = it->body;
    if (--it->count <= 0) failures_.erase(it);
  }
  if (!body.empty()) {
    res.status = status.code;
    res.set_content(body, "application/json");
    return true;
  }
  if (status.code == 429) status.retry_after_seconds = 1;
  AnswerStatus(res, status);
  return true;
}

void KubeApiServer::Impl::ServeParsed(const httplib::Request& req,
                                      httplib::Response& res,
                                      const Target& target,
                                      const std::string& verb) {
  using Kind = Target::Kind;
  if (target.kind == Kind::kUnknown) return AnswerStatus(res, StatusOf(404));
  if (target.kind != Kind::kCollection && target.kind != Kind::kObject) {
    if (req.method != "GET") return AnswerStatus(res, StatusOf(405));
    return ServeDiscovery(target, res);
  }
  if (verb == "watch" || verb == "list") {
    kube::Selector selector;
    std::string error = kube::ParseSelector(
        req.get_param_value("labelSelector"), true, &selector.labels);
    if (error.empty()) {
      error = kube::ParseSelector(req.get_param_value("fieldSelector"), false,
                                  &selector.fields);
    }
    if (!error.empty()) {
      return AnswerStatus(res, StatusOf(400, error));
    }
    if (verb == "watch") return ServeWatch(req, res, target, selector);
    return ServeList(req, res, target, selector);
  }
  if (verb == "get") return ServeGet(req, res, target);
  // A namespaced type is created in a namespace's collection only.
  if (verb == "create" && target.kind == Kind::kCollection &&
      (!target.namespace_name.empty() || !target.namespaced)) {
    return ServeCreate(req, res, target);
  }
  if (target.kind == Kind::kObject) {
    if (verb == "update" || verb == "patch") {
      return ServeUpdate(req, res, target, verb == "patch");
    }
    if (verb == "delete") return ServeDelete(req, res, target);
  }
  // deletecollection, and create/update/patch on the wrong path.
  AnswerStatus(res, StatusOf(405));
}

Target KubeApiServer::Impl::ParsePath(const std::string& path) const {
  std::vector<std::string> p;
  for (std::string_view part : kube::Split(path, '/')) p.emplace_back(part);
  Target t;
  auto served = [&](std::string_view group, std::string_view version) {
    for (const auto& type : types_) {
      if (type.group == group && (version.empty() || type.version == version)) {
        return true;
      }
    }
    return false;
  };
  size_t rest = 0;
  if (!p.empty() && p[0] == "api") {
    if (p.size() == 1) t.kind = Target::Kind::kVersions;
    if (p.size() == 1 || !served("", p[1])) return t;
    t.version = p[1];
    rest = 2;
  } else if (!p.empty() && p[0] == "apis") {
    if (p.size() == 1) t.kind = Target::Kind::kGroupList;
    if (p.size() == 1 || p[1].empty() || !served(p[1], "")) return t;
    t.group = p[1];
    if (p.size() == 2) t.kind = Target::Kind::kGroup;
    if (p.size() == 2 || !served(p[1], p[2])) return t;
    t.version = p[2];
    rest = 3;
  } else {
    return t;
  }
  const size_t n = p.size() - rest;
  if (n == 0) {
    t.kind = Target::Kind::kResourceList;
    return t;
  }
  if (n >= 3 && p[rest] == "namespaces") {
    if (n > 4) return t;  // subresources are not served
    t.namespace_name = p[rest + 1];
    t.resource = p[rest + 2];
    if (n == 4) t.name = p[rest + 3];
  } else {
    if (n > 2) return t;
    t.resource = p[rest];
    if (n == 2) t.name = p[rest + 1];
  }
  const int type = FindResource(t.group, t.version, t.resource);
  if (type < 0) return t;
  const bool namespaced = types_[type].namespaced;
  if (!t.namespace_name.empty() && !namespaced) return t;
  if (t.namespace_name.empty() && namespaced && !t.name.empty()) return t;
  t.type = static_cast<size_t>(type);
  t.namespaced = namespaced;
  t.kind = t.name.empty() ? Target::Kind::kCollection : Target::Kind::kObject;
  return t;
}

namespace {

using Types = std::vector<KubeResourceType>;

// An APIGroup's members: name, versions (in the order served, the first
// preferred), preferredVersion.
std::string GroupMembers(const Types& types, const std::string& group) {
  std::vector<std::string> versions;
  for (const auto& t : types) {
    if (t.group == group && std::find(versions.begin(), versions.end(),
                                      t.version) == versions.end()) {
      versions.push_back(t.version);
    }
  }
  auto version = [&](const std::string& v) {
    return R"({"groupVersion":)" + kube::JsonQuote(group + "/" + v) +
           R"(,"version":)" + kube::JsonQuote(v) + "}";
  };
  std::string list;
  for (const auto& v : versions) list += (list.empty() ? "" : ",") + version(v);
  return R"("name":)" + kube::JsonQuote(group) + R"(,"versions":[)" + list +
         R"(],"preferredVersion":)" + version(versions.front());
}

std::string GroupList(const Types& types) {
  std::vector<std::string> groups;
  for (const auto& t : types) {
    if (!t.group.empty() &&
        std::find(groups.begin(), groups.end(), t.group) == groups.end()) {
      groups.push_back(t.group);
    }
  }
  std::string list;
  for (const auto& g : groups) {
    list += (list.empty() ? "{" : ",{") + GroupMembers(types, g) + "}";
  }
  return R"({"kind":"APIGroupList","apiVersion":"v1","groups":[)" + list + "]}";
}

// The APIResourceList of one group version; subresources are not served,
// so none are listed.
std::string ResourceList(const Types& types, const std::string& group,
                         const std::string& version) {
  std::string list;
  for (const auto& t : types) {
    if (t.group != group || t.version != version) continue;
    std::string singular = t.kind;
    for (char& c : singular) c = static_cast<char>(std::tolower(c));
    list += std::string(list.empty() ? "" : ",") + R"({"name":)" +
            kube::JsonQuote(t.resource) + R"(,"singularName":)" +
            kube::JsonQuote(singular) + R"(,"namespaced":)" +
            (t.namespaced ? "true" : "false") + R"(,"kind":)" +
            kube::JsonQuote(t.kind) +
            R"(,"verbs":["create","delete","get","list","patch","update",)"
            R"("watch"]})";
  }
  const std::string gv = group.empty() ? version : group + "/" + version;
  return R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":)" +
         kube::JsonQuote(gv) + R"(,"resources":[)" + list + "]}";
}

}  // namespace

void KubeApiServer::Impl::ServeDiscovery(const Target& target,
                                         httplib::Response& res) {
  std::lock_guard lock(mu_);
  switch (target.kind) {
    case Target::Kind::kVersions:
      return Answer(
          res, 200,
          R"({"kind":"APIVersions","versions":["v1"],)"
          R"("serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0",)"
          R"("serverAddress":"127.0.0.1:)" +
              std::to_string(port_) + "\"}]}");
    case Target::Kind::kGroupList:
      return Answer(res, 200, GroupList(types_));
    case Target::Kind::kGroup:
      return Answer(res, 200,
                    R"({"kind":"APIGroup","apiVersion":"v1",)" +
                        GroupMembers(types_, target.group) + "}");
    default:
      return Answer(res, 200,
                    ResourceList(types_, target.group, target.version));
  }
}

}  // namespace lens::test
