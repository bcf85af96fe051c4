// HttpServer: one epoll thread owns every connection (accept, TLS, reading
// under limits, auth and routing, writing); handlers run on a worker pool plus
// one thread reserved for the priority paths. No client can hold a thread:
// a slow or idle one costs a file descriptor and a bounded buffer, until its
// deadline or a newer connection's need closes it (docs/http.md).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/ssl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/constant_time.h"
#include "http/connection.h"
#include "http/listen_address.h"
#include "lens/http.h"
#include "lens/log.h"

namespace lens {
namespace {

using http::Clock;
using http::Connection;
using http::IoResult;
using http::Phase;

constexpr uint64_t kListenId = 0;
constexpr uint64_t kWakeId = 1;
constexpr size_t kReadChunk = 16 << 10;
constexpr auto kLinger = std::chrono::seconds(2);
constexpr auto kSweepEvery = std::chrono::milliseconds(100);

const char* Reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return status < 400 ? "OK" : "Error";
  }
}

// Header values with CR/LF removed, so a handler cannot split the response.
std::string HeaderSafe(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '\r' && c != '\n') out += c;
  return out;
}

std::string Serialize(const HttpResponse& r, bool head_only, bool keep_alive) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " +
                    Reason(r.status) + "\r\n";
  if (!r.content_type.empty())
    out += "Content-Type: " + HeaderSafe(r.content_type) + "\r\n";
  out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  for (const auto& [k, v] : r.headers)
    out += HeaderSafe(k) + ": " + HeaderSafe(v) + "\r\n";
  out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  if (!head_only) out += r.body;
  return out;
}

std::string ErrorBytes(int status, std::string_view message, bool keep_alive,
                       bool head_only = false) {
  HttpResponse r;
  RespondError(status, message, &r);
  return Serialize(r, head_only, keep_alive);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "Bearer <token>": the scheme in any case, one or more spaces.
bool Authorized(std::string_view header, std::string_view token) {
  const size_t sp = header.find(' ');
  if (sp == std::string_view::npos || Lower(header.substr(0, sp)) != "bearer")
    return false;
  std::string_view credential = header.substr(sp);
  while (!credential.empty() && credential.front() == ' ')
    credential.remove_prefix(1);
  while (!credential.empty() && credential.back() == ' ')
    credential.remove_suffix(1);
  return ConstantTimeEquals(credential, token);
}

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
  rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? want : std::min(want, rl.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &rl);
}

struct Task {
  uint64_t conn_id = 0;
  HttpRequest request;
  std::shared_ptr<const HttpHandler> handler;
  bool head_only = false;
  bool keep_alive = true;
};

// A blocking queue of handler calls, served by its own threads.
class WorkerPool {
 public:
  using Run = std::function<void(Task)>;
  WorkerPool(int threads, Run run) : run_(std::move(run)), threads_(threads) {}
  ~WorkerPool() { Stop(); }
  void Start() {
    for (int i = 0; i < threads_; ++i) workers_.emplace_back([this] { Loop(); });
  }
  void Push(Task task) {
    {
      std::lock_guard lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }
  void Stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_)
      if (t.joinable()) t.join();
    workers_.clear();
  }

 private:
  void Loop() {
    for (;;) {
      Task task;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      run_(std::move(task));
    }
  }
  const Run run_;
  const int threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> tasks_;  // GUARDED_BY(mu_)
  bool stopping_ = false;   // GUARDED_BY(mu_)
  std::vector<std::thread> workers_;
};

class EpollServer final : public HttpServer {
 public:
  EpollServer(HttpServerOptions options, int listen_fd,
              http::ListenAddress address,
              std::unique_ptr<http::TlsContext> tls)
      : options_(std::move(options)),
        limits_{options_.max_request_line_bytes, options_.max_header_bytes,
                100, options_.max_body_bytes},
        listen_fd_(listen_fd),
        address_(std::move(address)),
        tls_(std::move(tls)),
        public_paths_(options_.public_paths.begin(),
                      options_.public_paths.end()),
        priority_paths_(options_.priority_paths.begin(),
                        options_.priority_paths.end()),
        workers_(options_.threads, [this](Task t) { RunTask(std::move(t)); }),
        priority_(1, [this](Task t) { RunTask(std::move(t)); }) {}

