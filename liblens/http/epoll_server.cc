// The HTTP server's connection lifecycle: start and stop, the event loop,
// accepting under the connection caps, closing stalled connections to make
// room, and deadlines.
#include "http/epoll_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "http/socket.h"
#include "http/wire.h"
#include "lens/log.h"

namespace lens::http {

Status EpollServer::Start() {
  if (started_.exchange(true))
    return FailedPreconditionError("http server already started");
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0)
    return InternalError(std::string("http server: ") + std::strerror(errno));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenId;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
  ev.data.u64 = kWakeId;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  if (tls_) {
    // OpenSSL writes to the socket without MSG_NOSIGNAL: a client that
    // resets mid-response must not kill the process.
    struct sigaction old {};
    if (::sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL)
      ::signal(SIGPIPE, SIG_IGN);
  }
  workers_.Start();
  priority_.Start();
  loop_ = std::thread([this] { Loop(); });
  return OkStatus();
}

void EpollServer::Stop() {
  std::lock_guard lock(stop_mu_);
  if (!stopping_.exchange(true) && wake_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
  }
  if (loop_.joinable()) loop_.join();
  workers_.Stop();
  priority_.Stop();
  conns_.clear();
  for (int* fd : {&listen_fd_, &epoll_fd_, &wake_fd_, &reserve_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void EpollServer::Loop() {
  std::vector<epoll_event> events(256);
  Clock::time_point next_sweep = Clock::now() + kSweepEvery;
  Clock::time_point drain_until{};
  bool draining = false;
  for (;;) {
    if (stopping_ && !draining) {
      // Stop accepting; let running handlers finish and their responses go
      // out (bounded by the write timeout), close everything else.
      draining = true;
      drain_until = Clock::now() + options_.write_timeout;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
      std::vector<uint64_t> idle;
      for (const auto& [id, c] : conns_)
        if (c->phase != Phase::kHandler && c->phase != Phase::kWrite)
          idle.push_back(id);
      for (uint64_t id : idle) Close(id, CloseReason::kStopping);
    }
    if (draining && (conns_.empty() || Clock::now() >= drain_until)) {
      // Calls still queued for what is left are dropped, not run.
      for (const auto& [id, c] : conns_) *c->gone = true;
      return;
    }
    const int n =
        ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()),
                     ready_.empty() ? 50 : 0);
    for (int i = 0; i < n; ++i) {
      const uint64_t id = events[i].data.u64;
      if (id == kListenId) {
        AcceptAll();
      } else if (id == kWakeId) {
        uint64_t count;
        (void)!::read(wake_fd_, &count, sizeof count);
        OnCompletions();
      } else if (auto it = conns_.find(id); it != conns_.end()) {
        OnEvent(*it->second, events[i].events);
      }
    }
    RunReady();
    const Clock::time_point now = Clock::now();
    if (now >= next_sweep) {
      Sweep(now);
      TrimPeers(now);
      next_sweep = now + kSweepEvery;
    }
  }
}

void EpollServer::AcceptAll() {
  // The listening socket is level-triggered: what is left is accepted on the
  // next turn.
  for (int accepted = 0; accepted < kAcceptBatch; ++accepted) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&addr),
                             &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if ((errno == EMFILE || errno == ENFILE) && reserve_fd_ >= 0) {
        // Out of descriptors: accept and close one so the listen queue does
        // not spin the loop, then keep the reserve for next time.
        ::close(reserve_fd_);
        const int victim =
            ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (victim >= 0) ::close(victim);
        reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (rejected_no_fds_) rejected_no_fds_->Inc();
        LENS_LOG(WARN) << "http server: out of file descriptors; "
                          "refused a connection";
      }
      return TrimPeers(Clock::now());
    }
    // Responses leave in one write; without Nagle the last segment of a
    // large one does not wait for the client's delayed ACK.
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::string peer = http::PeerAddress(addr);
    const Clock::time_point now = Clock::now();
    if (!Admit(peer, now)) {
      if (!tls_) {
        const std::string bytes =
            ErrorBytes(503, "too many connections; try again later", false);
        (void)!::send(fd, bytes.data(), bytes.size(),
                      MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      ::close(fd);
      continue;
    }
    SSL* ssl = tls_ ? SSL_new(tls_->get()) : nullptr;
    const uint64_t id = next_id_++;
    auto conn = std::make_unique<Connection>(fd, id, peer, ssl);
    conn->deadline = now + options_.read_timeout;
    conn->waiting_since = now;
    conn->write_progress = now;
    ++per_peer_[peer];
    if (accepted_) accepted_->Inc();
    Connection& c = *conn;
    conns_.emplace(id, std::move(conn));
    epoll_event ev{};
    ev.events = c.Interest();
    ev.data.u64 = id;
    c.registered = ev.events;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    SetGauges();
  }
}

// Whether a connection from `peer` may be accepted: at the total cap only
// by closing a stalled connection; at the peer cap only while some of the
// peer's connections wait for a request (TrimPeers() closes them once they
// are stalled). False when every candidate is busy with a request.
bool EpollServer::Admit(const std::string& peer, Clock::time_point now) {
  if (static_cast<int>(conns_.size()) >= options_.max_connections &&
      Evict(std::nullopt, 1, now) == 0 && !EvictFromHog()) {
    if (rejected_at_total_cap_) rejected_at_total_cap_->Inc();
    return false;
  }
  auto it = per_peer_.find(peer);
  if (it == per_peer_.end() || it->second < options_.max_connections_per_peer)
    return true;
  // A connection waiting for its request can be evicted once stalled (it
  // becomes so after the grace period); one writing only when its reader
  // has stalled already.
  for (const auto& [id, c] : conns_) {
    if (c->peer != peer) continue;
    if (http::Waiting(*c)) return true;
    if (c->phase == Phase::kWrite && http::StalledSince(*c, now, kStallGrace))
      return true;
  }
  if (rejected_at_peer_cap_) rejected_at_peer_cap_->Inc();
  return false;
}

