// HttpServer: the request flow of the event loop (epoll_server.h): reading
// under limits, auth and routing as soon as a head is in, handlers on the
// worker threads, responses, keep-alive. No client can hold a thread: a slow
// or idle one costs a file descriptor and a bounded buffer (docs/http.md).
#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/ssl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <string_view>
#include <vector>

#include "http/epoll_server.h"
#include "http/socket.h"
#include "http/wire.h"
#include "lens/log.h"

namespace lens {
namespace http {
namespace {

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> segments;
  size_t start = 0;
  while (true) {
    const size_t slash = path.find('/', start);
    segments.emplace_back(path.substr(start, slash - start));
    if (slash == std::string_view::npos) return segments;
    start = slash + 1;
  }
}

bool IsCapture(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

// Whether `path` (already split) matches `pattern`; fills the captures.
bool MatchPattern(const std::vector<std::string>& pattern,
                  const std::vector<std::string>& path,
                  std::map<std::string, std::string>* params) {
  if (pattern.size() != path.size()) return false;
  std::map<std::string, std::string> captured;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (IsCapture(pattern[i])) {
      if (path[i].empty()) return false;
      captured[pattern[i].substr(1, pattern[i].size() - 2)] = path[i];
    } else if (pattern[i] != path[i]) {
      return false;
    }
  }
  *params = std::move(captured);
  return true;
}

}  // namespace

void EpollServer::HandlePattern(std::string method, std::string pattern,
                                HttpHandler handler) {
  auto shared = std::make_shared<const HttpHandler>(std::move(handler));
  std::vector<std::string> segments = SplitPath(pattern);
  std::lock_guard lock(routes_mu_);
  for (PatternRoute& route : patterns_) {
    if (route.segments == segments) {
      route.methods[std::move(method)] = std::move(shared);
      return;
    }
  }
  PatternRoute route{pattern, std::move(segments), {}};
  route.methods[std::move(method)] = std::move(shared);
  patterns_.push_back(std::move(route));
}

void EpollServer::OnEvent(Connection& c, uint32_t events) {
  if (events & (EPOLLERR | EPOLLHUP)) {
    // After a lingering close the peer's FIN is the expected end.
    return Close(c.id, c.phase == Phase::kLinger ? CloseReason::kDone
                                                 : CloseReason::kPeer);
  }
  Pump(c);
}

void EpollServer::Pump(Connection& c) {
  const uint64_t id = c.id;
  for (int step = 0; step < kTurnSteps; ++step) {
    switch (c.phase) {
      case Phase::kHandler:
        return UpdateInterest(c);
      case Phase::kHandshake: {
        if (c.request_bytes == 0) {
          c.request_bytes = 1;  // handshake bytes came (OpenSSL reads them)
          c.request_start = Clock::now();
        }
        const IoResult r = c.Handshake();
        if (r == IoResult::kClosed || r == IoResult::kError)
          return Close(id, CloseReason::kPeer);
        if (r == IoResult::kWouldBlock) return UpdateInterest(c);
        c.phase = Phase::kHead;
        continue;
      }
      case Phase::kWrite: {
        const IoResult r = c.Flush();
        if (r == IoResult::kError || r == IoResult::kClosed)
          return Close(id, CloseReason::kPeer);
        if (r == IoResult::kWouldBlock) return UpdateInterest(c);
        if (!FinishResponse(c)) return;
        continue;
      }
      case Phase::kLinger: {
        const IoResult r = c.Read(kReadChunk);
        c.in.clear();
        if (r == IoResult::kWouldBlock) return UpdateInterest(c);
        if (r != IoResult::kProgress) return Close(id, CloseReason::kDone);
        continue;
      }
      case Phase::kHead:
      case Phase::kBody: {
        if (c.pending_output()) {  // "100 Continue"
          const IoResult r = c.Flush();
          if (r == IoResult::kError || r == IoResult::kClosed)
            return Close(id, CloseReason::kPeer);
        }
        const Moved moved = Advance(c);
        if (moved == Moved::kClosed) return;
        if (moved == Moved::kYes) continue;
        // Only what the request in progress still needs is read: requests
        // pipelined behind it stay in the socket (at most one read's worth
        // is read ahead).
        const IoResult r = ReadMore(c);
        if (r == IoResult::kWouldBlock) return UpdateInterest(c);
        if (r != IoResult::kProgress) return Close(id, CloseReason::kPeer);
        continue;
      }
    }
  }
  ready_.push_back(id);
  UpdateInterest(c);
}

IoResult EpollServer::ReadMore(Connection& c) {
  const size_t before = c.in.size();
  const IoResult r = c.Read(kReadChunk);
  if (r != IoResult::kProgress) return r;
  c.last_read = Clock::now();
  if (c.request_bytes == 0) {
    // The first bytes of a request: on a kept-alive connection its read
    // deadline starts now (a new one's runs from the accept).
    c.request_start = Clock::now();
    if (c.served) c.deadline = c.request_start + options_.read_timeout;
  }
  c.request_bytes += c.in.size() - before;
  return r;
}

// Moves a connection on with the bytes it has: head, then body, then handler.
EpollServer::Moved EpollServer::Advance(Connection& c) {
  if (c.phase == Phase::kHead) {
    if (c.in.empty()) return Moved::kNeedBytes;
    auto scan = c.scanner.Scan(&c.in, limits_);
    if (auto* e = std::get_if<http::ParseError>(&scan)) {
      CountRefused(e->status);
      RespondNow(c, ErrorBytes(e->status, e->message, false), true);
      return Moved::kYes;
    }
    const size_t head_bytes = std::get<size_t>(scan);
    if (head_bytes == 0) return Moved::kNeedBytes;
    auto parsed =
        http::ParseHead(std::string_view(c.in).substr(0, head_bytes), limits_);
    c.in.erase(0, head_bytes);
    if (auto* e = std::get_if<http::ParseError>(&parsed)) {
      CountRefused(e->status);
      RespondNow(c, ErrorBytes(e->status, e->message, false), true);
      return Moved::kYes;
    }
    c.head = std::move(std::get<http::RequestHead>(parsed));
    OnHead(c);
    return Moved::kYes;
  }
  if (c.phase == Phase::kBody && c.in.size() >= c.head.content_length) {
    Dispatch(c);
    return Moved::kYes;
  }
  return Moved::kNeedBytes;
}

void EpollServer::OnHead(Connection& c) {
  const http::RequestHead& h = c.head;
  const bool has_body = h.content_length > 0;
  if (!options_.bearer_token.empty() && !public_paths_.count(h.path)) {
    auto auth = h.headers.find("authorization");
    if (auth == h.headers.end() ||
        !http::Authorized(auth->second, options_.bearer_token)) {
      HttpResponse r;
      RespondError(401,
                   auth == h.headers.end() ? "missing bearer token"
                                           : "invalid bearer token",
                   &r);
      r.headers.emplace_back("WWW-Authenticate", "Bearer");
      CountRefused(401);
      const bool keep = h.keep_alive && !has_body;
      return RespondNow(c, Serialize(r, h.method == "HEAD", keep), !keep);
    }
  }
  std::string allow;
  c.path_params.clear();
  c.route.clear();
  {
    std::lock_guard lock(routes_mu_);
    const std::map<std::string, std::shared_ptr<const HttpHandler>>* methods =
        nullptr;
    auto route = routes_.find(h.path);
    if (route != routes_.end()) {
      methods = &route->second;
      c.route = h.path;
    } else if (!patterns_.empty()) {
      // Split before decoding, so an encoded '/' (%2F) stays inside its
      // segment: "/api/v1/workloads/%2Fdata%2Ftrain.log" has one uid.
      std::vector<std::string> path = SplitPath(h.raw_path);
      for (std::string& segment : path) segment = PercentDecode(segment, false);
      for (const PatternRoute& pattern : patterns_) {
        if (MatchPattern(pattern.segments, path, &c.path_params)) {
          methods = &pattern.methods;
          c.route = pattern.pattern;
          break;
        }
      }
    }
    if (methods != nullptr) {
      auto m = methods->find(h.method);
      if (m == methods->end() && h.method == "HEAD") m = methods->find("GET");
      if (m != methods->end()) {
        c.handler = m->second;
      } else {
        for (const auto& [name, _] : *methods)
          allow += (allow.empty() ? "" : ", ") + name;
      }
    }
  }
  c.head_only = h.method == "HEAD";
  if (c.handler == nullptr) {
    const bool keep = h.keep_alive && !has_body;
    CountRefused(allow.empty() ? 404 : 405);
    if (allow.empty()) {
      return RespondNow(
          c, ErrorBytes(404, "no such path: " + h.path, keep, c.head_only),
          !keep);
    }
    HttpResponse r;
    RespondError(
        405,
        h.method + " not allowed on " + h.path + " (allowed: " + allow + ")",
        &r);
    r.headers.emplace_back("Allow", allow);
    return RespondNow(c, Serialize(r, c.head_only, keep), !keep);
  }
  if (has_body) {
    c.body_reservation = ReserveBody(c.peer, h.content_length);
    if (!c.body_reservation && EvictStalledBodies(c.id) > 0)
      c.body_reservation = ReserveBody(c.peer, h.content_length);
    if (!c.body_reservation) {
      CountAnswer("unrouted", 503);
      if (auto& n = refused_[static_cast<int>(Refusal::kBodiesInFlight)])
        n->Inc();
      c.handler.reset();
      HttpResponse r;
      RespondError(503, "too many request bodies in flight; retry shortly", &r);
      r.headers.emplace_back("Retry-After", "1");
      return RespondNow(c, Serialize(r, c.head_only, false), true);
    }
    // One allocation of the body's size: appending would double it.
    c.in.reserve(h.content_length);
  }
  c.phase = Phase::kBody;
  if (has_body && h.expect_continue && c.in.size() < h.content_length)
    c.out += "HTTP/1.1 100 Continue\r\n\r\n";  // Pump() writes it
}

void EpollServer::Dispatch(Connection& c) {
  Task task;
  task.conn_id = c.id;
  task.handler = std::move(c.handler);
  task.route = std::move(c.route);
  task.head_only = c.head_only;
  task.keep_alive = c.head.keep_alive;
  HttpRequest& req = task.request;
  req.method = std::move(c.head.method);
  req.path = std::move(c.head.path);
  req.query = std::move(c.head.query);
  req.headers = std::move(c.head.headers);
  if (c.in.size() == c.head.content_length) {
    req.body = std::move(c.in);
    c.in = std::string();
  } else {
    req.body = c.in.substr(0, c.head.content_length);
    // What follows (a pipelined request) in a buffer of its own size: the
    // body's capacity is not kept for the connection's life.
    c.in = c.in.substr(c.head.content_length);
  }
  req.remote_addr = c.peer;
  req.path_params = std::move(c.path_params);
  task.gone = c.gone;
  task.body_reservation = std::move(c.body_reservation);
  WorkerPool& pool = priority_paths_.count(req.path) ? priority_ : workers_;
  if (!pool.Push(task)) {
    // Full: answered at once, so a burst costs a bounded queue and the
    // client knows when to come back.
    CountRefused(503);
    HttpResponse r;
    RespondError(503, "server busy: too many requests waiting; retry shortly",
                 &r);
    r.headers.emplace_back("Retry-After", "1");
    return RespondNow(c, Serialize(r, task.head_only, task.keep_alive),
                      !task.keep_alive);
  }
  c.phase = Phase::kHandler;
  SetGauges();
}

void EpollServer::RunTask(Task task) {
  if (task.gone && task.gone->load()) {
    if (dropped_) dropped_->Inc();
    return;  // the client went away while the call waited
  }
  HttpResponse out;
  const auto started = std::chrono::steady_clock::now();
  try {
    (*task.handler)(task.request, &out);
  } catch (const std::exception& e) {
    LENS_LOG(ERROR).Field("path", task.request.path).Field("error", e.what())
        << "http handler failed";
    out = HttpResponse();
    RespondError(500, "internal error", &out);
  }
  CountAnswer(
      task.route, out.status,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count());
  // The body's budget is free before the loop hears of the answer (it may
  // take the next body of the same client at once).
  task.request.body = std::string();
  task.body_reservation.reset();
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
  SetGauges();
  for (Done& d : done) {
    auto it = conns_.find(d.conn_id);
    if (it == conns_.end()) continue;  // the client went away
    RespondNow(*it->second, std::move(d.bytes), d.close);
    Pump(*it->second);
  }
}

void EpollServer::RunReady() {
  std::vector<uint64_t> ready;
  ready.swap(ready_);
  for (uint64_t id : ready)
    if (auto it = conns_.find(id); it != conns_.end()) Pump(*it->second);
}

size_t EpollServer::EvictStalledBodies(uint64_t except) {
  // Bodies that stopped coming hold budget others could use: those whose
  // last bytes came longer than the grace ago go, oldest first.
  const Clock::time_point now = Clock::now();
  std::vector<std::pair<Clock::time_point, uint64_t>> stalled;
  for (const auto& [id, c] : conns_) {
    if (id == except || c->phase != Phase::kBody || !c->body_reservation)
      continue;
    const Clock::time_point last = std::max(c->last_read, c->request_start);
    if (now - last >= kWriterGrace) stalled.emplace_back(last, id);
  }
  std::sort(stalled.begin(), stalled.end());
  for (const auto& [since, id] : stalled) Close(id, CloseReason::kEvicted);
  return stalled.size();
}

std::shared_ptr<void> EpollServer::ReserveBody(const std::string& peer,
                                               size_t bytes) {
  const size_t per_peer =
      std::max(options_.max_body_bytes_in_flight / 2, options_.max_body_bytes);
  {
    std::lock_guard lock(body_mu_);
    size_t& mine = body_by_peer_[peer];
    if (body_bytes_ + bytes > options_.max_body_bytes_in_flight ||
        mine + bytes > per_peer) {
      if (mine == 0) body_by_peer_.erase(peer);
      return nullptr;
    }
    body_bytes_ += bytes;
    mine += bytes;
  }
  // Not null (a null one reads as "refused"); the deleter only accounts.
  return std::shared_ptr<void>(this, [this, peer, bytes](void*) {
    std::lock_guard lock(body_mu_);
    body_bytes_ -= bytes;
    auto it = body_by_peer_.find(peer);
    if (it != body_by_peer_.end() && (it->second -= bytes) == 0)
      body_by_peer_.erase(it);
  });
}

void EpollServer::RespondNow(Connection& c, std::string bytes, bool close) {
  c.out += bytes;
  c.close_after_write = close;
  c.phase = Phase::kWrite;
  const Clock::time_point now = Clock::now();
  c.deadline = now + options_.write_timeout;
  c.write_progress = now;
}

bool EpollServer::FinishResponse(Connection& c) {
  if (stopping_) {
    Close(c.id, CloseReason::kStopping);
    return false;
  }
  if (c.close_after_write) {
    if (tls_) {
      Close(c.id, CloseReason::kDone);
      return false;
    }
    // Lingering close: the client may still be sending a body we refused;
    // closing with unread bytes would reset the connection before it reads
    // the answer.
    ::shutdown(c.fd, SHUT_WR);
    c.phase = Phase::kLinger;
    c.in.clear();
    c.deadline = Clock::now() + kLinger;
    return true;
  }
  const Clock::time_point now = Clock::now();
  c.phase = Phase::kHead;
  c.scanner.Reset();
  c.head = http::RequestHead();
  c.served = true;
  c.deadline = now + options_.idle_timeout;
  c.waiting_since = now;
  // Bytes of a pipelined request already read start the next one.
  c.request_bytes = c.in.size();
  c.request_start = now;
  if (!c.in.empty()) c.deadline = now + options_.read_timeout;
  return true;
}

}  // namespace http

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
  http::RaiseFileLimit(options.max_connections);
  LENS_ASSIGN_OR_RETURN(const int fd, http::Listen(&address, options.listen));
  return std::unique_ptr<HttpServer>(
      new http::EpollServer(options, fd, std::move(address), std::move(tls)));
}

}  // namespace lens
