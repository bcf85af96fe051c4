// KubeApiServer: the object store (one resourceVersion counter, a bounded
// event history from which older lists are rebuilt), the public API and the
// server's lifecycle. Requests are served in kube_api_server_http.cc and
// kube_api_server_watch.cc.
#include "kube_api_server.h"

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
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

constexpr int kWorkerThreads = 64;
constexpr size_t kKeepAliveRequests = 1000;

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

std::string FixturesTlsDir() {
  if (const char* env = std::getenv("LENS_FIXTURES_DIR"); env && *env) {
    return std::string(env) + "/node/tls";
  }
#ifdef LENS_FIXTURES_DIR
  return std::string(LENS_FIXTURES_DIR) + "/node/tls";
#else
  std::string here = __FILE__;
  here = here.substr(0, here.find_last_of('/'));
  return here + "/../fixtures/node/tls";
#endif
}

// Shuts down every accepted connection to 127.0.0.1:`port` in this process,
// so that workers idling in keep-alive (or blocked writing) end at once.
void DropConnections(int port) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return;
  while (dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (*end != '\0' || fd == ::dirfd(dir)) continue;
    // Workers close their sockets meanwhile and a number may be reused at
    // once: a duplicate pins whichever socket it names while it is checked
    // and shut down.
    const int own = ::fcntl(static_cast<int>(fd), F_DUPFD_CLOEXEC, 0);
    if (own < 0) continue;
    sockaddr_in local{};
    socklen_t len = sizeof local;
    int listening = 0;
    socklen_t opt_len = sizeof listening;
    if (::getsockname(own, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
        local.sin_family == AF_INET && ntohs(local.sin_port) == port &&
        ::getsockopt(own, SOL_SOCKET, SO_ACCEPTCONN, &listening, &opt_len) ==
            0 &&
        !listening) {
      ::shutdown(own, SHUT_RDWR);
    }
    ::close(own);
  }
  ::closedir(dir);
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

KubeApiServer::Impl::~Impl() { StopServing(); }

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

bool KubeApiServer::Impl::StartServing() {
  std::unique_ptr<httplib::Server> server;
  if (options_.tls) {
    const std::string dir = kube::FixturesTlsDir();
    auto tls = std::make_unique<httplib::SSLServer>(
        (dir + "/kubelet.crt").c_str(), (dir + "/kubelet.key").c_str());
    if (!tls->is_valid()) {
      std::lock_guard lock(mu_);
      error_ = "cannot load the serving certificate " + dir +
               "/kubelet.crt and key " + dir + "/kubelet.key";
      return false;
    }
    server = std::move(tls);
  } else {
    server = std::make_unique<httplib::Server>();
  }
  // As Go's net/http: no Nagle delay on small responses.
  server->set_tcp_nodelay(true);
  // Every open watch holds a worker for its whole life.
  server->new_task_queue = [] {
    return new httplib::ThreadPool(kube::kWorkerThreads);
  };
  // SO_REUSEADDR alone: a restart binds the same port past TIME_WAIT, and no
  // second server can share it (SO_REUSEPORT would allow that).
  server->set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server->set_keep_alive_max_count(kube::kKeepAliveRequests);
  auto handler = [this](const httplib::Request& req, httplib::Response& res) {
    Serve(req, res);
  };
  server->Get(".*", handler);
  server->Post(".*", handler);
  server->Put(".*", handler);
  server->Patch(".*", handler);
  server->Delete(".*", handler);

  int port = 0;
  {
    std::lock_guard lock(mu_);
    port = port_;
  }
  bool bound = false;
  if (port == 0) {
    port = server->bind_to_any_port("127.0.0.1");
    bound = port > 0;
  } else {
    bound = server->bind_to_port("127.0.0.1", port);
  }
  if (!bound) {
    const int err = errno;
    std::lock_guard lock(mu_);
    error_ =
        "bind 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(err);
    return false;
  }
  httplib::Server* raw = server.get();
  std::thread listener([raw] { raw->listen_after_bind(); });
  // stop() is a no-op until the accept loop has started.
  const auto until = kube::Clock::now() + std::chrono::seconds(5);
  while (!raw->is_running() && kube::Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  server_ = std::move(server);
  listener_ = std::move(listener);
  std::lock_guard lock(mu_);
  port_ = port;
  serving_ = true;
  error_.clear();
  return true;
}

void KubeApiServer::Impl::StopServing() {
  {
    std::lock_guard lock(mu_);
    serving_ = false;
    ++epoch_;
    CloseAllWatchesLocked();
  }
  if (!server_) return;
  server_->stop();
  int port = 0;
  {
    std::lock_guard lock(mu_);
    port = port_;
  }
  kube::DropConnections(port);
  if (listener_.joinable()) listener_.join();
  server_.reset();
}

void KubeApiServer::Impl::CloseAllWatchesLocked() {
  for (const auto& watch : watches_) watch->closed = true;
  watches_.clear();
  changed_.notify_all();
}

// The public API.

KubeApiServer::KubeApiServer(KubeApiServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {
  impl_->StartServing();
}

KubeApiServer::~KubeApiServer() = default;

bool KubeApiServer::ok() const {
  std::lock_guard lock(impl_->mu_);
  return impl_->serving_;
}

std::string KubeApiServer::error() const {
  std::lock_guard lock(impl_->mu_);
  return impl_->serving_         ? ""
         : impl_->error_.empty() ? "stopped"
                                 : impl_->error_;
}

std::string KubeApiServer::url() const {
  std::lock_guard lock(impl_->mu_);
  return std::string(impl_->options_.tls ? "https" : "http") +
         "://127.0.0.1:" + std::to_string(impl_->port_);
}

std::string KubeApiServer::CaFile() {
  return kube::FixturesTlsDir() + "/ca.crt";
}

void KubeApiServer::AddResource(const KubeResourceType& type) {
  impl_->AddType(type);
}

int KubeApiServer::Impl::ParseObject(const std::string& json,
                                     rapidjson::Document* doc) const {
  doc->Parse(json.c_str(), json.size());
  if (doc->HasParseError() || !doc->IsObject()) return -1;
  return FindKind(kube::StringMember(*doc, "apiVersion"),
                  kube::StringMember(*doc, "kind"));
}

std::string KubeApiServer::Create(const std::string& object_json) {
  rapidjson::Document doc;
  std::lock_guard lock(impl_->mu_);
  const int type = impl_->ParseObject(object_json, &doc);
  if (type < 0) return "";
  const ChangeResult r = impl_->CreateLocked(type, std::move(doc), false);
  return r.outcome == Outcome::kOk ? r.object->json : "";
}

std::string KubeApiServer::Update(const std::string& object_json) {
  rapidjson::Document doc;
  std::lock_guard lock(impl_->mu_);
  const int type = impl_->ParseObject(object_json, &doc);
  if (type < 0) return "";
  const ChangeResult r = impl_->UpdateLocked(type, std::move(doc), "", false);
  return r.outcome == Outcome::kOk ? r.object->json : "";
}

bool KubeApiServer::Delete(const std::string& api_version,
                           const std::string& kind,
                           const std::string& namespace_name,
                           const std::string& name) {
  std::lock_guard lock(impl_->mu_);
  const int type = impl_->FindKind(api_version, kind);
  if (type < 0) return false;
  return impl_
             ->DeleteLocked(type, impl_->KeyOf(type, namespace_name, name), "",
                            "")
             .outcome == Outcome::kOk;
}

std::string KubeApiServer::Get(const std::string& api_version,
                               const std::string& kind,
                               const std::string& namespace_name,
                               const std::string& name) const {
  std::lock_guard lock(impl_->mu_);
  const int type = impl_->FindKind(api_version, kind);
  if (type < 0) return "";
  const auto& objects = impl_->objects_[type];
  const auto it = objects.find(impl_->KeyOf(type, namespace_name, name));
  return it == objects.end() ? "" : it->second->json;
}

uint64_t KubeApiServer::resource_version() const {
  std::lock_guard lock(impl_->mu_);
  return impl_->resource_version_;
}

void KubeApiServer::Compact() {
  std::lock_guard lock(impl_->mu_);
  impl_->history_.clear();
  impl_->history_start_ = impl_->resource_version_;
}

void KubeApiServer::CloseWatches() {
  std::lock_guard lock(impl_->mu_);
  impl_->CloseAllWatchesLocked();
}

bool KubeApiServer::Restart() {
  impl_->StopServing();
  return impl_->StartServing();
}

void KubeApiServer::Stop() { impl_->StopServing(); }

bool KubeApiServer::Start() {
  if (ok()) return true;
  return impl_->StartServing();
}

void KubeApiServer::FailNext(const std::string& path_part, int status,
                             int count, std::string body) {
  std::lock_guard lock(impl_->mu_);
  impl_->failures_.push_back({path_part, status, count, std::move(body)});
}

std::vector<KubeRequest> KubeApiServer::Requests() const {
  std::lock_guard lock(impl_->mu_);
  return impl_->requests_;
}

void KubeApiServer::ClearRequests() {
  std::lock_guard lock(impl_->mu_);
  impl_->requests_.clear();
  ++impl_->requests_cleared_;
}

int KubeApiServer::open_watches() const {
  std::lock_guard lock(impl_->mu_);
  return static_cast<int>(impl_->watches_.size());
}

}  // namespace lens::test
