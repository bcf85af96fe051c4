// Helpers for reading documents parsed with RapidJSON from other programs
// (kubelet, OCI runtime specs): optional members and type errors that name
// the document and the field.
#ifndef LENS_CORE_JSON_READER_H_
#define LENS_CORE_JSON_READER_H_

#include <rapidjson/document.h>

#include <string>
#include <string_view>

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

}  // namespace lens

#endif  // LENS_CORE_JSON_READER_H_
