#include "kube_schema.h"

// RapidJSON 1.1.0 picks its own regex engine unless this is defined (to any
// value); that engine lacks the `\+` escapes and classes of the CRD patterns,
// so std::regex (ECMAScript) is used.
#define RAPIDJSON_SCHEMA_USE_INTERNALREGEX 0

#include <rapidjson/error/en.h>
#include <rapidjson/pointer.h>
#include <rapidjson/schema.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <utility>

namespace lens::test {
namespace {

using rapidjson::Document;
using rapidjson::Pointer;
using rapidjson::Value;
using Allocator = Document::AllocatorType;

constexpr int kMaxRepairs = 50;

// (JSON pointer, what is wrong there)
using Problems = std::vector<std::pair<std::string, std::string>>;

std::string Json(const Value& v, size_t max_chars = 60) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> writer(sb);
  v.Accept(writer);
  std::string s = sb.GetString();
  if (s.size() > max_chars) s = s.substr(0, max_chars - 3) + "...";
  return s;
}

const char* TypeName(const Value& v) {
  if (v.IsNull()) return "null";
  if (v.IsBool()) return "boolean";
  if (v.IsInt64() || v.IsUint64()) return "integer";
  if (v.IsNumber()) return "number";
  if (v.IsString()) return "string";
  return v.IsArray() ? "array" : "object";
}

// "integer", "string or integer": the types a schema allows, null left out
// (every optional field allows it).
std::string Types(const Value& type) {
  if (type.IsString()) return type.GetString();
  std::string out;
  for (const Value& t : type.GetArray()) {
    if (!t.IsString() || std::string(t.GetString()) == "null") continue;
    out += (out.empty() ? "" : " or ") + std::string(t.GetString());
  }
  return out;
}

std::string Text(const Value& object, const char* key) {
  if (!object.IsObject()) return "";
  auto it = object.FindMember(key);
  return it != object.MemberEnd() && it->value.IsString()
             ? it->value.GetString()
             : "";
}

std::string EscapeToken(const std::string& name) {
  std::string out;
  for (char c : name)
    out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

template <typename P>
std::string PointerText(const P& pointer) {
  rapidjson::StringBuffer sb;
  pointer.Stringify(sb);
  return sb.GetString();
}

// Follows `$ref`s ("#/definitions/...") within `root`.
const Value* Resolve(const Value* schema, const Value& root) {
  for (int hops = 0; schema && schema->IsObject() && hops < 16; ++hops) {
    auto ref = schema->FindMember("$ref");
    if (ref == schema->MemberEnd() || !ref->value.IsString()) break;
    std::string target = ref->value.GetString();
    if (target.rfind('#', 0) != 0) return nullptr;
    schema = Pointer(target.substr(1).c_str()).Get(root);
  }
  return schema;
}

// A value of the schema's type (its first enum value if it has one), put where
// a value is missing or wrong so that validation can go on past the problem.
Value Placeholder(const Value* schema, const Value& root, Allocator& alloc) {
  schema = Resolve(schema, root);
  if (!schema || !schema->IsObject()) return Value(rapidjson::kObjectType);
  auto e = schema->FindMember("enum");
  if (e != schema->MemberEnd() && e->value.IsArray() && !e->value.Empty()) {
    return Value(e->value[0], alloc);
  }
  auto t = schema->FindMember("type");
  const Value* first = t == schema->MemberEnd()                  ? nullptr
                       : t->value.IsArray() && !t->value.Empty() ? &t->value[0]
                                                                 : &t->value;
  const std::string type = first && first->IsString() ? first->GetString() : "";
  if (type == "string") return Value("", alloc);
  if (type == "integer" || type == "number") return Value(0);
  if (type == "boolean") return Value(false);
  if (type == "array") return Value(rapidjson::kArrayType);
  if (type == "null") return Value();
  return Value(rapidjson::kObjectType);
}

bool Within(const std::string& pointer,
            const std::vector<std::string>& prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](const std::string& p) {
                       return pointer == p || pointer.rfind(p + "/", 0) == 0;
                     });
}

// The first "$ref" under `v` that names no member of `definitions`, or "".
std::string UnresolvedRef(const Value& v, const Value& definitions) {
  auto ref = v.IsObject() ? v.FindMember("$ref") : Value::ConstMemberIterator();
  if (v.IsObject() && ref != v.MemberEnd() && ref->value.IsString()) {
    const std::string target = ref->value.GetString();
    const std::string prefix = "#/definitions";
    if (target.rfind(prefix + "/", 0) != 0 ||
        !Pointer(target.substr(prefix.size()).c_str()).Get(definitions)) {
      return target;
    }
  }
  std::string missing;
  if (v.IsObject()) {
    for (const auto& m : v.GetObject()) {
      if (missing.empty()) missing = UnresolvedRef(m.value, definitions);
    }
  } else if (v.IsArray()) {
    for (const Value& item : v.GetArray()) {
      if (missing.empty()) missing = UnresolvedRef(item, definitions);
    }
  }
  return missing;
}

}  // namespace

