// The HTTP attack suite (http_attacks.h). Attacks speak raw bytes over
// blocking loopback sockets with timeouts; scrapes go through cpp-httplib's
// client, a new connection each time, as Prometheus does after an error.
#include "http_attacks.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <thread>

namespace lens::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// `from`: the source address ("" for the kernel's choice); another
// loopback address is another client to the target's per-address caps.
int Connect(const HttpTarget& t, bool blocking = true, const char* from = "") {
  const int fd = ::socket(
      AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (blocking ? 0 : SOCK_NONBLOCK), 0);
  if (fd < 0) return -1;
  if (*from != '\0') {
    sockaddr_in src{};
    src.sin_family = AF_INET;
    ::inet_pton(AF_INET, from, &src.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0) {
      ::close(fd);
      return -1;
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(t.port));
  ::inet_pton(AF_INET, t.host.c_str(), &addr.sin_addr);
  timeval tv{0, 200 * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 &&
      errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool Readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1;
}

}  // namespace

int ConnectTo(const HttpTarget& target) { return Connect(target); }

std::string ReadAnswer(int fd, milliseconds timeout) {
  std::string out;
  const auto until = Clock::now() + timeout;
  char buf[4096];
  while (Clock::now() < until) {
    if (!Readable(fd, 50)) {
      if (!out.empty() && out.find("\r\n\r\n") != std::string::npos) break;
      continue;
    }
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

int StatusOf(const std::string& answer) {
  if (answer.rfind("HTTP/1.", 0) != 0 || answer.size() < 12) return 0;
  return std::atoi(answer.c_str() + 9);
}

namespace {

std::string Auth(const HttpTarget& t) {
  return t.token.empty() ? "" : "Authorization: Bearer " + t.token + "\r\n";
}

// Streams `prefix` then `filler` until the server answers (or `max_bytes` or
// 5 s): the status it answered and how many bytes it took.
std::pair<int, size_t> FloodUntilAnswered(const HttpTarget& t,
                                          const std::string& prefix,
                                          const std::string& filler,
                                          size_t max_bytes) {
  const int fd = Connect(t);
  if (fd < 0) return {0, 0};
  size_t sent = 0;
  std::string answer;
  const auto until = Clock::now() + std::chrono::seconds(5);
  bool first = true;
  while (sent < max_bytes && Clock::now() < until) {
    if (Readable(fd, 0)) break;
    const std::string& chunk = first ? prefix : filler;
    first = false;
    const ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  answer = ReadAnswer(fd, milliseconds(2000));
  ::close(fd);
  return {StatusOf(answer), sent};
}

// Sends `request` whole and reads what comes back within `timeout`.
int Exchange(const HttpTarget& t, const std::string& request,
             milliseconds timeout) {
  const int fd = Connect(t);
  if (fd < 0) return 0;
  (void)!::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  const int status = StatusOf(ReadAnswer(fd, timeout));
  ::close(fd);
  return status;
}

// Scrapes every 200 ms while `attack` runs, and once after; the slowest and
// any failure go into `detail`.
bool ScrapesHold(const HttpTarget& t, const std::function<void()>& attack,
                 std::string* detail) {
  std::atomic<bool> done{false};
  std::thread attacker([&] {
    attack();
    done = true;
  });
  bool ok = true;
  milliseconds slowest{0};
  int scrapes = 0;
  auto check = [&] {
    const Scrape s = ScrapeOnce(t);
    ++scrapes;
    slowest = std::max(slowest, s.took);
    if (s.status != 200 || s.took > t.scrape_budget) {
      ok = false;
      *detail += "scrape " + std::to_string(scrapes) + ": status " +
                 std::to_string(s.status) + " after " +
                 std::to_string(s.took.count()) + " ms" +
                 (s.status != 200 && !s.body.empty()
                      ? " (" + s.body.substr(0, 120) + ")"
                      : std::string()) +
                 "; ";
    }
  };
  while (!done) {
    check();
    std::this_thread::sleep_for(milliseconds(200));
  }
  attacker.join();
  check();
  *detail += std::to_string(scrapes) + " scrapes, slowest " +
             std::to_string(slowest.count()) + " ms";
  return ok;
}

AttackResult Named(std::string name) {
  AttackResult r;
  r.name = std::move(name);
  return r;
}

void RaiseOwnFileLimit(rlim_t want) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want) return;
  rl.rlim_cur = std::min(want, rl.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &rl);
}

AttackResult HugeRequestLine(const HttpTarget& t) {
  AttackResult r = Named("huge request line");
  const auto [status, sent] =
      FloodUntilAnswered(t, "GET /" + std::string(1024, 'a'),
                         std::string(64 << 10, 'a'), size_t{256} << 20);
  r.ok = status == 414 && sent < (size_t{64} << 20);
  r.detail = "status " + std::to_string(status) + " after " +
             std::to_string(sent) + " bytes";
  return r;
}

AttackResult HugeHeaders(const HttpTarget& t) {
  AttackResult r = Named("huge headers");
  std::string filler;
  for (int i = 0; i < 64; ++i)
    filler +=
        "X-Pad-" + std::to_string(i) + ": " + std::string(1000, 'b') + "\r\n";
  const auto [status, sent] = FloodUntilAnswered(
      t, "GET " + t.metrics_path + " HTTP/1.1\r\nHost: lens\r\n", filler,
      size_t{256} << 20);
  r.ok = status == 431 && sent < (size_t{64} << 20);
  r.detail = "status " + std::to_string(status) + " after " +
             std::to_string(sent) + " bytes";
  return r;
}

AttackResult HugeBody(const HttpTarget& t) {
  AttackResult r = Named("huge body");
  // Announced, never sent: the answer must not wait for it.
  const std::string head = "POST " + t.metrics_path +
                           " HTTP/1.1\r\nHost: lens\r\nContent-Length: " +
                           std::to_string(size_t{100} << 20) + "\r\n";
  const int with_token =
      Exchange(t, head + Auth(t) + "\r\n", milliseconds(2000));
  const int without = Exchange(t, head + "\r\n", milliseconds(2000));
  r.ok = with_token == 413 && without == 413;
  r.detail = "100 MB body: " + std::to_string(with_token) + " with token, " +
             std::to_string(without) + " without";
  if (!t.token.empty()) {
    // Under the limit but without a token: 401 before the body is read.
    const int small =
        Exchange(t,
                 "POST " + t.metrics_path +
                     " HTTP/1.1\r\nHost: lens\r\nContent-Length: " +
                     std::to_string(t.max_body_bytes / 2) + "\r\n\r\n",
                 milliseconds(2000));
    r.ok = r.ok && small == 401;
    r.detail +=
        "; unsent body under the limit without token: " + std::to_string(small);
  }
  // Sent for real, with the token: refused while the bytes still flow.
  const auto [status, sent] =
      FloodUntilAnswered(t, head + Auth(t) + "\r\n", std::string(64 << 10, 'x'),
                         size_t{256} << 20);
  r.ok = r.ok && status == 413 && sent < (size_t{64} << 20);
  r.detail += "; streamed: " + std::to_string(status) + " after " +
              std::to_string(sent) + " bytes";
  return r;
}

AttackResult Slowloris(const HttpTarget& t) {
  AttackResult r = Named("slowloris");
  r.ok = ScrapesHold(
      t,
      [&] {
        std::vector<int> fds;
        for (int i = 0; i < 16; ++i) {
          const int fd = Connect(t);
          if (fd < 0) continue;
          const std::string start =
              "GET " + t.metrics_path + " HTTP/1.1\r\nHost: lens\r\nX-Slow: ";
          (void)!::send(fd, start.data(), start.size(), MSG_NOSIGNAL);
          fds.push_back(fd);
        }
        for (int tick = 0; tick < 20; ++tick) {
          for (int fd : fds) (void)!::send(fd, "a", 1, MSG_NOSIGNAL);
          std::this_thread::sleep_for(milliseconds(100));
        }
        for (int fd : fds) ::close(fd);
      },
      &r.detail);
  return r;
}

AttackResult IdleConnections(const HttpTarget& t) {
  AttackResult r = Named("1000 idle connections");
  RaiseOwnFileLimit(4096);
  int opened = 0;
  r.ok = ScrapesHold(
      t,
      [&] {
        std::vector<int> fds;
        for (int i = 0; i < 1000; ++i) {
          const int fd = Connect(t, /*blocking=*/false);
          if (fd >= 0) fds.push_back(fd);
        }
        opened = static_cast<int>(fds.size());
        std::this_thread::sleep_for(milliseconds(1500));
        for (int fd : fds) ::close(fd);
      },
      &r.detail);
  r.ok = r.ok && opened == 1000;
  r.detail = std::to_string(opened) + " opened; " + r.detail;
  return r;
}

AttackResult Garbage(const HttpTarget& t) {
  AttackResult r = Named("garbage bytes");
  std::mt19937 rng(42);
  int answered_or_closed = 0;
  r.ok = ScrapesHold(
      t,
      [&] {
        for (int i = 0; i < 16; ++i) {
          std::string junk(4096, '\0');
          for (char& c : junk) c = static_cast<char>(rng());
          const int fd = Connect(t);
          if (fd < 0) continue;
          (void)!::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
          const std::string answer = ReadAnswer(fd, milliseconds(1500));
          // Refused as soon as the first line is in, not at a deadline.
          if (StatusOf(answer) == 400) ++answered_or_closed;
          ::close(fd);
        }
      },
      &r.detail);
  r.ok = r.ok && answered_or_closed == 16;
  r.detail += "; " + std::to_string(answered_or_closed) + "/16 refused";
  return r;
}

AttackResult HalfOpenTls(const HttpTarget& t) {
  AttackResult r = Named("half-open TLS");
  r.ok = ScrapesHold(
      t,
      [&] {
        // The first bytes of a ClientHello record, then nothing.
        const unsigned char hello[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01,
                                       0x00, 0x01, 0xfc, 0x03, 0x03};
        std::vector<int> fds;
        for (int i = 0; i < 100; ++i) {
          const int fd = Connect(t);
          if (fd < 0) continue;
          (void)!::send(fd, hello, sizeof hello, MSG_NOSIGNAL);
          fds.push_back(fd);
        }
        std::this_thread::sleep_for(milliseconds(1500));
        for (int fd : fds) ::close(fd);
      },
      &r.detail);
  return r;
}

}  // namespace

PipelineResult Pipeline(const HttpTarget& t, const std::string& request,
                        size_t count, int status) {
  PipelineResult out;
  const int fd = Connect(t);
  if (fd < 0) return out;
  std::atomic<bool> reading{true};
  std::thread reader([&] {
    const std::string want = "HTTP/1.1 " + std::to_string(status) + " ";
    std::string carry;
    char buf[64 << 10];
    const auto until = Clock::now() + std::chrono::seconds(60);
    while (out.answers + out.others < count && Clock::now() < until) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n == 0) {
        out.closed = true;
        break;
      }
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
        out.closed = true;
        break;
      }
      carry.append(buf, static_cast<size_t>(n));
      size_t pos = 0, at;
      while ((at = carry.find("HTTP/1.1 ", pos)) != std::string::npos &&
             at + want.size() <= carry.size()) {
        if (carry.compare(at, want.size(), want) == 0)
          ++out.answers;
        else
          ++out.others;
        pos = at + 9;
      }
      carry.erase(
          0, std::max(pos, carry.size() > 16 ? carry.size() - 16 : size_t{0}));
    }
    reading = false;
  });
  // In batches, so the sender holds a bounded buffer.
  std::string batch;
  for (size_t i = 0; i < 1000; ++i) batch += request;
  const auto until = Clock::now() + std::chrono::seconds(60);
  size_t sent = 0;
  const size_t total = request.size() * count;
  while (sent < total && Clock::now() < until && reading) {
    const size_t off = sent % batch.size();
    const size_t len = std::min(batch.size() - off, total - sent);
    const ssize_t n = ::send(fd, batch.data() + off, len, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
      continue;
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  out.sent_bytes = sent;
  reader.join();
  ::close(fd);
  return out;
}

namespace {

AttackResult PipelinedNoToken(const HttpTarget& t) {
  AttackResult r = Named("pipelined requests without a token");
  const size_t n = t.token.empty() ? t.pipelined / 10 : t.pipelined;
  PipelineResult p;
  r.ok = ScrapesHold(
      t,
      [&] {
        p = Pipeline(
            t, "GET " + t.metrics_path + " HTTP/1.1\r\nHost: lens\r\n\r\n", n,
            t.token.empty() ? 200 : 401);
      },
      &r.detail);
  r.ok = r.ok && p.answers == n && p.others == 0;
  r.detail = std::to_string(p.answers) + "/" + std::to_string(n) +
             " answered in order (" + std::to_string(p.others) + " others); " +
             r.detail;
  return r;
}

AttackResult PipelinedNotFound(const HttpTarget& t) {
  AttackResult r = Named("pipelined requests for a missing route");
  PipelineResult p;
  r.ok = ScrapesHold(
      t,
      [&] {
        p = Pipeline(
            t,
            "GET /no/such/route HTTP/1.1\r\nHost: lens\r\n" + Auth(t) + "\r\n",
            t.pipelined, 404);
      },
      &r.detail);
  r.ok = r.ok && p.answers == t.pipelined && p.others == 0;
  r.detail = std::to_string(p.answers) + "/" + std::to_string(t.pipelined) +
             " answered 404 (" + std::to_string(p.others) + " others); " +
             r.detail;
  return r;
}

AttackResult PipelinedBodies(const HttpTarget& t) {
  AttackResult r = Named("pipelined bodies");
  // Refused requests with bodies close the connection after their answer:
  // the rest is discarded, never parsed as requests.
  const std::string body(512, 'b');
  PipelineResult with, without;
  r.ok = ScrapesHold(
      t,
      [&] {
        const std::string head = "POST " + t.metrics_path +
                                 " HTTP/1.1\r\nHost: lens\r\nContent-Length: " +
                                 std::to_string(body.size()) + "\r\n";
        with = Pipeline(t, head + Auth(t) + "\r\n" + body, 2000, 405);
        without = Pipeline(t, head + "\r\n" + body, 2000,
                           t.token.empty() ? 405 : 401);
      },
      &r.detail);
  r.ok = r.ok && with.answers == 1 && with.others == 0 && with.closed &&
         without.answers == 1 && without.others == 0 && without.closed;
  r.detail = "with token: " + std::to_string(with.answers) + " answer(s), " +
             (with.closed ? "closed" : "open") +
             "; without: " + std::to_string(without.answers) + ", " +
             (without.closed ? "closed" : "open") + "; " + r.detail;
  return r;
}

// From another address than the scrapes (as a hostile client on the
// network is): the caps per address keep the scraper's slots its own. (How
// one address's own stalled readers make room is http_server_limits_test's.)
AttackResult NeverReadingLarge(const HttpTarget& t) {
  AttackResult r = Named("readers that never read large answers");
  std::vector<std::string> paths = t.large_paths;
  if (paths.empty()) paths.push_back(t.metrics_path);
  int opened = 0;
  r.ok = ScrapesHold(
      t,
      [&] {
        std::vector<int> fds;
        const bool loopback = t.host.rfind("127.", 0) == 0;
        for (int i = 0; i < 128; ++i) {
          const int fd = Connect(t, true, loopback ? "127.0.0.2" : "");
          if (fd < 0) continue;
          std::string requests;
          const std::string& path =
              paths[static_cast<size_t>(i) % paths.size()];
          for (int k = 0; k < 200; ++k)
            requests += "GET " + path + " HTTP/1.1\r\nHost: lens\r\n" +
                        Auth(t) + "\r\n";
          // Until the server stops taking them: it reads no further
          // requests while an answer waits for this reader.
          (void)!::send(fd, requests.data(), requests.size(), MSG_NOSIGNAL);
          fds.push_back(fd);
        }
        opened = static_cast<int>(fds.size());
        std::this_thread::sleep_for(milliseconds(2000));
        for (int fd : fds) ::close(fd);
      },
      &r.detail);
  r.detail = std::to_string(opened) + " never-reading connections; " + r.detail;
  return r;
}

// From another address than the scrapes, like NeverReadingLarge: these
// connections are busy (a request each), never idle, so only the caps per
// address keep them from the scraper's slots.
AttackResult ResetCycles(const HttpTarget& t) {
  AttackResult r = Named("1000 connect-request-reset cycles");
  const std::string path = t.slow_path.empty() ? t.metrics_path : t.slow_path;
  int cycles = 0;
  r.ok = ScrapesHold(
      t,
      [&] {
        const std::string request =
            "GET " + path + " HTTP/1.1\r\nHost: lens\r\n" + Auth(t) + "\r\n";
        const bool loopback = t.host.rfind("127.", 0) == 0;
        for (int i = 0; i < 1000; ++i) {
          const int fd = Connect(t, true, loopback ? "127.0.0.2" : "");
          if (fd < 0) continue;
          (void)!::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
          linger l{1, 0};  // close with a reset
          ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
          ::close(fd);
          ++cycles;
        }
      },
      &r.detail);
  r.ok = r.ok && cycles == 1000;
  r.detail = std::to_string(cycles) + " cycles; " + r.detail;
  return r;
}

AttackResult ConnectionCounters(const HttpTarget& t) {
  AttackResult r = Named("connection counters on /metrics");
  const Scrape s = ScrapeOnce(t);
  r.ok = s.status == 200;
  for (const char* name :
       {"lens_http_connections_accepted_total",
        "lens_http_connections_closed_total{reason=\"peer\"}",
        "lens_http_connections_rejected_total",
        "lens_http_requests_refused_total{reason=\"unauthorized\"}",
        "lens_http_queued_requests{pool=\"workers\"}",
        "lens_http_connections "}) {
    if (s.body.find(name) == std::string::npos) {
      r.ok = false;
      r.detail += std::string("missing ") + name + "; ";
    }
  }
  r.detail += "scrape status " + std::to_string(s.status);
  return r;
}

}  // namespace

size_t ResidentBytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stoull(line.substr(6)) * 1024;  // "VmRSS:  1234 kB"
  }
  return 0;
}

