// The HTTP server every Lens daemon serves from: exact-path and pattern
// routes ("/api/v1/nodes/{name}"), optional bearer-token auth and TLS,
// request size limits, and the REST envelope helpers of the wire format
// ({"code":0,"data":...,"message":"success"} with real HTTP status codes).
//
//   lens::HttpServerOptions options;
//   options.listen = "127.0.0.1:0";          // port 0: pick a free port
//   auto server = lens::HttpServer::Create(options);
//   (*server)->Handle("GET", "/healthz", [](const lens::HttpRequest&,
//                                           lens::HttpResponse* r) {
//     r->body = "ok\n";
//   });
//   lens::Status st = (*server)->Start();    // serves on its own threads
//   ... (*server)->Stop();
#ifndef LENS_HTTP_HTTP_H_
#define LENS_HTTP_HTTP_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lens/status.h"

namespace lens {

class Registry;  // core/metrics.h

// One request, as handlers see it. Header names are lower case.
struct HttpRequest {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> query;
  std::multimap<std::string, std::string> headers;
  std::string body;
  std::string remote_addr;
  // The segments a pattern route captured ({"name": "gpu-1"} for
  // "/api/v1/nodes/{name}"), percent-decoded; empty on exact routes.
  std::map<std::string, std::string> path_params;

  // The first value of query parameter `name`, or `fallback`.
  std::string Query(std::string_view name,
                    std::string_view fallback = {}) const;
  // The first value of header `name` (any case), or empty.
  std::string Header(std::string_view name) const;
};

// What a handler fills in. Defaults: 200, JSON.
struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// Called on one of the server's worker threads, possibly concurrently with
// other requests: handlers must be thread-safe. An exception escaping a
// handler becomes a 500 with the envelope.
using HttpHandler = std::function<void(const HttpRequest&, HttpResponse*)>;

struct HttpServerOptions {
  // "host:port", ":port" (all interfaces) or "[v6]:port"; port 0 picks a free
  // one (see HttpServer::port()).
  std::string listen = "0.0.0.0:8080";
  // When not empty, every route except `public_paths` requires
  // "Authorization: Bearer <token>" (scheme in any case, token compared in
  // constant time); otherwise 401 with WWW-Authenticate: Bearer.
  std::string bearer_token;
  std::vector<std::string> public_paths = {"/healthz"};
  // PEM files; both set: HTTPS. One without the other is InvalidArgument.
  std::string tls_cert_file;
  std::string tls_key_file;
  // Limits enforced while a request is read, before authentication: a longer
  // request line gets 414, a larger header section (or more than 100 header
  // lines) 431, a larger Content-Length 413 (the body is never read). Bodies
  // need a Content-Length (chunked uploads get 411).
  size_t max_request_line_bytes = size_t{8} << 10;
  size_t max_header_bytes = size_t{16} << 10;
  size_t max_body_bytes = size_t{1} << 20;
  // A request (TLS handshake, head and body) must arrive within read_timeout
  // of its first byte (of the accept, on a new connection); a response must be
  // written within write_timeout; a kept-alive connection waits idle_timeout
  // for its next request. Slower clients are cut off.
  std::chrono::seconds read_timeout{10};
  std::chrono::seconds write_timeout{10};
  std::chrono::seconds idle_timeout{60};
  // At most max_connections open connections, max_connections_per_peer from
  // one client address. At a cap, a stalled connection is closed to make
  // room: the one that has waited longest for its request, or whose reader
  // has taken nothing of its answer for a second (idle, slow or
  // never-reading clients cannot lock others out); when every one is busy
  // the new one gets 503.
  int max_connections = 1024;
  int max_connections_per_peer = 64;
  // Worker threads for handlers, plus one thread reserved for priority_paths,
  // so a scrape is answered however busy the other routes are.
  int threads = 4;
  std::vector<std::string> priority_paths = {"/metrics", "/healthz"};
  // Requests waiting for a worker (and, separately, for the priority
  // thread). A request that finds its queue full is answered 503 with
  // Retry-After: 1 at once; a queued request whose client has gone is
  // dropped before its handler runs.
  int max_queued_requests = 256;
  // Request bodies held at once (being read, queued or in a handler), in
  // all and from one client address (half of it, at least max_body_bytes).
  // A request whose body does not fit gets 503 with Retry-After: 1 before
  // its body is read. At least max_body_bytes.
  size_t max_body_bytes_in_flight = size_t{32} << 20;
  // Where the server's metrics go (borrowed; it outlives the server; one
  // server per registry). Without it the server keeps them itself and
  // HttpServer::RenderMetrics() writes them. Every answer is counted:
  // lens_http_requests_total{route,code} and the handlers' time in
  // lens_http_request_duration_seconds{route}. `route` is the path or
  // pattern a handler was registered under ("/api/v1/nodes/{name}"), so the
  // label stays bounded; requests answered before routing (401, 404, 405,
  // 4xx of a malformed request, 503 of a full queue) count under route
  // "unrouted". Connections: lens_http_connections_accepted_total,
  // _closed_total{reason}, _rejected_total{reason}, lens_http_connections
  // (open now); lens_http_requests_refused_total{reason} (answered before a
  // handler), lens_http_requests_dropped_total (client gone before its
  // handler ran), lens_http_queued_requests{pool} (docs/http.md).
  Registry* metrics = nullptr;

