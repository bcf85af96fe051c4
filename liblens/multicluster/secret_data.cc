// Secret `data` in and out (base64 values), and SecretData of
// multicluster/multicluster.h. Values are credentials: errors name keys only.
#include "multicluster/secret_data.h"

#include <rapidjson/document.h>

#include <cstdint>

#include "core/json.h"
#include "core/text.h"
#include "multicluster/multicluster.h"

namespace lens {
namespace multicluster {

std::string SecretJson(std::string_view namespace_name, std::string_view name,
                       const std::map<std::string, std::string>& labels,
                       const std::map<std::string, std::string>& data,
                       std::string_view resource_version) {
  JsonWriter w;
  auto str = [&w](std::string_view s) { w.String(s); };
  w.StartObject();
  str("apiVersion");
  str("v1");
  str("kind");
  str("Secret");
  str("metadata");
  w.StartObject();
  str("name");
  str(name);
  str("namespace");
  str(namespace_name);
  if (!resource_version.empty()) {
    str("resourceVersion");
    str(resource_version);
  }
  str("labels");
  w.StartObject();
  for (const auto& [k, v] : labels) {
    str(k);
    str(v);
  }
  w.EndObject();
  w.EndObject();
  str("type");
  str("Opaque");
  str("data");
  w.StartObject();
  for (const auto& [k, v] : data) {
    str(k);
    str(Base64Encode(v));
  }
  w.EndObject();
  w.EndObject();
  return w.Take();
}

std::string ResourceVersionOf(std::string_view object_json) {
  rapidjson::Document doc;
  doc.Parse(object_json.data(), object_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return "";
  auto meta = doc.FindMember("metadata");
  if (meta == doc.MemberEnd() || !meta->value.IsObject()) return "";
  auto rv = meta->value.FindMember("resourceVersion");
  if (rv == meta->value.MemberEnd() || !rv->value.IsString()) return "";
  return rv->value.GetString();
}

}  // namespace multicluster

StatusOr<std::map<std::string, std::string>> SecretData(
    std::string_view secret_json, std::string_view origin) {
  rapidjson::Document doc;
  doc.Parse(secret_json.data(), secret_json.size());
  const std::string where(origin);
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError(where + ": not a JSON object");
  }
  auto kind = doc.FindMember("kind");
  if (kind != doc.MemberEnd() &&
      (!kind->value.IsString() ||
       std::string_view(kind->value.GetString()) != "Secret")) {
    return InvalidArgumentError(where + ": not a Secret");
  }
  std::map<std::string, std::string> out;
  auto data = doc.FindMember("data");
  if (data == doc.MemberEnd() || data->value.IsNull()) return out;
  if (!data->value.IsObject()) {
    return InvalidArgumentError(where + ": data: not a map");
  }
  for (const auto& m : data->value.GetObject()) {
    const std::string key(m.name.GetString(), m.name.GetStringLength());
    std::string value;
    if (!m.value.IsString() ||
        !Base64Decode(
            std::string_view(m.value.GetString(), m.value.GetStringLength()),
            &value)) {
      return InvalidArgumentError(where + ": data." + key +
                                  ": not base64 text");
    }
    out.emplace(key, std::move(value));
  }
  return out;
}

}  // namespace lens
