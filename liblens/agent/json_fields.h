// Small RapidJSON writer helpers shared by the node REST API and the probe
// report: a string field, and optional numbers that are left out when not
// reported.
#ifndef LENS_AGENT_JSON_FIELDS_H_
#define LENS_AGENT_JSON_FIELDS_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/json.h"
#include "core/text.h"
#include "lens/gpu.h"
#include "lens/node.h"
#include "lens/rdma.h"

namespace lens::agent {

// Sysfs and tool output are not always UTF-8: the writer repairs it.
inline void StrField(JsonWriter& w, const char* key, std::string_view value) {
  w.Member(key, value);
}

// Integers stay integers; anything scaled or floating is written as a double.
template <typename T>
void OptField(JsonWriter& w, const char* key, const std::optional<T>& v,
              double scale = 1) {
  if (!v) return;
  w.Key(key);
  if constexpr (std::is_integral_v<T>) {
    if (scale == 1) {
      w.Int64(static_cast<int64_t>(*v));
      return;
    }
  }
  const double d = static_cast<double>(*v) * scale;
  // JSON has no NaN or infinity (RapidJSON would write nothing after the
  // key): write null.
  if (!std::isfinite(d)) {
    w.Null();
    return;
  }
  w.Double(d);
}

// The inventory fields of an RDMA device shared by /rdma and the probe report
// (from fw_version to netdevs; callers add their own keys around them).
inline void RdmaDeviceFields(JsonWriter& w, const RdmaDevice& d) {
  StrField(w, "fw_version", d.fw_version);
  StrField(w, "board_id", d.board_id);
  StrField(w, "node_guid", d.node_guid);
  StrField(w, "sys_image_guid", d.sys_image_guid);
  StrField(w, "hca_type", d.hca_type);
  StrField(w, "node_type", d.node_type);
  StrField(w, "bdf", d.bdf);
  OptField(w, "numa_node", d.numa_node);
  w.Key("netdevs");
  w.StartArray();
  for (const std::string& n : d.netdevs) w.String(n.c_str());
  w.EndArray();
}

// The inventory fields of a GPU shared by /gpus and the probe report (callers
// add their own keys around them). `vram_total_bytes`: the sample's when the
// caller has one, else the inventory's.
inline void GpuInfoFields(JsonWriter& w, const GpuInfo& g,
                          const std::optional<uint64_t>& vram_total_bytes) {
  StrField(w, "vendor", GpuVendorName(g.vendor));
  w.Key("index");
  w.Int(g.index);
  StrField(w, "bdf", g.bdf);
  StrField(w, "model", g.model);
  StrField(w, "serial", g.serial);
  StrField(w, "unique_id", g.unique_id);
  StrField(w, "vbios_version", g.vbios_version);
  StrField(w, "card", g.drm_card);
  StrField(w, "render", g.drm_render);
  OptField(w, "numa_node", g.numa_node);
  OptField(w, "vram_total_bytes",
           vram_total_bytes ? vram_total_bytes : g.vram_total_bytes);
  OptField(w, "kfd_gpu_id", g.kfd_gpu_id);
  StrField(w, "compute_partition", g.compute_partition);
  StrField(w, "memory_partition", g.memory_partition);
  w.Key("partition_id");
  w.Int(g.partition_id);
  StrField(w, "driver", g.driver);
  StrField(w, "driver_version", g.driver_version);
  OptField(w, "power_cap_watts", g.power_cap_watts);
}

// Node facts shared by /node and the probe report.
inline void NodeFactsFields(JsonWriter& w, const NodeFacts& f) {
  StrField(w, "hostname", f.hostname);
  StrField(w, "kernel_release", f.kernel_release);
  StrField(w, "kernel_version", f.kernel_version);
  StrField(w, "os_name", f.os_name);
  StrField(w, "os_id", f.os_id);
  StrField(w, "os_version_id", f.os_version_id);
  StrField(w, "cpu_model", f.cpu_model);
  w.Key("cpu_count");
  w.Int(f.cpu_count);
  OptField(w, "cpu_sockets", f.cpu_sockets);
  OptField(w, "memory_total_bytes", f.memory_total_bytes);
  OptField(w, "memory_available_bytes", f.memory_available_bytes);
  StrField(w, "amdgpu_driver_version", f.amdgpu_driver_version);
  StrField(w, "nvidia_driver_version", f.nvidia_driver_version);
  OptField(w, "uptime_seconds", f.uptime_seconds);
}

}  // namespace lens::agent

#endif  // LENS_AGENT_JSON_FIELDS_H_
