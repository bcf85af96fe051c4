// The one outbound HTTP client of Lens, over libcurl: kept-alive connections
// in a pool of handles, TLS (a CA from a file or PEM, a client certificate,
// a verified name other than the URL's host), a bearer token (fixed, or
// asked for before each request so a rotated file is picked up), fixed
// headers, size and time limits, line streaming and cancellation.
//
// The Kubernetes client, the PromQL source, remote write and lens-jobs'
// node-agent reads all go through it; no other file includes curl. (The
// kubelet client in the node area speaks HTTP/1.1 itself over OpenSSL so the
// node agent needs nothing else; see kubelet/kubelet_http.h.)
//
// Errors name the method and the URL without credentials (RedactedUrl), and
// never carry the token, the URL's user information or its query, even when
// libcurl's detail quotes them.
#ifndef LENS_CORE_HTTP_CLIENT_H_
#define LENS_CORE_HTTP_CLIENT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lens/status.h"

namespace lens {

struct HttpClientOptions {
  // http:// or https://; a request's path (with its query) is appended.
  std::string base_url;
  // Where the URL came from, in Create's errors ("kubeconfig ~/.kube/config").
  std::string origin;
  std::string user_agent = "lens";  // "/<version>" is appended
  std::chrono::milliseconds connect_timeout{10000};
  // A whole request, connect included; 0: no limit (streams).
  std::chrono::milliseconds timeout{30000};
  // A larger answer fails with ResourceExhausted, unless the request keeps
  // only a prefix (HttpClient::Request::keep_prefix).
  uint64_t max_response_bytes = 64ull << 20;

  // TLS. CA: the file and/or PEM text; neither: the system's CAs.
  std::string ca_file;
  std::string ca_pem;
  std::string client_cert_file;
  std::string client_cert_pem;
  std::string client_key_file;
  std::string client_key_pem;
  bool insecure_skip_verify = false;
  // Requests go to https://<name>:<port> of base_url and the certificate is
  // verified against <name>, while the connection goes to base_url's host.
  std::string tls_server_name;

  // Sent as "Authorization: Bearer"; `token_source`, when set, is asked
  // before each request instead (its error fails the request).
  std::string bearer_token;
  std::function<StatusOr<std::string>()> token_source;
  // Added to every request ("X-Scope-OrgID: t1"); no line breaks or ':' in
  // names (Create refuses them).
  std::vector<std::pair<std::string, std::string>> headers;
  // Ask for compressed answers (gzip, deflate, ...) and inflate them; the
  // size limit applies to the inflated body.
  bool accept_compressed = false;
  // Kept-alive handles (each with its connection) between requests.
  size_t idle_handles = 8;
};

// Thread-safe: each request takes a handle (and its connection) from the
// pool.
class HttpClient {
 public:
  struct Request {
    std::string_view method = "GET";
    std::string_view path;  // appended to base_url, with the query
    std::string_view body;  // sent for POST/PUT/PATCH (even when empty)
    // "Accept: application/json", "Content-Type: ..."; no line breaks.
    std::vector<std::pair<std::string, std::string>> headers;
    // Instead of the client's timeout (0: none).
    std::optional<std::chrono::milliseconds> timeout;
    // Aborts the transfer once true (looked at about once a second while
    // waiting): Cancelled.
    const std::atomic<bool>* stop = nullptr;
    // Aborts when no byte arrives for this long: DeadlineExceeded.
    std::chrono::milliseconds idle{0};
    // Keep the answer's first `keep_prefix` bytes and read and drop the rest,
    // instead of failing on max_response_bytes (remote write's error bodies).
    uint64_t keep_prefix = 0;
    // A 2xx body is delivered line by line (CR LF or LF, empty lines skipped,
    // the last line even without a newline) instead of collected; returning
    // false ends the transfer (OK, Response::ended_by_handler). A line longer
    // than max_response_bytes fails with ResourceExhausted. A non-2xx body is
    // collected into Response::body as usual.
    const std::function<bool(std::string_view)>* on_line = nullptr;
  };
  struct Response {
    int status = 0;
    std::string body;
    int retry_after_seconds = -1;  // Retry-After in seconds; -1 when absent
    bool ended_by_handler = false;
  };

  // InvalidArgument for a base URL that is not http(s), a bad header or TLS
  // server name; NotFound/PermissionDenied for a CA or client certificate
  // file that cannot be read (named).
  static StatusOr<std::unique_ptr<HttpClient>> Create(
      HttpClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // One request. Any HTTP status is a Response; transport failures are
  // Unavailable (refused, reset, TLS), DeadlineExceeded (timeout, idle),
  // Cancelled (stop), ResourceExhausted (too large), InvalidArgument (a bad
  // URL), each naming the method and the (redacted) URL.
  StatusOr<Response> Send(const Request& request);

  // base_url without credentials, query or fragment, for messages.
  const std::string& shown() const;
  // `text` with the token, the URL's user information and query replaced by
  // "***" (for a server's answer quoted in an error).
  std::string Scrub(std::string text) const;

 private:
  struct Impl;
  explicit HttpClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens

#endif  // LENS_CORE_HTTP_CLIENT_H_
