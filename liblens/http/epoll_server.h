// The HTTP server's event loop (docs/http.md): one thread owns every
// connection; handlers run on a worker pool plus one thread reserved for the
// priority paths. epoll_server.cc holds the connection lifecycle (accept,
// caps, deadlines), http_server.cc the request flow, server_metrics.cc its
// counters.
#ifndef LENS_HTTP_EPOLL_SERVER_H_
#define LENS_HTTP_EPOLL_SERVER_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/metrics.h"
#include "http/connection.h"
#include "http/http.h"
#include "http/listen_address.h"
#include "http/request_parser.h"
#include "http/worker_pool.h"

namespace lens::http {

inline constexpr uint64_t kListenId = 0;
inline constexpr uint64_t kWakeId = 1;
inline constexpr size_t kReadChunk = 16 << 10;
inline constexpr auto kLinger = std::chrono::seconds(2);
inline constexpr auto kSweepEvery = std::chrono::milliseconds(100);
// Steps (a read, a parsed request, a written response) one connection takes
// per turn of the loop; with work left it waits behind the others
// (pipelined requests cannot hold the loop, and nothing recurses per
// request).
inline constexpr int kTurnSteps = 64;
// Connections accepted per loop turn: the events of those accepted (a reset,
// a request) are handled before the next batch, so a burst of connections
// reset at once is closed as it comes, not counted whole against the caps.
inline constexpr int kAcceptBatch = 64;

// Why a connection closed (lens_http_connections_closed_total{reason}).
enum class CloseReason : uint8_t {
  kPeer,          // the client closed or reset
  kDone,          // answered with Connection: close (after the linger)
  kIdleTimeout,   // kept alive, no next request in idle_timeout
  kReadTimeout,   // a request (or handshake) not in within read_timeout
  kWriteTimeout,  // a response not taken within write_timeout
  kEvicted,       // stalled, closed to make room at a cap
  kStopping,      // the server stopped
  kCount
};
// Why a request was answered before a handler ran
// (lens_http_requests_refused_total{reason}).
enum class Refusal : uint8_t {
  kMalformed,         // 400, 501, 505
  kUnauthorized,      // 401
  kNotFound,          // 404
  kMethodNotAllowed,  // 405
  kTimeout,           // 408
  kLengthRequired,    // 411
  kBodyTooLarge,      // 413
  kLineTooLong,       // 414
  kHeadersTooLarge,   // 431
  kQueueFull,         // 503: no room in the handler queue
  kBodiesInFlight,    // 503: no room in the body budget
  kCount
};

class EpollServer final : public HttpServer {
 public:
  EpollServer(HttpServerOptions options, int listen_fd,
              http::ListenAddress address,
              std::unique_ptr<http::TlsContext> tls)
      : options_(std::move(options)),
        limits_{options_.max_request_line_bytes, options_.max_header_bytes, 100,
                options_.max_body_bytes},
        listen_fd_(listen_fd),
        address_(std::move(address)),
        tls_(std::move(tls)),
        public_paths_(options_.public_paths.begin(),
                      options_.public_paths.end()),
        priority_paths_(options_.priority_paths.begin(),
                        options_.priority_paths.end()),
        workers_(options_.threads,
                 static_cast<size_t>(options_.max_queued_requests),
                 [this](Task t) { RunTask(std::move(t)); }),
        priority_(1, static_cast<size_t>(options_.max_connections),
                  [this](Task t) { RunTask(std::move(t)); }) {
    if (options_.metrics == nullptr)
      own_metrics_ = std::make_unique<Registry>();
    AddMetrics(options_.metrics != nullptr ? options_.metrics
                                           : own_metrics_.get());
  }

  ~EpollServer() override { Stop(); }

  void Handle(std::string method, std::string path,
              HttpHandler handler) override {
    std::lock_guard lock(routes_mu_);
    routes_[std::move(path)][std::move(method)] =
        std::make_shared<const HttpHandler>(std::move(handler));
  }
  void HandlePattern(std::string method, std::string pattern,
                     HttpHandler handler) override;

  Status Start() override;
  void Stop() override;

