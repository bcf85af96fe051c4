// Posts remote-write bodies to one receiver (VictoriaMetrics, Prometheus,
// vmagent, ...) through the one outbound HTTP client: the headers of remote
// write 1.0, a bearer token, TLS from a CA file, and one kept-alive
// connection between posts.
#ifndef LENS_TELEMETRY_REMOTE_WRITE_CLIENT_H_
#define LENS_TELEMETRY_REMOTE_WRITE_CLIENT_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/redact.h"
#include "lens/status.h"

namespace lens::telemetry {

// One remote-write receiver.
struct ForwardTarget {
  // Names the target in metrics and its queue directory; empty: derived from
  // the URL (see ForwardTargetName).
  std::string name;
  std::string url;  // http:// or https://, e.g. http://vm:8428/api/v1/write
  std::string bearer_token;  // sent as "Authorization: Bearer"; the caller
                             // reads a token file
  std::string ca_file;       // PEM; empty: the system's CAs
  bool insecure_skip_verify = false;
  std::chrono::milliseconds timeout{10000};  // a whole POST, connect included
  // Added to every request (a tenant header, basic auth, ...).
  std::vector<std::pair<std::string, std::string>> headers;
};

// The target's name made safe as a directory name and a label value:
// letters, digits, '.', '_' and '-' kept, anything else '_', at most 100
// characters ("http://vm:8428/api/v1/write" -> "vm_8428_api_v1_write" when
// the name is empty).
std::string ForwardTargetName(const ForwardTarget& target);
// RedactedUrl (`url` without user information, query or fragment) is in
// core/redact.h.

// What one POST came to.
struct PostResult {
  int status = 0;        // the HTTP status; 0 when no response came
  std::string error;     // no response: what went wrong (refused, timeout, TLS)
  bool stopped = false;  // aborted because `stop` was set
  int retry_after_seconds = -1;  // Retry-After in seconds, -1 when absent
  std::string body;              // the response body's first 512 bytes
};

// Not thread-safe: one poster at a time (the forwarder's thread).
class RemoteWriteClient {
 public:
  // InvalidArgument: a URL that is not http(s), an unreadable ca_file, a
  // header name or value with a line break.
  static StatusOr<std::unique_ptr<RemoteWriteClient>> Create(
      const ForwardTarget& target);
  ~RemoteWriteClient();
  RemoteWriteClient(const RemoteWriteClient&) = delete;
  RemoteWriteClient& operator=(const RemoteWriteClient&) = delete;

  // POSTs `body` (a snappy-compressed WriteRequest); blocks up to the
  // target's timeout, or until `stop` becomes true (libcurl looks at it
  // about once a second while waiting; then `stopped`).
  PostResult Post(std::string_view body, const std::atomic<bool>* stop);

 private:
  struct Impl;
  explicit RemoteWriteClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens::telemetry

#endif  // LENS_TELEMETRY_REMOTE_WRITE_CLIENT_H_