struct KubeSchemas::Impl {
  // A kind's schema: {"definitions": <all>, "$ref": "#/definitions/<its>"}.
  struct Compiled {
    Document root;
    std::unique_ptr<rapidjson::SchemaDocument> schema;
  };

  const Compiled& For(const std::string& definition) const {
    std::lock_guard<std::mutex> lock(mu);
    std::unique_ptr<Compiled>& c = compiled[definition];
    if (!c) {
      c = std::make_unique<Compiled>();
      Allocator& alloc = c->root.GetAllocator();
      c->root.SetObject();
      c->root.AddMember("definitions", Value(definitions, alloc), alloc);
      std::string ref = "#/definitions/" + EscapeToken(definition);
      c->root.AddMember("$ref", Value(ref.c_str(), alloc), alloc);
      c->schema = std::make_unique<rapidjson::SchemaDocument>(c->root);
    }
    return *c;
  }

  // Repairs `work` after one failure and describes it; returns false when it
  // cannot repair.
  bool Repair(const rapidjson::SchemaValidator& v, const Compiled& c,
              Document& work, Problems* problems,
              std::vector<std::string>* placeholders) const;

  // Name -> schema, of every file.
  Document definitions;
  // "apps/v1 Deployment" -> definition name.
  std::map<std::string, std::string> kinds;
  mutable std::mutex mu;
  // Guarded by mu.
  mutable std::map<std::string, std::unique_ptr<Compiled>> compiled;
};

bool KubeSchemas::Impl::Repair(const rapidjson::SchemaValidator& v,
                               const Compiled& c, Document& work,
                               Problems* problems,
                               std::vector<std::string>* placeholders) const {
  const auto pointer = v.GetInvalidDocumentPointer();
  const std::string where = PointerText(pointer);
  const std::string keyword = v.GetInvalidSchemaKeyword();
  const Value* schema =
      Resolve(v.GetInvalidSchemaPointer().Get(c.root), c.root);
  Value* value = Pointer(where.c_str()).Get(work);
  if (!value || !schema) return false;
  Allocator& alloc = work.GetAllocator();
  const bool reported = !Within(where, *placeholders);
  auto report = [&](const std::string& at, const std::string& what) {
    if (reported) problems->emplace_back(at, what);
  };

  if (keyword == "additionalProperties") {
    const auto& token = pointer.GetTokens()[pointer.GetTokenCount() - 1];
    const std::string name(token.name, token.length);
    const std::string parent = where.substr(0, where.rfind('/'));
    report(parent, "unknown field \"" + name + "\"");
    Value* object = Pointer(parent.c_str()).Get(work);
    return object && object->IsObject() && object->RemoveMember(name.c_str());
  }
  if (keyword == "required" && value->IsObject()) {
    auto required = schema->FindMember("required");
    auto properties = schema->FindMember("properties");
    if (required == schema->MemberEnd() || !required->value.IsArray())
      return false;
    bool added = false;
    for (const Value& name : required->value.GetArray()) {
      if (!name.IsString() || value->HasMember(name)) continue;
      report(where, "missing required field \"" +
                        std::string(name.GetString()) + "\"");
      const Value* property = nullptr;
      if (properties != schema->MemberEnd() &&
          properties->value.HasMember(name)) {
        property = &properties->value[name];
      }
      value->AddMember(Value(name, alloc), Placeholder(property, c.root, alloc),
                       alloc);
      placeholders->push_back(where + "/" + EscapeToken(name.GetString()));
      added = true;
    }
    return added;
  }
  auto rule = schema->FindMember(keyword.c_str());
  if (rule == schema->MemberEnd()) {
    report(where, Json(*value) + " fails \"" + keyword + "\"");
  } else if (keyword == "type") {
    report(where, "got " + std::string(TypeName(*value)) + " " + Json(*value) +
                      ", want " + Types(rule->value));
  } else if (keyword == "enum") {
    report(where, Json(*value) + " is not one of " + Json(rule->value, 120));
  } else {
    report(where,
           Json(*value) + " fails \"" + keyword + "\": " + Json(rule->value));
  }
  // A placeholder that fails again (a pattern, a minimum) cannot be repaired
  // this way.
  if (where.empty() || !reported) return false;
  *value = Placeholder(schema, c.root, alloc);
  placeholders->push_back(where);
  return true;
}

