// KubeApiServer's object store: the resource types it serves, one
// resourceVersion counter for all of them, creates, updates and deletes with
// the server-set fields (uid, timestamps, generation), and the bounded event
// history from which watches resume and older lists are rebuilt.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdlib>
#include <ctime>

#include "kube_api_server_impl.h"

namespace lens::test {
namespace kube {

ObjectPtr Seal(rapidjson::Document doc) {
  auto object = std::make_shared<StoredObject>();
  const rapidjson::Value& meta = doc["metadata"];
  auto text = [&](const char* name) {
    auto it = meta.FindMember(name);
    return it != meta.MemberEnd() && it->value.IsString()
               ? std::string(it->value.GetString(), it->value.GetStringLength())
               : std::string();
  };
  object->namespace_name = text("namespace");
  object->name = text("name");
  object->resource_version =
      std::strtoull(text("resourceVersion").c_str(), nullptr, 10);
  object->key = object->namespace_name.empty()
                    ? object->name
                    : object->namespace_name + "/" + object->name;
  object->json = Serialize(doc);
  object->metadata = Serialize(meta);
  object->doc = std::move(doc);
  return object;
}

std::string Serialize(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

rapidjson::Value& MemberObject(rapidjson::Value& parent, const char* name,
                               Allocator& alloc) {
  auto it = parent.FindMember(name);
  if (it == parent.MemberEnd()) {
    parent.AddMember(rapidjson::Value(name, alloc),
                     rapidjson::Value(rapidjson::kObjectType), alloc);
    return parent[name];
  }
  if (!it->value.IsObject()) it->value.SetObject();
  return it->value;
}

std::string StringMember(const rapidjson::Value& object, const char* name) {
  auto it = object.FindMember(name);
  return it != object.MemberEnd() && it->value.IsString()
             ? std::string(it->value.GetString(), it->value.GetStringLength())
             : std::string();
}

void SetString(rapidjson::Value& object, const char* name,
               std::string_view value, Allocator& alloc) {
  rapidjson::Value v(value.data(),
                     static_cast<rapidjson::SizeType>(value.size()), alloc);
  auto it = object.FindMember(name);
  if (it != object.MemberEnd()) {
    it->value = std::move(v);
  } else {
    object.AddMember(rapidjson::Value(name, alloc), std::move(v), alloc);
  }
}

namespace {

struct DefaultType {
  const char* group;
  const char* version;
  const char* resource;
  const char* kind;
  bool namespaced;
};

constexpr DefaultType kDefaultTypes[] = {
    {"", "v1", "pods", "Pod", true},
    {"", "v1", "nodes", "Node", false},
    {"", "v1", "namespaces", "Namespace", false},
    {"apps", "v1", "deployments", "Deployment", true},
    {"apps", "v1", "replicasets", "ReplicaSet", true},
    {"apps", "v1", "statefulsets", "StatefulSet", true},
    {"batch", "v1", "jobs", "Job", true},
    {"batch", "v1", "cronjobs", "CronJob", true},
    {"coordination.k8s.io", "v1", "leases", "Lease", true},
    {"kubeflow.org", "v1", "pytorchjobs", "PyTorchJob", true},
    {"kubeflow.org", "v1", "mpijobs", "MPIJob", true},
    {"kubeflow.org", "v2beta1", "mpijobs", "MPIJob", true},  // MPI operator v2
    {"jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", true},
    {"ray.io", "v1", "rayjobs", "RayJob", true},
    {"ray.io", "v1", "rayclusters", "RayCluster", true},
    {"trainer.kubeflow.org", "v1alpha1", "trainjobs", "TrainJob", true},
};

std::string Now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string RandomUid(std::mt19937_64& rng) {
  std::string hex;
  for (int i = 0; i < 32; ++i) hex.push_back("0123456789abcdef"[rng() % 16]);
  hex[12] = '4';  // version 4
  hex[16] = "89ab"[rng() % 4];
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) +
         "-" + hex.substr(16, 4) + "-" + hex.substr(20);
}

std::string RandomSuffix(std::mt19937_64& rng) {
  // The alphabet of the API server's name generator (no vowels, no 0/1/3).
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string s;
  for (int i = 0; i < 5; ++i) s.push_back(kAlphabet[rng() % 27]);
  return s;
}

}  // namespace

ObjectPtr Restamp(const StoredObject& object, uint64_t resource_version) {
  rapidjson::Document doc;
  doc.CopyFrom(object.doc, doc.GetAllocator());
  SetString(doc["metadata"], "resourceVersion",
            std::to_string(resource_version), doc.GetAllocator());
  return Seal(std::move(doc));
}

const char* EventTypeName(EventType type) {
  switch (type) {
    case EventType::kAdded:
      return "ADDED";
    case EventType::kModified:
      return "MODIFIED";
    case EventType::kDeleted:
      return "DELETED";
  }
  return "ERROR";
}

}  // namespace kube

using kube::ChangeResult;
using kube::EventType;
using kube::ObjectPtr;
using kube::Outcome;
KubeApiServer::Impl::Impl(KubeApiServerOptions options)
    : options_(std::move(options)), rng_(std::random_device{}()) {
  for (const auto& t : kube::kDefaultTypes) {
    AddType({t.group, t.version, t.resource, t.kind, t.namespaced});
  }
  port_ = options_.port;
}

void KubeApiServer::Impl::AddType(const KubeResourceType& type) {
  std::lock_guard lock(mu_);
  for (auto& t : types_) {
    if (t.group == type.group && t.version == type.version &&
        t.resource == type.resource) {
      t = type;
      return;
    }
  }
  types_.push_back(type);
  objects_.emplace_back();
}

int KubeApiServer::Impl::FindKind(std::string_view api_version,
                                  std::string_view kind) const {
  const size_t slash = api_version.find('/');
  const std::string_view group =
      slash == std::string_view::npos ? "" : api_version.substr(0, slash);
  const std::string_view version = slash == std::string_view::npos
                                       ? api_version
                                       : api_version.substr(slash + 1);
  for (size_t i = 0; i < types_.size(); ++i) {
    if (types_[i].group == group && types_[i].version == version &&
        types_[i].kind == kind) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int KubeApiServer::Impl::FindResource(std::string_view group,
                                      std::string_view version,
                                      std::string_view resource) const {
  for (size_t i = 0; i < types_.size(); ++i) {
    if (types_[i].group == group && types_[i].version == version &&
        types_[i].resource == resource) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

std::string KubeApiServer::Impl::ApiVersion(size_t type) const {
  const auto& t = types_[type];
  return t.group.empty() ? t.version : t.group + "/" + t.version;
}

std::string KubeApiServer::Impl::KeyOf(size_t type,
                                       std::string_view namespace_name,
                                       std::string_view name) const {
  if (!types_[type].namespaced) return std::string(name);
  return std::string(namespace_name.empty() ? "default" : namespace_name) +
         "/" + std::string(name);
}

ChangeResult KubeApiServer::Impl::CreateLocked(size_t type,
                                               rapidjson::Document doc,
                                               bool server_fields) {
  auto& alloc = doc.GetAllocator();
  rapidjson::Value& meta = kube::MemberObject(doc, "metadata", alloc);
  if (types_[type].namespaced) {
    if (kube::StringMember(meta, "namespace").empty()) {
      kube::SetString(meta, "namespace", "default", alloc);
    }
  } else {
    meta.RemoveMember("namespace");
  }
  std::string name = kube::StringMember(meta, "name");
  if (name.empty()) {
    const std::string prefix = kube::StringMember(meta, "generateName");
    if (prefix.empty()) {
      return {Outcome::kInvalid, nullptr,
              "metadata.name: Required value: name or generateName is "
              "required"};
    }
    name = prefix + kube::RandomSuffix(rng_);
    kube::SetString(meta, "name", name, alloc);
  }
  const std::string key =
      KeyOf(type, kube::StringMember(meta, "namespace"), name);
  if (objects_[type].count(key)) return {Outcome::kExists, nullptr, ""};
  if (server_fields || kube::StringMember(meta, "uid").empty()) {
    kube::SetString(meta, "uid", kube::RandomUid(rng_), alloc);
  }
  if (server_fields || !meta.HasMember("creationTimestamp") ||
      meta["creationTimestamp"].IsNull()) {
    kube::SetString(meta, "creationTimestamp", kube::Now(), alloc);
  }
  kube::SetString(meta, "resourceVersion", std::to_string(++resource_version_),
                  alloc);
  ObjectPtr object = kube::Seal(std::move(doc));
  CommitLocked(type, EventType::kAdded, object, nullptr);
  return {Outcome::kOk, object, ""};
}

ChangeResult KubeApiServer::Impl::UpdateLocked(
    size_t type, rapidjson::Document doc, std::string_view expected_version,
    bool skip_unchanged) {
  auto& alloc = doc.GetAllocator();
  rapidjson::Value& meta = kube::MemberObject(doc, "metadata", alloc);
  if (types_[type].namespaced) {
    if (kube::StringMember(meta, "namespace").empty()) {
      kube::SetString(meta, "namespace", "default", alloc);
    }
  } else {
    meta.RemoveMember("namespace");
  }
  const std::string name = kube::StringMember(meta, "name");
  if (name.empty()) {
    return {Outcome::kInvalid, nullptr,
            "metadata.name: Required value: name is required"};
  }
  const auto it = objects_[type].find(
      KeyOf(type, kube::StringMember(meta, "namespace"), name));
  if (it == objects_[type].end()) return {Outcome::kNotFound, nullptr, ""};
  const ObjectPtr stored = it->second;
  const std::string stored_version = std::to_string(stored->resource_version);
  if (!expected_version.empty() && expected_version != stored_version) {
    return {Outcome::kConflict, stored,
            "the object has been modified; please apply your changes to the "
            "latest version and try again"};
  }
  // uid and creationTimestamp belong to the server.
  const rapidjson::Value& old_meta = stored->doc["metadata"];
  for (const char* field : {"uid", "creationTimestamp"}) {
    const std::string value = kube::StringMember(old_meta, field);
    if (!value.empty()) kube::SetString(meta, field, value, alloc);
  }
  if (skip_unchanged) {
    kube::SetString(meta, "resourceVersion", stored_version, alloc);
    if (kube::Serialize(doc) == stored->json) {
      return {Outcome::kUnchanged, stored, ""};
    }
  }
  kube::SetString(meta, "resourceVersion", std::to_string(++resource_version_),
                  alloc);
  ObjectPtr object = kube::Seal(std::move(doc));
  CommitLocked(type, EventType::kModified, object, stored);
  return {Outcome::kOk, object, ""};
}

ChangeResult KubeApiServer::Impl::DeleteLocked(
    size_t type, const std::string& key, std::string_view expected_version,
    std::string_view expected_uid) {
  const auto it = objects_[type].find(key);
  if (it == objects_[type].end()) return {Outcome::kNotFound, nullptr, ""};
  const ObjectPtr stored = it->second;
  const std::string version = std::to_string(stored->resource_version);
  if (!expected_version.empty() && expected_version != version) {
    return {Outcome::kConflict, stored,
            "Precondition failed: ResourceVersion in precondition: " +
                std::string(expected_version) +
                ", ResourceVersion in object meta: " + version};
  }
  const std::string uid = kube::StringMember(stored->doc["metadata"], "uid");
  if (!expected_uid.empty() && expected_uid != uid) {
    return {Outcome::kConflict, stored,
            "Precondition failed: UID in precondition: " +
                std::string(expected_uid) + ", UID in object meta: " + uid};
  }
  ObjectPtr object = kube::Restamp(*stored, ++resource_version_);
  CommitLocked(type, EventType::kDeleted, object, stored);
  return {Outcome::kOk, object, ""};
}

void KubeApiServer::Impl::CommitLocked(size_t type, EventType event_type,
                                       ObjectPtr object, ObjectPtr previous) {
  auto event = std::make_shared<kube::Event>();
  event->type = type;
  event->event_type = event_type;
  event->resource_version = object->resource_version;
  event->object = object;
  event->previous = std::move(previous);
  if (event_type == EventType::kDeleted) {
    objects_[type].erase(object->key);
  } else {
    objects_[type][object->key] = object;
  }
  history_.push_back(event);
  while (history_.size() > options_.history_limit) {
    history_start_ = history_.front()->resource_version;
    history_.pop_front();
  }
  for (const auto& watch : watches_) {
    if (watch->scope.type == type) watch->queue.push_back(event);
  }
  changed_.notify_all();
}

std::map<std::string, ObjectPtr> KubeApiServer::Impl::SnapshotLocked(
    size_t type, uint64_t resource_version) const {
  std::map<std::string, ObjectPtr> snapshot = objects_[type];
  // Undo, newest first, every change made after `resource_version`.
  for (auto it = history_.rbegin();
       it != history_.rend() && (*it)->resource_version > resource_version;
       ++it) {
    const kube::Event& event = **it;
    if (event.type != type) continue;
    if (event.previous) {
      snapshot[event.previous->key] = event.previous;
    } else {
      snapshot.erase(event.object->key);
    }
  }
  return snapshot;
}

int KubeApiServer::Impl::ParseObject(const std::string& json,
                                     rapidjson::Document* doc) const {
  doc->Parse(json.c_str(), json.size());
  if (doc->HasParseError() || !doc->IsObject()) return -1;
  return FindKind(kube::StringMember(*doc, "apiVersion"),
                  kube::StringMember(*doc, "kind"));
}

}  // namespace lens::test
