// NewPromQlSource: a RangeQuery as a POST (form) to <url>/api/v1/query_range
// over libcurl, with a small pool of kept-alive handles. The only file of
// the area that includes curl.
#include <curl/curl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/redact.h"
#include "lens/timeseries.h"
#include "lens/version.h"
#include "timeseries/promql_response.h"
#include "timeseries/promql_text.h"
#include "timeseries/range.h"

namespace lens {
namespace {

constexpr size_t kIdleHandles = 8;

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// The body of one answer, up to a limit.
struct Transfer {
  std::string body;
  size_t limit = 0;
  bool too_large = false;
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  if (t->body.size() + bytes > t->limit) {
    t->too_large = true;
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  t->body.append(data, bytes);
  return bytes;
}

struct HandleDeleter {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
using Handle = std::unique_ptr<CURL, HandleDeleter>;

// <base path>/api/v1/query_range, keeping a query string of the base URL
// (VictoriaMetrics' extra_label, a tenant) and dropping a fragment.
std::string Endpoint(const std::string& base) {
  std::string path = base.substr(0, base.find_first_of("?#"));
  std::string query;
  if (const size_t q = base.find('?'); q != std::string::npos) {
    query = base.substr(q, base.find('#', q) - q);
  }
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path + "/api/v1/query_range" + query;
}

std::string FormValue(CURL* curl, const std::string& value) {
  char* escaped =
      curl_easy_escape(curl, value.data(), static_cast<int>(value.size()));
  std::string out = escaped ? escaped : "";
  curl_free(escaped);
  return out;
}

class PromQlSource final : public TimeSeriesSource {
 public:
  explicit PromQlSource(PromQlSourceOptions options)
      : options_(std::move(options)),
        endpoint_(Endpoint(options_.url)),
        shown_(RedactedUrl(endpoint_)) {
    // What RedactedUrl removed (user information, query) and the token.
    const size_t host = endpoint_.find("://") + 3;
    const size_t at = endpoint_.rfind('@', endpoint_.find('/', host));
    if (at != std::string::npos && at > host) {
      const std::string user_info = endpoint_.substr(host, at - host);
      secrets_.push_back(user_info);
      if (const size_t colon = user_info.find(':');
          colon != std::string::npos) {
        secrets_.push_back(user_info.substr(colon + 1));
      }
    }
    if (const size_t q = endpoint_.find('?'); q != std::string::npos) {
      secrets_.push_back(endpoint_.substr(q + 1));
    }
    if (!options_.bearer_token.empty()) {
      secrets_.push_back(options_.bearer_token);
    }
    std::erase(secrets_, std::string());
  }

  ~PromQlSource() override {
    for (CURL* h : idle_) curl_easy_cleanup(h);
  }

  StatusOr<std::vector<SeriesSamples>> QueryRange(
      const RangeQuery& q) override {
    LENS_RETURN_IF_ERROR(q.Validate());
    LENS_ASSIGN_OR_RETURN(Handle curl, Acquire());
    const std::string form =
        "query=" + FormValue(curl.get(), timeseries::PromQlExpression(q)) +
        "&start=" + timeseries::PromQlSeconds(timeseries::AlignedStartMs(q)) +
        "&end=" + timeseries::PromQlSeconds(q.to_ms) +
        "&step=" + timeseries::PromQlSeconds(q.step.count());
    Transfer t;
    t.limit = options_.max_response_bytes;
    LENS_RETURN_IF_ERROR(Setup(curl.get(), form, &t));
    char detail[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, detail);
    const CURLcode rc = curl_easy_perform(curl.get());
    curl_easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, nullptr);
    if (rc != CURLE_OK) return TransferError(rc, detail, t);
    long status = 0;
    curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
    Release(std::move(curl));
    if (status < 200 || status >= 300) {
      return UnavailableError("PromQL server " + shown_ + " answered HTTP " +
                              std::to_string(status) + ": " +
                              Scrub(timeseries::PromQlErrorText(t.body)));
    }
    return timeseries::ParseQueryRangeResponse(t.body, q.metric, q.max_series,
                                               shown_);
  }

  std::string_view backend() const override { return "promql"; }

 private:
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
    if (idle_.size() < kIdleHandles) idle_.push_back(h.release());
  }

  Status Setup(CURL* curl, const std::string& form, Transfer* t) {
    CURLcode rc = CURLE_OK;
    auto set = [&](CURLoption option, auto value) {
      if (rc == CURLE_OK) rc = curl_easy_setopt(curl, option, value);
    };
    set(CURLOPT_URL, endpoint_.c_str());  // credentials and all
    set(CURLOPT_PROTOCOLS_STR, "http,https");
    set(CURLOPT_NOSIGNAL, 1L);
    set(CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout.count()));
    set(CURLOPT_TCP_KEEPALIVE, 1L);
    set(CURLOPT_USERAGENT, "lens/" LENS_VERSION_STRING);
    set(CURLOPT_ACCEPT_ENCODING, "");  // what libcurl can decode
    if (!options_.bearer_token.empty()) {
      set(CURLOPT_XOAUTH2_BEARER, options_.bearer_token.c_str());
      set(CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BEARER));
    }
    if (!options_.ca_file.empty())
      set(CURLOPT_CAINFO, options_.ca_file.c_str());
    // A POSTed form, so that long selectors never meet a URL length limit.
    set(CURLOPT_COPYPOSTFIELDS, form.c_str());
    set(CURLOPT_WRITEFUNCTION, &OnBody);
    set(CURLOPT_WRITEDATA, static_cast<void*>(t));
    if (rc != CURLE_OK) {
      return InternalError("PromQL server " + shown_ +
                           ": curl_easy_setopt: " + curl_easy_strerror(rc));
    }
    return OkStatus();
  }

  // `text` (from libcurl or the server, which may quote the URL it was
  // given) with every part of the credentials replaced by "***".
  std::string Scrub(std::string text) const {
    for (const std::string& secret : secrets_) {
      for (size_t at = text.find(secret); at != std::string::npos;
           at = text.find(secret, at + 3)) {
        text.replace(at, secret.size(), "***");
      }
    }
    return text;
  }

  Status TransferError(CURLcode code, const char* detail,
                       const Transfer& t) const {
    const std::string what = "PromQL server " + shown_ + ": ";
    if (code == CURLE_WRITE_ERROR && t.too_large) {
      return ResourceExhaustedError(
          what + "answer larger than max_response_bytes (" +
          std::to_string(options_.max_response_bytes) +
          " bytes); narrow the query");
    }
    std::string text = curl_easy_strerror(code);
    if (detail[0] != '\0') text += ": " + Scrub(detail);
    return UnavailableError(what + text);
  }

  const PromQlSourceOptions options_;
  const std::string endpoint_;        // the real URL, credentials and all
  const std::string shown_;           // the one for messages
  std::vector<std::string> secrets_;  // never in a message
  std::mutex mu_;
  std::vector<CURL*> idle_;  // GUARDED_BY(mu_)
};

}  // namespace

StatusOr<std::unique_ptr<TimeSeriesSource>> NewPromQlSource(
    const PromQlSourceOptions& options) {
  LENS_RETURN_IF_ERROR(options.Validate());
  if (!options.ca_file.empty() &&
      ::access(options.ca_file.c_str(), R_OK) != 0) {
    return InvalidArgumentError("PromQL source ca_file " + options.ca_file +
                                ": " + std::strerror(errno));
  }
  InitCurlOnce();
  return std::unique_ptr<TimeSeriesSource>(new PromQlSource(options));
}

}  // namespace lens
