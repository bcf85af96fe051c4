// HttpClient over libcurl: the only file of Lens that includes curl.
#include "core/http_client.h"

#include <curl/curl.h>
#include <strings.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/redact.h"
#include "lens/version.h"

namespace lens {
namespace {

using Clock = std::chrono::steady_clock;

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool HasLineBreak(std::string_view s) {
  return s.find_first_of("\r\n") != std::string_view::npos;
}

// Retry-After in seconds; an HTTP date (or anything else) is -1, left to the
// caller's backoff.
int ParseRetryAfter(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
    value.remove_prefix(1);
  }
  while (!value.empty() && std::string_view(" \t\r\n").find(value.back()) !=
                               std::string_view::npos) {
    value.remove_suffix(1);
  }
  if (value.empty() || value.size() > 9) return -1;
  int seconds = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return -1;
    seconds = seconds * 10 + (c - '0');
  }
  return seconds < 86400 * 7 ? seconds : -1;
}

// What one transfer collects.
struct Transfer {
  std::string body;  // the answer, or (streams) the partial line
  uint64_t limit = 0;
  uint64_t keep_prefix = 0;
  bool too_large = false;
  int retry_after = -1;
  const std::function<bool(std::string_view)>* on_line = nullptr;
  CURL* curl = nullptr;
  bool checked_status = false;
  bool refused = false;  // streams: a non-2xx answer, its body collected
  bool handler_ended = false;
  const std::atomic<bool>* stop = nullptr;
  bool stopped = false;
  Clock::time_point last_byte = Clock::now();
  std::chrono::milliseconds idle{0};
  bool idle_expired = false;
};

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string_view line(data, size * count);
  constexpr std::string_view kRetry = "retry-after:";
  if (line.size() > kRetry.size() &&
      strncasecmp(line.data(), kRetry.data(), kRetry.size()) == 0) {
    t->retry_after = ParseRetryAfter(line.substr(kRetry.size()));
  }
  return size * count;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  t->last_byte = Clock::now();
  if (t->keep_prefix > 0) {
    if (t->body.size() < t->keep_prefix) {
      t->body.append(
          data, std::min<uint64_t>(bytes, t->keep_prefix - t->body.size()));
    }
    return bytes;  // the rest is read and dropped
  }
  if (t->on_line && !t->checked_status) {
    t->checked_status = true;
    long status = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    t->refused = status < 200 || status >= 300;
  }
  if (t->body.size() + bytes > t->limit) {
    t->too_large = true;
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
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
      t->handler_ended = true;
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

struct SlistFree {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using Slist = std::unique_ptr<curl_slist, SlistFree>;

struct HandleFree {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
using Handle = std::unique_ptr<CURL, HandleFree>;

// Appends "Name: value" lines to `list`; false when out of memory.
bool Append(Slist* list, const std::string& line) {
  curl_slist* next = curl_slist_append(list->get(), line.c_str());
  if (!next) return false;
  (void)list->release();
  list->reset(next);
  return true;
}

bool ValidHeader(const std::string& name, const std::string& value) {
  return !name.empty() && !HasLineBreak(name) && !HasLineBreak(value) &&
         name.find(':') == std::string::npos;
}

}  // namespace

struct HttpClient::Impl {
  ~Impl() {
    for (CURL* h : idle) curl_easy_cleanup(h);
  }

  HttpClientOptions options;
  std::string request_base;  // base_url, or https://<tls_server_name>:port...
  std::string shown;
  Slist connect_to;  // tls_server_name: its host:port -> base_url's
  std::vector<std::string> secrets;  // never in a message
  mutable std::mutex mu;
  std::vector<CURL*> idle;  // GUARDED_BY(mu)
  std::string last_token;   // GUARDED_BY(mu): from token_source, scrubbed

  Status NameServer() {
    const std::string& base = options.base_url;
    const size_t authority = std::strlen("https://");
    const size_t slash = base.find_first_of("/?#", authority);
    const std::string host_port =
        base.substr(authority, slash == std::string::npos ? std::string::npos
                                                          : slash - authority);
    const std::string rest =
        slash == std::string::npos ? "" : base.substr(slash);
    const size_t bracket = host_port.rfind(']');
    const size_t colon = host_port.rfind(':');
    std::string host = host_port;
    std::string port = "443";
    if (colon != std::string::npos &&
        (bracket == std::string::npos || colon > bracket)) {
      host = host_port.substr(0, colon);
      port = host_port.substr(colon + 1);
    }
    const std::string& name = options.tls_server_name;
    if (host.empty() || port.empty() || host.find('@') != std::string::npos ||
        name.find_first_of(":/[]@ ") != std::string::npos) {
      return InvalidArgumentError(
          "TLS server name \"" + name + "\" for " + shown +
          (options.origin.empty() ? "" : " (" + options.origin + ")") +
          ": expected a host name and https://host:port");
    }
    request_base = "https://" + name + ":" + port + rest;
    Slist list;
    if (!Append(&list, name + ":" + port + ":" + host + ":" + port)) {
      return InternalError("curl_slist_append: out of memory");
    }
    connect_to = std::move(list);
    return OkStatus();
  }

  void CollectSecrets() {
    const std::string& url = options.base_url;
    const size_t host =
        url.find("://") == std::string::npos ? 0 : url.find("://") + 3;
    const size_t end = url.find_first_of("/?#", host);
    const size_t at =
        url.rfind('@', end == std::string::npos ? url.size() : end);
    if (at != std::string::npos && at > host) {
      const std::string user_info = url.substr(host, at - host);
      secrets.push_back(user_info);
      if (const size_t colon = user_info.find(':');
          colon != std::string::npos) {
        secrets.push_back(user_info.substr(colon + 1));
      }
    }
    if (const size_t q = url.find('?'); q != std::string::npos) {
      secrets.push_back(url.substr(q + 1, url.find('#', q) - q - 1));
    }
    if (!options.bearer_token.empty()) secrets.push_back(options.bearer_token);
    std::erase(secrets, std::string());
  }

  Handle Acquire() {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!idle.empty()) {
        CURL* h = idle.back();
        idle.pop_back();
        curl_easy_reset(h);  // keeps its connections and TLS sessions
        return Handle(h);
      }
    }
    return Handle(curl_easy_init());
  }

  void Release(Handle h) {
    std::lock_guard<std::mutex> lock(mu);
    if (idle.size() < options.idle_handles) idle.push_back(h.release());
  }

  StatusOr<std::string> Token() {
    if (!options.token_source) return options.bearer_token;
    LENS_ASSIGN_OR_RETURN(std::string token, options.token_source());
    if (HasLineBreak(token)) {
      return InvalidArgumentError(shown +
                                  ": the bearer token has a line break");
    }
    std::lock_guard<std::mutex> lock(mu);
    last_token = token;
    return token;
  }

  std::string Scrub(std::string text) const {
    std::vector<std::string> all = secrets;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!last_token.empty()) all.push_back(last_token);
    }
    for (const std::string& secret : all) {
      for (size_t at = text.find(secret); at != std::string::npos;
           at = text.find(secret, at + 3)) {
        text.replace(at, secret.size(), "***");
      }
    }
    return text;
  }

  Status TransferError(std::string_view what, CURLcode code, const char* detail,
                       const Transfer& t) const {
    std::string message(what);
    message += ": ";
    if (code == CURLE_WRITE_ERROR && t.too_large) {
      return ResourceExhaustedError(message + "response larger than " +
                                    std::to_string(options.max_response_bytes) +
                                    " bytes");
    }
    message += curl_easy_strerror(code);
    if (detail[0] != '\0') message += ": " + Scrub(detail);
    if (code == CURLE_OPERATION_TIMEDOUT) return DeadlineExceededError(message);
    if (code == CURLE_URL_MALFORMAT || code == CURLE_UNSUPPORTED_PROTOCOL) {
      return InvalidArgumentError(message);
    }
    return UnavailableError(message);
  }
};

