// KubeClient over libcurl: a pool of easy handles (each keeps its
// connection alive between requests), TLS from files or PEM blobs, the
// bearer token re-read when its file changes, and line-by-line streaming
// for watches. The only file of the area that includes curl.
#include <curl/curl.h>
#include <sys/stat.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/kernel_file.h"
#include "core/text.h"
#include "kube/kube_json.h"
#include "lens/kube.h"
#include "lens/version.h"

namespace lens {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxTokenBytes = 64 * 1024;

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// What one transfer collects.
struct Transfer {
  // Request: the whole body. Stream: the partial line, and where lines go.
  std::string body;
  uint64_t limit = 0;
  bool too_large = false;
  int retry_after = 0;
  const std::function<bool(std::string_view)>* on_line = nullptr;
  CURL* curl = nullptr;
  bool refused = false;  // stream: a non-2xx status, body collected
  bool checked_status = false;
  bool handler_stopped = false;
  const std::atomic<bool>* stop = nullptr;
  bool stopped = false;
  Clock::time_point last_byte = Clock::now();
  std::chrono::milliseconds idle{0};
  bool idle_expired = false;
};

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * count);
  constexpr std::string_view kRetry = "retry-after:";
  if (line.size() > kRetry.size() &&
      strncasecmp(line.data(), kRetry.data(), kRetry.size()) == 0) {
    t->retry_after = std::atoi(std::string(line.substr(kRetry.size())).c_str());
  }
  return size * count;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  t->last_byte = Clock::now();
  if (t->on_line && !t->checked_status) {
    t->checked_status = true;
    long status = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    t->refused = status < 200 || status >= 300;
  }
  if (t->body.size() + bytes > t->limit) {
    t->too_large = true;
    return 0;  // aborts the transfer
  }
  t->body.append(data, bytes);
  if (!t->on_line || t->refused) return bytes;
  size_t start = 0;
  for (size_t nl; (nl = t->body.find('\n', start)) != std::string::npos;
       start = nl + 1) {
    std::string_view line(t->body.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (!(*t->on_line)(line)) {
      t->handler_stopped = true;
      return 0;
    }
  }
  t->body.erase(0, start);
  return bytes;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (t->stop && t->stop->load()) {
    t->stopped = true;
    return 1;
  }
  if (t->idle.count() > 0 && Clock::now() - t->last_byte > t->idle) {
    t->idle_expired = true;
    return 1;
  }
  return 0;
}

struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

class CurlKubeClient final : public KubeClient {
 public:
  CurlKubeClient(KubeConnection c, KubeClientOptions o)
      : connection_(std::move(c)), options_(std::move(o)) {
    server_ = connection_.server;
    while (!server_.empty() && server_.back() == '/') server_.pop_back();
  }
  ~CurlKubeClient() override {
    for (CURL* h : idle_) curl_easy_cleanup(h);
  }

  Status Init() {
    if (server_.empty()) {
      return InvalidArgumentError("Kubernetes connection (" +
                                  connection_.origin + "): no server URL");
    }
    if (server_.rfind("http://", 0) != 0 && server_.rfind("https://", 0) != 0) {
      return InvalidArgumentError("Kubernetes server \"" + server_ +
                                  "\": expected an http:// or https:// URL");
    }
    request_base_ = server_;
    if (!connection_.tls_server_name.empty() &&
        server_.rfind("https://", 0) == 0) {
      LENS_RETURN_IF_ERROR(NameServer());
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
    InitCurlOnce();
    return OkStatus();
  }

  // `tls_server_name`: requests go to https://<name>:<port>, so libcurl
  // sends the name as SNI and verifies the certificate against it, and
  // CURLOPT_CONNECT_TO sends the connection to `server`'s host and port
  // (libcurl has no option to verify a name other than the URL's host).
  Status NameServer() {
    const size_t authority = std::strlen("https://");
    const size_t slash = server_.find('/', authority);
    const std::string host_port = server_.substr(
        authority,
        slash == std::string::npos ? std::string::npos : slash - authority);
    const std::string rest =
        slash == std::string::npos ? "" : server_.substr(slash);
    const size_t bracket = host_port.rfind(']');
    const size_t colon = host_port.rfind(':');
    std::string host = host_port;
    std::string port = "443";
    if (colon != std::string::npos &&
        (bracket == std::string::npos || colon > bracket)) {
      host = host_port.substr(0, colon);
      port = host_port.substr(colon + 1);
    }
    const std::string& name = connection_.tls_server_name;
    if (host.empty() || port.empty() ||
        name.find_first_of(":/[]@ ") != std::string::npos) {
      return InvalidArgumentError(
          "TLS server name \"" + name + "\" for " + server_ + " (" +
          connection_.origin + "): expected a host name and https://host:port");
    }
    request_base_ = "https://" + name + ":" + port + rest;
    curl_slist* list = curl_slist_append(
        nullptr, (name + ":" + port + ":" + host + ":" + port).c_str());
    if (!list) return InternalError("curl_slist_append: out of memory");
    connect_to_.reset(list);
    return OkStatus();
  }

  StatusOr<KubeResponse> Request(std::string_view method, std::string_view path,
                                 std::string_view body,
                                 std::string_view accept) override {
    Transfer t;
    t.limit = options_.max_response_bytes;
    LENS_ASSIGN_OR_RETURN(auto handle, Acquire());
    CURL* curl = handle.get();
    std::unique_ptr<curl_slist, SlistDeleter> headers;
    LENS_RETURN_IF_ERROR(Setup(curl, method, path, body, accept, &t, &headers));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                     static_cast<long>(options_.request_timeout.count()));
    char detail[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, detail);
    const CURLcode rc = curl_easy_perform(curl);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
    if (rc != CURLE_OK) return TransferError(method, path, rc, detail, t);
    KubeResponse r;
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    r.status = static_cast<int>(status);
    r.body = std::move(t.body);
    r.retry_after_seconds = t.retry_after;
    Release(std::move(handle));
    return r;
  }