  void RenderMetrics(std::string* out) const override;
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
  bool Admit(const std::string& peer, Clock::time_point now);
  size_t Evict(const std::optional<std::string>& peer, size_t n,
               Clock::time_point now);
  void TrimPeers(Clock::time_point now);
  bool EvictFromHog();
  void OnEvent(Connection& c, uint32_t events);
  // Moves a connection on as far as its bytes and socket allow, for at most
  // kTurnSteps steps; with work left it goes on the ready list.
  void Pump(Connection& c);
  // What Advance() did with the bytes already read.
  enum class Moved : uint8_t { kNeedBytes, kYes, kClosed };
  Moved Advance(Connection& c);
  IoResult ReadMore(Connection& c);
  void OnHead(Connection& c);
  void Dispatch(Connection& c);
  // Queues `bytes` as the answer; Pump() writes it.
  void RespondNow(Connection& c, std::string bytes, bool close);
  // After an answer is written: the next request, a lingering close, or
  // closed (false).
  bool FinishResponse(Connection& c);
  void OnCompletions();
  void RunReady();
  void Sweep(Clock::time_point now);
  void Close(uint64_t id, CloseReason why);
  void UpdateInterest(Connection& c);
  void RunTask(Task task);
  void AddMetrics(Registry* registry);
  // Counts one answer.
  void CountAnswer(const std::string& route, int status, double seconds = -1);
  // Counts an answer given before routing (route "unrouted").
  void CountRefused(int status);
  void SetGauges();
  // A share of the body budget for `bytes` from `peer`, released when the
  // last copy goes; null when it does not fit.
  std::shared_ptr<void> ReserveBody(const std::string& peer, size_t bytes);
  // Closes connections (but `except`) whose request body stopped coming
  // for kWriterGrace; how many.
  size_t EvictStalledBodies(uint64_t except);

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
  struct PatternRoute {
    std::string pattern;                // as registered
    std::vector<std::string> segments;  // "{name}" captures one segment
    std::map<std::string, std::shared_ptr<const HttpHandler>> methods;
  };
  std::vector<PatternRoute> patterns_;  // GUARDED_BY(routes_mu_)

  // Owned by the loop thread.
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  int reserve_fd_ = -1;  // given up to accept-and-close when out of fds
  uint64_t next_id_ = 2;
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> conns_;
  std::unordered_map<std::string, int> per_peer_;
  // Connections with buffered work left after their turn.
  std::vector<uint64_t> ready_;

  // Request bodies held now, in all and by client address (reserved on the
  // loop, released on any thread).
  std::mutex body_mu_;
  size_t body_bytes_ = 0;  // GUARDED_BY(body_mu_)
  std::unordered_map<std::string, size_t>
      body_by_peer_;  // GUARDED_BY(body_mu_)

  // Finished responses, handed from workers to the loop.
  struct Done {
    uint64_t conn_id;
    std::string bytes;
    bool close;
  };
  std::mutex done_mu_;
  std::vector<Done> done_;  // GUARDED_BY(done_mu_)

  std::unique_ptr<Registry> own_metrics_;  // without options_.metrics
  CounterFamily* requests_ = nullptr;      // {route, code}
  HistogramFamily* durations_ = nullptr;   // {route}
  std::shared_ptr<Counter> accepted_;
  std::shared_ptr<Counter> closed_[static_cast<int>(CloseReason::kCount)];
  std::shared_ptr<Counter> rejected_at_total_cap_;
  std::shared_ptr<Counter> rejected_at_peer_cap_;
  std::shared_ptr<Counter> rejected_no_fds_;
  std::shared_ptr<Counter> refused_[static_cast<int>(Refusal::kCount)];
  std::shared_ptr<Counter> dropped_;
  std::shared_ptr<Gauge> open_;
  std::shared_ptr<Gauge> queued_workers_;
  std::shared_ptr<Gauge> queued_priority_;

  WorkerPool workers_;
  WorkerPool priority_;
  std::atomic<bool> started_{false};
  std::atomic<bool> stopping_{false};
  std::mutex stop_mu_;
  std::thread loop_;
};
}  // namespace lens::http

#endif  // LENS_HTTP_EPOLL_SERVER_H_
