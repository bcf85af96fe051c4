// Decoding the Docker Engine API's JSON (docs.docker.com/engine/api/v1.41:
// ContainerSummary, ContainerInspectResponse, EventMessage). Fields Lens
// reads are type-checked and named in errors; the rest, Config.Env first of
// all, are never looked at.
#include "containers/docker/docker_json.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <cctype>
#include <ctime>

#include "core/json_reader.h"

namespace lens::containers::docker {
namespace {

using rapidjson::Value;

StatusOr<rapidjson::Document> Parse(std::string_view json,
                                    std::string_view what) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError(
        std::string(what) + ": invalid JSON at offset " +
        std::to_string(doc.GetErrorOffset()) + ": " +
        rapidjson::GetParseError_En(doc.GetParseError()));
  }
  return doc;
}

class Reader {
 public:
  explicit Reader(std::string_view what) : what_(what) {}

  Status Error(const std::string& path, std::string_view expected) const {
    return JsonTypeError(what_, path, expected);
  }
  // Object member or nullptr (absent or null); an error for another type.
  StatusOr<const Value*> Object(const Value& parent, const char* key,
                                const std::string& path) const {
    const Value* v = JsonMember(parent, key);
    if (v != nullptr && !v->IsObject()) return Error(path + key, "object");
    return v;
  }
  StatusOr<const Value*> Array(const Value& parent, const char* key,
                               const std::string& path) const {
    const Value* v = JsonMember(parent, key);
    if (v != nullptr && !v->IsArray()) return Error(path + key, "array");
    return v;
  }
  Status String(const Value& parent, const char* key, const std::string& path,
                std::string* out) const {
    const Value* v = JsonMember(parent, key);
    if (v == nullptr) return OkStatus();
    if (!v->IsString()) return Error(path + key, "string");
    out->assign(v->GetString(), v->GetStringLength());
    return OkStatus();
  }
  Status Int(const Value& parent, const char* key, const std::string& path,
             int64_t* out) const {
    const Value* v = JsonMember(parent, key);
    if (v == nullptr) return OkStatus();
    if (!v->IsInt64()) return Error(path + key, "integer");
    *out = v->GetInt64();
    return OkStatus();
  }
  Status Bool(const Value& parent, const char* key, const std::string& path,
              bool* out) const {
    const Value* v = JsonMember(parent, key);
    if (v == nullptr) return OkStatus();
    if (!v->IsBool()) return Error(path + key, "boolean");
    *out = v->GetBool();
    return OkStatus();
  }
  Status Strings(const Value& array, const std::string& path,
                 std::vector<std::string>* out) const {
    for (rapidjson::SizeType i = 0; i < array.Size(); ++i) {
      if (!array[i].IsString()) {
        return Error(path + "[" + std::to_string(i) + "]", "string");
      }
      out->emplace_back(array[i].GetString(), array[i].GetStringLength());
    }
    return OkStatus();
  }
  Status StringMap(const Value& parent, const char* key,
                   const std::string& path,
                   std::map<std::string, std::string>* out) const {
    LENS_ASSIGN_OR_RETURN(const Value* m, Object(parent, key, path));
    if (m == nullptr) return OkStatus();
    for (auto it = m->MemberBegin(); it != m->MemberEnd(); ++it) {
      const std::string name(it->name.GetString(), it->name.GetStringLength());
      if (!it->value.IsString()) {
        return Error(path + key + "[\"" + name + "\"]", "string");
      }
      out->emplace(name, std::string(it->value.GetString(),
                                     it->value.GetStringLength()));
    }
    return OkStatus();
  }

 private:
  std::string_view what_;
};

constexpr std::string_view kInspect = "Docker inspect: ";

Status ReadState(const Reader& r, const Value& state, DockerContainer* c) {
  const std::string p = "State.";
  LENS_RETURN_IF_ERROR(r.String(state, "Status", p, &c->status));
  LENS_RETURN_IF_ERROR(r.Int(state, "Pid", p, &c->pid));
  int64_t exit_code = 0;
  LENS_RETURN_IF_ERROR(r.Int(state, "ExitCode", p, &exit_code));
  c->exit_code = static_cast<int32_t>(exit_code);
  for (auto [key, out] : {std::pair{"StartedAt", &c->started_at},
                          std::pair{"FinishedAt", &c->finished_at}}) {
    std::string text;
    LENS_RETURN_IF_ERROR(r.String(state, key, p, &text));
    if (text.empty()) continue;
    auto t = ParseDockerTime(text);
    if (!t.ok()) return t.status().WithContext(std::string(kInspect) + p + key);
    *out = *t;
  }
  return OkStatus();
}

