#include "dashboard.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <filesystem>

#include "command.h"

namespace lens::test {
namespace {

namespace fs = std::filesystem;

std::string Text(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject() || !v.HasMember(key) || !v[key].IsString()) return "";
  return v[key].GetString();
}

std::string DatasourceUid(const rapidjson::Value& v) {
  if (!v.IsObject() || !v.HasMember("datasource")) return "";
  const rapidjson::Value& ds = v["datasource"];
  if (ds.IsString()) return ds.GetString();  // the pre-7.x form
  return Text(ds, "uid");
}

Status ReadPanel(const std::string& where, const rapidjson::Value& p,
                 std::vector<DashboardPanel>* out) {
  if (!p.IsObject()) return InvalidArgumentError(where + ": not an object");
  DashboardPanel panel;
  if (p.HasMember("id") && p["id"].IsInt()) panel.id = p["id"].GetInt();
  panel.type = Text(p, "type");
  panel.title = Text(p, "title");
  panel.datasource_uid = DatasourceUid(p);
  panel.has_grid_pos = p.HasMember("gridPos") && p["gridPos"].IsObject();
  if (p.HasMember("targets")) {
    if (!p["targets"].IsArray()) {
      return InvalidArgumentError(where + ".targets: not an array");
    }
    for (const auto& t : p["targets"].GetArray()) {
      panel.targets.push_back(
          {Text(t, "refId"), Text(t, "expr"), DatasourceUid(t)});
    }
  }
  out->push_back(std::move(panel));
  if (p.HasMember("panels") && p["panels"].IsArray()) {
    const auto& nested = p["panels"].GetArray();
    for (rapidjson::SizeType i = 0; i < nested.Size(); ++i) {
      LENS_RETURN_IF_ERROR(ReadPanel(
          where + ".panels[" + std::to_string(i) + "]", nested[i], out));
    }
  }
  return OkStatus();
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_';
}

// One variable reference at text[i] == '$': its name and length, or an empty
// name when there is none.
std::pair<std::string, size_t> ReferenceAt(std::string_view text, size_t i) {
  if (i + 1 < text.size() && text[i + 1] == '{') {
    const size_t close = text.find('}', i + 2);
    if (close == std::string_view::npos) return {"", 1};
    std::string_view inner = text.substr(i + 2, close - i - 2);
    inner = inner.substr(0, inner.find(':'));  // ${name:format}
    return {std::string(inner), close - i + 1};
  }
  size_t end = i + 1;
  while (end < text.size() && IsNameChar(text[end])) ++end;
  return {std::string(text.substr(i + 1, end - i - 1)), end - i};
}

// A value as a regex inside a PromQL double-quoted string: each regex
// metacharacter gets a backslash, written as \\ in the string.
std::string RegexEscape(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos)
      out += "\\\\";
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::vector<std::string> DashboardFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".json")
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

StatusOr<Dashboard> LoadDashboard(const std::string& path) {
  const std::string text = ReadFile(path);
  if (text.empty()) return NotFoundError(path + ": cannot read it");
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError(path + ": not a JSON object (offset " +
                                std::to_string(doc.GetErrorOffset()) + ")");
  }
  Dashboard d;
  d.path = path;
  d.uid = Text(doc, "uid");
  d.title = Text(doc, "title");
  if (doc.HasMember("schemaVersion") && doc["schemaVersion"].IsInt())
    d.schema_version = doc["schemaVersion"].GetInt();
  if (doc.HasMember("templating")) {
    const rapidjson::Value& t = doc["templating"];
    if (!t.IsObject() || !t.HasMember("list") || !t["list"].IsArray())
      return InvalidArgumentError(path + ": templating.list is not an array");
    for (const auto& v : t["list"].GetArray()) {
      DashboardVariable var;
      var.name = Text(v, "name");
      var.type = Text(v, "type");
      // Grafana 10 writes a query variable's query as an object.
      var.query = v.HasMember("query") && v["query"].IsObject()
                      ? Text(v["query"], "query")
                      : Text(v, "query");
      var.datasource_uid = DatasourceUid(v);
      const auto flag = [&](const char* key) {
        return v.HasMember(key) && v[key].IsBool() && v[key].GetBool();
      };
      var.multi = flag("multi") || flag("includeAll");
      d.variables.push_back(std::move(var));
    }
  }
  if (!doc.HasMember("panels") || !doc["panels"].IsArray())
    return InvalidArgumentError(path + ": panels is not an array");
  const auto& panels = doc["panels"].GetArray();
  for (rapidjson::SizeType i = 0; i < panels.Size(); ++i) {
    LENS_RETURN_IF_ERROR(ReadPanel(path + ": panels[" + std::to_string(i) + "]",
                                   panels[i], &d.panels));
  }
  return d;
}

