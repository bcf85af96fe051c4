// KubeApiServer: the public API and the server's lifecycle (listening, TLS,
// worker threads, stopping with every connection dropped). The object store
// is in kube_api_server_store.cc; requests are served in
// kube_api_server_http.cc and kube_api_server_watch.cc.
#include "kube_api_server.h"

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "kube_api_server_impl.h"

namespace lens::test {
namespace kube {
namespace {

constexpr int kWorkerThreads = 64;
constexpr size_t kKeepAliveRequests = 1000;

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
}  // namespace kube

using kube::ChangeResult;
using kube::EventType;
using kube::ObjectPtr;
using kube::Outcome;
KubeApiServer::Impl::~Impl() { StopServing(); }

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