StatusOr<std::unique_ptr<HttpClient>> HttpClient::Create(
    HttpClientOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->shown = RedactedUrl(options.base_url);
  // Create's errors: the URL and where it came from.
  const std::string where =
      "\"" + impl->shown + "\"" +
      (options.origin.empty() ? std::string() : " (" + options.origin + ")");
  if (!options.base_url.starts_with("http://") &&
      !options.base_url.starts_with("https://")) {
    return InvalidArgumentError(where +
                                ": expected an http:// or https:// URL");
  }
  for (const auto& [name, value] : options.headers) {
    if (!ValidHeader(name, value)) {
      return InvalidArgumentError(where + ": bad header name or value \"" +
                                  name + "\"");
    }
  }
  for (const std::string* file : {&options.ca_file, &options.client_cert_file,
                                  &options.client_key_file}) {
    if (!file->empty() && ::access(file->c_str(), R_OK) != 0) {
      return ErrnoError(errno, where + ": " + *file);
    }
  }
  if (HasLineBreak(options.bearer_token)) {
    return InvalidArgumentError(where + ": the bearer token has a line break");
  }
  impl->options = std::move(options);
  impl->request_base = impl->options.base_url;
  if (!impl->options.tls_server_name.empty() &&
      impl->options.base_url.starts_with("https://")) {
    LENS_RETURN_IF_ERROR(impl->NameServer());
  }
  impl->CollectSecrets();
  InitCurlOnce();
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(impl)));
}

HttpClient::HttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpClient::~HttpClient() = default;

const std::string& HttpClient::shown() const { return impl_->shown; }

std::string HttpClient::Scrub(std::string text) const {
  return impl_->Scrub(std::move(text));
}

