#include "controller/pod_model.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>

#include "controller/kube_time.h"
#include "controller/pod_requests.h"
#include "core/json.h"
#include "core/json_reader.h"
#include "lens/log.h"

namespace lens::controller {
namespace {

using rapidjson::Value;

std::string_view Str(const Value& v) {
  return std::string_view(v.GetString(), v.GetStringLength());
}

Status TypeError(std::string_view path, const char* key,
                 std::string_view expected) {
  return JsonTypeError("", std::string(path) + (path.empty() ? "" : ".") + key,
                       expected);
}

// Readers of one member of `object`: absent or null gives the empty value, a
// member of another type an error naming `path`.`key`.
Status ObjectField(const Value& object, const char* key, std::string_view path,
                   const Value** out) {
  *out = JsonMember(object, key);
  if (*out && !(*out)->IsObject()) return TypeError(path, key, "an object");
  return OkStatus();
}

Status ArrayField(const Value& object, const char* key, std::string_view path,
                  const Value** out) {
  *out = JsonMember(object, key);
  if (*out && !(*out)->IsArray()) return TypeError(path, key, "an array");
  return OkStatus();
}

Status StringField(const Value& object, const char* key, std::string_view path,
                   std::string_view* out) {
  const Value* v = JsonMember(object, key);
  if (v && !v->IsString()) return TypeError(path, key, "a string");
  *out = v ? Str(*v) : std::string_view();
  return OkStatus();
}

Status IntField(const Value& object, const char* key, std::string_view path,
                int32_t* out) {
  const Value* v = JsonMember(object, key);
  if (v && !v->IsInt()) return TypeError(path, key, "a 32-bit integer");
  *out = v ? v->GetInt() : 0;
  return OkStatus();
}

Status TimeField(const Value& object, const char* key, std::string_view path,
                 std::optional<Timestamp>* out) {
  std::string_view text;
  LENS_RETURN_IF_ERROR(StringField(object, key, path, &text));
  out->reset();
  if (text.empty()) return OkStatus();
  StatusOr<Timestamp> t = ParseKubeTime(text);
  if (!t.ok()) return t.status().WithContext(std::string(path) + "." + key);
  *out = *t;
  return OkStatus();
}

void Earliest(const std::optional<Timestamp>& t, std::optional<Timestamp>* m) {
  if (t && (!*m || *t < **m)) *m = t;
}
void Latest(const std::optional<Timestamp>& t, std::optional<Timestamp>* m) {
  if (t && (!*m || *t > **m)) *m = t;
}

Status DecodeOwner(const Value& o, const std::string& path, PodView* pod) {
  if (!o.IsObject()) return JsonTypeError("", path, "an object");
  OwnerReference ref;
  std::string_view s;
  LENS_RETURN_IF_ERROR(StringField(o, "apiVersion", path, &s));
  ref.api_version = s;
  LENS_RETURN_IF_ERROR(StringField(o, "kind", path, &s));
  ref.kind = s;
  LENS_RETURN_IF_ERROR(StringField(o, "name", path, &s));
  ref.name = s;
  LENS_RETURN_IF_ERROR(StringField(o, "uid", path, &s));
  ref.uid = s;
  const Value* controller = JsonMember(o, "controller");
  if (controller && !controller->IsBool()) {
    return TypeError(path, "controller", "a boolean");
  }
  ref.controller = controller && controller->GetBool();
  if (ref.controller && !pod->controller) pod->controller = ref;
  pod->owners.push_back(std::move(ref));
  return OkStatus();
}

// Everything in metadata but the name, namespace and uid.
Status DecodeMetadata(const Value& meta, PodView* pod) {
  std::string_view rv;
  LENS_RETURN_IF_ERROR(StringField(meta, "resourceVersion", "metadata", &rv));
  pod->resource_version = rv;
  std::optional<Timestamp> created;
  LENS_RETURN_IF_ERROR(
      TimeField(meta, "creationTimestamp", "metadata", &created));
  pod->created_at = created.value_or(Timestamp{});
  LENS_RETURN_IF_ERROR(
      TimeField(meta, "deletionTimestamp", "metadata", &pod->deletion_at));
  const Value* labels;
  LENS_RETURN_IF_ERROR(ObjectField(meta, "labels", "metadata", &labels));
  if (labels) {
    for (const auto& m : labels->GetObject()) {
      if (!m.value.IsString()) {
        return JsonTypeError("", "metadata.labels." + std::string(Str(m.name)),
                             "a string");
      }
      pod->labels.emplace(Str(m.name), Str(m.value));
    }
  }
  const Value* owners;
  LENS_RETURN_IF_ERROR(
      ArrayField(meta, "ownerReferences", "metadata", &owners));
  for (rapidjson::SizeType i = 0; owners && i < owners->Size(); ++i) {
    LENS_RETURN_IF_ERROR(DecodeOwner(
        (*owners)[i], "metadata.ownerReferences[" + std::to_string(i) + "]",
        pod));
  }
  return OkStatus();
}

// A container's status as the snapshot carries it.
struct ContainerSnapshot {
  enum class State { kNone, kWaiting, kRunning, kTerminated };
  std::string_view name;
  int32_t restarts = 0;
  State state = State::kNone;
  std::string_view reason;
  int32_t exit_code = 0;
};

// What the pod's status says beyond its plain fields.
struct StatusFacts {
  std::optional<Timestamp> first_running;  // of never-restarted containers
  std::optional<Timestamp> last_finished;  // of any terminated container
  std::vector<std::pair<std::string_view, std::string_view>> conditions;
  std::vector<ContainerSnapshot> containers[2];  // init, app
};

// Reads state.<which> of a container status; nullptr when that is not it.
Status StateOf(const Value* state, const char* which, const std::string& path,
               const Value** out) {
  *out = nullptr;
  if (!state) return OkStatus();
  return ObjectField(*state, which, path + ".state", out);
}

Status DecodeContainerStatus(const Value& cs, const std::string& path, bool app,
                             PodView* pod, StatusFacts* facts) {
  if (!cs.IsObject()) return JsonTypeError("", path, "an object");
  ContainerSnapshot snap;
  LENS_RETURN_IF_ERROR(StringField(cs, "name", path, &snap.name));
  LENS_RETURN_IF_ERROR(IntField(cs, "restartCount", path, &snap.restarts));
  if (snap.restarts < 0 ||
      pod->restarts > std::numeric_limits<int32_t>::max() - snap.restarts) {
    return InvalidArgumentError(path + ".restartCount: out of range");
  }
  pod->restarts += snap.restarts;
  const Value* state;
  LENS_RETURN_IF_ERROR(ObjectField(cs, "state", path, &state));
  const Value *terminated, *running, *waiting;
  LENS_RETURN_IF_ERROR(StateOf(state, "terminated", path, &terminated));
  LENS_RETURN_IF_ERROR(StateOf(state, "running", path, &running));
  LENS_RETURN_IF_ERROR(StateOf(state, "waiting", path, &waiting));
  std::optional<Timestamp> t;
  if (terminated) {
    const std::string p = path + ".state.terminated";
    snap.state = ContainerSnapshot::State::kTerminated;
    LENS_RETURN_IF_ERROR(StringField(*terminated, "reason", p, &snap.reason));
    LENS_RETURN_IF_ERROR(IntField(*terminated, "exitCode", p, &snap.exit_code));
    LENS_RETURN_IF_ERROR(TimeField(*terminated, "finishedAt", p, &t));
    Latest(t, &facts->last_finished);
  } else if (running) {
    snap.state = ContainerSnapshot::State::kRunning;
    LENS_RETURN_IF_ERROR(
        TimeField(*running, "startedAt", path + ".state.running", &t));
    if (app && snap.restarts == 0) Earliest(t, &facts->first_running);
  } else if (waiting) {
    snap.state = ContainerSnapshot::State::kWaiting;
    LENS_RETURN_IF_ERROR(
        StringField(*waiting, "reason", path + ".state.waiting", &snap.reason));
  }
  facts->containers[app].push_back(snap);
  if (snap.restarts == 0) return OkStatus();
  const Value *last, *last_terminated = nullptr;
  LENS_RETURN_IF_ERROR(ObjectField(cs, "lastState", path, &last));
  if (last) {
    LENS_RETURN_IF_ERROR(ObjectField(*last, "terminated", path + ".lastState",
                                     &last_terminated));
  }
  if (!last_terminated) return OkStatus();
  LENS_RETURN_IF_ERROR(TimeField(*last_terminated, "finishedAt",
                                 path + ".lastState.terminated", &t));
  Latest(t, &pod->last_restart_at);
  return OkStatus();
}

Status DecodeConditions(const Value& status, PodView* pod, StatusFacts* facts,
                        std::optional<Timestamp>* ready_at) {
  const Value* conditions;
  LENS_RETURN_IF_ERROR(ArrayField(status, "conditions", "status", &conditions));
  for (rapidjson::SizeType i = 0; conditions && i < conditions->Size(); ++i) {
    const Value& c = (*conditions)[i];
    const std::string path = "status.conditions[" + std::to_string(i) + "]";
    if (!c.IsObject()) return JsonTypeError("", path, "an object");
    std::string_view type, value;
    LENS_RETURN_IF_ERROR(StringField(c, "type", path, &type));
    LENS_RETURN_IF_ERROR(StringField(c, "status", path, &value));
    facts->conditions.emplace_back(type, value);
    if (type != "PodScheduled" && type != "Ready") continue;
    std::optional<Timestamp> t;
    LENS_RETURN_IF_ERROR(TimeField(c, "lastTransitionTime", path, &t));
    if (type == "Ready") {
      pod->ready = value == "True";
      *ready_at = t;
    } else if (value == "True") {
      pod->scheduled_at = t;
    }
  }
  return OkStatus();
}

Status DecodeStatus(const Value& status, PodView* pod, StatusFacts* facts) {
  std::string_view s;
  LENS_RETURN_IF_ERROR(StringField(status, "phase", "status", &s));
  pod->phase = s.empty() ? "Pending" : std::string(s);
  LENS_RETURN_IF_ERROR(StringField(status, "podIP", "status", &s));
  pod->ip = s;
  std::optional<Timestamp> ready_at, start_time;
  LENS_RETURN_IF_ERROR(DecodeConditions(status, pod, facts, &ready_at));
  LENS_RETURN_IF_ERROR(TimeField(status, "startTime", "status", &start_time));
  static constexpr const char* kLists[] = {"initContainerStatuses",
                                           "containerStatuses"};
  for (int app = 0; app < 2; ++app) {
    const Value* list;
    LENS_RETURN_IF_ERROR(ArrayField(status, kLists[app], "status", &list));
    for (rapidjson::SizeType i = 0; list && i < list->Size(); ++i) {
      LENS_RETURN_IF_ERROR(DecodeContainerStatus(
          (*list)[i],
          "status." + std::string(kLists[app]) + "[" + std::to_string(i) + "]",
          app == 1, pod, facts));
    }
  }
  pod->started_at = facts->first_running ? facts->first_running : start_time;
  if (pod->phase == "Succeeded" || pod->phase == "Failed") {
    pod->ended_at = facts->last_finished ? facts->last_finished : ready_at;
  }
  return OkStatus();
}

void WriteString(JsonWriter& w, std::string_view s) { w.String(s); }

void WriteContainers(JsonWriter& w, const char* key,
                     std::vector<ContainerSnapshot>* list) {
  std::sort(
      list->begin(), list->end(),
      [](const ContainerSnapshot& a, const ContainerSnapshot& b) {
        // All fields: even duplicate names (invalid) sort one way.
        return std::tie(a.name, a.restarts, a.state, a.reason, a.exit_code) <
               std::tie(b.name, b.restarts, b.state, b.reason, b.exit_code);
      });
  w.Key(key);
  w.StartArray();
  for (const ContainerSnapshot& c : *list) {
    w.StartObject();
    w.Key("name");
    WriteString(w, c.name);
    w.Key("restartCount");
    w.Int(c.restarts);
    w.Key("state");
    w.StartObject();
    using State = ContainerSnapshot::State;
    if (c.state != State::kNone) {
      w.Key(c.state == State::kWaiting   ? "waiting"
            : c.state == State::kRunning ? "running"
                                         : "terminated");
      w.StartObject();
      if (c.state == State::kTerminated) {
        w.Key("exitCode");
        w.Int(c.exit_code);
      }
      if (c.state != State::kRunning) {
        w.Key("reason");
        WriteString(w, c.reason);
      }
      w.EndObject();
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
}

// The watched fields in a fixed order, lists sorted by name: the text
// depends on the pod's state only.
std::string Snapshot(const PodView& pod, StatusFacts* facts) {
  JsonWriter w;
  w.StartObject();
  w.Key("phase");
  WriteString(w, pod.phase);
  w.Key("node");
  WriteString(w, pod.node);
  w.Key("ip");
  WriteString(w, pod.ip);
  w.Key("ready");
  w.Bool(pod.ready);
  w.Key("restarts");
  w.Int(pod.restarts);
  w.Key("deletionTimestamp");
  if (pod.deletion_at) {
    WriteString(w, FormatLogTimestamp(*pod.deletion_at));
  } else {
    w.Null();
  }
  std::sort(facts->conditions.begin(), facts->conditions.end());
  w.Key("conditions");
  w.StartArray();
  for (const auto& [type, status] : facts->conditions) {
    w.StartObject();
    w.Key("type");
    WriteString(w, type);
    w.Key("status");
    WriteString(w, status);
    w.EndObject();
  }
  w.EndArray();
  WriteContainers(w, "initContainers", &facts->containers[0]);
  WriteContainers(w, "containers", &facts->containers[1]);
  w.EndObject();
  return w.Take();
}

// Everything after the pod's identity; errors are relative to the pod.
Status DecodeBody(const Value& doc, const Value& meta,
                  const GpuResourceMatcher& gpus, PodView* pod) {
  LENS_RETURN_IF_ERROR(DecodeMetadata(meta, pod));
  const Value *spec, *status;
  LENS_RETURN_IF_ERROR(ObjectField(doc, "spec", "", &spec));
  LENS_RETURN_IF_ERROR(ObjectField(doc, "status", "", &status));
  if (spec) {
    std::string_view node;
    LENS_RETURN_IF_ERROR(StringField(*spec, "nodeName", "spec", &node));
    pod->node = node;
    LENS_RETURN_IF_ERROR(ComputePodRequests(*spec, gpus, &pod->requests));
  }
  StatusFacts facts;
  if (status) {
    LENS_RETURN_IF_ERROR(DecodeStatus(*status, pod, &facts));
  } else {
    pod->phase = "Pending";
  }
  pod->snapshot_json = Snapshot(*pod, &facts);
  return OkStatus();
}

// Whether `json` holds an escape that could spell a character of a pattern
// (so that a resource name might not appear literally). Go's encoder never
// writes such escapes; other writers might.
bool MayHideNames(std::string_view json) {
  for (size_t i = json.find('\\'); i != std::string_view::npos;
       i = json.find('\\', i + 2)) {
    if (i + 1 >= json.size()) return false;
    const char next = json[i + 1];
    if (next == '/') return true;
    if (next != 'u' || i + 5 >= json.size()) continue;
    unsigned code = 0;
    for (size_t k = i + 2; k < i + 6; ++k) {
      const char c = json[k];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) return true;  // malformed: be safe
      code = code * 16 + static_cast<unsigned>(d);
    }
    // Resource names are ASCII letters, digits, '.', '-', '_' and '/'.
    if (code != 0 && code < 0x80 &&
        (std::isalnum(static_cast<int>(code)) ||
         std::strchr("./-_*", static_cast<int>(code)))) {
      return true;
    }
  }
  return false;
}

}  // namespace

StatusOr<PodView> DecodePod(std::string_view json,
                            const GpuResourceMatcher& gpus) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError(
        std::string("not a pod: invalid JSON at offset ") +
        std::to_string(doc.GetErrorOffset()) + ": " +
        rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject()) return InvalidArgumentError("not a pod: not an object");
  // List items carry no kind; an object that names one must name Pod.
  if (const Value* kind = JsonMember(doc, "kind");
      kind && (!kind->IsString() || Str(*kind) != "Pod")) {
    return InvalidArgumentError(
        "not a pod: kind " +
        (kind->IsString() ? "\"" + std::string(Str(*kind)) + "\"" : "?"));
  }
  const Value* meta = JsonMember(doc, "metadata");
  if (!meta || !meta->IsObject()) {
    return InvalidArgumentError("not a pod: no metadata object");
  }
  PodView pod;
  std::string_view s;
  Status st = StringField(*meta, "namespace", "metadata", &s);
  if (!st.ok()) return st.WithContext("pod");
  pod.namespace_name = s;
  st = StringField(*meta, "name", "metadata", &s);
  if (!st.ok()) return st.WithContext("pod");
  if (s.empty()) {
    return InvalidArgumentError("pod in namespace \"" + pod.namespace_name +
                                "\": metadata.name: missing");
  }
  pod.name = s;
  const std::string who = "pod " + pod.namespace_name + "/" + pod.name;
  st = StringField(*meta, "uid", "metadata", &s);
  if (!st.ok()) return st.WithContext(who);
  if (s.empty()) return InvalidArgumentError(who + ": metadata.uid: missing");
  pod.uid = s;
  st = DecodeBody(doc, *meta, gpus, &pod);
  if (!st.ok()) return st.WithContext(who);
  return pod;
}

bool MayRequestGpus(std::string_view json, const GpuResourceMatcher& gpus) {
  // A resource name DecodePod counts is a JSON key: `"name"` for an exact
  // pattern, `"prefix...` for a '*' one, unless escapes spell it. Names with
  // a domain are found from their '/', which pod JSON has few of (scanning
  // for their first letter stops at every "a" and "n").
  auto key_at = [json](size_t start, std::string_view body, bool prefix) {
    const size_t end = start + body.size();
    return start > 0 && end <= json.size() && json[start - 1] == '"' &&
           json.compare(start, body.size(), body) == 0 &&
           (prefix || (end < json.size() && json[end] == '"'));
  };
  auto body_of = [](const std::string& p) {
    return std::string_view(p).substr(0, p.size() - (p.back() == '*'));
  };
  bool slashless = false;
  for (const std::string& p : gpus.patterns()) {
    slashless = slashless ||
                (!p.empty() && body_of(p).find('/') == std::string_view::npos);
  }
  for (size_t i = json.find('/'); i != std::string_view::npos;
       i = json.find('/', i + 1)) {
    for (const std::string& p : gpus.patterns()) {
      if (p.empty()) continue;
      const std::string_view body = body_of(p);
      const size_t slash = body.find('/');
      if (slash != std::string_view::npos && i >= slash &&
          key_at(i - slash, body, p.back() == '*')) {
        return true;
      }
    }
  }
  for (const std::string& p : gpus.patterns()) {
    if (!slashless || p.empty()) continue;
    const std::string_view body = body_of(p);
    if (body.find('/') != std::string_view::npos) continue;
    for (size_t i = json.find(body); i != std::string_view::npos;
         i = json.find(body, i + 1)) {
      if (key_at(i, body, p.back() == '*')) return true;
    }
  }
  return !gpus.patterns().empty() && MayHideNames(json);
}

}  // namespace lens::controller
