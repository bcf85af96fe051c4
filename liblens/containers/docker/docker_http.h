// HTTP/1.1 over a unix socket, as the Docker Engine API speaks it: one
// request per connection ("Connection: close"), responses framed by
// Content-Length, chunked transfer coding or the end of the connection.
// Every read has a deadline or can be cancelled from another thread, and
// every response part has a size limit.
#ifndef LENS_CONTAINERS_DOCKER_DOCKER_HTTP_H_
#define LENS_CONTAINERS_DOCKER_DOCKER_HTTP_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "lens/status.h"

namespace lens::containers::docker {

using Deadline = std::chrono::steady_clock::time_point;

// The status line and headers of a response. Header names are lower case.
struct HttpHead {
  int status = 0;
  std::map<std::string, std::string> headers;
};

// Status line plus headers at most this long.
inline constexpr size_t kMaxHeadBytes = 64 << 10;

// One exchange on one connection. Not thread-safe, except Cancel().
class UnixHttpConnection {
 public:
  // Connects to `socket_path`: NotFound when it does not exist,
  // PermissionDenied, Unavailable when nothing listens; InvalidArgument for
  // a path longer than a sockaddr_un holds.
  static StatusOr<std::unique_ptr<UnixHttpConnection>> Connect(
      const std::string& socket_path);
  ~UnixHttpConnection();
  UnixHttpConnection(const UnixHttpConnection&) = delete;
  UnixHttpConnection& operator=(const UnixHttpConnection&) = delete;

  // Writes one request. `body` is sent with `content_type` when not empty.
  Status Send(std::string_view method, std::string_view target,
              std::string_view content_type, std::string_view body,
              Deadline deadline);
  // Reads the status line and headers (at most kMaxHeadBytes).
  StatusOr<HttpHead> ReadHead(Deadline deadline);
  // Appends what body bytes arrive next (decoded from the chunked coding) to
  // `out`, waiting for at least one; false at the end of the body. Errors:
  // DeadlineExceeded, Cancelled, Unavailable when the peer closed mid-body,
  // InvalidArgument for a malformed chunk.
  StatusOr<bool> ReadBody(std::string* out, Deadline deadline);
  // The whole body; ResourceExhausted beyond `max_bytes`.
  StatusOr<std::string> ReadAll(size_t max_bytes, Deadline deadline);
  // Makes a blocked or later read return Cancelled. Any thread.
  void Cancel();

 private:
  UnixHttpConnection(int fd, int cancel_fd);
  // Reads more raw bytes into in_; false at end of stream.
  StatusOr<bool> Fill(Deadline deadline);
  // One CRLF-terminated line of at most `max` bytes from in_ (filling).
  StatusOr<std::string> ReadLine(size_t max, Deadline deadline);

  enum class Framing : uint8_t { kLength, kChunked, kClose };
  int fd_ = -1;
  int cancel_fd_ = -1;  // eventfd
  std::string in_;      // received, not yet consumed
  Framing framing_ = Framing::kClose;
  uint64_t left_ = 0;  // of the Content-Length or the current chunk
  bool in_chunk_ = false;
  bool done_ = false;
};

}  // namespace lens::containers::docker

#endif  // LENS_CONTAINERS_DOCKER_DOCKER_HTTP_H_
