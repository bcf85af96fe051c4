// GET /api/v1/openapi.json on SQLite and PostgreSQL: it lists exactly the
// served routes, every route's data schema is a component with typed,
// described properties, every $ref resolves, and every route's real answer
// has exactly the keys and types its schema says.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <set>
#include <string>
#include <string_view>

#include "api_test_env.h"

namespace lens::test {
namespace {

class ApiOpenApiTest : public ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    auto [status, body] = Get("/api/v1/openapi.json");
    ASSERT_EQ(status, 200);
    doc_.Parse(body.c_str());
    ASSERT_FALSE(doc_.HasParseError());
  }

  const rapidjson::Value& Component(std::string_view ref) {
    static const rapidjson::Value kNone;
    const std::string prefix = "#/components/schemas/";
    EXPECT_TRUE(ref.starts_with(prefix)) << ref;
    const std::string name(ref.substr(std::min(ref.size(), prefix.size())));
    const auto& schemas = doc_["components"]["schemas"];
    EXPECT_TRUE(schemas.HasMember(name.c_str())) << "no schema " << name;
    return schemas.HasMember(name.c_str()) ? schemas[name.c_str()] : kNone;
  }

  // The schema of a route's `data` (its 200 response beside the envelope).
  const rapidjson::Value& DataSchema(const std::string& path) {
    const auto& ok = doc_["paths"][path.c_str()]["get"]["responses"]["200"];
    const auto& all = ok["content"]["application/json"]["schema"]["allOf"][1];
    return Component(all["properties"]["data"]["$ref"].GetString());
  }

  // `v` against schema `s`: an object has exactly its properties, each of
  // its type; null only where nullable.
  void ExpectMatches(const rapidjson::Value& s, const rapidjson::Value& v,
                     const std::string& where) {
    if (s.IsNull()) return;  // reported by Component
    if (v.IsNull()) {
      EXPECT_TRUE(s.HasMember("nullable") && s["nullable"].GetBool()) << where;
      return;
    }
    if (s.HasMember("$ref"))
      return ExpectMatches(Component(s["$ref"].GetString()), v, where);
    if (s.HasMember("allOf")) return ExpectMatches(s["allOf"][0], v, where);
    const std::string type = s["type"].GetString();
    if (type == "string") {
      EXPECT_TRUE(v.IsString()) << where;
    } else if (type == "integer") {
      EXPECT_TRUE(v.IsInt64()) << where;
    } else if (type == "number") {
      EXPECT_TRUE(v.IsNumber()) << where;
    } else if (type == "boolean") {
      EXPECT_TRUE(v.IsBool()) << where;
    }
    if (type == "array") {
      ASSERT_TRUE(v.IsArray()) << where;
      for (const auto& e : v.GetArray())
        ExpectMatches(s["items"], e, where + "[]");
    }
    if (type != "object") return;
    ASSERT_TRUE(v.IsObject()) << where;
    if (s.HasMember("additionalProperties")) {
      for (const auto& m : v.GetObject())
        ExpectMatches(s["additionalProperties"], m.value, where);
    }
    if (!s.HasMember("properties")) return;
    std::set<std::string> keys, documented;
    for (const auto& m : v.GetObject()) keys.insert(m.name.GetString());
    for (const auto& p : s["properties"].GetObject()) {
      documented.insert(p.name.GetString());
      if (v.HasMember(p.name)) {
        ExpectMatches(p.value, v[p.name], where + "." + p.name.GetString());
      }
    }
    EXPECT_EQ(keys, documented) << where;
  }

  rapidjson::Document doc_;
};

TEST_P(ApiOpenApiTest, ListsExactlyTheServedRoutes) {
  EXPECT_STREQ(doc_["openapi"].GetString(), "3.0.3");
  std::set<std::string> paths;
  for (const auto& p : doc_["paths"].GetObject()) {
    paths.insert(p.name.GetString());
    // Every documented route is served (a filled-in path is not a 404).
    std::string path = p.name.GetString();
    for (const char* param : {"{name}", "{uid}"}) {
      if (auto at = path.find(param); at != std::string::npos)
        path.replace(at, std::string(param).size(), "x");
    }
    EXPECT_EQ(Get(path).second.find("no such path"), std::string::npos) << path;
    EXPECT_TRUE(p.value.HasMember("get")) << path;
  }
  const std::set<std::string> served = {
      "/api/v1/clusters",
      "/api/v1/nodes",
      "/api/v1/nodes/{name}",
      "/api/v1/nodes/{name}/gpu-metrics",
      "/api/v1/gpu-allocation",
      "/api/v1/gpu-heatmap",
      "/api/v1/workloads",
      "/api/v1/workloads/{uid}",
      "/api/v1/workloads/{uid}/iterations",
      "/api/v1/workloads/{uid}/training-series",
      "/api/v1/workloads/{uid}/gpu-metrics",
      "/api/v1/workloads/{uid}/flows",
      "/api/v1/workloads/{uid}/goodput",
      "/api/v1/workloads/{uid}/stragglers",
      "/api/v1/insights/idle-gpus",
      "/api/v1/insights/device-health",
      "/api/v1/insights/placement",
      "/api/v1/flows",
      "/api/v1/pods",
      "/api/v1/storage",
      "/api/v1/openapi.json"};
  EXPECT_EQ(paths, served);
  const auto& params = doc_["paths"]["/api/v1/nodes"]["get"]["parameters"];
  ASSERT_TRUE(params.IsArray());
  bool sort_enum = false;
  for (const auto& p : params.GetArray()) {
    sort_enum |= std::string(p["name"].GetString()) == "sort" &&
                 p["schema"]["enum"].Size() == 4;
  }
  EXPECT_TRUE(sort_enum);
}

