// The HTTP server's event loop under pipelining (docs/http.md): requests on
// one keep-alive connection, sent in batches and read back, answered by a
// handler on a worker (200), or on the loop before any handler (401 without
// a token, 404). Reports requests/s end to end over loopback.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "http/http.h"

namespace lens {
namespace {

struct Server {
  std::unique_ptr<HttpServer> http;
  explicit Server(std::string token) {
    HttpServerOptions o;
    o.listen = "127.0.0.1:0";
    o.bearer_token = std::move(token);
    http = std::move(*HttpServer::Create(o));
    http->Handle("GET", "/x", [](const HttpRequest&, HttpResponse* r) {
      r->content_type = "text/plain";
      r->body = "ok\n";
    });
    (void)http->Start();
  }
};

int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends `batch` pipelined copies of `request`, then reads until as many
// answers (status lines) came.
bool RoundTrip(int fd, const std::string& requests, size_t batch) {
  size_t off = 0;
  while (off < requests.size()) {
    const ssize_t n =
        ::send(fd, requests.data() + off, requests.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  size_t answers = 0;
  std::string carry;
  char buf[65536];
  while (answers < batch) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    carry.append(buf, static_cast<size_t>(n));
    size_t pos = 0, at;
    while ((at = carry.find("HTTP/1.1 ", pos)) != std::string::npos) {
      ++answers;
      pos = at + 9;
    }
    carry.erase(0, std::max(pos, carry.size() > 9 ? carry.size() - 9 : 0));
  }
  return true;
}

void Pipelined(benchmark::State& state, const std::string& token,
               const std::string& request) {
  Server server(token);
  const int fd = Connect(server.http->port());
  const size_t batch = static_cast<size_t>(state.range(0));
  std::string requests;
  for (size_t i = 0; i < batch; ++i) requests += request;
  for (auto _ : state) {
    if (!RoundTrip(fd, requests, batch)) {
      state.SkipWithError("connection lost");
      break;
    }
  }
  ::close(fd);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(batch));
}

// A handler's answer: the loop, a worker and back, per request.
void BM_PipelinedHandled(benchmark::State& state) {
  Pipelined(state, "", "GET /x HTTP/1.1\r\nHost: b\r\n\r\n");
}
BENCHMARK(BM_PipelinedHandled)->Arg(1)->Arg(100)->UseRealTime();

// Answered on the loop without a token: what a hostile pipeline costs.
void BM_PipelinedUnauthorized(benchmark::State& state) {
  Pipelined(state, "secret", "GET /x HTTP/1.1\r\nHost: b\r\n\r\n");
}
BENCHMARK(BM_PipelinedUnauthorized)->Arg(100)->Arg(1000)->UseRealTime();

}  // namespace
}  // namespace lens

BENCHMARK_MAIN();
