// KubeClient over the one outbound HTTP client (core/http_client.h): its
// pool of kept-alive connections, TLS from files or PEM blobs, a verified
// server name, and line-by-line streaming for watches; here the bearer
// token, re-read when its file changes, and the Kubernetes meaning of the
// answers.
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/http_client.h"
#include "core/kernel_file.h"
#include "core/text.h"
#include "kube/kube_json.h"
#include "lens/kube.h"

namespace lens {
namespace {

constexpr size_t kMaxTokenBytes = 64 * 1024;

class HttpKubeClient final : public KubeClient {
 public:
  HttpKubeClient(KubeConnection c, KubeClientOptions o)
      : connection_(std::move(c)), options_(std::move(o)) {
    server_ = connection_.server;
    while (!server_.empty() && server_.back() == '/') server_.pop_back();
  }

  Status Init() {
    if (server_.empty()) {
      return InvalidArgumentError("Kubernetes connection (" +
                                  connection_.origin + "): no server URL");
    }
    if (!server_.starts_with("http://") && !server_.starts_with("https://")) {
      return InvalidArgumentError("Kubernetes server \"" + server_ +
                                  "\": expected an http:// or https:// URL");
    }
    // Both set: the token wins, as kubectl has it.
    if (!connection_.token.empty()) connection_.token_file.clear();
    for (const std::string* file :
         {&connection_.ca_file, &connection_.client_cert_file,
          &connection_.client_key_file}) {
      if (file->empty()) continue;
      auto read = ReadKernelFile(*file, 1 << 20);
      if (!read.ok()) return read.status().WithContext(connection_.origin);
    }
    if (!connection_.token_file.empty()) {
      LENS_RETURN_IF_ERROR(Token().status());
    }
    HttpClientOptions h;
    h.base_url = server_;
    h.origin = connection_.origin;
    h.user_agent = options_.user_agent;
    h.connect_timeout = options_.connect_timeout;
    h.timeout = options_.request_timeout;
    h.max_response_bytes = options_.max_response_bytes;
    h.ca_file = connection_.ca_file;
    h.ca_pem = connection_.ca_pem;
    h.client_cert_file = connection_.client_cert_file;
    h.client_cert_pem = connection_.client_cert_pem;
    h.client_key_file = connection_.client_key_file;
    h.client_key_pem = connection_.client_key_pem;
    h.insecure_skip_verify = connection_.insecure_skip_tls_verify;
    h.tls_server_name = connection_.tls_server_name;
    h.token_source = [this] { return Token(); };
    h.idle_handles = 16;
    LENS_ASSIGN_OR_RETURN(http_, HttpClient::Create(std::move(h)));
    return OkStatus();
  }

  StatusOr<KubeResponse> Request(std::string_view method, std::string_view path,
                                 std::string_view body,
                                 std::string_view accept) override {
    HttpClient::Request request;
    request.method = method;
    request.path = path;
    request.body = body;
    request.headers = Headers(accept, !body.empty());
    LENS_ASSIGN_OR_RETURN(HttpClient::Response answer, http_->Send(request));
    return Answer(std::move(answer));
  }

  Status Stream(std::string_view path, std::string_view accept,
                const std::function<bool(std::string_view)>& on_line,
                const std::atomic<bool>* stop, KubeResponse* refused) override {
    HttpClient::Request request;
    request.path = path;
    request.headers = Headers(accept, false);
    request.timeout = std::chrono::milliseconds(0);
    request.stop = stop;
    request.idle = options_.watch_idle;
    request.on_line = &on_line;
    auto answer = http_->Send(request);
    if (!answer.ok()) {
      if (answer.status().code() == StatusCode::kCancelled) {
        return CancelledError("watch stopped");
      }
      return answer.status();
    }
    if (!answer->ended_by_handler &&
        (answer->status < 200 || answer->status >= 300)) {
      *refused = Answer(std::move(*answer));
    }
    return OkStatus();
  }

  const std::string& server() const override { return server_; }

