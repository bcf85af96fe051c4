// KubeApiServer's lists: label and field selectors, the scope a list or
// watch covers, and paginated lists with continue tokens over consistent
// snapshots (rebuilt from the watch history, as etcd reads at a revision).
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kube_api_server_impl.h"

namespace lens::test {
namespace kube {

bool ParseUint(std::string_view text, uint64_t* value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *value);
  return !text.empty() && ec == std::errc() && ptr == end;
}

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// Splits at `sep` outside parentheses.
std::vector<std::string_view> SplitTop(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || (s[i] == sep && depth == 0)) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    } else if (s[i] == '(') {
      ++depth;
    } else if (s[i] == ')') {
      --depth;
    }
  }
  return parts;
}

bool ValidKey(std::string_view key) {
  return !key.empty() &&
         key.find_first_of(" \t()=!,") == std::string_view::npos;
}

// One requirement of a label (`allow_sets`) or field selector.
bool ParseRequirement(std::string_view term, bool allow_sets, Requirement* r) {
  using Op = Requirement::Op;
  term = Trim(term);
  if (allow_sets && !term.empty() && term.front() == '!') {
    r->key = std::string(Trim(term.substr(1)));
    r->op = Op::kNotExists;
    return ValidKey(r->key);
  }
  const size_t paren = term.find('(');
  if (allow_sets && paren != std::string_view::npos) {
    if (term.back() != ')') return false;
    const std::string_view head = Trim(term.substr(0, paren));
    const size_t space = head.find_first_of(" \t");
    if (space == std::string_view::npos) return false;
    r->key = std::string(head.substr(0, space));
    const std::string_view op = Trim(head.substr(space));
    if (op != "in" && op != "notin") return false;
    r->op = op == "in" ? Op::kIn : Op::kNotIn;
    const std::string_view inner =
        term.substr(paren + 1, term.size() - paren - 2);
    for (std::string_view v : SplitTop(inner, ',')) {
      r->values.emplace_back(Trim(v));
    }
    return ValidKey(r->key);
  }
  size_t at = term.find("!=");
  size_t width = 2;
  r->op = Op::kNotEquals;
  if (at == std::string_view::npos) {
    r->op = Op::kEquals;
    at = term.find("==");
    if (at == std::string_view::npos) {
      at = term.find('=');
      width = 1;
    }
  }
  if (at == std::string_view::npos) {
    r->key = std::string(term);
    r->op = Op::kExists;
    return allow_sets && ValidKey(r->key);
  }
  r->key = std::string(Trim(term.substr(0, at)));
  r->values.emplace_back(Trim(term.substr(at + width)));
  return ValidKey(r->key);
}

// Continue tokens as the API server makes them: unpadded URL-safe base64 of
// {"v":"meta.k8s.io/v1","rv":<snapshot version>,"start":"<last key>\0"};
// rv -1 continues from the current state (the "inconsistent" token of a 410).
constexpr char kBase64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string EncodeContinue(int64_t rv, const std::string& start) {
  const std::string text = R"({"v":"meta.k8s.io/v1","rv":)" +
                           std::to_string(rv) + R"(,"start":)" +
                           JsonQuote(start) + "}";
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (unsigned char c : text) {
    bits = (bits << 8) | c;
    count += 8;
    while (count >= 6) {
      count -= 6;
      out.push_back(kBase64[(bits >> count) & 63]);
    }
  }
  if (count > 0) out.push_back(kBase64[(bits << (6 - count)) & 63]);
  return out;
}

// "" and the token's parts, or why it is not valid.
std::string DecodeContinue(const std::string& token, int64_t* rv,
                           std::string* start) {
  std::string text;
  uint32_t bits = 0;
  int count = 0;
  for (char c : token) {
    if (c == '=') break;
    const char* at = std::char_traits<char>::find(kBase64, 64, c);
    if (!at) return "illegal base64 data";
    bits = (bits << 6) | static_cast<uint32_t>(at - kBase64);
    count += 6;
    if (count >= 8) {
      count -= 8;
      text.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  if (doc.HasParseError() || !doc.IsObject()) return "not a JSON object";
  if (StringMember(doc, "v") != "meta.k8s.io/v1") {
    return "got invalid continue version";
  }
  auto it = doc.FindMember("rv");
  if (it == doc.MemberEnd() || !it->value.IsInt64()) return "no rv";
  *rv = it->value.GetInt64();
  *start = StringMember(doc, "start");
  return "";
}

}  // namespace

std::string ParseSelector(std::string_view text, bool labels,
                          std::vector<Requirement>* out) {
  if (Trim(text).empty()) return "";
  for (std::string_view term : SplitTop(text, ',')) {
    Requirement r;
    if (!ParseRequirement(term, labels, &r)) {
      return "unable to parse requirement: \"" + std::string(Trim(term)) +
             "\" in " + (labels ? "labelSelector" : "fieldSelector") + " \"" +
             std::string(text) + "\"";
    }
    out->push_back(std::move(r));
  }
  return "";
}

std::string FieldValue(const rapidjson::Value& doc, std::string_view path) {
  const rapidjson::Value* v = &doc;
  while (!path.empty()) {
    const size_t dot = path.find('.');
    const std::string part(path.substr(0, dot));
    if (!v->IsObject()) return "";
    auto it = v->FindMember(part.c_str());
    if (it == v->MemberEnd()) return "";
    v = &it->value;
    path = dot == std::string_view::npos ? "" : path.substr(dot + 1);
  }
  if (v->IsString()) return std::string(v->GetString(), v->GetStringLength());
  if (v->IsBool()) return v->GetBool() ? "true" : "false";
  if (v->IsInt64()) return std::to_string(v->GetInt64());
  if (v->IsUint64()) return std::to_string(v->GetUint64());
  if (v->IsDouble()) return std::to_string(v->GetDouble());
  return "";
}

bool Selector::Matches(const StoredObject& object) const {
  using Op = Requirement::Op;
  const rapidjson::Value* labels = nullptr;
  if (auto meta = object.doc.FindMember("metadata");
      meta != object.doc.MemberEnd() && meta->value.IsObject()) {
    auto it = meta->value.FindMember("labels");
    if (it != meta->value.MemberEnd() && it->value.IsObject()) {
      labels = &it->value;
    }
  }
  for (const Requirement& r : this->labels) {
    const bool has = labels && labels->HasMember(r.key.c_str()) &&
                     (*labels)[r.key.c_str()].IsString();
    const std::string value = has ? StringMember(*labels, r.key.c_str()) : "";
    const bool listed = has && std::find(r.values.begin(), r.values.end(),
                                         value) != r.values.end();
    bool ok = false;
    switch (r.op) {
      case Op::kEquals:
      case Op::kIn:
        ok = listed;
        break;
      case Op::kNotEquals:
      case Op::kNotIn:
        ok = !listed;
        break;
      case Op::kExists:
        ok = has;
        break;
      case Op::kNotExists:
        ok = !has;
        break;
    }
    if (!ok) return false;
  }
  for (const Requirement& r : fields) {
    const bool equal = FieldValue(object.doc, r.key) == r.values.front();
    if (equal != (r.op == Op::kEquals)) return false;
  }
  return true;
}

bool Scope::Contains(const StoredObject& object) const {
  return (namespace_name.empty() || object.namespace_name == namespace_name) &&
         (name.empty() || object.name == name) && selector.Matches(object);
}

}  // namespace kube