StatusOr<HttpClient::Response> HttpClient::Send(const Request& request) {
  const HttpClientOptions& o = impl_->options;
  const std::string method(request.method);
  const std::string what =
      method + " " + impl_->shown + std::string(request.path);
  if (method.empty() || method.find_first_of(" \r\n") != std::string::npos) {
    return InvalidArgumentError(what + ": bad method");
  }
  LENS_ASSIGN_OR_RETURN(std::string token, impl_->Token());
  Slist headers;
  bool ok = true;
  for (const auto& [name, value] : o.headers) {
    ok = ok && Append(&headers, name + ": " + value);
  }
  for (const auto& [name, value] : request.headers) {
    if (!ValidHeader(name, value)) {
      return InvalidArgumentError(what + ": bad header name or value \"" +
                                  name + "\"");
    }
    ok = ok && Append(&headers, name + ": " + value);
  }
  if (!token.empty())
    ok = ok && Append(&headers, "Authorization: Bearer " + token);
  ok = ok && Append(&headers, "Expect:");  // no 100-continue round trip
  if (!ok) return InternalError("curl_slist_append: out of memory");

  Handle handle = impl_->Acquire();
  if (!handle) return InternalError("curl_easy_init failed");
  CURL* curl = handle.get();
  Transfer t;
  t.limit = o.max_response_bytes;
  t.keep_prefix = request.keep_prefix;
  t.on_line = request.on_line;
  t.curl = curl;
  t.stop = request.stop;
  t.idle = request.idle;

  const std::string url = impl_->request_base + std::string(request.path);
  const std::string agent = o.user_agent + "/" LENS_VERSION_STRING;
  const std::chrono::milliseconds timeout = request.timeout.value_or(o.timeout);
  CURLcode rc = CURLE_OK;
  auto set = [&](CURLoption option, auto value) {
    if (rc == CURLE_OK) rc = curl_easy_setopt(curl, option, value);
  };
  set(CURLOPT_URL, url.c_str());  // credentials and all
  set(CURLOPT_PROTOCOLS_STR, "http,https");
  set(CURLOPT_NOSIGNAL, 1L);
  set(CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o.connect_timeout.count()));
  set(CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  set(CURLOPT_TCP_KEEPALIVE, 1L);
  set(CURLOPT_HTTPHEADER, headers.get());
  set(CURLOPT_USERAGENT, agent.c_str());
  if (o.accept_compressed) set(CURLOPT_ACCEPT_ENCODING, "");
  set(CURLOPT_WRITEFUNCTION, &OnBody);
  set(CURLOPT_WRITEDATA, static_cast<void*>(&t));
  set(CURLOPT_HEADERFUNCTION, &OnHeader);
  set(CURLOPT_HEADERDATA, static_cast<void*>(&t));
  if (method != "GET") {
    if (!request.body.empty() || method == "POST" || method == "PUT" ||
        method == "PATCH") {
      // Not copied: `request.body` outlives the transfer.
      set(CURLOPT_POSTFIELDSIZE_LARGE,
          static_cast<curl_off_t>(request.body.size()));
      set(CURLOPT_POSTFIELDS, request.body.data());
    }
    if (method != "POST") set(CURLOPT_CUSTOMREQUEST, method.c_str());
  }
  auto blob = [&](CURLoption option, const std::string& pem) {
    curl_blob b{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
    set(option, &b);
  };
  if (!o.ca_file.empty()) set(CURLOPT_CAINFO, o.ca_file.c_str());
  if (!o.ca_pem.empty()) blob(CURLOPT_CAINFO_BLOB, o.ca_pem);
  if (!o.client_cert_file.empty()) {
    set(CURLOPT_SSLCERT, o.client_cert_file.c_str());
  }
  if (!o.client_cert_pem.empty()) blob(CURLOPT_SSLCERT_BLOB, o.client_cert_pem);
  if (!o.client_key_file.empty())
    set(CURLOPT_SSLKEY, o.client_key_file.c_str());
  if (!o.client_key_pem.empty()) blob(CURLOPT_SSLKEY_BLOB, o.client_key_pem);
  if (o.insecure_skip_verify) {
    set(CURLOPT_SSL_VERIFYPEER, 0L);
    set(CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (impl_->connect_to) set(CURLOPT_CONNECT_TO, impl_->connect_to.get());
  if (request.stop || request.idle.count() > 0) {
    set(CURLOPT_NOPROGRESS, 0L);
    set(CURLOPT_XFERINFOFUNCTION, &OnProgress);
    set(CURLOPT_XFERINFODATA, static_cast<void*>(&t));
  }
  char detail[CURL_ERROR_SIZE] = {};
  set(CURLOPT_ERRORBUFFER, detail);
  if (rc != CURLE_OK) {
    return InternalError(what +
                         ": curl_easy_setopt: " + curl_easy_strerror(rc));
  }
  rc = curl_easy_perform(curl);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);

  Response r;
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  r.status = static_cast<int>(status);
  r.retry_after_seconds = t.retry_after;
  if (t.stopped) return CancelledError(what + ": stopped");
  if (t.handler_ended) {
    r.ended_by_handler = true;
    impl_->Release(std::move(handle));
    return r;
  }
  if (t.idle_expired) {
    return DeadlineExceededError(what + ": no data for " +
                                 std::to_string(request.idle.count()) + " ms");
  }
  if (rc != CURLE_OK) return impl_->TransferError(what, rc, detail, t);
  if (t.on_line && !t.refused) {
    if (!t.body.empty()) (*t.on_line)(t.body);  // the last line, no newline
  } else {
    r.body = std::move(t.body);
  }
  impl_->Release(std::move(handle));
  return r;
}

}  // namespace lens