KubeSchemas::KubeSchemas(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KubeSchemas::KubeSchemas(KubeSchemas&&) noexcept = default;
KubeSchemas& KubeSchemas::operator=(KubeSchemas&&) noexcept = default;
KubeSchemas::~KubeSchemas() = default;

std::optional<KubeSchemas> KubeSchemas::Load(const std::string& dir,
                                             std::string* error) {
  namespace fs = std::filesystem;
  auto fail = [error](const std::string& message) {
    *error = message;
    return std::nullopt;
  };
  std::vector<fs::path> files;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  if (ec) return fail(dir + ": " + ec.message());
  if (files.empty()) return fail(dir + ": no *.json schema files");
  std::sort(files.begin(), files.end());
  auto impl = std::make_unique<Impl>();
  Value& all = impl->definitions.SetObject();
  Allocator& alloc = impl->definitions.GetAllocator();
  std::map<std::string, std::string> file_of;  // definition -> file
  for (const fs::path& path : files) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    Document doc;
    doc.Parse(text.str().c_str());
    if (!in) return fail(path.string() + ": cannot read");
    if (doc.HasParseError()) {
      return fail(path.string() + ": offset " +
                  std::to_string(doc.GetErrorOffset()) + ": " +
                  rapidjson::GetParseError_En(doc.GetParseError()));
    }
    if (!doc.IsObject() || !doc.HasMember("definitions") ||
        !doc["definitions"].IsObject()) {
      return fail(path.string() + ": no \"definitions\" object");
    }
    for (const auto& m : doc["definitions"].GetObject()) {
      const std::string name = m.name.GetString();
      if (file_of.count(name)) {
        return fail(path.string() + ": definition " + name + " is also in " +
                    file_of[name]);
      }
      file_of[name] = path.filename().string();
      auto gvks = m.value.FindMember("x-kubernetes-group-version-kind");
      if (gvks != m.value.MemberEnd() && gvks->value.IsArray()) {
        for (const Value& gvk : gvks->value.GetArray()) {
          const std::string group = Text(gvk, "group");
          const std::string version = Text(gvk, "version");
          impl->kinds[(group.empty() ? version : group + "/" + version) + " " +
                      Text(gvk, "kind")] = name;
        }
      }
      all.AddMember(Value(m.name, alloc), Value(m.value, alloc), alloc);
    }
  }
  // RapidJSON 1.1.0 accepts anything where a $ref does not resolve; refuse such
  // a set.
  for (const auto& m : all.GetObject()) {
    const std::string missing = UnresolvedRef(m.value, all);
    if (!missing.empty()) {
      return fail(file_of[m.name.GetString()] + ": " + m.name.GetString() +
                  " refers to " + missing + ", which no file in " + dir +
                  " defines");
    }
  }
  return KubeSchemas(std::move(impl));
}

bool KubeSchemas::Knows(const std::string& api_version,
                        const std::string& kind) const {
  return impl_->kinds.count(api_version + " " + kind) > 0;
}

std::vector<std::string> KubeSchemas::Validate(const Value& object) const {
  if (!object.IsObject()) return {"not an object: " + Json(object)};
  const std::string api_version = Text(object, "apiVersion");
  const std::string kind = Text(object, "kind");
  auto metadata = object.FindMember("metadata");
  std::string name, ns;
  if (metadata != object.MemberEnd()) {
    name = Text(metadata->value, "name");
    ns = Text(metadata->value, "namespace");
  }
  const std::string who = (kind.empty() ? "object" : kind) + " " +
                          (name.empty() ? "(no name)"
                           : ns.empty() ? name
                                        : ns + "/" + name);
  if (api_version.empty() || kind.empty())
    return {who + ": no apiVersion or kind"};
  auto it = impl_->kinds.find(api_version + " " + kind);
  if (it == impl_->kinds.end()) {
    return {who + ": no schema for apiVersion \"" + api_version + "\" kind \"" +
            kind + "\""};
  }
  const Impl::Compiled& compiled = impl_->For(it->second);
  Document work;
  work.CopyFrom(object, work.GetAllocator());
  Problems problems;
  std::vector<std::string> placeholders;
  for (int round = 0; round < kMaxRepairs; ++round) {
    rapidjson::SchemaValidator validator(*compiled.schema);
    if (work.Accept(validator)) break;
    if (!impl_->Repair(validator, compiled, work, &problems, &placeholders))
      break;
  }
  // By pointer (an object before its fields), not in RapidJSON's order of
  // checks.
  std::sort(problems.begin(), problems.end());
  std::vector<std::string> lines;
  for (const auto& [at, what] : problems) {
    lines.push_back(who + ": " + (at.empty() ? "(root)" : at) + ": " + what);
  }
  return lines;
}

}  // namespace lens::test
