#include "core/record_json.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "core/json.h"
#include "core/text.h"

namespace lens {
namespace {

void Str(JsonWriter& w, const char* key, std::string_view value) {
  w.Member(key, value);
}

// Exact decimal text, "1718900000.123456": a double would round the
// microseconds of current times in its last digit.
std::string ExactSeconds(Timestamp t) {
  const int64_t us = t.time_since_epoch().count();
  const uint64_t magnitude =
      us < 0 ? 0 - static_cast<uint64_t>(us) : static_cast<uint64_t>(us);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%llu.%06llu", us < 0 ? "-" : "",
                static_cast<unsigned long long>(magnitude / 1000000),
                static_cast<unsigned long long>(magnitude % 1000000));
  return buf;
}

void Time(JsonWriter& w, const char* key, const std::optional<Timestamp>& t,
          bool exact) {
  w.Key(key);
  if (!t || t->time_since_epoch().count() == 0) {
    w.Null();
  } else if (exact) {
    w.RawValue(ExactSeconds(*t));
  } else {
    w.Int64(std::chrono::floor<std::chrono::seconds>(t->time_since_epoch())
                .count());
  }
}

}  // namespace

void WriteContainerJson(JsonWriter& w, const ContainerRecord& c,
                        const ContainerJsonOptions& options) {
  const bool exact = options.exact_times;
  w.StartObject();
  Str(w, "containerId", c.container_id);
  Str(w, "node", c.node);
  Str(w, "podUid", c.pod_uid);
  Str(w, "podName", c.pod_name);
  Str(w, "podNamespace", c.pod_namespace);
  Str(w, "name", c.container_name);
  Str(w, "image", c.image);
  Str(w, "state", ToString(c.state));
  w.Key("privileged");
  w.Bool(c.privileged);
  w.Key("exitCode");
  if (c.exit_code) {
    w.Int(*c.exit_code);
  } else {
    w.Null();
  }
  Time(w, "createdAt", c.created_at, exact);
  Time(w, "startedAt", c.started_at, exact);
  Time(w, "finishedAt", c.finished_at, exact);
  w.Key("devices");
  w.StartArray();
  for (const ContainerDeviceRecord& d : c.devices) {
    w.StartObject();
    Str(w, "kind", ToString(d.kind));
    Str(w, "deviceKey", d.device_key);
    Str(w, "bdf", d.bdf);
    Str(w, "source", d.source);
    w.EndObject();
  }
  w.EndArray();
  if (options.runtime_fields) {
    Str(w, "runtimeNamespace", c.runtime_namespace);
    w.Key("pid");
    w.Int64(c.pid);
    Time(w, "updatedAt", c.updated_at, exact);
    w.Key("labels");
    w.StartObject();
    for (const auto& [key, value] : c.labels) w.Member(key, value);
    w.EndObject();
  }
  w.EndObject();
}

}  // namespace lens