void KubeApiServer::Impl::ServeList(const httplib::Request& req,
                                    httplib::Response& res,
                                    const kube::Target& target,
                                    const kube::Selector& selector) {
  const bool metadata_only =
      kube::WantsMetadataOnly(req.get_header_value("Accept"));
  uint64_t limit = 0;
  if (req.has_param("limit") &&
      !kube::ParseUint(req.get_param_value("limit"), &limit)) {
    return kube::AnswerStatus(res, kube::StatusOf(400, "invalid limit"));
  }
  const std::string token = req.get_param_value("continue");
  int64_t token_rv = 0;
  std::string start;
  if (!token.empty()) {
    const std::string why = kube::DecodeContinue(token, &token_rv, &start);
    if (!why.empty()) {
      return kube::AnswerStatus(
          res, kube::StatusOf(400, "continue key is not valid: " + why));
    }
  }
  std::lock_guard lock(mu_);
  uint64_t rv = resource_version_;
  if (token_rv > 0) {
    if (static_cast<uint64_t>(token_rv) < history_start_) {
      kube::StatusSpec gone = kube::StatusOf(
          410,
          "The provided continue parameter is too old to display a "
          "consistent list result. You can start a new list without the "
          "continue parameter, or use the continue token in this response to "
          "retrieve the remainder of the results. Continuing with the "
          "provided token results in an inconsistent list - objects that "
          "were created, modified, or deleted between the time the first "
          "chunk was returned and now may show up in the list.");
      gone.continue_token = kube::EncodeContinue(-1, start);
      return kube::AnswerStatus(res, gone);
    }
    rv = std::min<uint64_t>(token_rv, resource_version_);
  }
  std::map<std::string, kube::ObjectPtr> past;
  const std::map<std::string, kube::ObjectPtr>* snapshot =
      &objects_[target.type];
  if (rv != resource_version_) {
    past = SnapshotLocked(target.type, rv);
    snapshot = &past;
  }
  const kube::Scope scope{target.type, target.namespace_name, "", selector};
  std::string items;
  uint64_t count = 0;
  uint64_t remaining = 0;
  std::string last_key;
  bool more = false;
  for (auto it = snapshot->lower_bound(start); it != snapshot->end(); ++it) {
    if (!scope.Contains(*it->second)) continue;
    if (limit > 0 && count == limit) {
      more = true;
      // The API server counts what is left only without selectors.
      if (!selector.empty()) break;
      ++remaining;
      continue;
    }
    items +=
        (items.empty() ? "" : ",") + ObjectJson(*it->second, metadata_only);
    ++count;
    last_key = it->first;
  }
  const auto& type = types_[target.type];
  std::string body = metadata_only
                         ? R"({"kind":"PartialObjectMetadataList",)"
                           R"("apiVersion":"meta.k8s.io/v1",)"
                         : R"({"kind":)" + kube::JsonQuote(type.kind + "List") +
                               R"(,"apiVersion":)" +
                               kube::JsonQuote(ApiVersion(target.type)) + ",";
  body += R"("metadata":{"resourceVersion":")" + std::to_string(rv) + "\"";
  if (more) {
    body += R"(,"continue":)" + kube::JsonQuote(kube::EncodeContinue(
                                    static_cast<int64_t>(rv), last_key + '\0'));
    if (remaining > 0) {
      body += R"(,"remainingItemCount":)" + std::to_string(remaining);
    }
  }
  body += R"(},"items":[)" + items + "]}";
  kube::Answer(res, 200, std::move(body));
}

}  // namespace lens::test