// At the total cap with nothing stalled yet: a client over its own cap (let
// in while its other connections could still make room) gives up its oldest
// connection that has sent nothing (the one that had the most time to), so a
// burst from one address cannot hold every slot for the grace period.
// Whether one was closed.
bool EpollServer::EvictFromHog() {
  const std::string* hog = nullptr;
  int most = options_.max_connections_per_peer;
  for (const auto& [peer, count] : per_peer_) {
    if (count > most) {
      most = count;
      hog = &peer;
    }
  }
  if (hog == nullptr) return false;
  const Connection* oldest = nullptr;
  for (const auto& [id, c] : conns_) {
    if (c->peer != *hog || c->served || c->request_bytes != 0 ||
        (c->phase != Phase::kHead && c->phase != Phase::kHandshake)) {
      continue;
    }
    // Bytes in its socket not read yet: a request on its way, not an idle
    // connection, unless its client has reset it (its event not handled
    // yet): then it is the first to go.
    int pending = 0;
    if (::ioctl(c->fd, FIONREAD, &pending) != 0 || pending > 0) {
      pollfd p{c->fd, POLLRDHUP, 0};
      if (::poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0) {
        Close(id, CloseReason::kPeer);
        return true;
      }
      continue;
    }
    if (oldest == nullptr || c->id < oldest->id) oldest = c.get();
  }
  if (oldest == nullptr) return false;
  Close(oldest->id, CloseReason::kEvicted);
  return true;
}

// Closes up to `n` stalled connections (of `peer`, or of anyone), the most
// useless first; returns how many.
size_t EpollServer::Evict(const std::optional<std::string>& peer, size_t n,
                          Clock::time_point now) {
  std::vector<http::Stalled> stalled;
  for (const auto& [id, c] : conns_) {
    if (peer && c->peer != *peer) continue;
    if (c->phase == Phase::kWrite) http::NoteReaderProgress(*c, now);
    // Among its own connections a client's stalled reader goes sooner.
    auto s = http::StalledSince(
        *c, now, peer ? Clock::duration(kStallGrace) : kWriterGrace);
    if (!s) continue;
    if (c->phase != Phase::kWrite && c->phase != Phase::kLinger) {
      // Its request is in the socket, not read yet (the loop was busy): not
      // an idle client.
      int pending = 0;
      if (::ioctl(c->fd, FIONREAD, &pending) != 0 || pending > 0) continue;
    }
    stalled.push_back(*s);
  }
  n = std::min(n, stalled.size());
  std::partial_sort(stalled.begin(), stalled.begin() + static_cast<long>(n),
                    stalled.end());
  for (size_t i = 0; i < n; ++i) Close(stalled[i].id, CloseReason::kEvicted);
  return n;
}

// Brings every peer over its cap back to it, as far as stalled connections
// allow.
void EpollServer::TrimPeers(Clock::time_point now) {
  std::vector<std::pair<std::string, int>> over;
  for (const auto& [peer, count] : per_peer_)
    if (count > options_.max_connections_per_peer)
      over.emplace_back(peer, count);
  for (const auto& [peer, count] : over) {
    Evict(peer, static_cast<size_t>(count - options_.max_connections_per_peer),
          now);
  }
}

void EpollServer::Sweep(Clock::time_point now) {
  std::vector<uint64_t> expired;
  for (const auto& [id, c] : conns_) {
    if (c->phase == Phase::kWrite) http::NoteReaderProgress(*c, now);
    if (c->phase != Phase::kHandler && now >= c->deadline)
      expired.push_back(id);
  }
  for (uint64_t id : expired) {
    Connection& c = *conns_.at(id);
    CloseReason why = CloseReason::kReadTimeout;
    if (c.phase == Phase::kWrite) why = CloseReason::kWriteTimeout;
    if (c.phase == Phase::kLinger) why = CloseReason::kDone;
    if (c.phase == Phase::kHead && c.request_bytes == 0 && c.served)
      why = CloseReason::kIdleTimeout;
    if (!tls_ && ((c.phase == Phase::kHead && c.request_bytes > 0) ||
                  c.phase == Phase::kBody)) {
      // Best effort: tell an honest slow client why.
      const std::string bytes =
          ErrorBytes(408,
                     "request not received within " +
                         std::to_string(options_.read_timeout.count()) + "s",
                     false);
      (void)!::send(c.fd, bytes.data(), bytes.size(),
                    MSG_NOSIGNAL | MSG_DONTWAIT);
      CountRefused(408);
    }
    Close(id, why);
  }
}

void EpollServer::Close(uint64_t id, CloseReason why) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  *it->second->gone = true;
  if (auto& c = closed_[static_cast<int>(why)]) c->Inc();
  auto peer = per_peer_.find(it->second->peer);
  if (peer != per_peer_.end() && --peer->second <= 0) per_peer_.erase(peer);
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second->fd, nullptr);
  conns_.erase(it);
  SetGauges();
}

void EpollServer::UpdateInterest(Connection& c) {
  const uint32_t want = c.Interest();
  if (want == c.registered) return;
  epoll_event ev{};
  ev.events = want;
  ev.data.u64 = c.id;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
  c.registered = want;
}

}  // namespace lens::http
