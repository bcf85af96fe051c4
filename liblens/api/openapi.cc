// The OpenAPI 3.0.3 document, generated from the route table (routes.h):
// one operation per entry, its parameters with their types, sort keys as an
// enum, and the envelope around each route's schema.
#include <cctype>
#include <set>
#include <string>

#include "api/api_json.h"
#include "api/routes.h"
#include "api/schemas.h"
#include "core/json.h"
#include "lens/version.h"

namespace lens::api {
namespace {

void Ref(JsonWriter& w, std::string_view schema) {
  w.StartObject();
  Str(w, "$ref", "#/components/schemas/" + std::string(schema));
  w.EndObject();
}

void TypeSchema(JsonWriter& w, ParamType type) {
  w.StartObject();
  switch (type) {
    case ParamType::kString:
      Str(w, "type", "string");
      break;
    case ParamType::kBoolean:
      Str(w, "type", "boolean");
      break;
    case ParamType::kInteger:
    case ParamType::kTime:
      Str(w, "type", "integer");
      Str(w, "format", "int64");
      break;
  }
  w.EndObject();
}

void Param(JsonWriter& w, std::string_view name, std::string_view in,
           ParamType type, std::string_view description) {
  w.StartObject();
  Str(w, "name", name);
  Str(w, "in", in);
  w.Key("required");
  w.Bool(in == "path");
  Str(w, "description", description);
  w.Key("schema");
  TypeSchema(w, type);
  w.EndObject();
}

void Parameters(JsonWriter& w, const RouteSpec& route) {
  w.Key("parameters");
  w.StartArray();
  Param(w, "cluster", "query", ParamType::kString,
        "The cluster (empty or this API's cluster name, or a cluster of its "
        "directory)");
  for (const ParamSpec& p : route.params) {
    const bool in_path = route.path.find("{" + std::string(p.name) + "}") !=
                         std::string_view::npos;
    Param(w, p.name, in_path ? "path" : "query", p.type, p.description);
  }
  if (route.paged) {
    Param(w, "pageNum", "query", ParamType::kInteger, "Page, from 1");
    Param(w, "pageSize", "query", ParamType::kInteger, "Items per page");
  }
  if (!route.sort_keys.empty()) {
    w.StartObject();
    Str(w, "name", "sort");
    Str(w, "in", "query");
    Str(w, "description", "Sort key");
    w.Key("schema");
    w.StartObject();
    Str(w, "type", "string");
    w.Key("enum");
    w.StartArray();
    for (const SortKey& k : route.sort_keys) w.String(k.name);
    w.EndArray();
    w.EndObject();
    w.EndObject();
    w.StartObject();
    Str(w, "name", "order");
    Str(w, "in", "query");
    Str(w, "description", "asc or desc (with sort)");
    w.Key("schema");
    w.StartObject();
    Str(w, "type", "string");
    w.Key("enum");
    w.StartArray();
    w.String("asc");
    w.String("desc");
    w.EndArray();
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
}

void Response(JsonWriter& w, const char* status, std::string_view description,
              std::string_view data_schema) {
  w.Key(status);
  w.StartObject();
  Str(w, "description", description);
  w.Key("content");
  w.StartObject();
  w.Key("application/json");
  w.StartObject();
  w.Key("schema");
  if (data_schema.empty()) {
    Ref(w, "Envelope");
  } else {
    w.StartObject();
    w.Key("allOf");
    w.StartArray();
    Ref(w, "Envelope");
    w.StartObject();
    Str(w, "type", "object");
    w.Key("properties");
    w.StartObject();
    w.Key("data");
    Ref(w, data_schema);
    w.EndObject();
    w.EndObject();
    w.EndArray();
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  w.EndObject();
}

void Operation(JsonWriter& w, const RouteSpec& route) {
  w.StartObject();
  Str(w, "summary", route.summary);
  Str(w, "operationId",
      std::string(route.method) + " " + std::string(route.path));
  Parameters(w, route);
  w.Key("responses");
  w.StartObject();
  if (route.handler == nullptr) {
    w.Key("200");
    w.StartObject();
    Str(w, "description", "The OpenAPI document (no envelope)");
    w.EndObject();
  } else {
    Response(w, "200", "Success", route.schema);
    Response(w, "400", "A bad parameter (the message names it)", "");
    Response(w, "404", "Unknown cluster or id", "");
    if (route.needs_series) {
      Response(w, "429", "Too many series: narrow the query", "");
      Response(w, "503",
               "No time series backend configured, or it is unreachable", "");
    } else {
      Response(w, "503", "The store is unreachable", "");
    }
  }
  Response(w, "401", "Missing or invalid bearer token", "");
  w.EndObject();
  w.EndObject();
}

void Bool(JsonWriter& w, const char* key, bool value) {
  w.Key(key);
  w.Bool(value);
}

// The schema of a value of `type` (any but kObject/kArray with a ref),
// opened: the caller adds keys and closes it.
void OpenTypeSchema(JsonWriter& w, JsonType type, bool nullable) {
  w.StartObject();
  switch (type) {
    case JsonType::kString:
      Str(w, "type", "string");
      break;
    case JsonType::kInteger:
      Str(w, "type", "integer");
      Str(w, "format", "int64");
      break;
    case JsonType::kNumber:
      Str(w, "type", "number");
      Str(w, "format", "double");
      break;
    case JsonType::kBoolean:
      Str(w, "type", "boolean");
      break;
    case JsonType::kObject:
      Str(w, "type", "object");
      break;
    case JsonType::kArray:
      Str(w, "type", "array");
      break;
    case JsonType::kMap:
      Str(w, "type", "object");
      w.Key("additionalProperties");
      OpenTypeSchema(w, JsonType::kNumber, true);
      w.EndObject();
      break;
    case JsonType::kPoint:
      Str(w, "type", "array");
      w.Key("items");
      OpenTypeSchema(w, JsonType::kNumber, true);
      w.EndObject();
      w.Key("minItems");
      w.Int(2);
      w.Key("maxItems");
      w.Int(2);
      break;
  }
  if (nullable) Bool(w, "nullable", true);
}

void Property(JsonWriter& w, const PropertySpec& p) {
  if (p.type == JsonType::kObject && !p.ref.empty()) {
    // OpenAPI 3.0 ignores siblings of $ref: description and nullable go
    // beside an allOf.
    w.StartObject();
    w.Key("allOf");
    w.StartArray();
    Ref(w, p.ref);
    w.EndArray();
  } else {
    OpenTypeSchema(w, p.type, false);
    if (p.type == JsonType::kArray) {
      w.Key("items");
      if (p.ref.empty()) {
        OpenTypeSchema(w, p.items, p.items_nullable);
        w.EndObject();
      } else {
        Ref(w, p.ref);
      }
    }
  }
  if (p.nullable) Bool(w, "nullable", true);
  Str(w, "description", p.description);
  w.EndObject();
}

void ObjectSchema(JsonWriter& w, std::string_view description,
                  std::span<const PropertySpec> properties) {
  w.StartObject();
  Str(w, "type", "object");
  Str(w, "description", description);
  w.Key("properties");
  w.StartObject();
  for (const PropertySpec& p : properties) {
    w.Key(p.name);
    Property(w, p);
  }
  w.EndObject();
  w.Key("required");
  w.StartArray();
  for (const PropertySpec& p : properties) w.String(p.name);
  w.EndArray();
  w.EndObject();
}

// The envelope, every schema of schemas.cc, and a page schema ("NodePage":
// items of "Node" and the totals) for each paged route.
void WriteSchemas(JsonWriter& w, std::span<const RouteSpec> routes) {
  w.Key("schemas");
  w.StartObject();
  static constexpr PropertySpec kEnvelope[] = {
      {"code", JsonType::kInteger, "0, or the HTTP status of an error"},
      {"data",
       JsonType::kObject,
       "The route's data; null on an error",
       {},
       JsonType::kNumber,
       true},
      {"message", JsonType::kString, "\"success\", or what was wrong"},
  };
  w.Key("Envelope");
  ObjectSchema(w, "Every response but this document", kEnvelope);
  for (const SchemaSpec& schema : Schemas()) {
    w.Key(schema.name);
    ObjectSchema(w, schema.description, schema.properties);
  }
  std::set<std::string_view> pages;
  for (const RouteSpec& route : routes) {
    if (!route.paged || !pages.insert(route.schema).second) continue;
    const std::string_view item =
        route.schema.substr(0, route.schema.size() - 4);  // "...Page"
    const std::string description = "A page of " + std::string(item);
    const PropertySpec page[] = {
        {"items", JsonType::kArray, "This page's items", item},
        {"total", JsonType::kInteger, "Items over all pages"},
        {"pageNum", JsonType::kInteger, "This page, from 1"},
        {"pageSize", JsonType::kInteger, "Items per page"},
    };
    w.Key(route.schema);
    ObjectSchema(w, description, page);
  }
  w.EndObject();
}

}  // namespace

std::string OpenApiJson(std::span<const RouteSpec> routes,
                        const ApiOptions& options) {
  JsonWriter w;
  w.StartObject();
  Str(w, "openapi", "3.0.3");
  w.Key("info");
  w.StartObject();
  Str(w, "title", "Lens API");
  Str(w, "version", LENS_VERSION_STRING);
  Str(w, "description",
      "Read-only GPU cluster observability API of cluster \"" +
          options.cluster +
          "\". Every response is the envelope {code, data, message} with a "
          "real HTTP status; times are Unix seconds.");
  w.EndObject();
  w.Key("paths");
  w.StartObject();
  // Routes of one path are adjacent in the table.
  for (size_t i = 0; i < routes.size(); ++i) {
    if (i > 0 && routes[i].path == routes[i - 1].path) continue;
    w.Key(routes[i].path);
    w.StartObject();
    for (size_t j = i; j < routes.size() && routes[j].path == routes[i].path;
         ++j) {
      std::string method(routes[j].method);
      for (char& c : method) c = static_cast<char>(std::tolower(c));
      w.Key(method.c_str());
      Operation(w, routes[j]);
    }
    w.EndObject();
  }
  w.EndObject();
  w.Key("components");
  w.StartObject();
  w.Key("securitySchemes");
  w.StartObject();
  w.Key("bearer");
  w.StartObject();
  Str(w, "type", "http");
  Str(w, "scheme", "bearer");
  w.EndObject();
  w.EndObject();
  WriteSchemas(w, routes);
  w.EndObject();
  w.Key("security");
  w.StartArray();
  w.StartObject();
  w.Key("bearer");
  w.StartArray();
  w.EndArray();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace lens::api