TEST_P(ApiOpenApiTest, EveryRouteHasAComponentSchemaWithDescribedProperties) {
  for (const auto& p : doc_["paths"].GetObject()) {
    const std::string path = p.name.GetString();
    if (path == "/api/v1/openapi.json") continue;
    const auto& schema = DataSchema(path);
    ASSERT_TRUE(schema.IsObject()) << path;
    ASSERT_TRUE(schema.HasMember("properties")) << path;
    EXPECT_GT(schema["properties"].MemberCount(), 0u) << path;
  }
  for (const auto& s : doc_["components"]["schemas"].GetObject()) {
    const std::string name = s.name.GetString();
    ASSERT_TRUE(s.value.HasMember("properties")) << name;
    EXPECT_GT(s.value["properties"].MemberCount(), 0u) << name;
    for (const auto& prop : s.value["properties"].GetObject()) {
      const auto& v = prop.value;
      EXPECT_TRUE(v.HasMember("type") || v.HasMember("allOf"))
          << name << "." << prop.name.GetString();
      EXPECT_TRUE(v.HasMember("description") &&
                  v["description"].GetStringLength() > 0)
          << name << "." << prop.name.GetString();
    }
  }
}

// Every "$ref" anywhere in the document names a component schema.
void CollectRefs(const rapidjson::Value& v, std::set<std::string>* refs) {
  if (v.IsObject()) {
    for (const auto& m : v.GetObject()) {
      if (std::string_view(m.name.GetString()) == "$ref" && m.value.IsString())
        refs->insert(m.value.GetString());
      CollectRefs(m.value, refs);
    }
  } else if (v.IsArray()) {
    for (const auto& e : v.GetArray()) CollectRefs(e, refs);
  }
}

TEST_P(ApiOpenApiTest, EveryRefResolves) {
  std::set<std::string> refs;
  CollectRefs(doc_, &refs);
  EXPECT_GT(refs.size(), 30u);
  for (const std::string& ref : refs) EXPECT_TRUE(Component(ref).IsObject());
}

TEST_P(ApiOpenApiTest, EveryRouteAnswersWithExactlyItsSchema) {
  const std::string range =
      "?from=" + std::to_string(kS0) + "&to=" + std::to_string(kS0 + 240);
  // One real request per documented route (all of them: checked below).
  const std::pair<std::string, std::string> requests[] = {
      {"/api/v1/clusters", "/api/v1/clusters"},
      {"/api/v1/nodes", "/api/v1/nodes"},
      {"/api/v1/nodes/{name}", "/api/v1/nodes/node-a"},
      {"/api/v1/nodes/{name}/gpu-metrics",
       "/api/v1/nodes/node-b/gpu-metrics" + range},
      {"/api/v1/gpu-allocation", "/api/v1/gpu-allocation"},
      {"/api/v1/gpu-heatmap", "/api/v1/gpu-heatmap" + range},
      {"/api/v1/workloads", "/api/v1/workloads"},
      {"/api/v1/workloads/{uid}", "/api/v1/workloads/w-1"},
      {"/api/v1/workloads/{uid}/iterations",
       "/api/v1/workloads/w-1/iterations"},
      {"/api/v1/workloads/{uid}/training-series",
       "/api/v1/workloads/w-1/training-series"},
      {"/api/v1/workloads/{uid}/gpu-metrics",
       "/api/v1/workloads/w-1/gpu-metrics" + range},
      {"/api/v1/workloads/{uid}/flows", "/api/v1/workloads/w-1/flows" + range},
      {"/api/v1/flows", "/api/v1/flows" + range},
      {"/api/v1/pods", "/api/v1/pods"},
      {"/api/v1/storage", "/api/v1/storage"},
      {"/api/v1/workloads/{uid}/goodput", "/api/v1/workloads/w-1/goodput"},
      {"/api/v1/workloads/{uid}/stragglers",
       "/api/v1/workloads/w-1/stragglers" + range},
      {"/api/v1/insights/idle-gpus", "/api/v1/insights/idle-gpus" + range},
      {"/api/v1/insights/device-health",
       "/api/v1/insights/device-health" + range},
      {"/api/v1/insights/placement", "/api/v1/insights/placement" + range},
  };
  std::set<std::string> covered = {"/api/v1/openapi.json"}, documented;
  for (const auto& p : doc_["paths"].GetObject())
    documented.insert(p.name.GetString());
  for (const auto& [route, path] : requests) {
    covered.insert(route);
    rapidjson::Document data = Data(path);
    ExpectMatches(DataSchema(route), data, path);
  }
  EXPECT_EQ(covered, documented);
}

INSTANTIATE_TEST_SUITE_P(Backends, ApiOpenApiTest,
                         testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace lens::test
