// HttpGet: a non-blocking socket driven by poll() against one deadline, with
// OpenSSL on top for https (TLS 1.2+, the peer verified against ca_file or
// the system CAs, its name or IP checked, SNI for names, an optional client
// certificate for kubelets that authenticate clients by X.509).
#include "kubelet/kubelet_http.h"

#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "core/kernel_file.h"

namespace lens::kubelet {
namespace {

using Clock = std::chrono::steady_clock;

struct CtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
struct SslFree {
  void operator()(SSL* s) const { SSL_free(s); }
};

// The last OpenSSL error queue entry as text (the queue is cleared).
std::string SslErrorText() {
  unsigned long code = 0, last = 0;
  while ((code = ERR_get_error()) != 0) last = code;
  if (last == 0) return "unknown TLS error";
  char text[256];
  ERR_error_string_n(last, text, sizeof text);
  return text;
}

// OpenSSL writes to the socket with write(2), which raises SIGPIPE when the
// peer has gone: blocked on this thread while the request runs, and a
// SIGPIPE raised meanwhile is consumed (unless one was pending before).
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~ScopedSigpipeBlock() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      const timespec zero{};
      sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t pipe_, old_;
  bool was_pending_ = false;
};

// A TLS client context for `o`: TLS 1.2 or later, peer verification against
// ca_file (else the system CAs) unless skipped, the client certificate and
// key when set. InvalidArgument naming the option and the file.
StatusOr<std::unique_ptr<SSL_CTX, CtxFree>> NewClientContext(
    const KubeletOptions& o) {
  std::unique_ptr<SSL_CTX, CtxFree> ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return InternalError("SSL_CTX_new: " + SslErrorText());
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  if (o.insecure_skip_verify) {
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  } else {
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
    const int ok = o.ca_file.empty()
                       ? SSL_CTX_set_default_verify_paths(ctx.get())
                       : SSL_CTX_load_verify_locations(
                             ctx.get(), o.ca_file.c_str(), nullptr);
    if (ok != 1) {
      return InvalidArgumentError("kubelet CA file " + o.ca_file +
                                  ": no PEM certificate could be loaded (" +
                                  SslErrorText() + ")");
    }
  }
  if (!o.client_cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx.get(),
                                           o.client_cert_file.c_str()) != 1) {
      return InvalidArgumentError(
          "kubelet client certificate " + o.client_cert_file +
          ": not a readable PEM certificate (" + SslErrorText() + ")");
    }
    if (SSL_CTX_use_PrivateKey_file(ctx.get(), o.client_key_file.c_str(),
                                    SSL_FILETYPE_PEM) != 1) {
      return InvalidArgumentError("kubelet client key " + o.client_key_file +
                                  ": not a PEM private key matching the "
                                  "certificate (" +
                                  SslErrorText() + ")");
    }
    if (SSL_CTX_check_private_key(ctx.get()) != 1) {
      ERR_clear_error();
      return InvalidArgumentError("kubelet client key " + o.client_key_file +
                                  ": does not match the certificate " +
                                  o.client_cert_file);
    }
  }
  return ctx;
}

class Connection {
 public:
  Connection(const HttpUrl& url, Clock::time_point deadline)
      : url_(url), deadline_(deadline) {}
  ~Connection() {
    ssl_.reset();
    if (fd_ >= 0) ::close(fd_);
  }

