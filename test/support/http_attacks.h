// The attack suite every Lens HTTP surface runs: what a hostile client, with
// or without a token, can send (huge request line, huge headers, huge bodies,
// slowloris, a thousand idle connections, garbage, half-open TLS, 50,000
// pipelined requests on one connection, pipelined bodies, readers that never
// read large answers, connect-request-reset cycles), each bounded in time,
// each checking that the target still answers its metrics path within a
// second and that its memory stays within a stated bound; and that its
// /metrics carries the server's connection counters.
//
//   lens::test::HttpTarget target;
//   target.port = port;  target.token = "secret";  target.pid = daemon_pid;
//   for (const auto& r : lens::test::RunHttpAttacks(target))
//     EXPECT_TRUE(r.ok) << r.name << ": " << r.detail;
#ifndef LENS_TEST_SUPPORT_HTTP_ATTACKS_H_
#define LENS_TEST_SUPPORT_HTTP_ATTACKS_H_

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace lens::test {

struct HttpTarget {
  std::string host = "127.0.0.1";
  int port = 0;
  bool tls = false;   // scrape over TLS (no verification) and try half-open
  std::string token;  // the target's bearer token; empty when it has none
  std::string metrics_path = "/metrics";
  pid_t pid = 0;  // whose resident memory is bounded (0: not checked)
  // How much the target's RSS may grow over its size before the first attack.
  size_t rss_growth_bytes = size_t{64} << 20;
  // The target's request body limit (a body just under it is refused
  // without a token before it is sent).
  size_t max_body_bytes = size_t{1} << 20;
  // The longest a scrape may take while an attack runs.
  std::chrono::milliseconds scrape_budget{1000};
  // Large answers (with the token) that never-reading clients ask for over
  // and over: the target's biggest (openapi, dashboard assets). Empty: the
  // metrics path.
  std::vector<std::string> large_paths;
  // A route that takes a while (a store query): connections that ask and
  // reset at once. Empty: the metrics path.
  std::string slow_path;
  // Pipelined requests per connection in the pipelining attacks.
  size_t pipelined = 50000;
};

struct AttackResult {
  std::string name;
  bool ok = false;
  std::string detail;  // what failed, or what was measured
};

// Runs every attack in turn (about 10 s in all).
std::vector<AttackResult> RunHttpAttacks(const HttpTarget& target);

// One scrape of target.metrics_path with the token: the HTTP status (0 when
// none came) and how long it took.
struct Scrape {
  int status = 0;
  std::chrono::milliseconds took{0};
  std::string body;
};
Scrape ScrapeOnce(const HttpTarget& target);

// A blocking loopback connection to the target (200 ms send/receive
// timeouts), -1 when it cannot connect.
int ConnectTo(const HttpTarget& target);
// What the server sends on `fd` within `timeout`: until it closes, or goes
// quiet after a complete head.
std::string ReadAnswer(int fd, std::chrono::milliseconds timeout);
// The status code of an HTTP/1.x answer, 0 when there is none.
int StatusOf(const std::string& answer);

// Sends `count` copies of `request` on one connection as fast as the target
// takes them, reading on another thread (at most 60 s): how many answers had
// `status`, how many another, and whether the target closed.
struct PipelineResult {
  size_t answers = 0;
  size_t others = 0;
  bool closed = false;
  size_t sent_bytes = 0;
};
PipelineResult Pipeline(const HttpTarget& target, const std::string& request,
                        size_t count, int status);

// Resident memory of `pid` in bytes (0 when unknown).
size_t ResidentBytes(pid_t pid);

}  // namespace lens::test

#endif  // LENS_TEST_SUPPORT_HTTP_ATTACKS_H_
