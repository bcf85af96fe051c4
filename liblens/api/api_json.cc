#include "api/api_json.h"

#include <rapidjson/document.h>

#include <cmath>
#include <string>

#include "core/json_reader.h"
#include "core/record_json.h"

namespace lens::api {

int64_t UnixSeconds(Timestamp at) {
  return std::chrono::floor<std::chrono::seconds>(at.time_since_epoch())
      .count();
}

namespace {

std::string_view ChangeName(DeviceChange change) {
  switch (change) {
    case DeviceChange::kCreate:
      return "CREATE";
    case DeviceChange::kDelete:
      return "DELETE";
    case DeviceChange::kReplace:
      return "REPLACE";
  }
  return "UNKNOWN";
}

// Hides the password of a URL's userinfo ("scheme://user:pw@host"): the
// store refuses secret-named keys, but a "url" can still carry one.
void RedactUrls(rapidjson::Value& v, rapidjson::Document::AllocatorType& a) {
  if (v.IsString()) {
    std::string s(v.GetString(), v.GetStringLength());
    const size_t scheme = s.find("://");
    if (scheme == std::string::npos) return;
    const size_t at = s.find('@', scheme + 3);
    const size_t slash = s.find('/', scheme + 3);
    if (at == std::string::npos || (slash != std::string::npos && slash < at))
      return;
    const size_t colon = s.find(':', scheme + 3);
    if (colon == std::string::npos || colon > at) return;
    s.replace(colon + 1, at - colon - 1, "REDACTED");
    v.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
  } else if (v.IsObject()) {
    for (auto& m : v.GetObject()) RedactUrls(m.value, a);
  } else if (v.IsArray()) {
    for (auto& e : v.GetArray()) RedactUrls(e, a);
  }
}

}  // namespace

void Str(JsonWriter& w, const char* key, std::string_view value) {
  w.Key(key);
  w.String(value);
}

void Int(JsonWriter& w, const char* key, int64_t value) {
  w.Key(key);
  w.Int64(value);
}

void Num(JsonWriter& w, const char* key, std::optional<double> value) {
  w.Key(key);
  if (value && std::isfinite(*value)) {
    w.Double(*value);
  } else {
    w.Null();
  }
}

void Time(JsonWriter& w, const char* key, std::optional<Timestamp> at) {
  w.Key(key);
  if (at && at->time_since_epoch().count() != 0) {
    w.Int64(UnixSeconds(*at));
  } else {
    w.Null();
  }
}

void OpenPage(JsonWriter& w) {
  w.StartObject();
  w.Key("items");
  w.StartArray();
}

void ClosePage(JsonWriter& w, int64_t total, int32_t page_num,
               int32_t page_size) {
  w.EndArray();
  Int(w, "total", total);
  Int(w, "pageNum", page_num);
  Int(w, "pageSize", page_size);
  w.EndObject();
}

void WriteNode(JsonWriter& w, const NodeRecord& n) {
  w.StartObject();
  Str(w, "name", n.name);
  Str(w, "address", n.address);
  Str(w, "status", n.status);
  Str(w, "gpuVendor", n.gpu_vendor);
  Str(w, "gpuModel", n.gpu_model);
  Int(w, "gpuCount", n.gpu_count);
  Int(w, "gpuAllocatable", n.gpu_allocatable);
  Int(w, "gpuAllocated", n.gpu_allocated);
  Num(w, "gpuUtilizationRatio", n.gpu_utilization_ratio);
  Str(w, "cpuModel", n.cpu_model);
  Int(w, "cpuCount", n.cpu_count);
  Int(w, "memoryBytes", n.memory_bytes);
  Str(w, "kernelVersion", n.kernel_version);
  Str(w, "osImage", n.os_image);
  Str(w, "driverVersion", n.driver_version);
  Str(w, "kubeletVersion", n.kubelet_version);
  Str(w, "containerRuntime", n.container_runtime);
  Str(w, "agentState", n.agent_state);
  Time(w, "agentSeenAt", n.agent_seen_at);
  Time(w, "createdAt", n.created_at);
  Time(w, "updatedAt", n.updated_at);
  w.EndObject();
}

void WriteGpu(JsonWriter& w, const GpuDeviceRecord& g) {
  w.StartObject();
  Int(w, "index", g.gpu_index);
  Str(w, "vendor", g.vendor);
  Str(w, "model", g.model);
  Str(w, "serial", g.serial);
  Str(w, "uuid", g.uuid);
  Str(w, "bdf", g.bdf);
  Int(w, "vramBytes", g.vram_bytes);
  Int(w, "numaNode", g.numa_node);
  Time(w, "updatedAt", g.updated_at);
  w.EndObject();
}

void WriteRdma(JsonWriter& w, const RdmaDeviceRecord& r) {
  w.StartObject();
  Str(w, "name", r.name);
  Str(w, "nodeGuid", r.node_guid);
  Str(w, "fwVersion", r.fw_version);
  Str(w, "boardId", r.board_id);
  Str(w, "bdf", r.bdf);
  Str(w, "netdev", r.netdev);
  Int(w, "numaNode", r.numa_node);
  Time(w, "updatedAt", r.updated_at);
  w.EndObject();
}

void WriteDeviceChange(JsonWriter& w, const DeviceChangeRecord& c) {
  w.StartObject();
  Str(w, "kind", ToString(c.kind));
  Str(w, "deviceKey", c.device_key);
  Str(w, "change", ChangeName(c.change));
  Str(w, "oldSerial", c.old_serial);
  Str(w, "newSerial", c.new_serial);
  Time(w, "at", c.at);
  w.EndObject();
}

// The one container shape (core/record_json.h) without what only its node
// knows first hand (runtime namespace, pid, labels), times in whole seconds
// as every time here.
void WriteContainer(JsonWriter& w, const ContainerRecord& c) {
  WriteContainerJson(w, c, {.runtime_fields = false, .exact_times = false});
}

void WritePod(JsonWriter& w, const PodRecord& p) {
  w.StartObject();
  Str(w, "uid", p.uid);
  Str(w, "name", p.name);
  Str(w, "namespace", p.namespace_name);
  Str(w, "node", p.node);
  Str(w, "phase", p.phase);
  Str(w, "workloadUid", p.owner_uid);
  Str(w, "ip", p.ip);
  Int(w, "gpuAllocated", p.gpu_allocated);
  w.Key("running");
  w.Bool(p.running);
  w.Key("deleted");
  w.Bool(p.deleted);
  Int(w, "restarts", p.restarts);
  Time(w, "createdAt", p.created_at);
  Time(w, "startedAt", p.started_at);
  Time(w, "endedAt", p.ended_at);
  w.EndObject();
}

void WriteWorkload(JsonWriter& w, const WorkloadRecord& wl) {
  w.StartObject();
  Str(w, "uid", wl.uid);
  Str(w, "apiVersion", wl.api_version);
  Str(w, "kind", wl.kind);
  Str(w, "name", wl.name);
  Str(w, "namespace", wl.namespace_name);
  Str(w, "parentUid", wl.parent_uid);
  Str(w, "status", wl.status);
  Int(w, "gpuRequest", wl.gpu_request);
  Int(w, "activePods", wl.active_pods);
  Time(w, "createdAt", wl.created_at);
  Time(w, "endedAt", wl.ended_at);
  Time(w, "updatedAt", wl.updated_at);
  w.EndObject();
}

void WriteRun(JsonWriter& w, const TrainingRunRecord& r) {
  w.StartObject();
  Int(w, "run", r.run);
  Str(w, "source", r.source);
  w.Key("firstIteration");
  r.first_iteration ? w.Int64(*r.first_iteration) : w.Null();
  w.Key("lastIteration");
  r.last_iteration ? w.Int64(*r.last_iteration) : w.Null();
  Int(w, "iterations", r.iterations);
  Time(w, "createdAt", r.created_at);
  w.EndObject();
}

// The typed fields under their snake_case names (lens/training.h).
void WriteIteration(JsonWriter& w, const IterationRecord& it) {
  w.StartObject();
  Int(w, "run", it.run);
  Int(w, "iteration", it.iteration);
  Num(w, "timestamp", it.timestamp_s);
  w.Key("rank");
  it.rank ? w.Int(*it.rank) : w.Null();
  w.Key("fields");
  w.StartObject();
  for (const IterationFieldInfo& f : IterationFields()) {
    if (it.Has(f.field)) {
      w.Key(f.name);
      const double v = *it.Get(f.field);
      std::isfinite(v) ? w.Double(v) : w.Null();
    }
  }
  w.EndObject();
  w.EndObject();
}

void WriteTrainingEvent(JsonWriter& w, const TrainingEvent& e) {
  w.StartObject();
  Str(w, "type", TrainingEventTypeName(e.type));
  Int(w, "run", e.run);
  w.Key("iteration");
  e.iteration ? w.Int64(*e.iteration) : w.Null();
  Num(w, "timestamp", e.timestamp_s);
  Num(w, "durationSeconds", e.duration_s);
  Str(w, "path", e.path);
  w.EndObject();
}

// The store refuses configs with secret-looking keys (lens/model.h); URL
// passwords are redacted here.
void WriteStorage(JsonWriter& w, const StorageRecord& s) {
  w.StartObject();
  Str(w, "name", s.name);
  Str(w, "kind", s.kind);
  Str(w, "status", s.status);
  w.Key("config");
  rapidjson::Document config;
  config.Parse(s.config_json.data(), s.config_json.size());
  if (config.HasParseError()) {
    w.Null();  // the store validates configs; never pass on a broken one
  } else {
    RedactUrls(config, config.GetAllocator());
    WriteJsonValue(config, &w);
  }
  Time(w, "updatedAt", s.updated_at);
  w.EndObject();
}

}  // namespace lens::api
