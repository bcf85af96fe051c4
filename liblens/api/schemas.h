// The JSON shapes the REST API answers with, as data: one entry per
// component schema of /api/v1/openapi.json, each with its properties
// (name, JSON type, description, nested schema). openapi.cc writes them; the
// writers in api_json.cc and the handlers produce exactly these keys (the API
// tests check every response against its schema).
#ifndef LENS_API_SCHEMAS_H_
#define LENS_API_SCHEMAS_H_

#include <cstdint>
#include <span>
#include <string_view>

namespace lens::api {

enum class JsonType : uint8_t {
  kString,
  kInteger,
  kNumber,
  kBoolean,
  kObject,  // `ref` names its schema; no ref: any object
  kArray,   // items: the schema `ref`, else scalars of type `items`
  kMap,     // an object of named numbers (string -> number)
  kPoint,   // [Unix seconds, value or null]
};

struct PropertySpec {
  std::string_view name;
  JsonType type;
  std::string_view description;
  std::string_view ref = {};
  JsonType items = JsonType::kNumber;
  bool nullable = false;        // the value may be null
  bool items_nullable = false;  // an array's scalar items may be null
};

struct SchemaSpec {
  std::string_view name;
  std::string_view description;
  std::span<const PropertySpec> properties;
};

// Every schema a route answers with, and those they nest.
std::span<const SchemaSpec> Schemas();
// The insight routes' schemas (schemas_insights.cc), part of Schemas().
std::span<const SchemaSpec> InsightSchemas();
// The schema named `name`, or null.
const SchemaSpec* FindSchema(std::string_view name);

}  // namespace lens::api

#endif  // LENS_API_SCHEMAS_H_
