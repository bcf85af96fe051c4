// The HTTP server's event loop (docs/http.md): one thread owns every
// connection; handlers run on a worker pool plus one thread reserved for the
// priority paths. epoll_server.cc holds the connection lifecycle (accept,
// caps, deadlines), http_server.cc the request flow.
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

#include "http/connection.h"
#include "http/listen_address.h"
#include "http/request_parser.h"
#include "http/worker_pool.h"
#include "lens/http.h"
#include "lens/metrics.h"

namespace lens::http {

inline constexpr uint64_t kListenId = 0;
inline constexpr uint64_t kWakeId = 1;
inline constexpr size_t kReadChunk = 16 << 10;
inline constexpr auto kLinger = std::chrono::seconds(2);
inline constexpr auto kSweepEvery = std::chrono::milliseconds(100);
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
        workers_(options_.threads, [this](Task t) { RunTask(std::move(t)); }),
        priority_(1, [this](Task t) { RunTask(std::move(t)); }) {
    if (options_.metrics != nullptr) AddMetrics(options_.metrics);
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
  void AddMetrics(Registry* registry);
  // Counts one answer (no-op without HttpServerOptions::metrics).
  void CountAnswer(const std::string& route, int status, double seconds = -1);

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

  // Finished responses, handed from workers to the loop.
  struct Done {
    uint64_t conn_id;
    std::string bytes;
    bool close;
  };
  std::mutex done_mu_;
  std::vector<Done> done_;  // GUARDED_BY(done_mu_)

  CounterFamily* requests_ = nullptr;     // {route, code}
  HistogramFamily* durations_ = nullptr;  // {route}

  WorkerPool workers_;
  WorkerPool priority_;
  std::atomic<bool> started_{false};
  std::atomic<bool> stopping_{false};
  std::mutex stop_mu_;
  std::thread loop_;
};
}  // namespace lens::http

#endif  // LENS_HTTP_EPOLL_SERVER_H_
