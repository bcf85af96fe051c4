// YAML documents to JSON (kube_schema.h, YamlToJsonDocuments): scalars
// typed by the YAML 1.2 core schema, as the API server's decoder does.
#include <rapidjson/document.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <regex>
#include <string>
#include <vector>

#include "kube_schema.h"

namespace lens::test {

using rapidjson::Document;
using rapidjson::Value;
using Allocator = Document::AllocatorType;

namespace {

const std::regex kInt("[-+]?[0-9]+");
const std::regex kFloat(
    R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
const std::regex kInfNan(R"([-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))");

// A plain scalar resolved by the YAML 1.2 core schema
// (yaml.org/spec/1.2.2/#1023-core-schema).
Value PlainScalar(const std::string& s, Allocator& alloc) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL")
    return Value();
  if (s == "true" || s == "True" || s == "TRUE") return Value(true);
  if (s == "false" || s == "False" || s == "FALSE") return Value(false);
  const char* end = s.data() + s.size();
  if (std::regex_match(s, kInt)) {
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    int64_t i = 0;
    if (std::from_chars(begin, end, i).ec == std::errc()) return Value(i);
    uint64_t u = 0;
    if (std::from_chars(begin, end, u).ec == std::errc()) return Value(u);
    return Value(std::strtod(s.c_str(), nullptr));
  }
  const int base = s.rfind("0o", 0) == 0 ? 8 : s.rfind("0x", 0) == 0 ? 16 : 0;
  uint64_t u = 0;
  if (base && s.size() > 2) {
    auto [ptr, ec] = std::from_chars(s.data() + 2, end, u, base);
    if (ec == std::errc() && ptr == end) return Value(u);
  }
  if (std::regex_match(s, kFloat))
    return Value(std::strtod(s.c_str(), nullptr));
  if (std::regex_match(s, kInfNan)) {  // strtod reads them without the dot
    std::string t = s;
    return Value(std::strtod(t.erase(t.find('.'), 1).c_str(), nullptr));
  }
  return Value(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), alloc);
}

std::string At(const YAML::Node& node) {
  return "line " + std::to_string(node.Mark().line + 1);
}

bool ToJson(const YAML::Node& node, Value* out, Allocator& alloc,
            std::string* error) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out->SetNull();
      return true;
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      // "!" is the tag of quoted and block scalars, "?" that of plain ones.
      if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") {
        out->SetString(s.c_str(), static_cast<rapidjson::SizeType>(s.size()),
                       alloc);
      } else {
        *out = PlainScalar(s, alloc);
      }
      return true;
    }
    case YAML::NodeType::Sequence:
      out->SetArray();
      for (const YAML::Node& item : node) {
        Value v;
        if (!ToJson(item, &v, alloc, error)) return false;
        out->PushBack(v, alloc);
      }
      return true;
    case YAML::NodeType::Map:
      out->SetObject();
      for (const auto& entry : node) {
        if (!entry.first.IsScalar()) {
          *error = At(entry.first) + ": a mapping key that is not a scalar";
          return false;
        }
        const std::string& key = entry.first.Scalar();
        if (out->HasMember(key.c_str())) {
          *error = At(entry.first) + ": duplicate key \"" + key + "\"";
          return false;
        }
        Value v;
        if (!ToJson(entry.second, &v, alloc, error)) return false;
        out->AddMember(Value(key.c_str(), alloc), v, alloc);
      }
      return true;
  }
  return false;
}

}  // namespace

std::vector<rapidjson::Document> YamlToJsonDocuments(const std::string& yaml,
                                                     std::string* error) {
  std::vector<Document> docs;
  try {
    for (const YAML::Node& node : YAML::LoadAll(yaml)) {
      if (node.IsNull()) continue;
      Document doc;
      if (!ToJson(node, &doc, doc.GetAllocator(), error)) return {};
      docs.push_back(std::move(doc));
    }
  } catch (const YAML::Exception& e) {
    *error = e.what();
    return {};
  }
  return docs;
}

}  // namespace lens::test
