// Helpers for reading documents parsed with RapidJSON from other programs
// (kubelet, OCI runtime specs): optional members and type errors that name
// the document and the field.
#ifndef LENS_CORE_JSON_READER_H_
#define LENS_CORE_JSON_READER_H_

#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "core/json.h"
#include "lens/status.h"

namespace lens {

// The member `key` of `object`, or nullptr when absent or null (Go types are
// pointers or omitempty: null and absent mean the same).
inline const rapidjson::Value* JsonMember(const rapidjson::Value& object,
                                          const char* key) {
  auto it = object.FindMember(key);
  if (it == object.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

// The string member `key` of `object`; "" when absent, null or not a string.
inline std::string JsonString(const rapidjson::Value& object, const char* key) {
  const rapidjson::Value* v = JsonMember(object, key);
  return v && v->IsString() ? std::string(v->GetString(), v->GetStringLength())
                            : std::string();
}

// InvalidArgument "<what><path>: expected <expected>".
inline Status JsonTypeError(std::string_view what, const std::string& path,
                            std::string_view expected) {
  return InvalidArgumentError(std::string(what) + path + ": expected " +
                              std::string(expected));
}

// Writes a parsed value back out through the one writer (a Kubernetes object
// kept as text, a stored config passed on): numbers as they were read,
// strings escaped and repaired like every other string Lens writes.
inline void WriteJsonValue(const rapidjson::Value& v, JsonWriter* w) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      w->Null();
      return;
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      w->Bool(v.GetBool());
      return;
    case rapidjson::kStringType:
      w->String(std::string_view(v.GetString(), v.GetStringLength()));
      return;
    case rapidjson::kNumberType:
      if (v.IsInt64()) {
        w->Int64(v.GetInt64());
      } else if (v.IsUint64()) {
        w->Uint64(v.GetUint64());
      } else {
        w->Double(v.GetDouble());
      }
      return;
    case rapidjson::kArrayType:
      w->StartArray();
      for (const rapidjson::Value& item : v.GetArray()) WriteJsonValue(item, w);
      w->EndArray();
      return;
    case rapidjson::kObjectType:
      w->StartObject();
      for (const auto& m : v.GetObject()) {
        w->Key(std::string_view(m.name.GetString(), m.name.GetStringLength()));
        WriteJsonValue(m.value, w);
      }
      w->EndObject();
      return;
  }
}

}  // namespace lens

#endif  // LENS_CORE_JSON_READER_H_
