// The kubelet client's transport: one HTTP/1.1 GET per connection over a
// socket, with TLS (OpenSSL, the library the HTTP server already uses) for
// https URLs, server verification and an optional client certificate. No
// libcurl: the node agent links nothing else for it (docs/performance.md).
#ifndef LENS_KUBELET_KUBELET_HTTP_H_
#define LENS_KUBELET_KUBELET_HTTP_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/kubelet.h"
#include "lens/status.h"

namespace lens::kubelet {

// An http(s) URL split for a request.
struct HttpUrl {
  bool tls = false;
  std::string host;  // without IPv6 brackets
  uint16_t port = 0;
  std::string path;         // "/" when the URL has none; no query handling
  std::string host_header;  // "host:port" as the URL wrote it
};

// Splits "https://10.0.0.5:10250/stats/summary". InvalidArgument naming the
// URL for another scheme, an empty host, a bad port or userinfo.
StatusOr<HttpUrl> ParseHttpUrl(std::string_view url);

// What came back: the status code and the whole body (de-chunked).
struct KubeletHttpResponse {
  int status = 0;
  std::string body;
};

// Reads bytes for the response parser: up to `size` into `buf`, 0 at the end
// of the stream.
using ReadFn = std::function<StatusOr<size_t>(char* buf, size_t size)>;

// Reads one HTTP/1.1 response (Content-Length, chunked, or until the end of
// the stream) through `read`. ResourceExhausted when the body would exceed
// `max_body_bytes` (at most that much is ever buffered) or the header block
// 64 KiB; InvalidArgument for a response that is not HTTP.
StatusOr<KubeletHttpResponse> ReadHttpResponse(const ReadFn& read,
                                               uint64_t max_body_bytes);

// Loads options.ca_file and the client certificate and key (when set) the
// way HttpGet will, so a bad file is reported at start-up: InvalidArgument
// naming the option and file ("kubelet client key /etc/...: does not match
// the certificate"), NotFound/PermissionDenied for a file that cannot be read.
Status CheckTlsFiles(const KubeletOptions& options);

// One GET of `url` with `headers` ("Name: value" lines, no CRLF) and
// "Connection: close", bounded by options.timeout overall. TLS per options
// (ca_file, insecure_skip_verify, client_cert_file/client_key_file).
// Errors: Unavailable (resolve, connect, TLS, timeout; names the URL),
// ResourceExhausted (too large), InvalidArgument (URL, unreadable client
// certificate or key).
StatusOr<KubeletHttpResponse> HttpGet(const KubeletOptions& options,
                                      const std::string& url,
                                      const std::vector<std::string>& headers);

}  // namespace lens::kubelet

#endif  // LENS_KUBELET_KUBELET_HTTP_H_
