// Small RapidJSON writer helpers shared by the node REST API and the probe
// report: a string field, and optional numbers that are left out when not
// reported.
#ifndef LENS_AGENT_JSON_FIELDS_H_
#define LENS_AGENT_JSON_FIELDS_H_

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "lens/rdma.h"

namespace lens::agent {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

inline void StrField(JsonWriter& w, const char* key, std::string_view value) {
  w.Key(key);
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
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
  w.Double(static_cast<double>(*v) * scale);
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

inline std::string JsonText(const rapidjson::StringBuffer& buf) {
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace lens::agent

#endif  // LENS_AGENT_JSON_FIELDS_H_
