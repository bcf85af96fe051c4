// One client connection of the HTTP server: non-blocking reads and writes over
// a socket, through OpenSSL when the listener serves TLS. Only the server's
// event-loop thread touches a Connection.
#ifndef LENS_HTTP_CONNECTION_H_
#define LENS_HTTP_CONNECTION_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "http/http.h"
#include "http/request_parser.h"
#include "lens/status.h"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace lens::http {

using Clock = std::chrono::steady_clock;

// The server's TLS configuration (certificate chain and key, TLS 1.2+).
class TlsContext {
 public:
  // InvalidArgument naming the files when they do not load or do not match.
  static StatusOr<std::unique_ptr<TlsContext>> Load(
      const std::string& cert_file, const std::string& key_file);
  ~TlsContext();
  SSL_CTX* get() const { return ctx_; }

 private:
  explicit TlsContext(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* ctx_;
};

enum class Phase : uint8_t {
  kHandshake,  // TLS handshake
  kHead,       // waiting for (the rest of) a request head
  kBody,       // reading a Content-Length body
  kHandler,    // a worker is running the handler
  kWrite,      // writing the response
  kLinger,     // response written, discarding input until the peer closes
};

// What a read or write did.
enum class IoResult : uint8_t { kProgress, kWouldBlock, kClosed, kError };

class Connection {
 public:
  Connection(int fd, uint64_t id, std::string peer, SSL* ssl);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Appends up to `max` bytes to `in`.
  IoResult Read(size_t max);
  // Writes from `out` at `out_off`; stamps `write_progress` when bytes went.
  IoResult Flush();
  // Advances the TLS handshake (kProgress when done).
  IoResult Handshake();
  // The epoll events this connection waits for in its phase.
  uint32_t Interest() const;
  bool pending_output() const { return out_off < out.size(); }

  const int fd;
  const uint64_t id;
  const std::string peer;  // client address, without port
  Phase phase = Phase::kHead;
  std::string in;   // bytes read, not yet consumed
  std::string out;  // bytes to write
  size_t out_off = 0;
  HeadScanner scanner;
  RequestHead head;
  bool close_after_write = false;
  bool head_only = false;  // HEAD: no body in the response
  bool served = false;     // a response was written (kept alive since)
  std::shared_ptr<const HttpHandler> handler;      // the route of `head`
  std::string route;                               // its path or pattern
  std::map<std::string, std::string> path_params;  // its pattern's captures
  uint32_t registered = 0;  // the epoll events last registered
  // When the phase's time runs out.
  Clock::time_point deadline;
  // Since when the connection has waited for a request (accept, or the last
  // response); bytes of the current request so far, and when the first came.
  Clock::time_point waiting_since;
  size_t request_bytes = 0;
  Clock::time_point request_start;
  // When the response last moved (its start, bytes sent, or the reader
  // taking bytes from the socket's queue): a reader that takes nothing for
  // kWriterGrace can be evicted at a cap.
  Clock::time_point write_progress;
  int last_unsent = -1;  // the socket's send queue at the last look
  // When the last bytes of the request came (a body that stops coming can
  // be evicted to free the body budget).
  Clock::time_point last_read;
  // Set when the connection closes; a queued handler call for it is dropped
  // before it runs (shared with the worker's task).
  const std::shared_ptr<std::atomic<bool>> gone =
      std::make_shared<std::atomic<bool>>(false);
  // The body budget this request's body holds (released when its handler
  // is done, or the connection closes first).
  std::shared_ptr<void> body_reservation;

 private:
  IoResult SslResult(int ret);
  SSL* ssl_;
  bool ssl_wants_write_ = false;
  bool ssl_wants_read_ = false;
};

// Waiting for (the rest of) a request, or lingering: no handler or response
// in progress.
bool Waiting(const Connection& c);

// A connection that could be closed to make room, and how useless it is:
// the lowest sorts first.
struct Stalled {
  // 0: nothing sent or lingering; 1: kept alive idle; 2: a request partway
  // in, or a response its reader does not take
  int rank;
  Clock::time_point since;
  uint64_t id;
  bool operator<(const Stalled& o) const {
    return rank != o.rank ? rank < o.rank : since < o.since;
  }
};
// Set for a waiting connection that has made no request progress for the
// grace period (kStallGrace): a client that connects and sends at once is
// never taken for an idle one. Partway requests count from their first byte,
// so trickling bytes (slowloris) does not keep one young. A connection
// writing a response is stalled when its reader took nothing for the grace
// period: never-reading clients cannot hold a peer's slots.
inline constexpr auto kStallGrace = std::chrono::milliseconds(200);
// A reader is stalled after taking nothing for this long when a connection
// of any client may be closed for the room (a steady reader of a large
// answer may let a few hundred ms pass between takes).
inline constexpr auto kWriterGrace = std::chrono::seconds(1);
// Looks at the socket's send queue: a queue that shrank since the last look
// is a reader taking bytes (stamps write_progress).
void NoteReaderProgress(Connection& c, Clock::time_point now);
// `writer_grace`: how long a reader may take nothing before its connection
// counts as stalled (kWriterGrace where another client's download is at
// stake, kStallGrace among one client's own connections at its cap).
std::optional<Stalled> StalledSince(const Connection& c, Clock::time_point now,
                                    Clock::duration writer_grace);

}  // namespace lens::http

#endif  // LENS_HTTP_CONNECTION_H_
