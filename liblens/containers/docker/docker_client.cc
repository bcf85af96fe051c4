// DockerClient's requests: version negotiation, list and inspect (the event
// stream is in docker_events.cc).
#include "containers/docker/docker_client.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "containers/docker/docker_devices.h"
#include "containers/docker/docker_http.h"

namespace lens::containers::docker {

int ApiVersionNumber(std::string_view version) {
  const size_t dot = version.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 >= version.size() ||
      version.size() > 8) {
    return -1;
  }
  int major = 0, minor = 0;
  for (size_t i = 0; i < version.size(); ++i) {
    if (i == dot) continue;
    if (!std::isdigit(static_cast<unsigned char>(version[i]))) return -1;
    int& part = i < dot ? major : minor;
    part = part * 10 + (version[i] - '0');
  }
  return major * 1000 + minor;
}

DockerClient::DockerClient(std::string socket_path, HostRoots roots,
                           std::chrono::milliseconds timeout)
    : socket_path_(std::move(socket_path)),
      roots_(std::move(roots)),
      timeout_(timeout) {}

std::string DockerClient::Describe() const {
  return "Docker Engine at " + socket_path_;
}

std::string DockerClient::Where(std::string_view method,
                                const std::string& path) const {
  return "Docker Engine at " + socket_path_ + ": " + std::string(method) + " " +
         path;
}

namespace {

// The status and body of one request, without judging the status.
struct Answer {
  HttpHead head;
  std::string body;
};

StatusOr<Answer> Exchange(const std::string& socket, std::string_view method,
                          const std::string& target, size_t max_bytes,
                          Deadline deadline) {
  auto conn = UnixHttpConnection::Connect(socket);
  if (!conn.ok()) {
    if (conn.status().code() == StatusCode::kNotFound) {
      return NotFoundError(
          "socket does not exist (is dockerd running? set "
          "nodeExporter.dockerSocket, and mount the socket into the agent's "
          "container)");
    }
    return conn.status();
  }
  LENS_RETURN_IF_ERROR((*conn)->Send(method, target, "", "", deadline));
  Answer a;
  LENS_ASSIGN_OR_RETURN(a.head, (*conn)->ReadHead(deadline));
  LENS_ASSIGN_OR_RETURN(a.body, (*conn)->ReadAll(max_bytes, deadline));
  return a;
}

}  // namespace

StatusOr<std::string> DockerClient::Negotiate() {
  const Deadline deadline = std::chrono::steady_clock::now() + timeout_;
  auto a = Exchange(socket_path_, "GET", "/_ping", 4096, deadline);
  if (!a.ok()) return a.status().WithContext(Where("GET", "/_ping"));
  if (a->head.status != 200) {
    return UnavailableError(Where("GET", "/_ping") + ": HTTP " +
                            std::to_string(a->head.status) + ": " +
                            ErrorMessage(a->body));
  }
  auto h = a->head.headers.find("api-version");
  std::string version =
      h == a->head.headers.end() ? std::string(kMinApiVersion) : h->second;
  const int n = ApiVersionNumber(version);
  if (n < 0) {
    return InvalidArgumentError(Where("GET", "/_ping") +
                                ": malformed Api-Version '" +
                                version.substr(0, 32) + "'");
  }
  if (n < ApiVersionNumber(kMinApiVersion)) {
    return FailedPreconditionError(
        Where("GET", "/_ping") + ": Docker Engine API " + version +
        " is older than " + std::string(kMinApiVersion) +
        ", the oldest Lens speaks (upgrade Docker Engine)");
  }
  if (n > ApiVersionNumber(kMaxApiVersion)) version = kMaxApiVersion;
  std::lock_guard lock(mu_);
  version_ = version;
  return version;
}

StatusOr<std::string> DockerClient::Version() {
  {
    std::lock_guard lock(mu_);
    if (!version_.empty()) return version_;
  }
  return Negotiate();
}

StatusOr<std::string> DockerClient::Call(std::string_view method,
                                         const std::string& path,
                                         size_t max_bytes, int* http_status) {
  if (http_status != nullptr) *http_status = 0;
  LENS_ASSIGN_OR_RETURN(std::string version, Version());
  const Deadline deadline = std::chrono::steady_clock::now() + timeout_;
  auto a = Exchange(socket_path_, method, "/v" + version + path, max_bytes,
                    deadline);
  if (!a.ok()) return a.status().WithContext(Where(method, path));
  const int status = a->head.status;
  if (http_status != nullptr) *http_status = status;
  if (status >= 200 && status < 300) return std::move(a->body);
  const std::string what = Where(method, path) + ": HTTP " +
                           std::to_string(status) + ": " +
                           ErrorMessage(a->body);
  if (status == 404) return NotFoundError(what);
  if (status >= 500) return UnavailableError(what);
  return InternalError(what);
}

StatusOr<DockerContainer> DockerClient::Inspect(const std::string& id,
                                                int* http_status) {
  const bool valid = !id.empty() && id.size() <= 128 &&
                     std::all_of(id.begin(), id.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) ||
                              c == '_' || c == '.' || c == '-';
                     });
  if (!valid) {
    return InvalidArgumentError("Docker container id '" + id.substr(0, 64) +
                                "': use [A-Za-z0-9_.-]");
  }
  const std::string path = "/containers/" + id + "/json";
  LENS_ASSIGN_OR_RETURN(std::string body,
                        Call("GET", path, kMaxInspectBytes, http_status));
  auto c = ParseInspect(body);
  if (!c.ok()) return c.status().WithContext(Where("GET", path));
  return c;
}

StatusOr<RuntimeContainer> DockerClient::Get(const std::string& id) {
  LENS_ASSIGN_OR_RETURN(DockerContainer c, Inspect(id));
  return ToRuntimeContainer(std::move(c), roots_,
                            ReadNvidiaProcGpus(roots_.procfs));
}

StatusOr<std::vector<RuntimeContainer>> DockerClient::List() {
  const std::string path = "/containers/json?all=1";
  LENS_ASSIGN_OR_RETURN(std::string body, Call("GET", path, kMaxListBytes));
  auto ids = ParseContainerIds(body);
  if (!ids.ok()) return ids.status().WithContext(Where("GET", path));
  const std::vector<NvidiaProcGpu> nvidia = ReadNvidiaProcGpus(roots_.procfs);
  std::vector<RuntimeContainer> out;
  out.reserve(ids->size());
  for (const std::string& id : *ids) {
    int http_status = 0;
    auto c = Inspect(id, &http_status);
    if (http_status == 404) continue;  // removed since the list
    if (!c.ok()) return c.status();
    out.push_back(ToRuntimeContainer(*std::move(c), roots_, nvidia));
  }
  return out;
}

}  // namespace lens::containers::docker