 private:
  static std::vector<std::pair<std::string, std::string>> Headers(
      std::string_view accept, bool json_body) {
    std::vector<std::pair<std::string, std::string>> h = {
        {"Accept", std::string(accept)}};
    if (json_body) h.emplace_back("Content-Type", "application/json");
    return h;
  }

  static KubeResponse Answer(HttpClient::Response answer) {
    KubeResponse r;
    r.status = answer.status;
    r.body = std::move(answer.body);
    r.retry_after_seconds = std::max(answer.retry_after_seconds, 0);
    return r;
  }

  // The bearer token: the configured one, or the file's content, re-read
  // when the file's modification time or size changes.
  StatusOr<std::string> Token() {
    if (connection_.token_file.empty()) return connection_.token;
    struct stat st {};
    if (::stat(connection_.token_file.c_str(), &st) != 0) {
      return UnavailableError("token file " + connection_.token_file + ": " +
                              std::strerror(errno));
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (st.st_mtim.tv_sec != token_mtime_.tv_sec ||
        st.st_mtim.tv_nsec != token_mtime_.tv_nsec ||
        st.st_size != token_size_ || token_.empty()) {
      LENS_ASSIGN_OR_RETURN(
          std::string text,
          ReadKernelFile(connection_.token_file, kMaxTokenBytes));
      std::string_view v = TrimKernelValue(text);
      for (char c : v) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          return InvalidArgumentError("token file " + connection_.token_file +
                                      ": the token contains control "
                                      "characters");
        }
      }
      if (v.empty()) {
        return InvalidArgumentError("token file " + connection_.token_file +
                                    " is empty");
      }
      token_ = std::string(v);
      token_mtime_ = st.st_mtim;
      token_size_ = st.st_size;
    }
    return token_;
  }

  KubeConnection connection_;
  KubeClientOptions options_;
  std::string server_;
  std::unique_ptr<HttpClient> http_;
  std::mutex mu_;
  std::string token_;       // GUARDED_BY(mu_)
  timespec token_mtime_{};  // GUARDED_BY(mu_)
  off_t token_size_ = -1;   // GUARDED_BY(mu_)
};

}  // namespace

StatusOr<std::unique_ptr<KubeClient>> KubeClient::Create(
    const KubeConnection& connection, const KubeClientOptions& options) {
  auto client = std::make_unique<HttpKubeClient>(connection, options);
  LENS_RETURN_IF_ERROR(client->Init());
  return std::unique_ptr<KubeClient>(std::move(client));
}

std::string KubeResource::ApiVersion() const {
  return group.empty() ? version : group + "/" + version;
}

std::string KubeResource::Path(std::string_view namespace_name,
                               std::string_view name) const {
  std::string p =
      group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (namespaced && !namespace_name.empty()) {
    p += "/namespaces/" + std::string(namespace_name);
  }
  p += "/" + resource;
  if (!name.empty()) p += "/" + std::string(name);
  return p;
}

Status KubeError(std::string_view method, std::string_view server,
                 std::string_view path, const KubeResponse& response) {
  std::string message = std::string(method) + " " + std::string(server) +
                        std::string(path) + ": HTTP " +
                        std::to_string(response.status);
  const KubeStatusInfo info = ParseKubeStatus(response.body);
  if (!info.reason.empty()) message += " " + info.reason;
  if (!info.message.empty()) message += ": " + info.message;
  switch (response.status) {
    case 400:
    case 422:
      return InvalidArgumentError(message);
    case 401:
      return PermissionDeniedError(
          message + " (credentials missing, invalid or expired)");
    case 403:
      return PermissionDeniedError(message + " (not allowed by RBAC)");
    case 404:
      return NotFoundError(message);
    case 409:
      return info.reason == "AlreadyExists" ? AlreadyExistsError(message)
                                            : AbortedError(message);
    case 410:
      return FailedPreconditionError(message);
    case 429:
      return ResourceExhaustedError(message);
    default:
      if (response.status >= 500) return UnavailableError(message);
      return Status(StatusCode::kUnknown, message);
  }
}

std::string KubeQueryEscape(std::string_view value) {
  return PercentEncode(value);
}

}  // namespace lens