  ~EpollServer() override { Stop(); }

  void Handle(std::string method, std::string path,
              HttpHandler handler) override {
    std::lock_guard lock(routes_mu_);
    routes_[std::move(path)][std::move(method)] =
        std::make_shared<const HttpHandler>(std::move(handler));
  }

  Status Start() override;
  void Stop() override;

  int port() const override { return address_.port; }
  std::string url() const override {
    std::string host = address_.host;
    if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
    if (host == "::") host = "::1";
    if (host.find(':') != std::string::npos) host = "[" + host + "]";
    return std::string(tls_ ? "https://" : "http://") + host + ":" +
           std::to_string(address_.port);
  }

 private:
  void Loop();
  void AcceptAll();
  bool Admit(const std::string& peer);
  void OnEvent(Connection& c, uint32_t events);
  void OnReadable(Connection& c);
  void Advance(Connection& c);
  void OnHead(Connection& c);
  void Dispatch(Connection& c);
  void RespondNow(Connection& c, std::string bytes, bool close);
  void OnWritable(Connection& c);
  void AfterResponse(Connection& c);
  void OnCompletions();
  void Sweep(Clock::time_point now);
  void Close(uint64_t id);
  void UpdateInterest(Connection& c);
  void RunTask(Task task);

  const HttpServerOptions options_;
  const http::RequestLimits limits_;
  int listen_fd_;
  const http::ListenAddress address_;
  const std::unique_ptr<http::TlsContext> tls_;
  const std::set<std::string> public_paths_;
  const std::set<std::string> priority_paths_;

  std::mutex routes_mu_;
  std::unordered_map<std::string,
                     std::map<std::string, std::shared_ptr<const HttpHandler>>>
      routes_;  // GUARDED_BY(routes_mu_)

  // Owned by the loop thread.
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  int reserve_fd_ = -1;  // given up to accept-and-close when out of fds
  uint64_t next_id_ = 2;
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> conns_;
  std::unordered_map<std::string, int> per_peer_;

  // Finished responses, handed from workers to the loop.
  struct Done {
    uint64_t conn_id;
    std::string bytes;
    bool close;
  };
  std::mutex done_mu_;
  std::vector<Done> done_;  // GUARDED_BY(done_mu_)

  WorkerPool workers_;
  WorkerPool priority_;
  std::atomic<bool> started_{false};
  std::atomic<bool> stopping_{false};
  std::mutex stop_mu_;
  std::thread loop_;
};

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
      for (uint64_t id : idle) Close(id);
    }
    if (draining && (conns_.empty() || Clock::now() >= drain_until)) return;
    const int n = ::epoll_wait(epoll_fd_, events.data(),
                               static_cast<int>(events.size()), 50);
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
    const Clock::time_point now = Clock::now();
    if (now >= next_sweep) {
      Sweep(now);
      next_sweep = now + kSweepEvery;
    }
  }
}

void EpollServer::AcceptAll() {
  for (;;) {
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
        const int victim = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (victim >= 0) ::close(victim);
        reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        LENS_LOG(WARN) << "http server: out of file descriptors; "
                             "refused a connection";
      }
      return;
    }
    std::string peer = PeerAddress(addr);
    if (!Admit(peer)) {
      if (!tls_) {
        const std::string bytes = ErrorBytes(
            503, "too many connections; try again later", false);
        (void)!::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      ::close(fd);
      continue;
    }
    SSL* ssl = tls_ ? SSL_new(tls_->get()) : nullptr;
    const uint64_t id = next_id_++;
    auto conn = std::make_unique<Connection>(fd, id, peer, ssl);
    const Clock::time_point now = Clock::now();
    conn->deadline = now + options_.read_timeout;
    conn->waiting_since = now;
    ++per_peer_[peer];
    Connection& c = *conn;
    conns_.emplace(id, std::move(conn));
    epoll_event ev{};
    ev.events = c.Interest();
    ev.data.u64 = id;
    c.registered = ev.events;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  }
}

