// Listening sockets and peer addresses of the HTTP server.
#include "http/socket.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace lens::http {

std::string PeerAddress(const sockaddr_storage& addr) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(addr).sin_addr,
              buf, sizeof buf);
    return buf;
  }
  inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(addr).sin6_addr,
            buf, sizeof buf);
  std::string out = buf;
  if (out.rfind("::ffff:", 0) == 0 && out.find('.') != std::string::npos)
    out.erase(0, 7);  // an IPv4 client of a dual-stack socket
  return out;
}

// Enough descriptors for max_connections (the soft limit is often 1024).
void RaiseFileLimit(int max_connections) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  const rlim_t want = static_cast<rlim_t>(max_connections) + 256;
  if (rl.rlim_cur >= want) return;
  rl.rlim_cur =
      rl.rlim_max == RLIM_INFINITY ? want : std::min(want, rl.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &rl);
}

// A listening socket for `address` (numeric or a name of this machine).
StatusOr<int> Listen(ListenAddress* address, const std::string& text) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(address->port);
  if (::getaddrinfo(address->host.empty() ? nullptr : address->host.c_str(),
                    port.c_str(), &hints, &found) != 0 ||
      found == nullptr) {
    return InvalidArgumentError("cannot listen on " + text +
                                ": not an address of this machine");
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard(found,
                                                             ::freeaddrinfo);
  const int fd = ::socket(found->ai_family,
                          found->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return UnavailableError("cannot listen on " + text + ": " +
                            std::strerror(errno));
  // SO_REUSEADDR only: SO_REUSEPORT would let a second daemon bind the same
  // port and silently take half the scrapes.
  int yes = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0 ||
      ::listen(fd, SOMAXCONN) != 0) {
    const int err = errno;
    ::close(fd);
    return UnavailableError(
        "cannot listen on " + text + ": " + std::strerror(err) +
        (err == EADDRINUSE ? " (another process holds it)" : ""));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  address->port = ntohs(bound.ss_family == AF_INET
                            ? reinterpret_cast<sockaddr_in&>(bound).sin_port
                            : reinterpret_cast<sockaddr_in6&>(bound).sin6_port);
  return fd;
}

}  // namespace lens::http
