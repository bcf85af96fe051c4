// KubeApiServer's single-object verbs: get, create, update (PUT), patch and
// delete, each answering the object or a Status.
//
// PATCH takes application/merge-patch+json (RFC 7386) and, treated the same
// way, application/strategic-merge-patch+json (lists are replaced, not
// merged by key); JSON patch and server-side apply are answered 415.
#include <string>
#include <utility>

#include "kube_api_server_impl.h"

namespace lens::test {

using kube::Answer;
using kube::AnswerStatus;
using kube::ChangeResult;
using kube::Outcome;
using kube::StatusOf;
using kube::StatusSpec;
using kube::Target;

namespace {

// The resource as errors name it: "pods", "leases.coordination.k8s.io".
std::string QualifiedResource(const KubeResourceType& type) {
  return type.group.empty() ? type.resource : type.resource + "." + type.group;
}

// RFC 7386: members of `patch` replace those of `target`, objects merge
// recursively and null removes.
void MergePatch(rapidjson::Value& target, const rapidjson::Value& patch,
                kube::Allocator& alloc) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, alloc);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  for (const auto& m : patch.GetObject()) {
    if (m.value.IsNull()) {
      target.RemoveMember(m.name);
      continue;
    }
    auto it = target.FindMember(m.name);
    if (it != target.MemberEnd()) {
      MergePatch(it->value, m.value, alloc);
      continue;
    }
    rapidjson::Value value(rapidjson::kObjectType);
    MergePatch(value, m.value, alloc);
    target.AddMember(rapidjson::Value(m.name, alloc), value, alloc);
  }
}

}  // namespace

void KubeApiServer::Impl::ServeGet(const httplib::Request& req,
                                   httplib::Response& res,
                                   const Target& target) {
  const bool metadata_only =
      kube::WantsMetadataOnly(req.get_header_value("Accept"));
  std::lock_guard lock(mu_);
  const auto& objects = objects_[target.type];
  const auto it =
      objects.find(KeyOf(target.type, target.namespace_name, target.name));
  ChangeResult found{Outcome::kNotFound, nullptr, ""};
  if (it != objects.end()) found = {Outcome::kOk, it->second, ""};
  AnswerChange(found, target, target.name, 200, metadata_only, res);
}

namespace {

// Parses a request body as an object of the target's type: fills apiVersion,
// kind and (for namespaced types) metadata.namespace when missing. "" when it
// is acceptable, otherwise why not.
std::string ParseBody(const std::string& body, const std::string& api_version,
                      const KubeResourceType& type,
                      const std::string& namespace_name,
                      rapidjson::Document* doc) {
  doc->Parse(body.c_str(), body.size());
  if (doc->HasParseError() || !doc->IsObject()) {
    return "the body of the request is not a JSON object";
  }
  auto& alloc = doc->GetAllocator();
  const std::pair<const char*, const std::string*> fields[] = {
      {"apiVersion", &api_version}, {"kind", &type.kind}};
  for (const auto& [field, want_ptr] : fields) {
    const std::string& want = *want_ptr;
    const std::string have = kube::StringMember(*doc, field);
    if (have.empty()) kube::SetString(*doc, field, want, alloc);
    if (!have.empty() && have != want) {
      return std::string("the ") + field + " in the data (" + have +
             ") does not match the expected " + field + " (" + want + ")";
    }
  }
  rapidjson::Value& meta = kube::MemberObject(*doc, "metadata", alloc);
  const std::string ns = kube::StringMember(meta, "namespace");
  if (type.namespaced && ns.empty() && !namespace_name.empty()) {
    kube::SetString(meta, "namespace", namespace_name, alloc);
  } else if (type.namespaced && ns != namespace_name) {
    return "the namespace of the provided object does not match the "
           "namespace sent on the request";
  }
  return "";
}

}  // namespace

void KubeApiServer::Impl::ServeCreate(const httplib::Request& req,
                                      httplib::Response& res,
                                      const Target& target) {
  const bool metadata_only =
      kube::WantsMetadataOnly(req.get_header_value("Accept"));
  rapidjson::Document doc;
  std::lock_guard lock(mu_);
  std::string why = ParseBody(req.body, ApiVersion(target.type),
                              types_[target.type], target.namespace_name, &doc);
  if (why.empty() &&
      !kube::StringMember(doc["metadata"], "resourceVersion").empty()) {
    why = "resourceVersion should not be set on objects to be created";
  }
  if (!why.empty()) return AnswerStatus(res, StatusOf(400, why));
  const std::string name = kube::StringMember(doc["metadata"], "name");
  const ChangeResult r = CreateLocked(target.type, std::move(doc), true);
  AnswerChange(r, target, r.object ? r.object->name : name, 201, metadata_only,
               res);
}

