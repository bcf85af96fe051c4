// The one-word row helpers of the schema tables (Str, Int, Num, ...): each
// fills in a property's type. Included only by the table files (schemas.cc,
// schemas_insights.cc), which stay out of unity batches: the names would
// meet the JSON writers' (api_json.h).
#ifndef LENS_API_SCHEMA_ROWS_H_
#define LENS_API_SCHEMA_ROWS_H_

#include "api/schemas.h"

namespace lens::api::schema_rows {

using J = JsonType;

// One property per row: the helpers only fill in the type.
constexpr PropertySpec Str(std::string_view name, std::string_view d) {
  return {name, J::kString, d};
}
constexpr PropertySpec Int(std::string_view name, std::string_view d) {
  return {name, J::kInteger, d};
}
constexpr PropertySpec OptInt(std::string_view name, std::string_view d) {
  return {name, J::kInteger, d, {}, J::kNumber, true};
}
// A number or null (no data, or not finite).
constexpr PropertySpec Num(std::string_view name, std::string_view d) {
  return {name, J::kNumber, d, {}, J::kNumber, true};
}
// Unix seconds, or null when unknown.
constexpr PropertySpec Time(std::string_view name, std::string_view d) {
  return {name, J::kInteger, d, {}, J::kNumber, true};
}
constexpr PropertySpec Bool(std::string_view name, std::string_view d) {
  return {name, J::kBoolean, d};
}
constexpr PropertySpec Obj(std::string_view name, std::string_view ref,
                           std::string_view d, bool nullable = false) {
  return {name, J::kObject, d, ref, J::kNumber, nullable};
}
constexpr PropertySpec List(std::string_view name, std::string_view ref,
                            std::string_view d) {
  return {name, J::kArray, d, ref};
}
constexpr PropertySpec Scalars(std::string_view name, JsonType items,
                               std::string_view d, bool items_nullable) {
  return {name, J::kArray, d, {}, items, false, items_nullable};
}
constexpr PropertySpec Points(std::string_view name) {
  return {name,
          J::kArray,
          "[Unix seconds, value] per step with data (value null: not finite)",
          {},
          J::kPoint};
}

}  // namespace lens::api::schema_rows

#endif  // LENS_API_SCHEMA_ROWS_H_