  Status Stream(std::string_view path, std::string_view accept,
                const std::function<bool(std::string_view)>& on_line,
                const std::atomic<bool>* stop, KubeResponse* refused) override {
    Transfer t;
    t.limit = options_.max_response_bytes;
    t.on_line = &on_line;
    t.stop = stop;
    t.idle = options_.watch_idle;
    LENS_ASSIGN_OR_RETURN(auto handle, Acquire());
    CURL* curl = handle.get();
    t.curl = curl;
    std::unique_ptr<curl_slist, SlistDeleter> headers;
    LENS_RETURN_IF_ERROR(Setup(curl, "GET", path, "", accept, &t, &headers));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 0L);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &OnProgress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, static_cast<void*>(&t));
    char detail[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, detail);
    const CURLcode rc = curl_easy_perform(curl);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 1L);
    if (t.stopped) return CancelledError("watch stopped");
    if (t.handler_stopped) {
      Release(std::move(handle));
      return OkStatus();
    }
    if (t.idle_expired) {
      return DeadlineExceededError(
          "GET " + server_ + std::string(path) + ": no data for " +
          std::to_string(options_.watch_idle.count()) + " ms");
    }
    if (rc != CURLE_OK) return TransferError("GET", path, rc, detail, t);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status >= 300) {
      refused->status = static_cast<int>(status);
      refused->body = std::move(t.body);
      refused->retry_after_seconds = t.retry_after;
    } else if (!t.body.empty()) {
      // The last line without a newline.
      on_line(t.body);
    }
    Release(std::move(handle));
    return OkStatus();
  }

  const std::string& server() const override { return server_; }

 private:
  struct HandleDeleter {
    void operator()(CURL* h) const { curl_easy_cleanup(h); }
  };
  using Handle = std::unique_ptr<CURL, HandleDeleter>;

  StatusOr<Handle> Acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        CURL* h = idle_.back();
        idle_.pop_back();
        curl_easy_reset(h);  // keeps its connections and TLS sessions
        return Handle(h);
      }
    }
    CURL* h = curl_easy_init();
    if (!h) return InternalError("curl_easy_init failed");
    return Handle(h);
  }

  void Release(Handle h) {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.size() < 16) idle_.push_back(h.release());
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

  Status Setup(CURL* curl, std::string_view method, std::string_view path,
               std::string_view body, std::string_view accept, Transfer* t,
               std::unique_ptr<curl_slist, SlistDeleter>* headers) {
    const std::string url = request_base_ + std::string(path);
    LENS_ASSIGN_OR_RETURN(std::string token, Token());
    curl_slist* list = nullptr;
    auto add = [&](const std::string& h) {
      curl_slist* next = curl_slist_append(list, h.c_str());
      if (next) list = next;
      return next != nullptr;
    };
    bool ok = add("Accept: " + std::string(accept));
    if (!body.empty()) ok = ok && add("Content-Type: application/json");
    if (!token.empty()) ok = ok && add("Authorization: Bearer " + token);
    headers->reset(list);
    if (!ok) return InternalError("curl_slist_append: out of memory");
    CURLcode rc = CURLE_OK;
    auto set = [&](CURLoption option, auto value) {
      if (rc == CURLE_OK) rc = curl_easy_setopt(curl, option, value);
    };
    set(CURLOPT_URL, url.c_str());
    set(CURLOPT_PROTOCOLS_STR, "http,https");
    set(CURLOPT_NOSIGNAL, 1L);
    set(CURLOPT_CONNECTTIMEOUT_MS,
        static_cast<long>(options_.connect_timeout.count()));
    set(CURLOPT_TCP_KEEPALIVE, 1L);
    set(CURLOPT_HTTPHEADER, list);
    set(CURLOPT_USERAGENT,
        (options_.user_agent + "/" LENS_VERSION_STRING).c_str());
    set(CURLOPT_WRITEFUNCTION, &OnBody);
    set(CURLOPT_WRITEDATA, static_cast<void*>(t));
    set(CURLOPT_HEADERFUNCTION, &OnHeader);
    set(CURLOPT_HEADERDATA, static_cast<void*>(t));
    if (method != "GET") {
      set(CURLOPT_CUSTOMREQUEST, std::string(method).c_str());
    }
    if (!body.empty() || method == "POST" || method == "PUT") {
      set(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
      set(CURLOPT_COPYPOSTFIELDS, std::string(body).c_str());
    }
    auto blob = [&](CURLoption option, const std::string& pem) {
      curl_blob b{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
      set(option, &b);
    };
    const KubeConnection& c = connection_;
    if (!c.ca_file.empty()) set(CURLOPT_CAINFO, c.ca_file.c_str());
    if (!c.ca_pem.empty()) blob(CURLOPT_CAINFO_BLOB, c.ca_pem);
    if (!c.client_cert_file.empty()) {
      set(CURLOPT_SSLCERT, c.client_cert_file.c_str());
    }
    if (!c.client_cert_pem.empty())
      blob(CURLOPT_SSLCERT_BLOB, c.client_cert_pem);
    if (!c.client_key_file.empty())
      set(CURLOPT_SSLKEY, c.client_key_file.c_str());
    if (!c.client_key_pem.empty()) blob(CURLOPT_SSLKEY_BLOB, c.client_key_pem);
    if (c.insecure_skip_tls_verify) {
      set(CURLOPT_SSL_VERIFYPEER, 0L);
      set(CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (connect_to_) set(CURLOPT_CONNECT_TO, connect_to_.get());
    if (rc != CURLE_OK) {
      return InternalError(std::string(method) + " " + url +
                           ": curl_easy_setopt: " + curl_easy_strerror(rc));
    }
    return OkStatus();
  }

  Status TransferError(std::string_view method, std::string_view path,
                       CURLcode code, const char* detail, const Transfer& t) {
    std::string what =
        std::string(method) + " " + server_ + std::string(path) + ": ";
    if (code == CURLE_WRITE_ERROR && t.too_large) {
      return ResourceExhaustedError(
          what + "response larger than " +
          std::to_string(options_.max_response_bytes) + " bytes");
    }
    what += curl_easy_strerror(code);
    if (detail[0] != '\0') what += std::string(": ") + detail;
    if (code == CURLE_OPERATION_TIMEDOUT) return DeadlineExceededError(what);
    if (code == CURLE_URL_MALFORMAT || code == CURLE_UNSUPPORTED_PROTOCOL) {
      return InvalidArgumentError(what);
    }
    return UnavailableError(what);
  }

  KubeConnection connection_;
  KubeClientOptions options_;
  std::string server_;
  // What request URLs start with: `server_`, or with `tls_server_name` its
  // host, reached through `connect_to_` (NameServer()).
  std::string request_base_;
  std::unique_ptr<curl_slist, SlistDeleter> connect_to_;
  std::mutex mu_;
  std::vector<CURL*> idle_;  // GUARDED_BY(mu_)
  std::string token_;        // GUARDED_BY(mu_)
  timespec token_mtime_{};   // GUARDED_BY(mu_)
  off_t token_size_ = -1;    // GUARDED_BY(mu_)
};

}  // namespace

StatusOr<std::unique_ptr<KubeClient>> KubeClient::Create(
    const KubeConnection& connection, const KubeClientOptions& options) {
  auto client = std::make_unique<CurlKubeClient>(connection, options);
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