  Status Connect() {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const std::string port = std::to_string(url_.port);
    const int rc =
        ::getaddrinfo(url_.host.c_str(), port.c_str(), &hints, &found);
    if (rc != 0) {
      return UnavailableError("resolve " + url_.host + ": " + gai_strerror(rc));
    }
    std::unique_ptr<addrinfo, void (*)(addrinfo*)> list(found, freeaddrinfo);
    Status last = UnavailableError("no address for " + url_.host);
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
      last = ConnectTo(a);
      if (last.ok()) return last;
    }
    return last;
  }

  Status StartTls(const KubeletOptions& o) {
    using Ctx = std::unique_ptr<SSL_CTX, CtxFree>;
    LENS_ASSIGN_OR_RETURN(Ctx ctx, NewClientContext(o));
    verify_ = !o.insecure_skip_verify;
    ssl_.reset(SSL_new(ctx.get()));
    if (!ssl_ || SSL_set_fd(ssl_.get(), fd_) != 1) {
      return InternalError("SSL_new: " + SslErrorText());
    }
    if (!o.insecure_skip_verify) {
      X509_VERIFY_PARAM* param = SSL_get0_param(ssl_.get());
      // An IP literal is checked against the IP SANs, a name against DNS.
      if (X509_VERIFY_PARAM_set1_ip_asc(param, url_.host.c_str()) != 1) {
        ERR_clear_error();
        X509_VERIFY_PARAM_set_hostflags(param,
                                        X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        X509_VERIFY_PARAM_set1_host(param, url_.host.c_str(), 0);
        SSL_set_tlsext_host_name(ssl_.get(), url_.host.c_str());
      }
    }
    for (;;) {
      ERR_clear_error();
      const int rc = SSL_connect(ssl_.get());
      if (rc == 1) return OkStatus();
      LENS_RETURN_IF_ERROR(WaitSsl(rc, "TLS handshake"));
    }
  }

  Status WriteAll(std::string_view data) {
    while (!data.empty()) {
      if (ssl_) {
        ERR_clear_error();
        const int n =
            SSL_write(ssl_.get(), data.data(), static_cast<int>(data.size()));
        if (n > 0) {
          data.remove_prefix(static_cast<size_t>(n));
          continue;
        }
        LENS_RETURN_IF_ERROR(WaitSsl(n, "send"));
        continue;
      }
      const ssize_t n =
          ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        data.remove_prefix(static_cast<size_t>(n));
      } else if (errno == EAGAIN || errno == EINTR) {
        LENS_RETURN_IF_ERROR(Wait(POLLOUT, "send"));
      } else {
        return UnavailableError(std::string("send: ") + std::strerror(errno));
      }
    }
    return OkStatus();
  }

  StatusOr<size_t> Read(char* buf, size_t size) {
    for (;;) {
      if (ssl_) {
        ERR_clear_error();
        const int n = SSL_read(ssl_.get(), buf, static_cast<int>(size));
        if (n > 0) return static_cast<size_t>(n);
        const int err = SSL_get_error(ssl_.get(), n);
        // A peer that closes without close_notify ends the stream too: the
        // framing (Content-Length, chunks) says whether that was early.
        if (err == SSL_ERROR_ZERO_RETURN ||
            (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) ||
            (err == SSL_ERROR_SSL && ERR_GET_REASON(ERR_peek_error()) ==
                                         SSL_R_UNEXPECTED_EOF_WHILE_READING)) {
          return size_t{0};
        }
        LENS_RETURN_IF_ERROR(WaitSsl(n, "receive"));
        continue;
      }
      const ssize_t n = ::recv(fd_, buf, size, MSG_DONTWAIT);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EAGAIN && errno != EINTR) {
        return UnavailableError(std::string("receive: ") +
                                std::strerror(errno));
      }
      LENS_RETURN_IF_ERROR(Wait(POLLIN, "receive"));
    }
  }

 private:
  Status ConnectTo(const addrinfo* a) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                   a->ai_protocol);
    if (fd_ < 0) {
      return UnavailableError(std::string("socket: ") + std::strerror(errno));
    }
    if (::connect(fd_, a->ai_addr, a->ai_addrlen) == 0) return OkStatus();
    if (errno != EINPROGRESS) {
      return UnavailableError(std::string("connect: ") + std::strerror(errno));
    }
    LENS_RETURN_IF_ERROR(Wait(POLLOUT, "connect"));
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      return UnavailableError(std::string("connect: ") + std::strerror(err));
    }
    return OkStatus();
  }

  // Waits for `events` until the deadline.
  Status Wait(short events, const char* what) {
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline_ - Clock::now());
      if (left.count() <= 0) {
        return DeadlineExceededError(std::string(what) + ": timed out");
      }
      pollfd p{fd_, events, 0};
      const int rc = ::poll(&p, 1, static_cast<int>(left.count()));
      if (rc > 0) return OkStatus();
      if (rc < 0 && errno != EINTR) {
        return UnavailableError(std::string("poll: ") + std::strerror(errno));
      }
    }
  }

  // After an SSL call returned `rc` <= 0: waits when OpenSSL wants I/O, else
  // the error (with the certificate verdict when verification failed).
  Status WaitSsl(int rc, const char* what) {
    const int err = SSL_get_error(ssl_.get(), rc);
    if (err == SSL_ERROR_WANT_READ) return Wait(POLLIN, what);
    if (err == SSL_ERROR_WANT_WRITE) return Wait(POLLOUT, what);
    std::string message = std::string(what) + ": ";
    const long verify = SSL_get_verify_result(ssl_.get());
    if (verify_ && verify != X509_V_OK) {
      message += std::string("certificate verify failed: ") +
                 X509_verify_cert_error_string(verify);
      ERR_clear_error();
    } else if (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
      message += errno != 0 ? std::strerror(errno) : "connection closed";
    } else {
      message += SslErrorText();
    }
    return UnavailableError(message);
  }

  const HttpUrl& url_;
  Clock::time_point deadline_;
  int fd_ = -1;
  bool verify_ = false;
  std::unique_ptr<SSL, SslFree> ssl_;
};

}  // namespace

