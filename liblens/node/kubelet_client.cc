// KubeletGet: one GET against the kubelet's read-only API with libcurl.
// The bearer token is re-read on every call (projected service-account
// tokens rotate) and never appears in an error message.
#include <curl/curl.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>

#include "core/kernel_file.h"
#include "lens/node.h"
#include "lens/version.h"

namespace lens {
namespace {

constexpr size_t kMaxTokenBytes = 64 * 1024;
constexpr size_t kBodyStartBytes = 256;

void InitCurlOnce() {
  // curl_global_init is not thread-safe before libcurl 7.84; call it once.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct CurlDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

// The response body, refused past `limit` while it arrives.
struct Body {
  std::string data;
  uint64_t limit = 0;
  bool too_large = false;
};

size_t OnBodyData(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<Body*>(user);
  const size_t bytes = size * count;
  if (body->data.size() + bytes > body->limit) {
    body->too_large = true;
    return 0;  // anything but `bytes` aborts the transfer
  }
  body->data.append(data, bytes);
  return bytes;
}

// The token file's content, trimmed. Errors name the file, never the token.
StatusOr<std::string> ReadToken(const std::string& path) {
  StatusOr<std::string> text = ReadKernelFile(path, kMaxTokenBytes);
  if (!text.ok()) return text.status().WithContext("kubelet token file");
  std::string_view token = *text;
  const std::string_view kSpace = " \t\r\n";
  token.remove_prefix(std::min(token.size(), token.find_first_not_of(kSpace)));
  token = token.substr(0, token.find_last_not_of(kSpace) + 1);
  if (token.empty()) {
    return InvalidArgumentError("kubelet token file " + path + " is empty");
  }
  for (char c : token) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return InvalidArgumentError("kubelet token file " + path +
                                  ": the token contains control characters");
    }
  }
  return std::string(token);
}

// The start of an error body for a message: printable ASCII only, with the
// token blanked in case the server echoes request headers back.
std::string BodyStart(std::string body, const std::string& token) {
  if (!token.empty()) {
    for (size_t at; (at = body.find(token)) != std::string::npos;) {
      body.replace(at, token.size(), "<redacted>");
    }
  }
  std::string out;
  for (char c : body.substr(0, kBodyStartBytes)) {
    out += (c >= 0x20 && c < 0x7f) ? c : ' ';
  }
  if (body.size() > kBodyStartBytes) out += "...";
  return out;
}

Status TransferError(CURLcode code, const char* detail, const Body& body,
                     const KubeletOptions& options, const std::string& url) {
  const std::string what = "GET " + url + ": ";
  if ((code == CURLE_WRITE_ERROR && body.too_large) ||
      code == CURLE_FILESIZE_EXCEEDED) {
    return ResourceExhaustedError(what + "response larger than " +
                                  std::to_string(options.max_response_bytes) +
                                  " bytes");
  }
  if (code == CURLE_URL_MALFORMAT || code == CURLE_UNSUPPORTED_PROTOCOL) {
    return InvalidArgumentError(what + curl_easy_strerror(code));
  }
  std::string message = what + curl_easy_strerror(code);
  if (code == CURLE_OPERATION_TIMEDOUT) {
    message += " (timeout " + std::to_string(options.timeout.count()) + " ms)";
  }
  if (detail[0] != '\0') message += std::string(": ") + detail;
  return UnavailableError(message);
}

Status ApplyOptions(CURL* curl, const KubeletOptions& options,
                    const std::string& url, curl_slist* headers, Body* body) {
  const long timeout_ms = static_cast<long>(options.timeout.count());
  CURLcode rc = CURLE_OK;
  auto set = [&](CURLoption option, auto value) {
    if (rc == CURLE_OK) rc = curl_easy_setopt(curl, option, value);
  };
  set(CURLOPT_URL, url.c_str());
  set(CURLOPT_PROTOCOLS_STR, "http,https");
  set(CURLOPT_NOSIGNAL, 1L);
  set(CURLOPT_TIMEOUT_MS, timeout_ms);
  set(CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  set(CURLOPT_HTTPHEADER, headers);
  set(CURLOPT_USERAGENT, "lens/" LENS_VERSION_STRING);
  set(CURLOPT_MAXFILESIZE_LARGE,
      static_cast<curl_off_t>(options.max_response_bytes));
  set(CURLOPT_WRITEFUNCTION, &OnBodyData);
  set(CURLOPT_WRITEDATA, static_cast<void*>(body));
  if (!options.ca_file.empty()) set(CURLOPT_CAINFO, options.ca_file.c_str());
  if (options.insecure_skip_verify) {
    set(CURLOPT_SSL_VERIFYPEER, 0L);
    set(CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (rc != CURLE_OK) {
    return InternalError("GET " + url +
                         ": curl_easy_setopt: " + curl_easy_strerror(rc));
  }
  return OkStatus();
}

StatusOr<std::string> MapResponse(long status, Body body,
                                  const std::string& token,
                                  const std::string& url) {
  if (status >= 200 && status < 300) return std::move(body.data);
  const std::string what = "GET " + url + ": HTTP " + std::to_string(status);
  if (status == 401 || status == 403) {
    return PermissionDeniedError(
        what + (status == 401 ? " (token missing, invalid or expired)"
                              : " (the token's identity may not read this)"));
  }
  return Status(StatusCode::kUnknown,
                what + ": " + BodyStart(std::move(body.data), token));
}

}  // namespace

StatusOr<std::string> KubeletGet(const KubeletOptions& options,
                                 std::string_view path) {
  if (options.url.empty()) {
    return InvalidArgumentError("KubeletGet: KubeletOptions.url is empty");
  }
  if (options.timeout.count() <= 0) {
    return InvalidArgumentError(
        "KubeletGet: KubeletOptions.timeout must be > 0");
  }
  std::string url = options.url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (!path.empty() && path.front() != '/') url += '/';
  url += path;

  std::string token;
  if (!options.token_file.empty()) {
    LENS_ASSIGN_OR_RETURN(token, ReadToken(options.token_file));
  }
  InitCurlOnce();
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return InternalError("GET " + url + ": curl_easy_init failed");
  curl_slist* list = curl_slist_append(nullptr, "Accept: application/json");
  std::unique_ptr<curl_slist, SlistDeleter> headers(list);
  if (!token.empty()) {
    const std::string auth = "Authorization: Bearer " + token;
    list = list ? curl_slist_append(list, auth.c_str()) : nullptr;
  }
  if (list == nullptr) return InternalError("GET " + url + ": out of memory");

  Body body;
  body.limit = options.max_response_bytes;
  LENS_RETURN_IF_ERROR(ApplyOptions(curl.get(), options, url, list, &body));
  char detail[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, detail);
  CURLcode rc = curl_easy_perform(curl.get());
  if (rc != CURLE_OK) return TransferError(rc, detail, body, options, url);
  long status = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
  return MapResponse(status, std::move(body), token, url);
}

}  // namespace lens
