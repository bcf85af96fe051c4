// The jobs' test bench: real lens-node-agent processes on fixture hosts
// (node-a: 8x MI300X + 8 ConnectX-7; node-b: MI250 + MI210 + 2 HCAs), the
// NVIDIA host (node-c: 8x H100) as the daemon's own agent and routes over
// the NVML replay, misbehaving agents (slow, garbage), and a store on
// SQLite or PostgreSQL seeded as the controller and the container stream
// write it.
#ifndef LENS_TEST_JOBS_JOBS_TESTING_H_
#define LENS_TEST_JOBS_JOBS_TESTING_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/node_agent.h"
#include "gpu/nvml/nvml_replay.h"
#include "gpu/nvml/nvml_source.h"
#include "http/http.h"
#include "lens/store.h"
#include "loopback_traffic.h"
#include "postgres_server.h"
#include "scheduled/jobs.h"

namespace lens::jobs_testing {

using std::chrono::milliseconds;

inline const std::string kFixtures = LENS_FIXTURES_DIR;

// Serials of node-a's GPUs (sysfs serial_number; only card16, the third
// by BDF, is busy: gpu_busy_percent 100).
inline const std::vector<std::string> kNodeASerials = {
    "692351001124", "692452001161", "692353001198", "692454001235",
    "692355001272", "692456001309", "692357001346", "692458001383"};
inline const std::string kBusyAmdSerial = "692353001198";
// node-c's H100s (NVML serials; the first two at 100% utilisation).
inline const std::vector<std::string> kNodeCSerials = {
    "1655022005470", "1655022005473", "1655022005476", "1655022005479",
    "1655022005482", "1655022005485", "1655022005488", "1655022005491"};

// A port free on 127.0.0.1 now (the agents bind it on 127.0.0.x).
inline int FreePort() { return test::FreeLoopbackPort(); }

inline Timestamp NowUs() {
  return std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
}

template <typename F>
bool WaitFor(F done, milliseconds limit = milliseconds(10000)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

// lens-node-agent on a fixture host, as `node`, on ip:port.
class AgentProcess {
 public:
  // `extra`: more flags (with --tls-cert the URL is https://).
  AgentProcess(const std::string& host, const std::string& node,
               const std::string& ip, int port,
               std::vector<std::string> extra = {})
      : url_((std::count(extra.begin(), extra.end(), "--tls-cert")
                  ? "https://"
                  : "http://") +
             ip + ":" + std::to_string(port)) {
    const std::string root = kFixtures + "/hosts/" + host;
    log_ = ::testing::TempDir() + "agent-" + node + "-" +
           std::to_string(::getpid()) + ".log";
    // Everything the child needs is built before fork(): other threads of
    // this process (a test API server, a controller) may hold the
    // allocator's lock at that moment, so the child only calls
    // async-signal-safe functions.
    const std::string listen = ip + ":" + std::to_string(port);
    std::vector<std::string> args = {LENS_NODE_AGENT_BIN,
                                     "--sysfs-root",
                                     root + "/sys",
                                     "--procfs-root",
                                     root + "/proc",
                                     "--dev-root",
                                     root + "/dev",
                                     "--listen",
                                     listen,
                                     "--interval",
                                     "1",
                                     "--no-nvml",
                                     "--no-containers"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env = {"NODE_NAME=" + node};
    for (char** e = environ; *e; ++e) {
      if (std::string_view(*e).rfind("NODE_NAME=", 0) != 0) env.push_back(*e);
    }
    std::vector<char*> envp;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const int fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_ = ::fork();
    if (pid_ == 0) {
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      ::execve(argv[0], argv.data(), envp.data());
      (void)!::write(2, "execve failed\n", 14);
      ::_exit(127);
    }
    if (fd >= 0) ::close(fd);
  }
  ~AgentProcess() { Stop(SIGTERM); }
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  // Serving, with its first cycle done.
  bool WaitHealthy() {
    if (url_.rfind("https://", 0) == 0) {  // over TLS: once it says so
      return WaitFor(
          [&] { return log().find("serving") != std::string::npos; });
    }
    const size_t colon = url_.rfind(':');
    httplib::Client c(url_.substr(7, colon - 7),
                      std::stoi(url_.substr(colon + 1)));
    return WaitFor([&] {
      auto r = c.Get("/healthz");
      return r && r->status == 200 && r->body == "ok\n";
    });
  }
  void Stop(int sig) {
    if (pid_ <= 0) return;
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  const std::string& url() const { return url_; }
  std::string log() const {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  pid_t pid_ = -1;
  std::string url_;
  std::string log_;
};

// The NVIDIA host: the daemon's agent and routes over the NVML replay of a
// real 8x H100 machine (what lens-node-agent runs where libnvidia-ml loads).
class NvidiaAgent {
 public:
  bool Start(const std::string& ip, int port) {
    auto replay =
        nvml::NvmlReplay::Open(kFixtures + "/nvml/h100_8x_550.90.07.json");
    if (!replay.ok()) return false;
    replay_ = *replay;
    auto source = nvml::NewNvmlGpuSourceFromApi(replay_);
    if (!source.ok()) return false;
    HostRoots roots;
    roots.sysfs = kFixtures + "/hosts/empty/sys";
    roots.procfs = kFixtures + "/hosts/empty/proc";
    roots.dev = kFixtures + "/hosts/empty/dev";
    std::vector<std::unique_ptr<GpuSource>> sources;
    sources.push_back(std::move(*source));
    CollectorRegistry collectors;
    if (!collectors.Add(NewGpuCollector(roots, std::move(sources))).ok()) {
      return false;
    }
    NodeAgentOptions o;
    o.roots = roots;
    o.node_name = "node-c";
    o.interval = milliseconds(200);
    o.device_check_interval = milliseconds(200);
    agent_ = std::make_unique<NodeAgent>(o, std::move(collectors));
    if (!agent_->RunOnce().ok()) return false;
    HttpServerOptions h;
    h.listen = ip + ":" + std::to_string(port);
    auto server = HttpServer::Create(h);
    if (!server.ok()) return false;
    server_ = std::move(*server);
    agent_->RegisterRoutes(*server_);
    url_ = "http://" + ip + ":" + std::to_string(port);
    return server_->Start().ok() && agent_->Start().ok();
  }
  ~NvidiaAgent() {
    if (server_) server_->Stop();
    if (agent_) agent_->Stop();
  }
  // Swaps the replayed machine (a GPU replaced) and waits until the agent
  // has rescanned and reports `serial`.
  bool Load(const std::string& path, const std::string& serial) {
    if (!replay_->Load(path).ok()) return false;
    return WaitFor([&] {
      for (const GpuInfo& g : agent_->snapshot()->gpus) {
        if (g.serial == serial) return true;
      }
      return false;
    });
  }
  const std::string& url() const { return url_; }

 private:
  std::shared_ptr<nvml::NvmlReplay> replay_;
  std::unique_ptr<NodeAgent> agent_;
  std::unique_ptr<HttpServer> server_;
  std::string url_;
};

// An "agent" that answers /report after `delay` with `body`.
class FakeAgent {
 public:
  FakeAgent(std::string body, milliseconds delay)
      : body_(std::move(body)), delay_(delay) {
    server_.Get("/report",
                [this](const httplib::Request&, httplib::Response& r) {
                  std::this_thread::sleep_for(delay_);
                  r.set_content(body_, "application/json");
                });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeAgent() {
    server_.stop();
    thread_.join();
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_);
  }

 private:
  std::string body_;
  milliseconds delay_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// A store on the test's backend ("sqlite": a temp file; "postgres": a
// database of the shared server).
inline std::string StoreUrl(const std::string& backend,
                            const std::string& tag) {
  if (backend == "sqlite") {
    const std::string path = ::testing::TempDir() + "jobs-" + tag + "-" +
                             std::to_string(::getpid()) + ".db";
    std::filesystem::remove(path);
    return "sqlite://" + path;
  }
  auto made = test::PostgresServer::Shared().CreateDatabase("jobs_test");
  return made.ok() ? *made : "";
}

// The value of the sample `series` (name{labels} exactly as rendered) in a
// Prometheus text body; nullopt when absent.
inline std::optional<double> Sample(const std::string& body,
                                    const std::string& series) {
  size_t at = 0;
  while ((at = body.find(series + " ", at)) != std::string::npos) {
    if (at == 0 || body[at - 1] == '\n') {
      return std::stod(body.substr(at + series.size() + 1));
    }
    at += series.size();
  }
  return std::nullopt;
}

}  // namespace lens::jobs_testing

#endif  // LENS_TEST_JOBS_JOBS_TESTING_H_