std::optional<LabelValuesQuery> ParseLabelValues(std::string_view query) {
  constexpr std::string_view kPrefix = "label_values(";
  while (!query.empty() && query.front() == ' ') query.remove_prefix(1);
  while (!query.empty() && query.back() == ' ') query.remove_suffix(1);
  if (query.substr(0, kPrefix.size()) != kPrefix || query.back() != ')')
    return std::nullopt;
  query = query.substr(kPrefix.size(), query.size() - kPrefix.size() - 1);
  // The label is after the last comma outside braces and quotes.
  size_t split = std::string_view::npos;
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < query.size(); ++i) {
    const char c = query[i];
    if (c == '"' && (i == 0 || query[i - 1] != '\\')) quoted = !quoted;
    if (quoted) continue;
    if (c == '{' || c == '(') ++depth;
    if (c == '}' || c == ')') --depth;
    if (c == ',' && depth == 0) split = i;
  }
  const auto trim = [](std::string_view s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    return std::string(s);
  };
  LabelValuesQuery q;
  if (split == std::string_view::npos) {
    q.label = trim(query);
  } else {
    q.match = trim(query.substr(0, split));
    q.label = trim(query.substr(split + 1));
  }
  if (q.label.empty() ||
      !std::all_of(q.label.begin(), q.label.end(), IsNameChar))
    return std::nullopt;
  return q;
}

std::vector<std::string> ReferencedVariables(std::string_view text) {
  std::vector<std::string> names;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$') continue;
    auto [name, length] = ReferenceAt(text, i);
    if (!name.empty()) names.push_back(name);
    i += length - 1;
  }
  return names;
}

bool InRegexMatcher(std::string_view text, size_t offset) {
  const size_t quote = text.rfind('"', offset);
  if (quote == std::string_view::npos) return false;
  // Inside a string: an odd number of quotes before the reference.
  if (std::count(text.begin(), text.begin() + offset, '"') % 2 == 0)
    return false;
  size_t i = quote;
  while (i > 0 && text[i - 1] == ' ') --i;
  return i >= 2 && text[i - 1] == '~' &&
         (text[i - 2] == '=' || text[i - 2] == '!');
}

std::string ExpandVariables(
    std::string_view text,
    const std::map<std::string, std::vector<std::string>>& values,
    const Durations& durations) {
  const std::map<std::string, std::string> builtins = {
      {"__rate_interval", durations.rate_interval},
      {"__interval", durations.interval},
      {"__range", durations.range}};
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$') {
      out.push_back(text[i]);
      continue;
    }
    auto [name, length] = ReferenceAt(text, i);
    const std::string_view original = text.substr(i, length);
    i += length - 1;
    if (auto b = builtins.find(name); b != builtins.end()) {
      out += b->second;
      continue;
    }
    auto v = values.find(name);
    if (v == values.end() || v->second.empty()) {
      out += original;
      continue;
    }
    if (!InRegexMatcher(text, i + 1 - length)) {
      out += v->second.front();
      continue;
    }
    if (v->second.size() == 1) {
      out += RegexEscape(v->second.front());
      continue;
    }
    out.push_back('(');
    for (size_t k = 0; k < v->second.size(); ++k) {
      if (k > 0) out.push_back('|');
      out += RegexEscape(v->second[k]);
    }
    out.push_back(')');
  }
  return out;
}

}  // namespace lens::test
