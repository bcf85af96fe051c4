// PlacementJson: the node's GET /placement answer (docs/insights.md).

#include "core/json.h"
#include "lens/insights_placement.h"

namespace lens {
namespace {

void PlacementStr(JsonWriter& w, const char* key, std::string_view v) {
  w.Key(key);
  w.String(v);
}

void PlacementNuma(JsonWriter& w, const char* key,
                   const std::optional<int>& v) {
  w.Key(key);
  v ? w.Int(*v) : w.Null();
}

void PlacementInts(JsonWriter& w, const char* key, const std::vector<int>& v) {
  w.Key(key);
  w.StartArray();
  for (int x : v) w.Int(x);
  w.EndArray();
}

void PlacementStrings(JsonWriter& w, const char* key,
                      const std::vector<std::string>& v) {
  w.Key(key);
  w.StartArray();
  for (const std::string& s : v) {
    w.String(s);
  }
  w.EndArray();
}

void PlacementDevice(JsonWriter& w, const PlacedDevice& d) {
  w.StartObject();
  PlacementStr(w, "kind", ToString(d.kind));
  PlacementStr(w, "key", d.device_key);
  PlacementStr(w, "bdf", d.bdf);
  PlacementStr(w, "container", d.container_id);
  w.Key("topologyKnown");
  w.Bool(d.topology_known);
  PlacementNuma(w, "numaNode", d.numa_node);
  PlacementStr(w, "rootComplex", d.root_complex);
  PlacementStrings(w, "bridges", d.bridges);
  if (d.kind == DeviceKind::kGpu) {
    w.Key("nic");
    if (d.nic_key.empty()) {
      w.Null();
    } else {
      w.StartObject();
      PlacementStr(w, "key", d.nic_key);
      PlacementStr(w, "bdf", d.nic_bdf);
      PlacementStr(w, "distance", ToString(d.nic_distance));
      w.EndObject();
    }
  }
  w.EndObject();
}

}  // namespace

std::string PlacementJson(std::span<const PodPlacement> pods) {
  JsonWriter w;
  w.StartObject();
  w.Key("pods");
  w.StartArray();
  for (const PodPlacement& p : pods) {
    w.StartObject();
    PlacementStr(w, "podUid", p.pod_uid);
    PlacementStr(w, "namespace", p.pod_namespace);
    PlacementStr(w, "name", p.pod_name);
    w.Key("gpus");
    w.StartArray();
    for (const PlacedDevice& d : p.gpus) PlacementDevice(w, d);
    w.EndArray();
    w.Key("nics");
    w.StartArray();
    for (const PlacedDevice& d : p.nics) PlacementDevice(w, d);
    w.EndArray();
    w.Key("cpusets");
    w.StartArray();
    for (const PlacedCpuset& c : p.cpusets) {
      w.StartObject();
      PlacementStr(w, "container", c.container_id);
      PlacementStr(w, "containerName", c.container_name);
      w.Key("known");
      w.Bool(c.known);
      PlacementStr(w, "cpus", FormatCpuList(c.cpus));
      PlacementInts(w, "numaNodes", c.numa_nodes);
      PlacementInts(w, "gpuNumaNodes", c.gpu_numa_nodes);
      w.EndObject();
    }
    w.EndArray();
    w.Key("flags");
    w.StartArray();
    for (const PlacementFlag& f : p.flags) {
      w.StartObject();
      PlacementStr(w, "issue", ToString(f.issue));
      PlacementStr(w, "container", f.container_id);
      PlacementStrings(w, "gpus", f.gpu_bdfs);
      PlacementInts(w, "gpuNumaNodes", f.gpu_numa_nodes);
      PlacementStr(w, "nic", f.nic_key);
      PlacementStr(w, "nicBdf", f.nic_bdf);
      PlacementNuma(w, "nicNumaNode", f.nic_numa_node);
      PlacementStr(w, "gpuRootComplex", f.gpu_root_complex);
      PlacementStr(w, "nicRootComplex", f.nic_root_complex);
      PlacementStr(w, "cpus", FormatCpuList(f.cpus));
      PlacementInts(w, "cpuNumaNodes", f.cpu_numa_nodes);
      w.Key("partial");
      w.Bool(f.partial);
      PlacementStr(w, "message", f.message);
      w.EndObject();
    }
    w.EndArray();
    PlacementStrings(w, "unknowns", p.unknowns);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace lens