// Makes room for a connection from `peer` under both caps, closing the
// connection that has waited longest for its request where needed; false
// when every candidate is busy with a request.
bool EpollServer::Admit(const std::string& peer) {
  auto evict_oldest = [&](bool same_peer) {
    Connection* oldest = nullptr;
    for (const auto& [id, c] : conns_) {
      if (same_peer && c->peer != peer) continue;
      const bool waiting = c->phase == Phase::kHandshake ||
                           c->phase == Phase::kHead ||
                           c->phase == Phase::kBody || c->phase == Phase::kLinger;
      if (waiting && (!oldest || c->waiting_since < oldest->waiting_since))
        oldest = c.get();
    }
    if (oldest == nullptr) return false;
    Close(oldest->id);
    return true;
  };
  auto it = per_peer_.find(peer);
  if (it != per_peer_.end() && it->second >= options_.max_connections_per_peer &&
      !evict_oldest(true)) {
    return false;
  }
  if (static_cast<int>(conns_.size()) >= options_.max_connections &&
      !evict_oldest(false)) {
    return false;
  }
  return true;
}

void EpollServer::OnEvent(Connection& c, uint32_t events) {
  const uint64_t id = c.id;
  if (events & (EPOLLERR | EPOLLHUP)) return Close(id);
  if (c.phase == Phase::kWrite || c.pending_output()) {
    OnWritable(c);
    if (!conns_.count(id)) return;  // closed
  }
  if (c.phase != Phase::kWrite && c.phase != Phase::kHandler) OnReadable(c);
}

void EpollServer::OnReadable(Connection& c) {
  const uint64_t id = c.id;
  if (c.phase == Phase::kHandshake) {
    const IoResult r = c.Handshake();
    if (r == IoResult::kClosed || r == IoResult::kError) return Close(id);
    if (r == IoResult::kWouldBlock) return UpdateInterest(c);
    c.phase = Phase::kHead;
  }
  // A bounded number of reads per event, so one fast sender cannot hold the
  // loop (epoll reports the rest next time).
  for (int reads = 0; reads < 64 && (c.phase == Phase::kHead ||
                                     c.phase == Phase::kBody ||
                                     c.phase == Phase::kLinger);
       ++reads) {
    const IoResult r = c.Read(kReadChunk);
    if (r == IoResult::kWouldBlock) break;
    if (r != IoResult::kProgress) return Close(id);
    if (c.phase == Phase::kLinger) {
      c.in.clear();
      continue;
    }
    Advance(c);
    if (!conns_.count(id)) return;
  }
  UpdateInterest(c);
}

// Moves a connection on with the bytes it has: head, then body, then handler.
void EpollServer::Advance(Connection& c) {
  if (c.phase == Phase::kHead) {
    if (c.in.empty()) return;
    if (!c.request_started) {
      c.request_started = true;
      c.deadline = Clock::now() + options_.read_timeout;
    }
    auto scan = c.scanner.Scan(&c.in, limits_);
    if (auto* e = std::get_if<http::ParseError>(&scan))
      return RespondNow(c, ErrorBytes(e->status, e->message, false), true);
    const size_t head_bytes = std::get<size_t>(scan);
    if (head_bytes == 0) return;
    auto parsed = http::ParseHead(std::string_view(c.in).substr(0, head_bytes),
                                  limits_);
    c.in.erase(0, head_bytes);
    if (auto* e = std::get_if<http::ParseError>(&parsed))
      return RespondNow(c, ErrorBytes(e->status, e->message, false), true);
    c.head = std::move(std::get<http::RequestHead>(parsed));
    OnHead(c);
    return;
  }
  if (c.phase == Phase::kBody && c.in.size() >= c.head.content_length)
    Dispatch(c);
}

