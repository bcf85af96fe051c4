// The node agent's hot paths on the 8x MI300X + 8x mlx5 fixture host:
//   BM_CollectionCycle/0    one cycle (GPU + RDMA sampling, publication) at
//                           the default per-source cadence; budget: <= 200 us
//   BM_CollectionCycle/1    the same reading every RDMA counter every cycle
//   BM_RenderMetrics        the /metrics text of one snapshot   budget: <= 100
//   us BM_LensScrape           RunOnce + GET /metrics over loopback HTTP
//   BM_NodeExporterScrape   GET /metrics of Debian's prometheus-node-exporter
//                           (drm + infiniband collectors) on the same tree:
//                           node_exporter collects during the scrape, so
//                           this is the like-for-like comparison with
//                           BM_LensScrape
//   BM_AgentRss             lens-node-agent's resident memory after 20 cycles
//                           (reported as the counter rss_mib; budget < 20 MiB)
// A run over budget is reported as an error ("over budget").
#include <benchmark/benchmark.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "agent/metrics_render.h"
#include "agent/node_agent.h"
#include "gpu/amdgpu_metrics.h"
#include "lens/gpu.h"
#include "service/node_service.h"

namespace {

using Clock = std::chrono::steady_clock;
const std::string kHost =
    std::string(LENS_FIXTURES_DIR) + "/hosts/mi300x-8x-mlx5";

lens::NodeAgentOptions Options() {
  lens::NodeAgentOptions o;
  o.roots = lens::HostRoots::Under(kHost);
  o.node_name = "bench";
  o.nvidia_gpus = false;
  o.node_facts_interval = std::chrono::hours(1);
  return o;
}

void CheckBudget(benchmark::State& state, double total_s, double budget_us) {
  const double mean_us =
      total_s * 1e6 /
      static_cast<double>(std::max<int64_t>(state.iterations(), 1));
  state.counters["mean_us"] = mean_us;
  if (state.iterations() >= 100 && mean_us > budget_us) {
    static std::string msg;
    msg = "over budget: " + std::to_string(mean_us) + " us > " +
          std::to_string(budget_us) + " us";
    state.SkipWithError(msg.c_str());
  }
}

// Arg 0: the default cadence (RDMA error/event counters every
// rdma_slow_counters_interval / interval = 6th cycle per port, staggered);
// the budget applies. Arg 1: every counter every cycle, for comparison.
void BM_CollectionCycle(benchmark::State& state) {
  lens::NodeAgentOptions o = Options();
  if (state.range(0) == 1) o.rdma_slow_counters_interval = {};
  lens::NodeAgent agent(o, lens::DefaultNodeCollectors(o));
  if (!agent.RunOnce().ok()) return state.SkipWithError("first cycle failed");
  if (agent.snapshot()->gpus.size() != 8 ||
      agent.snapshot()->rdma_devices.size() != 8) {
    return state.SkipWithError("fixture host does not have 8 GPUs and 8 HCAs");
  }
  double total = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    lens::Status st = agent.RunOnce();
    total += std::chrono::duration<double>(Clock::now() - t0).count();
    if (!st.ok()) return state.SkipWithError(st.message().c_str());
  }
  state.SetItemsProcessed(state.iterations());
  if (state.range(0) == 0) {
    CheckBudget(state, total, 200);
  } else {
    state.counters["mean_us"] =
        total * 1e6 /
        static_cast<double>(std::max<int64_t>(state.iterations(), 1));
  }
}
BENCHMARK(BM_CollectionCycle)->Arg(0)->Arg(1)->MinTime(1.0);

void BM_RenderMetrics(benchmark::State& state) {
  lens::NodeAgentOptions o = Options();
  o.compat_names = state.range(0) != 0;
  lens::NodeAgent agent(o, lens::DefaultNodeCollectors(o));
  (void)agent.RunOnce();
  auto snap = agent.snapshot();
  std::string out;
  double total = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    out.clear();
    lens::agent::RenderLensMetrics(*snap, &out);
    if (o.compat_names) lens::agent::RenderCompatMetrics(*snap, &out);
    total += std::chrono::duration<double>(Clock::now() - t0).count();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(out.size()));
  state.counters["bytes"] = static_cast<double>(out.size());
  if (!o.compat_names) CheckBudget(state, total, 100);
}
BENCHMARK(BM_RenderMetrics)->Arg(0)->Arg(1)->MinTime(1.0);

void BM_LensScrape(benchmark::State& state) {
  lens::NodeServiceOptions so;
  so.agent = Options();
  so.agent->interval = std::chrono::hours(1);
  so.node_name = so.agent->node_name;
  so.roots = so.agent->roots;
  so.agent_http.listen = "127.0.0.1:0";
  auto service = lens::NodeService::Start(so);
  if (!service.ok())
    return state.SkipWithError(service.status().message().c_str());
  // The service's own agent runs hourly; each iteration collects with a second
  // agent on the same tree and renders + serves through the HTTP server.
  const std::string url = (*service)->url();
  httplib::Client client("127.0.0.1",
                         std::stoi(url.substr(url.rfind(':') + 1)));
  lens::NodeAgent agent(*so.agent, lens::DefaultNodeCollectors(*so.agent));
  for (auto _ : state) {
    (void)agent.RunOnce();
    benchmark::DoNotOptimize(agent.RenderMetrics());
    auto res = client.Get("/metrics");
    if (!res || res->status != 200) return state.SkipWithError("scrape failed");
  }
}
BENCHMARK(BM_LensScrape)->MinTime(1.0)->UseRealTime();

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