Status ReadDeviceRequests(const Reader& r, const Value& list,
                          DockerContainer* c) {
  for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
    const std::string p =
        "HostConfig.DeviceRequests[" + std::to_string(i) + "].";
    if (!list[i].IsObject())
      return r.Error(p.substr(0, p.size() - 1), "object");
    DockerDeviceRequest q;
    LENS_RETURN_IF_ERROR(r.String(list[i], "Driver", p, &q.driver));
    LENS_RETURN_IF_ERROR(r.Int(list[i], "Count", p, &q.count));
    LENS_ASSIGN_OR_RETURN(const Value* ids, r.Array(list[i], "DeviceIDs", p));
    if (ids)
      LENS_RETURN_IF_ERROR(r.Strings(*ids, p + "DeviceIDs", &q.device_ids));
    LENS_ASSIGN_OR_RETURN(const Value* caps,
                          r.Array(list[i], "Capabilities", p));
    for (rapidjson::SizeType j = 0; caps && j < caps->Size(); ++j) {
      const std::string cp = p + "Capabilities[" + std::to_string(j) + "]";
      if (!(*caps)[j].IsArray()) return r.Error(cp, "array");
      LENS_RETURN_IF_ERROR(
          r.Strings((*caps)[j], cp, &q.capabilities.emplace_back()));
    }
    c->device_requests.push_back(std::move(q));
  }
  return OkStatus();
}

Status ReadHostConfig(const Reader& r, const Value& hc, DockerContainer* c) {
  const std::string p = "HostConfig.";
  LENS_RETURN_IF_ERROR(r.Bool(hc, "Privileged", p, &c->privileged));
  LENS_ASSIGN_OR_RETURN(const Value* devices, r.Array(hc, "Devices", p));
  for (rapidjson::SizeType i = 0; devices && i < devices->Size(); ++i) {
    const std::string dp = p + "Devices[" + std::to_string(i) + "].";
    if (!(*devices)[i].IsObject()) {
      return r.Error(dp.substr(0, dp.size() - 1), "object");
    }
    DockerDevice d;
    LENS_RETURN_IF_ERROR(
        r.String((*devices)[i], "PathOnHost", dp, &d.path_on_host));
    LENS_RETURN_IF_ERROR(
        r.String((*devices)[i], "PathInContainer", dp, &d.path_in_container));
    LENS_RETURN_IF_ERROR(
        r.String((*devices)[i], "CgroupPermissions", dp, &d.permissions));
    c->devices.push_back(std::move(d));
  }
  LENS_ASSIGN_OR_RETURN(const Value* rules,
                        r.Array(hc, "DeviceCgroupRules", p));
  if (rules) {
    LENS_RETURN_IF_ERROR(
        r.Strings(*rules, p + "DeviceCgroupRules", &c->device_cgroup_rules));
  }
  LENS_ASSIGN_OR_RETURN(const Value* requests,
                        r.Array(hc, "DeviceRequests", p));
  if (requests) LENS_RETURN_IF_ERROR(ReadDeviceRequests(r, *requests, c));
  return OkStatus();
}

// Two digits at s[at], or -1.
int Digits(std::string_view s, size_t at, size_t n) {
  if (at + n > s.size()) return -1;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

StatusOr<std::optional<Timestamp>> ParseDockerTime(std::string_view text) {
  auto bad = [&] {
    return InvalidArgumentError("'" + std::string(text.substr(0, 64)) +
                                "' is not an RFC 3339 time");
  };
  const int year = Digits(text, 0, 4), month = Digits(text, 5, 2),
            day = Digits(text, 8, 2), hour = Digits(text, 11, 2),
            minute = Digits(text, 14, 2), second = Digits(text, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 ||
      hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 ||
      text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't') || text[13] != ':' ||
      text[16] != ':') {
    return bad();
  }
  size_t at = 19;
  int64_t micros = 0;
  if (at < text.size() && text[at] == '.') {
    int digits = 0;
    for (++at;
         at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]));
         ++at, ++digits) {
      if (digits < 6) micros = micros * 10 + (text[at] - '0');
    }
    if (digits == 0) return bad();
    for (; digits < 6; ++digits) micros *= 10;
  }
  int64_t offset_s = 0;
  if (at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
    ++at;
  } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    const int oh = Digits(text, at + 1, 2), om = Digits(text, at + 4, 2);
    if (oh < 0 || om < 0 || text[at + 3] != ':') return bad();
    offset_s = (text[at] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    at += 6;
  } else {
    return bad();
  }
  if (at != text.size()) return bad();
  if (year == 1 && month == 1 && day == 1) {  // Go's zero time
    return std::optional<Timestamp>();
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const int64_t seconds = static_cast<int64_t>(::timegm(&tm)) - offset_s;
  return std::optional<Timestamp>(
      Timestamp(std::chrono::microseconds(seconds * 1000000 + micros)));
}

StatusOr<std::vector<std::string>> ParseContainerIds(std::string_view json) {
  constexpr std::string_view kWhat = "Docker container list";
  LENS_ASSIGN_OR_RETURN(rapidjson::Document doc, Parse(json, kWhat));
  Reader r("Docker container list: ");
  if (!doc.IsArray()) return r.Error("(top level)", "array");
  std::vector<std::string> ids;
  ids.reserve(doc.Size());
  for (rapidjson::SizeType i = 0; i < doc.Size(); ++i) {
    const std::string p = "[" + std::to_string(i) + "]";
    if (!doc[i].IsObject()) return r.Error(p, "object");
    std::string id;
    LENS_RETURN_IF_ERROR(r.String(doc[i], "Id", p + ".", &id));
    if (id.empty()) return r.Error(p + ".Id", "non-empty string");
    ids.push_back(std::move(id));
  }
  return ids;
}