// Auth and routing as soon as the head is in: a request that will be refused
// never has its body read.
void EpollServer::OnHead(Connection& c) {
  const http::RequestHead& h = c.head;
  const bool has_body = h.content_length > 0;
  if (!options_.bearer_token.empty() && !public_paths_.count(h.path)) {
    auto auth = h.headers.find("authorization");
    if (auth == h.headers.end() ||
        !Authorized(auth->second, options_.bearer_token)) {
      HttpResponse r;
      RespondError(401,
                   auth == h.headers.end() ? "missing bearer token"
                                           : "invalid bearer token",
                   &r);
      r.headers.emplace_back("WWW-Authenticate", "Bearer");
      const bool keep = h.keep_alive && !has_body;
      return RespondNow(c, Serialize(r, h.method == "HEAD", keep), !keep);
    }
  }
  std::string allow;
  {
    std::lock_guard lock(routes_mu_);
    auto route = routes_.find(h.path);
    if (route != routes_.end()) {
      auto m = route->second.find(h.method);
      if (m == route->second.end() && h.method == "HEAD")
        m = route->second.find("GET");
      if (m != route->second.end()) {
        c.handler = m->second;
      } else {
        for (const auto& [name, _] : route->second)
          allow += (allow.empty() ? "" : ", ") + name;
      }
    }
  }
  c.head_only = h.method == "HEAD";
  if (c.handler == nullptr) {
    const bool keep = h.keep_alive && !has_body;
    if (allow.empty()) {
      return RespondNow(
          c, ErrorBytes(404, "no such path: " + h.path, keep, c.head_only),
          !keep);
    }
    HttpResponse r;
    RespondError(405,
                 h.method + " not allowed on " + h.path + " (allowed: " +
                     allow + ")",
                 &r);
    r.headers.emplace_back("Allow", allow);
    return RespondNow(c, Serialize(r, c.head_only, keep), !keep);
  }
  c.phase = Phase::kBody;
  if (has_body && h.expect_continue && c.in.size() < h.content_length) {
    c.out += "HTTP/1.1 100 Continue\r\n\r\n";
    if (c.Flush() == IoResult::kError) return Close(c.id);
  }
  Advance(c);
}

void EpollServer::Dispatch(Connection& c) {
  Task task;
  task.conn_id = c.id;
  task.handler = std::move(c.handler);
  task.head_only = c.head_only;
  task.keep_alive = c.head.keep_alive;
  HttpRequest& req = task.request;
  req.method = std::move(c.head.method);
  req.path = std::move(c.head.path);
  req.query = std::move(c.head.query);
  req.headers = std::move(c.head.headers);
  req.body = c.in.substr(0, c.head.content_length);
  c.in.erase(0, c.head.content_length);
  req.remote_addr = c.peer;
  c.phase = Phase::kHandler;
  UpdateInterest(c);
  (priority_paths_.count(req.path) ? priority_ : workers_).Push(std::move(task));
}

