#include "telemetry/remote_write_client.h"

#include <curl/curl.h>
#include <strings.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>

#include "lens/version.h"

namespace lens::telemetry {
namespace {

constexpr size_t kBodyBytesKept = 512;

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// What one transfer collects.
struct Transfer {
  std::string body;
  int retry_after = -1;
  const std::atomic<bool>* stop = nullptr;
  bool stopped = false;
};

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * count);
  constexpr std::string_view kRetry = "retry-after:";
  if (line.size() > kRetry.size() &&
      strncasecmp(line.data(), kRetry.data(), kRetry.size()) == 0) {
    // Seconds; an HTTP date is left to the backoff.
    const std::string value(line.substr(kRetry.size()));
    char* end = nullptr;
    const long seconds = std::strtol(value.c_str(), &end, 10);
    if (end != value.c_str() && seconds >= 0 && seconds < 86400 &&
        std::string_view(end).find_first_not_of(" \t\r\n") ==
            std::string_view::npos) {
      t->retry_after = static_cast<int>(seconds);
    }
  }
  return size * count;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  if (t->body.size() < kBodyBytesKept) {
    t->body.append(data, std::min(bytes, kBodyBytesKept - t->body.size()));
  }
  return bytes;  // the rest is read and dropped
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (t->stop && t->stop->load()) {
    t->stopped = true;
    return 1;
  }
  return 0;
}

bool HasLineBreak(std::string_view s) {
  return s.find_first_of("\r\n") != std::string_view::npos;
}

}  // namespace

std::string ForwardTargetName(const ForwardTarget& target) {
  std::string from_text;
  std::string_view from = target.name;
  if (from.empty()) {
    // Host, port and path only: credentials in the URL (user:password@,
    // ?token=) never reach a label, a directory name or a log line.
    from_text = RedactedUrl(target.url);
    from = from_text;
    for (std::string_view scheme : {"http://", "https://"}) {
      if (from.starts_with(scheme)) from.remove_prefix(scheme.size());
    }
  }
  std::string name;
  for (char c : from.substr(0, 100)) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                      c == '-';
    name.push_back(keep ? c : '_');
  }
  while (!name.empty() && name.back() == '_') name.pop_back();
  // Never "", "." or "..": those are not directories of their own.
  if (name.empty() || name.front() == '.') name.insert(0, "_");
  return name;
}

struct RemoteWriteClient::Impl {
  ~Impl() {
    if (curl) curl_easy_cleanup(curl);
    if (headers) curl_slist_free_all(headers);
  }
  CURL* curl = nullptr;
  curl_slist* headers = nullptr;
  Transfer transfer;
  std::string url;
};

StatusOr<std::unique_ptr<RemoteWriteClient>> RemoteWriteClient::Create(
    const ForwardTarget& target) {
  const std::string url = RedactedUrl(target.url);  // for messages only
  if (!url.starts_with("http://") && !url.starts_with("https://")) {
    return InvalidArgumentError("remote write target \"" + url +
                                "\": expected an http:// or https:// URL");
  }
  if (!target.ca_file.empty() && ::access(target.ca_file.c_str(), R_OK) != 0) {
    return ErrnoError(
        errno, "remote write target " + url + ": ca_file " + target.ca_file);
  }
  std::vector<std::string> lines = {
      "Content-Encoding: snappy", "Content-Type: application/x-protobuf",
      "X-Prometheus-Remote-Write-Version: 0.1.0",
      "Expect:"};  // no 100-continue round trip for large bodies
  if (!target.bearer_token.empty()) {
    lines.push_back("Authorization: Bearer " + target.bearer_token);
  }
  for (const auto& [name, value] : target.headers) {
    if (name.empty() || HasLineBreak(name) || HasLineBreak(value) ||
        name.find(':') != std::string::npos) {
      return InvalidArgumentError("remote write target " + url +
                                  ": bad header name or value \"" + name +
                                  "\"");
    }
    lines.push_back(name + ": " + value);
  }
  InitCurlOnce();
  auto impl = std::make_unique<Impl>();
  impl->url = target.url;  // the real one, credentials and all
  impl->curl = curl_easy_init();
  if (!impl->curl) return InternalError("curl_easy_init failed");
  for (const std::string& line : lines) {
    curl_slist* next = curl_slist_append(impl->headers, line.c_str());
    if (!next) return InternalError("curl_slist_append: out of memory");
    impl->headers = next;
  }
  CURL* curl = impl->curl;
  CURLcode rc = CURLE_OK;
  auto set = [&](CURLoption option, auto value) {
    if (rc == CURLE_OK) rc = curl_easy_setopt(curl, option, value);
  };
  set(CURLOPT_URL, impl->url.c_str());
  set(CURLOPT_PROTOCOLS_STR, "http,https");
  set(CURLOPT_NOSIGNAL, 1L);
  set(CURLOPT_TIMEOUT_MS, static_cast<long>(target.timeout.count()));
  set(CURLOPT_TCP_KEEPALIVE, 1L);
  set(CURLOPT_HTTPHEADER, impl->headers);
  set(CURLOPT_USERAGENT, "lens-telemetry/" LENS_VERSION_STRING);
  set(CURLOPT_POST, 1L);
  set(CURLOPT_WRITEFUNCTION, &OnBody);
  set(CURLOPT_WRITEDATA, static_cast<void*>(&impl->transfer));
  set(CURLOPT_HEADERFUNCTION, &OnHeader);
  set(CURLOPT_HEADERDATA, static_cast<void*>(&impl->transfer));
  set(CURLOPT_NOPROGRESS, 0L);
  set(CURLOPT_XFERINFOFUNCTION, &OnProgress);
  set(CURLOPT_XFERINFODATA, static_cast<void*>(&impl->transfer));
  if (!target.ca_file.empty()) set(CURLOPT_CAINFO, target.ca_file.c_str());
  if (target.insecure_skip_verify) {
    set(CURLOPT_SSL_VERIFYPEER, 0L);
    set(CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (rc != CURLE_OK) {
    return InternalError("remote write target " + url +
                         ": curl_easy_setopt: " + curl_easy_strerror(rc));
  }
  return std::unique_ptr<RemoteWriteClient>(
      new RemoteWriteClient(std::move(impl)));
}

RemoteWriteClient::RemoteWriteClient(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

RemoteWriteClient::~RemoteWriteClient() = default;

PostResult RemoteWriteClient::Post(std::string_view body,
                                   const std::atomic<bool>* stop) {
  Transfer& t = impl_->transfer;
  t = Transfer{};
  t.stop = stop;
  CURL* curl = impl_->curl;
  // Not copied: `body` outlives the transfer.
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                   static_cast<curl_off_t>(body.size()));
  char detail[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, detail);
  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  PostResult r;
  r.stopped = t.stopped;
  if (rc != CURLE_OK) {
    r.error = curl_easy_strerror(rc);
    if (detail[0] != '\0') r.error += std::string(": ") + detail;
    return r;
  }
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  r.status = static_cast<int>(status);
  r.retry_after_seconds = t.retry_after;
  r.body = std::move(t.body);
  return r;
}

}  // namespace lens::telemetry
