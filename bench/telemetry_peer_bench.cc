// lens-telemetry beside vmagent 1.79 (Debian's victoria-metrics package),
// each a process of its own pinned to the same core, fed the same
// remote-write payloads (2,000 dcgm-exporter series per request) and
// forwarding to the same null receiver:
//
//   BM_VmagentRelabel     vmagent adding five workload labels by pod with
//                         -remoteWrite.relabelConfig (regex rules: what an
//                         operator would write without Lens)
//   BM_LensTelemetry      lens-telemetry enriching by the ownership index
//                         (250 pods of 250 workloads in its store) through
//                         its on-disk queue
//   BM_LensTelemetrySlowTarget  the same against a receiver far slower
//                         than the sender: backpressure (503), flat memory
//
// Each reports the peer's own CPU time (utime + stime of all its threads,
// from /proc) per sample: `peer_samples_per_cpu_second` is what one core
// of it does. The sender and the receiver run in this process, on another
// core when there is one.
#include <benchmark/benchmark.h>
#include <httplib.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "command.h"
#include "lens/store.h"
#include "loopback_traffic.h"
#include "telemetry_payload.h"
#include "victoria_metrics.h"

namespace lens::telemetry {
namespace {

namespace fs = std::filesystem;

constexpr int kSeries = 2000;  // per request

// The peer's CPU seconds so far (all threads).
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);
    if (i == 15) break;
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// A remote-write receiver that takes everything (204) and counts bytes,
// one request at a time, each after `delay`.
struct NullReceiver {
  explicit NullReceiver(std::chrono::milliseconds delay = {}) {
    server.new_task_queue = [] { return new httplib::ThreadPool(1); };
    server.Post("/api/v1/write", [this, delay](const httplib::Request& req,
                                               httplib::Response& res) {
      if (delay.count() > 0) std::this_thread::sleep_for(delay);
      bytes += req.body.size();
      ++requests;
      res.status = 204;
    });
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
  }
  ~NullReceiver() {
    server.stop();
    thread.join();
  }
  // Waits until nothing arrived for `quiet` (the peer drained its queue).
  void WaitQuiet(std::chrono::milliseconds quiet) {
    const auto end =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    uint64_t last = requests;
    auto since = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (requests != last) {
        last = requests;
        since = std::chrono::steady_clock::now();
      } else if (std::chrono::steady_clock::now() - since >= quiet) {
        return;
      }
    }
  }
  httplib::Server server;
  std::thread thread;
  std::atomic<uint64_t> bytes{0}, requests{0};
  int port = 0;
};

// The core the peers run on: the last one (the sender keeps the others).
std::string PeerCore() {
  return std::to_string(
      std::max(0, static_cast<int>(std::thread::hardware_concurrency()) - 1));
}