Scrape ScrapeOnce(const HttpTarget& t) {
  // OpenSSL writes without MSG_NOSIGNAL: a target that resets a TLS
  // connection must fail the scrape, not kill the test.
  static const bool ignored = [] {
    ::signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)ignored;
  const auto start = Clock::now();
  httplib::Headers headers;
  if (!t.token.empty()) headers.emplace("Authorization", "Bearer " + t.token);
  std::string body;
  auto get = [&](httplib::ClientImpl& client) {
    client.set_connection_timeout(std::chrono::seconds(2));
    client.set_read_timeout(std::chrono::seconds(2));
    auto res = client.Get(t.metrics_path, headers);
    if (res) body = std::move(res->body);
    return res ? res->status : 0;
  };
  int status = 0;
  if (t.tls) {
    httplib::SSLClient client(t.host, t.port);
    client.enable_server_certificate_verification(false);
    status = get(client);
  } else {
    httplib::ClientImpl client(t.host, t.port);
    status = get(client);
  }
  Scrape s;
  s.status = status;
  s.body = std::move(body);
  s.took = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  return s;
}

std::vector<AttackResult> RunHttpAttacks(const HttpTarget& t) {
  const size_t baseline = t.pid > 0 ? ResidentBytes(t.pid) : 0;
  std::vector<std::function<AttackResult(const HttpTarget&)>> attacks;
  if (t.tls) {
    attacks = {HalfOpenTls, IdleConnections};
  } else {
    attacks = {HugeRequestLine,   HugeHeaders,       HugeBody,
               Slowloris,         IdleConnections,   Garbage,
               PipelinedNoToken,  PipelinedNotFound, PipelinedBodies,
               NeverReadingLarge, ResetCycles,       ConnectionCounters};
  }
  std::vector<AttackResult> results;
  for (const auto& attack : attacks) {
    AttackResult r = attack(t);
    const Scrape after = ScrapeOnce(t);
    if (after.status != 200 || after.took > t.scrape_budget) {
      r.ok = false;
      r.detail += "; scrape after: status " + std::to_string(after.status) +
                  " in " + std::to_string(after.took.count()) + " ms";
    }
    if (t.pid > 0) {
      const size_t rss = ResidentBytes(t.pid);
      const size_t growth = rss > baseline ? rss - baseline : 0;
      if (growth > t.rss_growth_bytes) r.ok = false;
      r.detail += "; RSS " + std::to_string(rss >> 20) + " MiB (+" +
                  std::to_string(growth >> 20) + ")";
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace lens::test
