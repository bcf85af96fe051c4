// One client connection of the HTTP server: non-blocking reads and writes over
// a socket, through OpenSSL when the listener serves TLS. Only the server's
// event-loop thread touches a Connection.
#ifndef LENS_HTTP_CONNECTION_H_
#define LENS_HTTP_CONNECTION_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "http/request_parser.h"
#include "lens/http.h"
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
  // Writes from `out` at `out_off`.
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
  bool request_started = true;  // bytes of the current request arrived
  std::shared_ptr<const HttpHandler> handler;  // the route of `head`
  uint32_t registered = 0;  // the epoll events last registered
  // When the phase's time runs out, and since when the connection has waited
  // for its current request (the oldest waiter is closed first at a cap).
  Clock::time_point deadline;
  Clock::time_point waiting_since;

 private:
  IoResult SslResult(int ret);
  SSL* ssl_;
  bool ssl_wants_write_ = false;
  bool ssl_wants_read_ = false;
};

}  // namespace lens::http

#endif  // LENS_HTTP_CONNECTION_H_
