// FlowsJson: the `lens flows --json` / lens.watch_flows / GET /flows shape.

#include "core/json.h"
#include "core/text.h"
#include "lens/flow.h"

namespace lens {
namespace {

void Str(JsonWriter& w, const char* key, std::string_view value) {
  std::string s(value);
  SanitizeUtf8(&s);  // comm is whatever the process named itself
  w.Key(key);
  w.String(s);
}

void U64(JsonWriter& w, const char* key, uint64_t value) {
  w.Key(key);
  w.Uint64(value);
}

std::string_view RoleName(FlowRole role) {
  switch (role) {
    case FlowRole::kActive:
      return "active";
    case FlowRole::kPassive:
      return "passive";
    case FlowRole::kUnknown:
      break;
  }
  return "unknown";
}

void FlowObject(JsonWriter& w, const TcpFlow& f) {
  w.StartObject();
  Str(w, "saddr", f.saddr.Unmapped().ToString());
  U64(w, "sport", f.sport);
  Str(w, "daddr", f.daddr.Unmapped().ToString());
  U64(w, "dport", f.dport);
  U64(w, "bytes_sent", f.bytes_sent);
  U64(w, "bytes_received", f.bytes_received);
  U64(w, "segments_sent", f.segments_sent);
  U64(w, "segments_received", f.segments_received);
  U64(w, "retransmits", f.retransmits);
  w.Key("rtt_us");
  if (f.rtt_count) {
    w.Double(f.MeanRttUs());
  } else {
    w.Null();
  }
  if (f.rtt_count) {
    U64(w, "rtt_min_us", f.rtt_min_us);
    U64(w, "rtt_max_us", f.rtt_max_us);
  }
  Str(w, "class", FlowClassName(f.remote_class));
  Str(w, "direction", FlowDirectionName(f.direction));
  Str(w, "role", RoleName(f.role));
  w.Key("opened");
  w.Bool(f.opened);
  w.Key("closed");
  w.Bool(f.closed);
  if (f.pid) {
    U64(w, "pid", f.pid);
    Str(w, "comm", f.comm);
  }
  if (f.cgroup_id) U64(w, "cgroup_id", f.cgroup_id);
  if (!f.container_id.empty()) {
    Str(w, "container_id", f.container_id);
    Str(w, "pod_namespace", f.pod_namespace);
    Str(w, "pod_name", f.pod_name);
  }
  w.EndObject();
}

}  // namespace

std::string FlowsJson(const std::vector<TcpFlow>& flows) {
  JsonWriter w;
  w.StartObject();
  w.Key("flows");
  w.StartArray();
  for (const TcpFlow& f : flows) FlowObject(w, f);
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace lens
