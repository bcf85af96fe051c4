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

inline std::string JsonText(const rapidjson::StringBuffer& buf) {
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace lens::agent

#endif  // LENS_AGENT_JSON_FIELDS_H_