Status CheckTlsFiles(const KubeletOptions& options) {
  const struct {
    const std::string& path;
    const char* what;
  } files[] = {{options.ca_file, "kubelet CA file"},
               {options.client_cert_file, "kubelet client certificate"},
               {options.client_key_file, "kubelet client key"}};
  for (const auto& f : files) {
    if (f.path.empty()) continue;
    // Read first so that a missing or unreadable file says so plainly.
    StatusOr<std::string> text = ReadKernelFile(f.path, size_t{1} << 20);
    if (!text.ok()) return text.status().WithContext(f.what);
  }
  if (options.client_cert_file.empty() && options.ca_file.empty()) {
    return OkStatus();
  }
  return NewClientContext(options).status();
}

StatusOr<KubeletHttpResponse> HttpGet(const KubeletOptions& options,
                                      const std::string& url,
                                      const std::vector<std::string>& headers) {
  LENS_ASSIGN_OR_RETURN(HttpUrl target, ParseHttpUrl(url));
  const auto deadline = Clock::now() + options.timeout;
  const auto in_context = [&](const Status& st) {
    const std::string what = "GET " + url + ": ";
    if (st.code() == StatusCode::kDeadlineExceeded) {
      return UnavailableError(what + st.message() + " (timeout " +
                              std::to_string(options.timeout.count()) + " ms)");
    }
    return Status(st.code(), what + st.message());
  };
  ScopedSigpipeBlock no_sigpipe;
  Connection conn(target, deadline);
  Status st = conn.Connect();
  if (st.ok() && target.tls) st = conn.StartTls(options);
  if (!st.ok()) return in_context(st);
  std::string request = "GET " + target.path +
                        " HTTP/1.1\r\nHost: " + target.host_header + "\r\n";
  for (const std::string& h : headers) request += h + "\r\n";
  request += "Connection: close\r\n\r\n";
  st = conn.WriteAll(request);
  if (!st.ok()) return in_context(st);
  StatusOr<KubeletHttpResponse> response = ReadHttpResponse(
      [&conn](char* buf, size_t size) { return conn.Read(buf, size); },
      options.max_response_bytes);
  if (!response.ok()) {
    const StatusCode code = response.status().code();
    // A response that is not HTTP (a TLS port spoken to in plain text, a
    // broken proxy) is the far end's fault: Unavailable, like the others.
    return in_context(code == StatusCode::kInvalidArgument
                          ? UnavailableError(response.status().message())
                          : response.status());
  }
  return response;
}

}  // namespace lens::kubelet
