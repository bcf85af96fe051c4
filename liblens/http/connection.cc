// Non-blocking socket and TLS I/O for the HTTP server.
#include "http/connection.h"

#include <linux/sockios.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace lens::http {
namespace {

std::string OpenSslError() {
  const unsigned long e = ERR_get_error();
  if (e == 0) return "unknown error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

}  // namespace

StatusOr<std::unique_ptr<TlsContext>> TlsContext::Load(
    const std::string& cert_file, const std::string& key_file) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return InternalError("TLS: " + OpenSslError());
  std::unique_ptr<TlsContext> out(new TlsContext(ctx));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_mode(
      ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) !=
          1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    return InvalidArgumentError("TLS: cannot load certificate " + cert_file +
                                " with key " + key_file + ": " +
                                OpenSslError());
  }
  return out;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

Connection::Connection(int fd, uint64_t id, std::string peer, SSL* ssl)
    : fd(fd), id(id), peer(std::move(peer)), ssl_(ssl) {
  if (ssl_ != nullptr) {
    SSL_set_fd(ssl_, fd);
    phase = Phase::kHandshake;
  }
}

Connection::~Connection() {
  if (ssl_ != nullptr) SSL_free(ssl_);
  ::close(fd);
}

IoResult Connection::SslResult(int ret) {
  ssl_wants_read_ = ssl_wants_write_ = false;
  switch (SSL_get_error(ssl_, ret)) {
    case SSL_ERROR_WANT_READ:
      ssl_wants_read_ = true;
      return IoResult::kWouldBlock;
    case SSL_ERROR_WANT_WRITE:
      ssl_wants_write_ = true;
      return IoResult::kWouldBlock;
    case SSL_ERROR_ZERO_RETURN:
      return IoResult::kClosed;
    default:
      ERR_clear_error();
      return IoResult::kError;
  }
}

IoResult Connection::Handshake() {
  const int ret = SSL_accept(ssl_);
  if (ret == 1) {
    ssl_wants_read_ = ssl_wants_write_ = false;
    return IoResult::kProgress;
  }
  return SslResult(ret);
}

IoResult Connection::Read(size_t max) {
  const size_t old = in.size();
  in.resize(old + max);
  IoResult result;
  if (ssl_ != nullptr) {
    size_t n = 0;
    const int ret = SSL_read_ex(ssl_, in.data() + old, max, &n);
    result = ret == 1 ? IoResult::kProgress : SslResult(ret);
    in.resize(old + (ret == 1 ? n : 0));
    if (ret == 1) ssl_wants_read_ = ssl_wants_write_ = false;
    return result;
  }
  const ssize_t n = ::recv(fd, in.data() + old, max, 0);
  in.resize(old + (n > 0 ? static_cast<size_t>(n) : 0));
  if (n > 0) return IoResult::kProgress;
  if (n == 0) return IoResult::kClosed;
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
    return IoResult::kWouldBlock;
  return IoResult::kError;
}

IoResult Connection::Flush() {
  while (out_off < out.size()) {
    const size_t left = out.size() - out_off;
    if (ssl_ != nullptr) {
      size_t n = 0;
      const int ret = SSL_write_ex(ssl_, out.data() + out_off, left, &n);
      if (ret != 1) return SslResult(ret);
      ssl_wants_read_ = ssl_wants_write_ = false;
      out_off += n;
      write_progress = Clock::now();
      continue;
    }
    const ssize_t n =
        ::send(fd, out.data() + out_off, left, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return IoResult::kWouldBlock;
      return IoResult::kError;
    }
    out_off += static_cast<size_t>(n);
    write_progress = Clock::now();
  }
  out.clear();
  out_off = 0;
  return IoResult::kProgress;
}

uint32_t Connection::Interest() const {
  if (phase == Phase::kHandler) return 0;
  uint32_t events = 0;
  switch (phase) {
    case Phase::kHandshake:
    case Phase::kHead:
    case Phase::kBody:
    case Phase::kLinger:
      events = EPOLLIN;
      break;
    case Phase::kHandler:
      break;
    case Phase::kWrite:
      events = EPOLLOUT;
      break;
  }
  if (pending_output()) events |= EPOLLOUT;  // "100 Continue" while reading
  if (ssl_wants_read_) events |= EPOLLIN;
  if (ssl_wants_write_) events |= EPOLLOUT;
  return events;
}

void NoteReaderProgress(Connection& c, Clock::time_point now) {
  int unsent = 0;
  if (::ioctl(c.fd, SIOCOUTQ, &unsent) != 0) return;
  if (c.last_unsent >= 0 && unsent < c.last_unsent) c.write_progress = now;
  c.last_unsent = unsent;
}

bool Waiting(const Connection& c) {
  return c.phase == Phase::kHandshake || c.phase == Phase::kHead ||
         c.phase == Phase::kBody || c.phase == Phase::kLinger;
}

std::optional<Stalled> StalledSince(const Connection& c, Clock::time_point now,
                                    Clock::duration writer_grace) {
  if (c.phase == Phase::kWrite) {
    if (now - c.write_progress < writer_grace) return std::nullopt;
    return Stalled{2, c.write_progress, c.id};
  }
  if (!Waiting(c)) return std::nullopt;
  Stalled s{0, c.waiting_since, c.id};
  if (c.phase == Phase::kLinger) {
    s.rank = 0;
  } else if (c.request_bytes == 0) {
    s.rank = c.served ? 1 : 0;
  } else {
    s.rank = 2;
    s.since = c.request_start;
  }
  if (now - s.since < kStallGrace) return std::nullopt;
  return s;
}

}  // namespace lens::http