namespace {

// The stored object with a merge patch applied; "" when it applies,
// otherwise why not. A resourceVersion in the patch is a precondition.
std::string Patched(const std::string& body, const kube::StoredObject& stored,
                    const Target& target, rapidjson::Document* doc,
                    std::string* expected_version) {
  rapidjson::Document patch;
  patch.Parse(body.c_str(), body.size());
  if (patch.HasParseError() || !patch.IsObject()) {
    return "the patch is not a JSON object";
  }
  if (auto m = patch.FindMember("metadata");
      m != patch.MemberEnd() && m->value.IsObject()) {
    *expected_version = kube::StringMember(m->value, "resourceVersion");
  }
  auto& alloc = doc->GetAllocator();
  doc->CopyFrom(stored.doc, alloc);
  MergePatch(*doc, patch, alloc);
  rapidjson::Value& meta = kube::MemberObject(*doc, "metadata", alloc);
  kube::SetString(meta, "name", target.name, alloc);
  if (target.namespaced) {
    kube::SetString(meta, "namespace", target.namespace_name, alloc);
  }
  return "";
}

// A PUT body as the replacement of the target; "" when acceptable,
// otherwise why not. Its resourceVersion (if any) is a precondition.
std::string Replacement(const std::string& body, const std::string& api_version,
                        const KubeResourceType& type, const Target& target,
                        rapidjson::Document* doc,
                        std::string* expected_version) {
  std::string why =
      ParseBody(body, api_version, type, target.namespace_name, doc);
  if (!why.empty()) return why;
  rapidjson::Value& meta = (*doc)["metadata"];
  const std::string name = kube::StringMember(meta, "name");
  *expected_version = kube::StringMember(meta, "resourceVersion");
  if (name.empty()) {
    kube::SetString(meta, "name", target.name, doc->GetAllocator());
  } else if (name != target.name) {
    return "the name of the object (" + name +
           ") does not match the name on the URL (" + target.name + ")";
  }
  return "";
}

}  // namespace

void KubeApiServer::Impl::ServeUpdate(const httplib::Request& req,
                                      httplib::Response& res,
                                      const Target& target, bool patch) {
  const bool metadata_only =
      kube::WantsMetadataOnly(req.get_header_value("Accept"));
  const std::string content_type = req.get_header_value("Content-Type");
  if (patch && content_type.rfind("application/merge-patch+json", 0) != 0 &&
      content_type.rfind("application/strategic-merge-patch+json", 0) != 0) {
    return AnswerStatus(
        res, StatusOf(415,
                      "the body of the request was in an unknown format - "
                      "accepted media types include: "
                      "application/merge-patch+json, "
                      "application/strategic-merge-patch+json"));
  }
  rapidjson::Document doc;
  std::string expected_version;
  std::string why;
  std::lock_guard lock(mu_);
  if (patch) {
    const auto& objects = objects_[target.type];
    const auto it =
        objects.find(KeyOf(target.type, target.namespace_name, target.name));
    if (it == objects.end()) {
      return AnswerChange({Outcome::kNotFound, nullptr, ""}, target,
                          target.name, 200, metadata_only, res);
    }
    why = Patched(req.body, *it->second, target, &doc, &expected_version);
  } else {
    why = Replacement(req.body, ApiVersion(target.type), types_[target.type],
                      target, &doc, &expected_version);
  }
  if (!why.empty()) return AnswerStatus(res, StatusOf(400, why));
  const ChangeResult r =
      UpdateLocked(target.type, std::move(doc), expected_version, true);
  AnswerChange(r, target, target.name, 200, metadata_only, res);
}

void KubeApiServer::Impl::ServeDelete(const httplib::Request& req,
                                      httplib::Response& res,
                                      const Target& target) {
  const bool metadata_only =
      kube::WantsMetadataOnly(req.get_header_value("Accept"));
  // DeleteOptions: {"preconditions":{"uid":...,"resourceVersion":...}}.
  std::string expected_version;
  std::string expected_uid;
  if (!req.body.empty()) {
    rapidjson::Document options;
    options.Parse(req.body.c_str(), req.body.size());
    if (options.HasParseError() || !options.IsObject()) {
      return AnswerStatus(res,
                          StatusOf(400, "DeleteOptions is not a JSON object"));
    }
    if (auto p = options.FindMember("preconditions");
        p != options.MemberEnd() && p->value.IsObject()) {
      expected_version = kube::StringMember(p->value, "resourceVersion");
      expected_uid = kube::StringMember(p->value, "uid");
    }
  }
  std::lock_guard lock(mu_);
  const ChangeResult r = DeleteLocked(
      target.type, KeyOf(target.type, target.namespace_name, target.name),
      expected_version, expected_uid);
  AnswerChange(r, target, target.name, 200, metadata_only, res);
}

void KubeApiServer::Impl::AnswerChange(const ChangeResult& result,
                                       const Target& target,
                                       const std::string& name, int ok_status,
                                       bool metadata_only,
                                       httplib::Response& res) {
  const auto& type = types_[target.type];
  const std::string quoted = QualifiedResource(type) + " \"" + name + "\"";
  StatusSpec s;
  s.name = name;
  s.group = type.group;
  s.kind = type.resource;
  switch (result.outcome) {
    case Outcome::kOk:
    case Outcome::kUnchanged:
      return Answer(res, ok_status, ObjectJson(*result.object, metadata_only));
    case Outcome::kExists:
      s.code = 409;
      s.reason = "AlreadyExists";
      s.message = quoted + " already exists";
      break;
    case Outcome::kNotFound:
      s.code = 404;
      s.message = quoted + " not found";
      break;
    case Outcome::kConflict:
      s.code = 409;
      s.message =
          "Operation cannot be fulfilled on " + quoted + ": " + result.message;
      break;
    case Outcome::kInvalid:
      s.code = 422;
      s.kind = type.kind;
      s.message = type.kind + " \"" + name + "\" is invalid: " + result.message;
      break;
  }
  AnswerStatus(res, s);
}

}  // namespace lens::test