pid_t Spawn(std::vector<std::string> argv) {
  pid_t pid = ::fork();
  if (pid == 0) {
    FILE* devnull = std::fopen("/dev/null", "w");
    if (devnull) {
      ::dup2(::fileno(devnull), 1);
      ::dup2(::fileno(devnull), 2);
    }
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

void Reap(pid_t pid) {
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

bool WaitHttp(httplib::Client& c, const char* path) {
  for (int i = 0; i < 200; ++i) {
    auto res = c.Get(path);
    if (res && res->status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

void BM_NodeExporterScrape(benchmark::State& state) {
  const std::string exporter = "/usr/bin/prometheus-node-exporter";
  if (!std::filesystem::exists(exporter)) {
    return state.SkipWithError("prometheus-node-exporter not installed");
  }
  const int port = FreePort();
  pid_t pid =
      Spawn({exporter, "--collector.disable-defaults", "--collector.drm",
             "--collector.infiniband", "--path.sysfs=" + kHost + "/sys",
             "--path.procfs=" + kHost + "/proc",
             "--web.listen-address=127.0.0.1:" + std::to_string(port)});
  httplib::Client client("127.0.0.1", port);
  if (!WaitHttp(client, "/metrics")) {
    Reap(pid);
    return state.SkipWithError("node_exporter did not start");
  }
  size_t bytes = 0;
  for (auto _ : state) {
    auto res = client.Get("/metrics");
    if (!res || res->status != 200) {
      Reap(pid);
      return state.SkipWithError("scrape failed");
    }
    bytes = res->body.size();
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  Reap(pid);
}
BENCHMARK(BM_NodeExporterScrape)->MinTime(1.0)->UseRealTime();

#ifdef LENS_NODE_AGENT_BIN
double RssMiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return -1;
}

void BM_AgentRss(benchmark::State& state) {
  const int port = FreePort();
  pid_t pid =
      Spawn({LENS_NODE_AGENT_BIN, "--sysfs-root", kHost + "/sys",
             "--procfs-root", kHost + "/proc", "--dev-root", kHost + "/dev",
             "--listen", "127.0.0.1:" + std::to_string(port), "--interval",
             "0.1", "--no-nvml", "--compat-names"});
  httplib::Client client("127.0.0.1", port);
  if (!WaitHttp(client, "/healthz")) {
    Reap(pid);
    return state.SkipWithError("lens-node-agent did not start");
  }
  double rss = 0;
  for (auto _ : state) {
    std::this_thread::sleep_for(std::chrono::seconds(2));  // 20 cycles
    for (int i = 0; i < 10; ++i) (void)client.Get("/metrics");
    rss = RssMiB(pid);
  }
  Reap(pid);
  state.counters["rss_mib"] = rss;
  if (rss >= 20) state.SkipWithError("over budget: agent RSS >= 20 MiB");
}
BENCHMARK(BM_AgentRss)->Iterations(1)->UseRealTime();
#endif

// The amdgpu sysfs source's Sample of the 8 GPUs, per GPU: /0 the fixture
// host as it is (text attributes only), /1 a copy with every GPU's binary
// gpu_metrics table (MI300X v1.7, 2208 bytes), which replaces seven text
// reads with one pread and adds energy, throttle, video clocks and XCDs.
void BM_AmdGpuSample(benchmark::State& state) {
  namespace fs = std::filesystem;
  std::string root = kHost;
  fs::path copy;
  if (state.range(0) != 0) {
    copy = fs::temp_directory_path() /
           ("lens_bench_gpu_metrics_" + std::to_string(::getpid()));
    for (const char* part : {"sys", "dev"}) {
      fs::create_directories(copy / part);
      fs::copy(fs::path(kHost) / part, copy / part,
               fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    }
    std::ifstream in(
        std::string(LENS_FIXTURES_DIR) + "/gpu-metrics/mi300x_spx_v1_7.bin",
        std::ios::binary);
    const std::string blob{std::istreambuf_iterator<char>(in), {}};
    for (int g = 0; g < 8; ++g) {
      const fs::path card =
          copy / "sys/class/drm" / ("card" + std::to_string(8 * g));
      std::ofstream(fs::canonical(card / "device") / "gpu_metrics",
                    std::ios::binary)
          << blob;
    }
    root = copy.string();
  }
  auto source = lens::NewAmdGpuSysfsSource(lens::HostRoots::Under(root));
  std::vector<lens::GpuSample> samples;
  if (!source->Scan().ok() || !source->Sample(&samples).ok() ||
      samples.size() != 8) {
    if (!copy.empty()) fs::remove_all(copy);
    return state.SkipWithError("fixture host does not have 8 GPUs");
  }
  double total = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    benchmark::DoNotOptimize(source->Sample(&samples));
    total += std::chrono::duration<double>(Clock::now() - t0).count();
  }
  state.SetItemsProcessed(state.iterations() * 8);
  state.counters["us_per_gpu"] =
      total * 1e6 /
      static_cast<double>(std::max<int64_t>(state.iterations(), 1) * 8);
  if (!copy.empty()) fs::remove_all(copy);
}
BENCHMARK(BM_AmdGpuSample)->Arg(0)->Arg(1)->MinTime(1.0)->UseRealTime();

// Parsing one MI300X v1.7 gpu_metrics table already in memory.
void BM_ParseGpuMetrics(benchmark::State& state) {
  std::ifstream in(
      std::string(LENS_FIXTURES_DIR) + "/gpu-metrics/mi300x_spx_v1_7.bin",
      std::ios::binary);
  const std::vector<uint8_t> blob{std::istreambuf_iterator<char>(in), {}};
  lens::AmdGpuMetrics m;
  for (auto _ : state) {
    benchmark::DoNotOptimize(lens::ParseAmdGpuMetrics(blob, &m));
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(blob.size()));
}
BENCHMARK(BM_ParseGpuMetrics);

}  // namespace

BENCHMARK_MAIN();
