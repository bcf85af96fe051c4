#include "kube/kube_json.h"

#include "core/json.h"
#include "core/json_reader.h"

namespace lens {
namespace {

constexpr size_t kMaxMessageBytes = 512;

// Printable ASCII only, bounded: the message goes into errors and logs.
std::string Printable(std::string text) {
  if (text.size() > kMaxMessageBytes) {
    text.resize(kMaxMessageBytes);
    text += "...";
  }
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return text;
}

}  // namespace

KubeStatusInfo KubeStatusOf(const rapidjson::Value& status) {
  KubeStatusInfo info;
  if (!status.IsObject()) return info;
  if (const rapidjson::Value* code = JsonMember(status, "code");
      code && code->IsInt()) {
    info.code = code->GetInt();
  }
  info.reason = Printable(JsonString(status, "reason"));
  info.message = Printable(JsonString(status, "message"));
  return info;
}

KubeStatusInfo ParseKubeStatus(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    KubeStatusInfo info;
    // Not a Status (a proxy's page, say): its start says what happened.
    info.message = Printable(std::string(body.substr(0, 200)));
    return info;
  }
  return KubeStatusOf(doc);
}

std::string KubeJsonText(const rapidjson::Value& object) {
  // Byte for byte what the API server sent, as the sliced path keeps it.
  JsonWriter writer({.verbatim_strings = true});
  WriteJsonValue(object, &writer);
  return writer.Take();
}

Status DecodeKubeMeta(const rapidjson::Value& object, KubeObject* out) {
  const rapidjson::Value* meta =
      object.IsObject() ? JsonMember(object, "metadata") : nullptr;
  if (!meta || !meta->IsObject()) {
    return InvalidArgumentError("object without metadata");
  }
  out->uid = JsonString(*meta, "uid");
  out->namespace_name = JsonString(*meta, "namespace");
  out->name = JsonString(*meta, "name");
  out->resource_version = JsonString(*meta, "resourceVersion");
  if (out->name.empty()) return InvalidArgumentError("object without a name");
  return OkStatus();
}

StatusOr<KubeListPage> ParseKubeList(std::string_view body,
                                     std::string_view where) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  const std::string w(where);
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError(w + ": the list is not a JSON object");
  }
  KubeListPage page;
  if (const rapidjson::Value* meta = JsonMember(doc, "metadata");
      meta && meta->IsObject()) {
    page.resource_version = JsonString(*meta, "resourceVersion");
    page.continue_token = JsonString(*meta, "continue");
  }
  if (page.resource_version.empty()) {
    // Every list carries the version its watch starts from.
    return InvalidArgumentError(w +
                                ": not a list (no metadata.resourceVersion)");
  }
  const rapidjson::Value* items = JsonMember(doc, "items");
  if (items && !items->IsArray()) {
    return InvalidArgumentError(w + ": items is not an array");
  }
  if (!items) return page;  // items: null, an empty list
  page.items.reserve(items->Size());
  for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
    KubeObject object;
    Status st = DecodeKubeMeta((*items)[i], &object);
    if (!st.ok()) {
      return InvalidArgumentError(w + ": items[" + std::to_string(i) +
                                  "]: " + st.message());
    }
    object.json = KubeJsonText((*items)[i]);
    page.items.push_back(std::move(object));
  }
  return page;
}

StatusOr<KubeWatchEvent> ParseKubeWatchEvent(std::string_view line,
                                             std::string_view where) {
  rapidjson::Document doc;
  doc.Parse(line.data(), line.size());
  const std::string w(where);
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError(w + ": a watch event that is not JSON");
  }
  const std::string type = JsonString(doc, "type");
  const rapidjson::Value* object = JsonMember(doc, "object");
  if (!object || !object->IsObject()) {
    return InvalidArgumentError(w + ": a watch event without an object");
  }
  KubeWatchEvent event;
  if (type == "ADDED") {
    event.type = KubeWatchType::kAdded;
  } else if (type == "MODIFIED") {
    event.type = KubeWatchType::kModified;
  } else if (type == "DELETED") {
    event.type = KubeWatchType::kDeleted;
  } else if (type == "BOOKMARK") {
    event.type = KubeWatchType::kBookmark;
    if (const rapidjson::Value* meta = JsonMember(*object, "metadata");
        meta && meta->IsObject()) {
      event.object.resource_version = JsonString(*meta, "resourceVersion");
    }
    return event;
  } else if (type == "ERROR") {
    event.type = KubeWatchType::kError;
    event.error = KubeStatusOf(*object);
    return event;
  } else {
    return InvalidArgumentError(w + ": unknown watch event type \"" +
                                Printable(type) + "\"");
  }
  Status st = DecodeKubeMeta(*object, &event.object);
  if (!st.ok()) return st.WithContext(w + ": " + type);
  // The API server writes {"type":"...","object":{...}}: the object's text
  // is then a slice of the line, with no second serialisation.
  const std::string prefix = "{\"type\":\"" + type + "\",\"object\":";
  std::string_view rest = line;
  while (!rest.empty() &&
         (rest.back() == '\n' || rest.back() == '\r' || rest.back() == ' ')) {
    rest.remove_suffix(1);
  }
  if (doc.MemberCount() == 2 && rest.size() > prefix.size() + 1 &&
      rest.substr(0, prefix.size()) == prefix && rest.back() == '}' &&
      rest[prefix.size()] == '{' && rest[rest.size() - 2] == '}') {
    event.object.json = std::string(
        rest.substr(prefix.size(), rest.size() - prefix.size() - 1));
  } else {
    event.object.json = KubeJsonText(*object);
  }
  return event;
}

}  // namespace lens
