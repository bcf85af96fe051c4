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
    if (c.request_bytes == 0) {
      c.request_bytes = 1;  // handshake bytes came (OpenSSL reads them)
      c.request_start = Clock::now();
    }
    const IoResult r = c.Handshake();
    if (r == IoResult::kClosed || r == IoResult::kError) return Close(id);
    if (r == IoResult::kWouldBlock) return UpdateInterest(c);
    c.phase = Phase::kHead;
  }
  // A bounded number of reads per event, so one fast sender cannot hold the
  // loop (epoll reports the rest next time).
  for (int reads = 0;
       reads < 64 && (c.phase == Phase::kHead || c.phase == Phase::kBody ||
                      c.phase == Phase::kLinger);
       ++reads) {
    const size_t before = c.in.size();
    const IoResult r = c.Read(kReadChunk);
    if (r == IoResult::kWouldBlock) break;
    if (r != IoResult::kProgress) return Close(id);
    if (c.phase == Phase::kLinger) {
      c.in.clear();
      continue;
    }
    if (c.request_bytes == 0) {
      // The first bytes of a request: on a kept-alive connection its read
      // deadline starts now (a new one's runs from the accept).
      c.request_start = Clock::now();
      if (c.served) c.deadline = c.request_start + options_.read_timeout;
    }
    c.request_bytes += c.in.size() - before;
    Advance(c);
    if (!conns_.count(id)) return;
  }
  UpdateInterest(c);
}

// Moves a connection on with the bytes it has: head, then body, then handler.
void EpollServer::Advance(Connection& c) {
  if (c.phase == Phase::kHead) {
    if (c.in.empty()) return;
    auto scan = c.scanner.Scan(&c.in, limits_);
    if (auto* e = std::get_if<http::ParseError>(&scan)) {
      CountAnswer("unrouted", e->status);
      return RespondNow(c, ErrorBytes(e->status, e->message, false), true);
    }
    const size_t head_bytes = std::get<size_t>(scan);
    if (head_bytes == 0) return;
    auto parsed =
        http::ParseHead(std::string_view(c.in).substr(0, head_bytes), limits_);
    c.in.erase(0, head_bytes);
    if (auto* e = std::get_if<http::ParseError>(&parsed)) {
      CountAnswer("unrouted", e->status);
      return RespondNow(c, ErrorBytes(e->status, e->message, false), true);
    }
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
        !http::Authorized(auth->second, options_.bearer_token)) {
      HttpResponse r;
      RespondError(401,
                   auth == h.headers.end() ? "missing bearer token"
                                           : "invalid bearer token",
                   &r);
      r.headers.emplace_back("WWW-Authenticate", "Bearer");
      CountAnswer("unrouted", 401);
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
    CountAnswer("unrouted", allow.empty() ? 404 : 405);
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
  task.route = std::move(c.route);
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
  req.path_params = std::move(c.path_params);
  c.phase = Phase::kHandler;
  UpdateInterest(c);
  (priority_paths_.count(req.path) ? priority_ : workers_)
      .Push(std::move(task));
}

void EpollServer::RunTask(Task task) {
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

void EpollServer::AddMetrics(Registry* registry) {
  auto requests = registry->AddCounterFamily(
      "lens_http_requests_total",
      "HTTP requests answered, by route and status.", {"route", "code"});
  auto durations = registry->AddHistogramFamily(
      "lens_http_request_duration_seconds",
      "Time in the route's handler, from its call to its response.", {"route"},
      {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10});
  // One registry per server: a second server on the same registry is
  // refused the names (AlreadyExists) and counts nothing.
  if (requests.ok()) requests_ = *requests;
  if (durations.ok()) durations_ = *durations;
}

void EpollServer::CountAnswer(const std::string& route, int status,
                              double seconds) {
  if (requests_ != nullptr) {
    auto c = requests_->WithLabels({route, std::to_string(status)});
    if (c.ok()) (*c)->Inc();
  }
  if (durations_ != nullptr && seconds >= 0) {
    auto h = durations_->WithLabels({route});
    if (h.ok()) (*h)->Observe(seconds);
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
  if (r == IoResult::kProgress && c.phase == Phase::kWrite)
    return AfterResponse(c);
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
  c.served = true;
  c.deadline = now + options_.idle_timeout;
  c.waiting_since = now;
  // Bytes of a pipelined request already read start the next one.
  c.request_bytes = c.in.size();
  c.request_start = now;
  if (!c.in.empty()) c.deadline = now + options_.read_timeout;
  Advance(c);  // a pipelined request already read
  auto it = conns_.find(id);
  if (it != conns_.end() && it->second->phase == Phase::kHead)
    OnReadable(*it->second);
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