bool WaitHealthy(int port) {
  for (int i = 0; i < 600; ++i) {
    httplib::Client client("127.0.0.1", port);
    for (const char* path : {"/health", "/healthz"}) {  // vmagent, Lens
      auto res = client.Get(path);
      if (res && res->status == 200) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Sends the payload once per iteration to the peer at `port`, then waits
// for the peer to forward everything; reports the peer's CPU per sample.
void Drive(benchmark::State& state, pid_t pid, int port,
           NullReceiver& receiver) {
  const std::string body = Payload(kSeries, 1);
  httplib::Client client("127.0.0.1", port);
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);  // as Prometheus' and vmagent's clients
  const httplib::Headers headers = {{"Content-Encoding", "snappy"}};
  receiver.WaitQuiet(std::chrono::milliseconds(300));  // start-up writes
  const double cpu0 = CpuSeconds(pid);
  for (auto _ : state) {
    auto res =
        client.Post("/api/v1/write", headers, body, "application/x-protobuf");
    if (!res || res->status / 100 != 2) {
      state.SkipWithError("the peer refused a request");
      break;
    }
  }
  receiver.WaitQuiet(std::chrono::milliseconds(500));
  const double cpu = CpuSeconds(pid) - cpu0;
  const double samples = static_cast<double>(state.iterations()) * kSeries;
  state.counters["peer_cpu_seconds"] = cpu;
  state.counters["peer_samples_per_cpu_second"] = cpu > 0 ? samples / cpu : 0;
  state.counters["forwarded_bytes"] = static_cast<double>(receiver.bytes);
  state.SetItemsProcessed(static_cast<int64_t>(samples));
}

void Kill(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

void BM_VmagentRelabel(benchmark::State& state) {
  const std::string vmagent = test::VictoriaMetrics::AgentBinary();
  if (vmagent.empty()) return state.SkipWithError("vmagent not installed");
  NullReceiver receiver;
  const std::string dir = fs::temp_directory_path() /
                          ("lens-vmagent-bench-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // The five labels lens-telemetry adds, derived from the pod label.
  std::string rules;
  for (const char* label : {"workload_uid", "workload_name", "workload_kind",
                            "workload_namespace", "pod_uid"}) {
    rules +=
        "- source_labels: [namespace, pod]\n"
        "  separator: /\n"
        "  regex: 'ml/llama-70b-worker-(.+)'\n"
        "  target_label: " +
        std::string(label) + "\n  replacement: '" + label + "-$1'\n";
  }
  std::ofstream(dir + "/relabel.yml") << rules;
  const int port = test::FreeLoopbackPort();
  const pid_t pid = test::Spawn(
      {"/usr/bin/taskset", "-c", PeerCore(), vmagent,
       "-httpListenAddr=127.0.0.1:" + std::to_string(port),
       "-remoteWrite.url=http://127.0.0.1:" + std::to_string(receiver.port) +
           "/api/v1/write",
       "-remoteWrite.relabelConfig=" + dir + "/relabel.yml",
       "-remoteWrite.tmpDataPath=" + dir + "/queue",
       "-remoteWrite.flushInterval=100ms", "-loggerLevel=ERROR"},
      dir + "/log", true, false, {"GOMAXPROCS=1"});
  if (pid <= 0 || !WaitHealthy(port)) {
    if (pid > 0) Kill(pid);
    return state.SkipWithError("vmagent did not start");
  }
  Drive(state, pid, port, receiver);
  Kill(pid);
  fs::remove_all(dir);
}
BENCHMARK(BM_VmagentRelabel)->Iterations(300)->UseRealTime();

// lens-telemetry in `dir` (its store seeded with the payload's pods, each
// of its own workload, running since before its samples), pinned to the
// peers' core, forwarding to `receiver`; its pid and port, or pid -1.
std::pair<pid_t, int> StartLensTelemetry(
    const std::string& dir, const NullReceiver& receiver,
    const std::vector<std::string>& extra = {}) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    auto store = Store::Open("sqlite://" + dir + "/lens.db");
    if (!store.ok()) return {-1, 0};
    std::vector<PodRecord> pods;
    std::vector<WorkloadRecord> workloads;
    const Timestamp t0{std::chrono::milliseconds(kPayloadT0Ms - 60000)};
    for (int n = 0; n < kSeries / 8; ++n) {
      WorkloadRecord w;
      w.uid = "w-" + std::to_string(n);
      w.kind = "PyTorchJob";
      w.name = "llama-70b-" + std::to_string(n);
      w.namespace_name = "ml";
      w.created_at = w.updated_at = t0;
      workloads.push_back(w);
      PodRecord p;
      p.uid = "p-" + std::to_string(n);
      p.name = "llama-70b-worker-" + std::to_string(n);
      p.namespace_name = "ml";
      p.owner_uid = w.uid;
      p.running = true;
      p.created_at = p.updated_at = t0;
      p.started_at = t0;
      pods.push_back(p);
    }
    if (!(*store)->pods().UpsertWorkloads(workloads).ok() ||
        !(*store)->pods().UpsertPods(pods).ok()) {
      return {-1, 0};
    }
  }
  const int port = test::FreeLoopbackPort();
  std::vector<std::string> argv = {
      "/usr/bin/taskset",
      "-c",
      PeerCore(),
      LENS_TELEMETRY_BIN,
      "--database",
      "sqlite://" + dir + "/lens.db",
      "--listen",
      "127.0.0.1:" + std::to_string(port),
      "--forward",
      "http://127.0.0.1:" + std::to_string(receiver.port) + "/api/v1/write",
      "--queue-dir",
      dir + "/queue",
      "--no-logs",
      "--log-level",
      "error"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const pid_t pid = test::Spawn(argv, dir + "/log");
  if (pid <= 0 || !WaitHealthy(port)) {
    if (pid > 0) Kill(pid);
    return {-1, 0};
  }
  return {pid, port};
}

// A counter of lens-telemetry's /metrics (0 when absent).
double MetricValue(int port, const std::string& series) {
  httplib::Client client("127.0.0.1", port);
  auto metrics = client.Get("/metrics");
  const std::string name = "\n" + series + " ";
  const size_t at = metrics ? metrics->body.find(name) : std::string::npos;
  return at == std::string::npos
             ? 0
             : std::strtod(metrics->body.c_str() + at + name.size(), nullptr);
}

// The peak resident memory of `pid` (VmHWM), MiB.
double PeakRssMiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024;
  }
  return 0;
}

void BM_LensTelemetry(benchmark::State& state) {
  NullReceiver receiver;
  const std::string dir =
      fs::temp_directory_path() /
      ("lens-telemetry-bench-" + std::to_string(::getpid()));
  const auto [pid, port] = StartLensTelemetry(dir, receiver);
  if (pid <= 0) return state.SkipWithError("lens-telemetry did not start");
  Drive(state, pid, port, receiver);
  // Every sample was enriched (a benchmark of the wrong work is no
  // benchmark).
  const double enriched =
      MetricValue(port, "lens_telemetry_samples_enriched_total");
  state.counters["enriched"] = enriched;
  if (enriched != static_cast<double>(state.iterations()) * kSeries) {
    state.SkipWithError("not every sample was enriched");
  }
  Kill(pid);
  fs::remove_all(dir);
}
BENCHMARK(BM_LensTelemetry)->Iterations(300)->UseRealTime();

// A sender far faster than the forward target (which takes a request per
// 20 ms): the 16 MiB queue fills, lens-telemetry answers 503 with
// Retry-After, and its memory stays flat. Reports the requests taken and
// pushed back and the peak RSS; fails if it never pushed back.
void BM_LensTelemetrySlowTarget(benchmark::State& state) {
  NullReceiver receiver(std::chrono::milliseconds(20));
  const std::string dir = fs::temp_directory_path() /
                          ("lens-telemetry-slow-" + std::to_string(::getpid()));
  const auto [pid, port] =
      StartLensTelemetry(dir, receiver, {"--queue-max-bytes", "16MiB"});
  if (pid <= 0) return state.SkipWithError("lens-telemetry did not start");
  const std::string body = Payload(kSeries, 1);
  httplib::Client client("127.0.0.1", port);
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);  // as Prometheus' and vmagent's clients
  const httplib::Headers headers = {{"Content-Encoding", "snappy"}};
  double taken = 0, pushed_back = 0;
  for (auto _ : state) {
    auto res =
        client.Post("/api/v1/write", headers, body, "application/x-protobuf");
    if (!res) {
      state.SkipWithError("lens-telemetry stopped answering");
      break;
    }
    if (res->status == 204) {
      ++taken;
    } else if (res->status == 503 && res->has_header("Retry-After")) {
      ++pushed_back;
    } else {
      state.SkipWithError("an answer other than 204 or 503 + Retry-After");
      break;
    }
  }
  state.counters["taken"] = taken;
  state.counters["pushed_back_503"] = pushed_back;
  state.counters["forwarded"] = static_cast<double>(receiver.requests);
  state.counters["peak_rss_mib"] = PeakRssMiB(pid);
  if (pushed_back == 0) state.SkipWithError("never pushed back");
  Kill(pid);
  fs::remove_all(dir);
}
BENCHMARK(BM_LensTelemetrySlowTarget)->Iterations(3000)->UseRealTime();

}  // namespace
}  // namespace lens::telemetry

BENCHMARK_MAIN();