StatusOr<DockerContainer> ParseInspect(std::string_view json) {
  LENS_ASSIGN_OR_RETURN(rapidjson::Document doc, Parse(json, "Docker inspect"));
  Reader r(kInspect);
  if (!doc.IsObject()) return r.Error("(top level)", "object");
  DockerContainer c;
  LENS_RETURN_IF_ERROR(r.String(doc, "Id", "", &c.id));
  if (c.id.empty()) return r.Error("Id", "non-empty string");
  std::string created;
  LENS_RETURN_IF_ERROR(r.String(doc, "Created", "", &created));
  auto created_at = ParseDockerTime(created);
  if (!created_at.ok() || !*created_at) {
    return InvalidArgumentError(std::string(kInspect) + "Created: '" +
                                created.substr(0, 64) +
                                "' is not an RFC 3339 time");
  }
  c.created_at = **created_at;
  LENS_RETURN_IF_ERROR(r.String(doc, "Image", "", &c.image));
  LENS_ASSIGN_OR_RETURN(const Value* config, r.Object(doc, "Config", ""));
  if (config != nullptr) {
    // Only these two members of Config: Env (secrets) and the rest stay
    // unread.
    std::string image;
    LENS_RETURN_IF_ERROR(r.String(*config, "Image", "Config.", &image));
    if (!image.empty()) c.image = std::move(image);
    LENS_RETURN_IF_ERROR(r.StringMap(*config, "Labels", "Config.", &c.labels));
  }
  LENS_ASSIGN_OR_RETURN(const Value* state, r.Object(doc, "State", ""));
  if (state != nullptr) LENS_RETURN_IF_ERROR(ReadState(r, *state, &c));
  LENS_ASSIGN_OR_RETURN(const Value* hc, r.Object(doc, "HostConfig", ""));
  if (hc != nullptr) LENS_RETURN_IF_ERROR(ReadHostConfig(r, *hc, &c));
  return c;
}

StatusOr<std::optional<DockerEvent>> ParseEvent(std::string_view json) {
  LENS_ASSIGN_OR_RETURN(rapidjson::Document doc, Parse(json, "Docker event"));
  Reader r("Docker event: ");
  if (!doc.IsObject()) return r.Error("(top level)", "object");
  std::string type, action;
  LENS_RETURN_IF_ERROR(r.String(doc, "Type", "", &type));
  LENS_RETURN_IF_ERROR(r.String(doc, "Action", "", &action));
  if (type != "container") return std::optional<DockerEvent>();
  // "exec_start: sh -c ...", "health_status: healthy": the verb is first.
  action = action.substr(0, action.find(':'));
  static constexpr std::pair<std::string_view, DockerAction> kActions[] = {
      {"create", DockerAction::kCreate}, {"start", DockerAction::kStart},
      {"die", DockerAction::kDie},       {"destroy", DockerAction::kDestroy},
      {"pause", DockerAction::kPause},   {"unpause", DockerAction::kUnpause},
      {"oom", DockerAction::kOom},       {"update", DockerAction::kUpdate},
  };
  DockerEvent e;
  bool known = false;
  for (const auto& [name, value] : kActions) {
    if (action == name) {
      e.action = value;
      known = true;
    }
  }
  if (!known) return std::optional<DockerEvent>();
  LENS_ASSIGN_OR_RETURN(const Value* actor, r.Object(doc, "Actor", ""));
  if (actor != nullptr) {
    LENS_RETURN_IF_ERROR(r.String(*actor, "ID", "Actor.", &e.id));
    LENS_ASSIGN_OR_RETURN(const Value* attrs,
                          r.Object(*actor, "Attributes", "Actor."));
    std::string code;
    if (attrs != nullptr) {
      LENS_RETURN_IF_ERROR(
          r.String(*attrs, "exitCode", "Actor.Attributes.", &code));
    }
    char* end = nullptr;
    const long v = std::strtol(code.c_str(), &end, 10);
    if (!code.empty() && end == code.c_str() + code.size()) {
      e.exit_code = static_cast<int32_t>(v);
    }
  }
  if (e.id.empty()) LENS_RETURN_IF_ERROR(r.String(doc, "id", "", &e.id));
  if (e.id.empty()) return r.Error("Actor.ID", "non-empty string");
  LENS_RETURN_IF_ERROR(r.Int(doc, "timeNano", "", &e.time_nano));
  if (e.time_nano == 0) {
    int64_t seconds = 0;
    LENS_RETURN_IF_ERROR(r.Int(doc, "time", "", &seconds));
    e.time_nano = seconds * 1000000000;
  }
  return std::optional<DockerEvent>(std::move(e));
}

std::string ErrorMessage(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (!doc.HasParseError() && doc.IsObject()) {
    std::string message = JsonString(doc, "message");
    if (!message.empty()) return message.substr(0, 1000);
  }
  return std::string(body.substr(0, 200));
}

}  // namespace lens::containers::docker
