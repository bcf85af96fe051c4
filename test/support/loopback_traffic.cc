#include "loopback_traffic.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

namespace lens::test {
namespace {

std::string Errno(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

bool SendAll(int fd, size_t n) {
  static const std::vector<char> kBuf(64 * 1024, 'x');
  while (n > 0) {
    ssize_t w = ::send(fd, kBuf.data(), std::min(n, kBuf.size()), MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Reads exactly n bytes (n == SIZE_MAX: until EOF); returns bytes read.
size_t RecvUpTo(int fd, size_t n) {
  std::vector<char> buf(64 * 1024);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::recv(fd, buf.data(), std::min(n - got, buf.size()), 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

// Whether 127.0.0.1:port can be bound now (no SO_REUSEADDR: a port in
// TIME_WAIT counts as taken).
bool CanBindLoopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok =
      ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// The first port of the kernel's range for outgoing connections.
int EphemeralLow() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0, high = 0;
  if (in >> low >> high && low > 0) return low;
  return 32768;
}

}  // namespace

int FreeLoopbackPort() {
  // Not a port from bind(0): those come from ip_local_port_range, the range
  // every outgoing connection's source port is taken from, so any test's
  // client running alongside (ctest -j) could take it between this probe and
  // the child's bind, and the child would fail with EADDRINUSE. Below that
  // range only other listeners compete; a random pick keeps two tests
  // starting at once apart.
  static std::atomic<uint64_t> calls{0};
  const int top = EphemeralLow() - 1;
  const int bottom = std::max(10000, top - 12000);
  if (top > bottom) {
    std::mt19937_64 rng(
        static_cast<uint64_t>(::getpid()) * 1000003u ^
        static_cast<uint64_t>(
            std::chrono::steady_clock::now().time_since_epoch().count()) ^
        calls.fetch_add(1) * 7919u);
    std::uniform_int_distribution<int> pick(bottom, top);
    for (int tries = 0; tries < 200; ++tries) {
      const int port = pick(rng);
      if (CanBindLoopback(port)) return port;
    }
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

LoopbackTraffic::LoopbackTraffic(const std::string& family)
    : v6_(family == "ipv6") {
  int fd = ::socket(v6_ ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error_ = Errno("socket");
    return;
  }
  sockaddr_storage ss{};
  socklen_t len;
  if (v6_) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof *a;
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 ||
      ::listen(fd, 1024) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) {
    error_ = Errno("bind/listen on loopback");
    ::close(fd);
    return;
  }
  port_ = ntohs(v6_ ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                    : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  listen_fd_ = fd;
}

LoopbackTraffic::~LoopbackTraffic() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

bool LoopbackTraffic::Serve(int connections, size_t request, size_t reply) {
  for (int i = 0; i < connections; ++i) {
    int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return false;
    bool ok = RecvUpTo(c, request) == request && SendAll(c, reply);
    ::close(c);
    if (!ok) return false;
  }
  return true;
}

bool LoopbackTraffic::Connect(size_t request, size_t reply) {
  int fd = ::socket(v6_ ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_storage ss{};
  socklen_t len;
  if (v6_) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    a->sin6_port = htons(port_);
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a->sin_port = htons(port_);
    len = sizeof *a;
  }
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&ss), len) == 0 &&
            SendAll(fd, request) && RecvUpTo(fd, SIZE_MAX) == reply;
  ::close(fd);
  return ok;
}

bool LoopbackTraffic::Run(int connections, size_t request, size_t reply) {
  if (!ok()) return false;
  bool served = false;
  std::thread server([&] { served = Serve(connections, request, reply); });
  bool clients = true;
  for (int i = 0; i < connections && clients; ++i) {
    clients = Connect(request, reply);
  }
  if (!clients) {
    error_ = Errno("client connection");
    ::shutdown(listen_fd_, SHUT_RDWR);  // unblock accept
  }
  server.join();
  if (clients && !served) error_ = "server side of a connection failed";
  return clients && served;
}

}  // namespace lens::test