void EpollServer::RunTask(Task task) {
  HttpResponse out;
  try {
    (*task.handler)(task.request, &out);
  } catch (const std::exception& e) {
    LENS_LOG(ERROR).Field("path", task.request.path).Field("error", e.what())
        << "http handler failed";
    out = HttpResponse();
    RespondError(500, "internal error", &out);
  }
  const bool keep = task.keep_alive && !stopping_;
  Done done{task.conn_id, Serialize(out, task.head_only, keep), !keep};
  {
    std::lock_guard lock(done_mu_);
    done_.push_back(std::move(done));
  }
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void EpollServer::OnCompletions() {
  std::vector<Done> done;
  {
    std::lock_guard lock(done_mu_);
    done.swap(done_);
  }
  for (Done& d : done) {
    auto it = conns_.find(d.conn_id);
    if (it == conns_.end()) continue;  // the client went away
    RespondNow(*it->second, std::move(d.bytes), d.close);
  }
}

void EpollServer::RespondNow(Connection& c, std::string bytes, bool close) {
  c.out += bytes;
  c.close_after_write = close;
  c.phase = Phase::kWrite;
  c.deadline = Clock::now() + options_.write_timeout;
  OnWritable(c);
}

void EpollServer::OnWritable(Connection& c) {
  const IoResult r = c.Flush();
  if (r == IoResult::kError || r == IoResult::kClosed) return Close(c.id);
  if (r == IoResult::kProgress && c.phase == Phase::kWrite) return AfterResponse(c);
  UpdateInterest(c);
}

void EpollServer::AfterResponse(Connection& c) {
  const uint64_t id = c.id;
  if (stopping_) return Close(id);
  if (c.close_after_write) {
    if (tls_) return Close(c.id);
    // Lingering close: the client may still be sending a body we refused;
    // closing with unread bytes would reset the connection before it reads
    // the answer.
    ::shutdown(c.fd, SHUT_WR);
    c.phase = Phase::kLinger;
    c.in.clear();
    c.deadline = Clock::now() + kLinger;
    return OnReadable(c);
  }
  const Clock::time_point now = Clock::now();
  c.phase = Phase::kHead;
  c.scanner.Reset();
  c.head = http::RequestHead();
  c.request_started = false;
  c.deadline = now + options_.idle_timeout;
  c.waiting_since = now;
  Advance(c);  // a pipelined request already read
  auto it = conns_.find(id);
  if (it != conns_.end() && it->second->phase == Phase::kHead)
    OnReadable(*it->second);
}

void EpollServer::Sweep(Clock::time_point now) {
  std::vector<uint64_t> expired;
  for (const auto& [id, c] : conns_)
    if (c->phase != Phase::kHandler && now >= c->deadline) expired.push_back(id);
  for (uint64_t id : expired) {
    Connection& c = *conns_.at(id);
    if (!tls_ && ((c.phase == Phase::kHead && c.request_started && !c.in.empty()) ||
                  c.phase == Phase::kBody)) {
      // Best effort: tell an honest slow client why.
      const std::string bytes =
          ErrorBytes(408, "request not received within " +
                              std::to_string(options_.read_timeout.count()) +
                              "s",
                     false);
      (void)!::send(c.fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    Close(id);
  }
}

void EpollServer::Close(uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  auto peer = per_peer_.find(it->second->peer);
  if (peer != per_peer_.end() && --peer->second <= 0) per_peer_.erase(peer);
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second->fd, nullptr);
  conns_.erase(it);
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

// A listening socket for `address` (numeric or a name of this machine).
StatusOr<int> Listen(http::ListenAddress* address, const std::string& text) {
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
    return UnavailableError("cannot listen on " + text + ": " +
                            std::strerror(err) +
                            (err == EADDRINUSE ? " (another process holds it)"
                                               : ""));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  address->port = ntohs(bound.ss_family == AF_INET
                            ? reinterpret_cast<sockaddr_in&>(bound).sin_port
                            : reinterpret_cast<sockaddr_in6&>(bound).sin6_port);
  return fd;
}

}  // namespace

HttpServer::~HttpServer() = default;

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(
    const HttpServerOptions& options) {
  LENS_RETURN_IF_ERROR(options.Validate());
  LENS_ASSIGN_OR_RETURN(http::ListenAddress address,
                        http::ParseListenAddress(options.listen));
  std::unique_ptr<http::TlsContext> tls;
  if (!options.tls_cert_file.empty()) {
    LENS_ASSIGN_OR_RETURN(tls, http::TlsContext::Load(options.tls_cert_file,
                                                      options.tls_key_file));
  }
  RaiseFileLimit(options.max_connections);
  LENS_ASSIGN_OR_RETURN(const int fd, Listen(&address, options.listen));
  return std::unique_ptr<HttpServer>(
      new EpollServer(options, fd, std::move(address), std::move(tls)));
}

}  // namespace lens