  // InvalidArgument naming the field.
  Status Validate() const;
};

// Thread-safe: Handle() before Start(); Stop() from any thread (also from a
// signal-watching thread), idempotent; the destructor stops.
class HttpServer {
 public:
  // Validates options and binds the listening socket (so the port is known and
  // in use when this returns). Errors: InvalidArgument (options, TLS files that
  // do not load), Unavailable (address in use, cannot bind; names the address).
  static StatusOr<std::unique_ptr<HttpServer>> Create(
      const HttpServerOptions& options);
  virtual ~HttpServer();

  // Routes `method` + exact `path` to `handler`. Other methods on a known path
  // get 405, unknown paths 404 (both with the envelope).
  virtual void Handle(std::string method, std::string path,
                      HttpHandler handler) = 0;
  // Routes `method` + a path pattern to `handler`: segments split on '/',
  // a segment "{name}" matches one non-empty segment (without '/') and is
  // captured in HttpRequest::path_params; other segments match exactly.
  // Exact routes win over patterns; patterns are tried in the order first
  // registered. 405/404 as for Handle. public_paths and priority_paths stay
  // exact paths. The server's limits and auth apply unchanged.
  virtual void HandlePattern(std::string method, std::string pattern,
                             HttpHandler handler) = 0;
  // Starts serving on background threads.
  virtual Status Start() = 0;
  // Stops accepting, finishes in-flight requests, joins threads.
  virtual void Stop() = 0;

  // Appends the server's own metrics (see HttpServerOptions::metrics) in the
  // Prometheus text format; nothing when they go to HttpServerOptions::metrics
  // (its owner renders that registry). Thread-safe, never blocks on a
  // request.
  virtual void RenderMetrics(std::string* out) const = 0;

  // The bound port (useful with port 0).
  virtual int port() const = 0;
  // "http://127.0.0.1:8989" / "https://..." with the bound host and port (a
  // wildcard host is shown as 127.0.0.1).
  virtual std::string url() const = 0;
};

// Reads a bearer-token file (a Kubernetes Secret mounted as a file): its text
// without surrounding whitespace. InvalidArgument "<what>: <path> is empty"
// for an empty file; read errors name `what` and the path. Files over 64 KiB
// are rejected.
StatusOr<std::string> ReadBearerTokenFile(const std::string& path,
                                          std::string_view what);

// Envelope helpers (wire format of DESIGN.md).
// {"code":0,"data":<data_json>,"message":"success"} with status 200.
void RespondData(std::string_view data_json, HttpResponse* out);
// {"code":<http_status>,"data":null,"message":"<message>"} with that status.
void RespondError(int http_status, std::string_view message, HttpResponse* out);
// Maps a Status to the HTTP status (NotFound 404, InvalidArgument 400,
// PermissionDenied 403, Unauthenticated 401, Unavailable 503, ... 500) and
// responds with the envelope.
void RespondStatus(const Status& status, HttpResponse* out);

}  // namespace lens

#endif  // LENS_HTTP_HTTP_H_
