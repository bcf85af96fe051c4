// The scheduled jobs of lens-jobs on a 1,000-node cluster: 8 GPUs and 4 RDMA
// devices per node, 2,000 workloads, 10,000 running pods (one container each,
// holding 7,800 of the 8,000 GPUs), node agents answered by an in-process
// HTTP fixture.
// Budget: a full round of all jobs in under 1 s of CPU, with the
// store writes batched.
//
// A round runs every job once with RunOnce(), in ScheduledJobNames() order.
// BM_FirstRound is the first (it syncs 8,000 GPUs and 4,000 RDMA devices
// into the store); BM_SteadyRound the rounds after it, each of which reads
// every agent once again (node-info reads them, device-info shares that
// read, as with the default intervals). cpu_s is this process's CPU
// (getrusage) less the fixture's: the agents' HttpServer runs in this
// process, and the CPU of its threads (found when it starts, read from
// /proc/self/task/<tid>/schedstat) is reported apart as server_cpu_s.
// cpu_<job>_s: the same for each job. The store is SQLite in a temp file,
// seeded as the controller and the container event stream write it.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "agent/rest.h"
#include "lens/http.h"
#include "lens/jobs.h"
#include "lens/node_agent.h"
#include "lens/store.h"

namespace lens {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kNodes = 1000;
constexpr int kGpusPerNode = 8;
constexpr int kRdmaPerNode = 4;
constexpr int kWorkloads = 2000;
constexpr int kPodsPerNode = 10;
constexpr int kPods = kNodes * kPodsPerNode;
constexpr int kBatch = 1000;  // rows per store call while seeding
// GPUs of each pod on a node, by node % 5 (each node's GPUs are handed out
// in index order; 0: a pod without GPUs).
constexpr int kGpuPattern[5][kPodsPerNode] = {{8, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                                              {4, 4, 0, 0, 0, 0, 0, 0, 0, 0},
                                              {2, 2, 2, 2, 0, 0, 0, 0, 0, 0},
                                              {1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
                                              {4, 2, 1, 0, 0, 0, 0, 0, 0, 0}};
// node-info and device-info every 2 s: an agent answer younger than half
// that is not read again, so the two jobs of a round share one read of each
// agent (as they do at the default 10 s), and rounds start kRoundGap apart
// so that every round reads all agents again.
constexpr auto kAgentInterval = std::chrono::seconds(2);
constexpr auto kRoundGap = std::chrono::milliseconds(1100);

std::filesystem::path g_dir;  // the temp dir of this run

// ---- CPU accounting ---------------------------------------------------------

double ProcessCpuSeconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

std::set<pid_t> Threads() {
  std::set<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    out.insert(std::stoi(e.path().filename().string()));
  }
  return out;
}

// On-CPU time of one thread of this process: schedstat's first field (ns),
// or utime + stime of stat (clock ticks) on a kernel without schedstats.
double ThreadCpuSeconds(pid_t tid) {
  const std::string task = "/proc/self/task/" + std::to_string(tid);
  unsigned long long ns = 0;
  if (std::ifstream in(task + "/schedstat"); in >> ns) return ns / 1e9;
  std::ifstream in(task + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream fields(text.substr(paren + 2));
  std::string skip;
  for (int i = 3; i < 14; ++i) fields >> skip;  // state .. cmajflt
  unsigned long long utime = 0, stime = 0;
  fields >> utime >> stime;
  return static_cast<double>(utime + stime) / ::sysconf(_SC_CLK_TCK);
}

// ---- the cluster
// --------------------------------------------------------------

std::string NodeName(int n) { return "node-" + std::to_string(n); }

std::string Uid(int tag, int index) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-4b1e-4c1a-8d2e-%012x", tag, index);
  return buf;
}

std::string GpuSerial(int node, int gpu) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "6923%05d%03d", node, gpu);
  return buf;
}

// What lens-node-agent on an 8x MI300X, 4x ConnectX-7 node would publish.
NodeSnapshot AgentSnapshot(int n) {
  static constexpr const char* kBdfs[kGpusPerNode] = {
      "0000:05:00.0", "0000:15:00.0", "0000:65:00.0", "0000:75:00.0",
      "0000:85:00.0", "0000:95:00.0", "0000:e5:00.0", "0000:f5:00.0"};
  NodeSnapshot s;
  s.cycle = 1;
  s.time = std::chrono::system_clock::now();
  s.node_name = NodeName(n);
  NodeFacts f;
  f.hostname = NodeName(n);
  f.kernel_release = "6.8.0-45-generic";
  f.kernel_version = "#45-Ubuntu SMP PREEMPT_DYNAMIC Fri Aug 30 12:02:04 UTC";
  f.os_name = "Ubuntu 22.04.4 LTS";
  f.os_id = "ubuntu";
  f.os_version_id = "22.04";
  f.cpu_model = "AMD EPYC 9654 96-Core Processor";
  f.cpu_count = 384;
  f.cpu_sockets = 2;
  f.memory_total_bytes = uint64_t{2304} << 30;
  f.memory_available_bytes = uint64_t{2100} << 30;
  f.amdgpu_driver_version = "6.7.0";
  f.uptime_seconds = 864000.5;
  s.facts = f;
  for (int g = 0; g < kGpusPerNode; ++g) {
    GpuInfo i;
    i.index = g;
    i.bdf = kBdfs[g];
    i.model = "AMD Instinct MI300X";
    i.serial = GpuSerial(n, g);
    char uid[24];
    std::snprintf(uid, sizeof uid, "0x%016llx",
                  0x5a1c00000000ull +
                      static_cast<unsigned long long>(n * kGpusPerNode + g));
    i.unique_id = uid;
    i.vbios_version = "113-M3000100-102";
    i.pci_vendor_id = 0x1002;
    i.pci_device_id = 0x74a1;
    i.numa_node = g / 4;
    i.vram_total_bytes = uint64_t{192} << 30;
    i.drm_card = "card" + std::to_string(g + 1);
    i.drm_render = "renderD" + std::to_string(128 + g);
    i.kfd_gpu_id = 40000 + g;
    i.compute_partition = "SPX";
    i.memory_partition = "NPS1";
    i.driver = "amdgpu";
    i.driver_version = "6.7.0";
    i.power_cap_watts = 750;
    s.gpus.push_back(i);
    GpuSample m;
    m.time = s.time;
    m.utilization_ratio = ((n * kGpusPerNode + g) % 101) / 100.0;
    m.memory_utilization_ratio = 0.42;
    m.vram_used_bytes = uint64_t{97} << 30;
    m.power_watts = 512.5;
    m.energy_joules = 3.2e9;
    m.temperature_edge_celsius = 48;
    m.temperature_junction_celsius = 61;
    m.temperature_memory_celsius = 55;
    m.clock_graphics_hz = 2.1e9;
    m.clock_memory_hz = 1.3e9;
    m.ecc_correctable_errors = 0;
    m.ecc_uncorrectable_errors = 0;
    s.gpu_samples.push_back(m);
  }
  for (int r = 0; r < kRdmaPerNode; ++r) {
    RdmaDevice d;
    d.name = "mlx5_" + std::to_string(r);
    char guid[24];
    std::snprintf(guid, sizeof guid, "b8ce:f603:%04x:%04x", n, r);
    d.node_guid = guid;
    d.sys_image_guid = guid;
    d.fw_version = "28.39.1002";
    d.board_id = "MT_0000000838";
    d.hca_type = "MT4129";
    d.node_type = "CA";
    d.netdevs = {"ibp" + std::to_string(r)};
    char bdf[16];
    std::snprintf(bdf, sizeof bdf, "0000:%02x:00.0", 0x0c + 0x20 * r);
    d.bdf = bdf;
    d.numa_node = r / 2;
    d.ports.push_back({1, "ACTIVE", "LinkUp", "InfiniBand",
                       "400 Gb/sec (4X NDR)", 400.0,
                       static_cast<uint32_t>(n * kRdmaPerNode + r + 1)});
    s.rdma_devices.push_back(d);
  }
  return s;
}

// The agents: one HttpServer answering GET /n<i>/report for node i with
// that node's pre-rendered report.
class AgentServer {
 public:
  Status Start() {
    for (int n = 0; n < kNodes; ++n) {
      HttpResponse r;
      RespondData(agent::ReportJson(AgentSnapshot(n)), &r);
      bodies_.push_back(std::move(r.body));
    }
    HttpServerOptions o;
    o.listen = "127.0.0.1:0";
    o.max_connections = 4096;
    o.max_connections_per_peer = 4096;
    o.threads = 4;
    const std::set<pid_t> before = Threads();
    LENS_ASSIGN_OR_RETURN(server_, HttpServer::Create(o));
    for (int n = 0; n < kNodes; ++n) {
      server_->Handle("GET", "/n" + std::to_string(n) + "/report",
                      [this, n](const HttpRequest&, HttpResponse* r) {
                        reads_.fetch_add(1, std::memory_order_relaxed);
                        r->body = bodies_[n];
                      });
    }
    LENS_RETURN_IF_ERROR(server_->Start());
    for (pid_t t : Threads()) {
      if (!before.count(t)) threads_.push_back(t);
    }
    if (threads_.empty()) {
      return InternalError("the agents' server started no thread to measure");
    }
    return OkStatus();
  }
  void Stop() {
    if (server_) server_->Stop();
  }

  std::string url() const { return server_->url(); }
  size_t report_bytes() const {
    return bodies_.empty() ? 0 : bodies_[0].size();
  }
  uint64_t reads() const { return reads_.load(); }
  size_t threads() const { return threads_.size(); }
  // CPU of the server's threads so far (its event loop and workers).
  double CpuSeconds() const {
    double s = 0;
    for (pid_t t : threads_) s += ThreadCpuSeconds(t);
    return s;
  }

 private:
  std::vector<std::string> bodies_;
  std::unique_ptr<HttpServer> server_;
  std::vector<pid_t> threads_;
  std::atomic<uint64_t> reads_{0};
};

// The store as the controller (nodes, workloads, pods and their links) and
// the container event stream (running containers with the GPUs they hold)
// write it.
Status Seed(Store& store) {
  const Timestamp now = std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
  std::vector<NodeRecord> nodes;
  for (int n = 0; n < kNodes; ++n) {
    NodeRecord r;
    r.name = NodeName(n);
    r.address =
        "10.1." + std::to_string(n / 250) + "." + std::to_string(n % 250 + 1);
    r.status = "Ready";
    r.gpu_vendor = "amd";
    r.gpu_model = "AMD Instinct MI300X";
    r.gpu_count = kGpusPerNode;
    r.gpu_allocatable = kGpusPerNode;
    r.cpu_count = 384;
    r.memory_bytes = int64_t{2304} << 30;
    r.kernel_version = "6.8.0-45-generic";
    r.os_image = "Ubuntu 22.04.4 LTS";
    r.kubelet_version = "v1.30.4";
    r.container_runtime = "containerd://1.7.20";
    r.labels = {{"kubernetes.io/hostname", r.name},
                {"node.kubernetes.io/instance-type", "mi300x-8x"}};
    r.updated_at = now;
    nodes.push_back(std::move(r));
  }
  LENS_RETURN_IF_ERROR(
      store.nodes().UpsertNodes(nodes, NodeColumns::kKubernetes));

  // Pod p runs on node p / 10 and belongs to workload p % 2000 (5 pods on
  // 5 nodes each).
  std::vector<WorkloadRecord> workloads(kWorkloads);
  for (int w = 0; w < kWorkloads; ++w) {
    WorkloadRecord& r = workloads[w];
    r.uid = Uid(2, w);
    const bool job = w % 4 != 0;
    r.api_version = job ? "kubeflow.org/v1" : "apps/v1";
    r.kind = job ? "PyTorchJob" : "Deployment";
    r.name = (job ? "train-" : "serve-") + std::to_string(w);
    r.namespace_name = "team-" + std::to_string(w % 40);
    r.status = "Running";
    r.created_at = now - std::chrono::hours(4) + std::chrono::seconds(w);
    r.updated_at = r.created_at;
  }
  std::vector<PodRecord> pods;
  std::vector<ContainerRecord> containers;
  std::vector<std::pair<std::string, std::string>> links;
  for (int p = 0; p < kPods; ++p) {
    const int n = p / kPodsPerNode, slot = p % kPodsPerNode;
    const int first_gpu = [&] {
      int sum = 0;
      for (int s = 0; s < slot; ++s) sum += kGpuPattern[n % 5][s];
      return sum;
    }();
    WorkloadRecord& w = workloads[p % kWorkloads];
    PodRecord pod;
    pod.uid = Uid(3, p);
    pod.name = w.name + "-" + std::to_string(p / kWorkloads);
    pod.namespace_name = w.namespace_name;
    pod.node = NodeName(n);
    pod.phase = "Running";
    pod.owner_uid = w.uid;
    pod.ip =
        "10.244." + std::to_string(p / 250) + "." + std::to_string(p % 250 + 1);
    pod.gpu_allocated = kGpuPattern[n % 5][slot];
    pod.running = true;
    // Kubernetes timestamps are whole seconds: the pods of a workload were
    // created in the same second, 10 s after it.
    pod.created_at = w.created_at + std::chrono::seconds(10);
    pod.started_at = pod.created_at + std::chrono::seconds(20);
    pod.updated_at = *pod.started_at;
    w.gpu_request += pod.gpu_allocated;
    ++w.active_pods;
    ContainerRecord c;
    char id[72];
    std::snprintf(id, sizeof id, "%064x", p + 1);
    c.container_id = id;
    c.node = pod.node;
    c.runtime_namespace = "k8s.io";
    c.pod_uid = pod.uid;
    c.pod_name = pod.name;
    c.pod_namespace = pod.namespace_name;
    c.container_name = "main";
    c.image = "rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_2.3.0";
    c.state = ContainerState::kRunning;
    c.pid = 10000 + p;
    c.created_at = *pod.started_at;
    c.started_at = c.created_at;
    c.updated_at = c.created_at;
    for (int g = first_gpu; g < first_gpu + pod.gpu_allocated; ++g) {
      c.devices.push_back(
          {DeviceKind::kGpu, GpuSerial(n, g), "", "pod-resources"});
    }
    links.emplace_back(w.uid, pod.uid);
    pods.push_back(std::move(pod));
    containers.push_back(std::move(c));
  }
  LENS_RETURN_IF_ERROR(store.pods().UpsertWorkloads(workloads));
  for (size_t i = 0; i < pods.size(); i += kBatch) {
    const size_t n = std::min<size_t>(kBatch, pods.size() - i);
    LENS_RETURN_IF_ERROR(
        store.pods().UpsertPods(std::span(pods).subspan(i, n)));
    LENS_RETURN_IF_ERROR(store.pods().LinkPods(std::span(links).subspan(i, n)));
    LENS_RETURN_IF_ERROR(store.containers().UpsertContainers(
        std::span(containers).subspan(i, n)));
  }
  return OkStatus();
}

// ---- rounds ---------------------------------------------------------------

struct Cost {
  double cpu_s = 0;  // this process less the agents' server
  double wall_s = 0;
  double server_cpu_s = 0;
};

struct Round {
  std::vector<Cost> jobs;  // in ScheduledJobNames() order
  Cost total;
  uint64_t agent_reads = 0;
  std::string error;  // the first job that failed, and why
};

Round RunRound(ScheduledJobs& jobs, const AgentServer& server) {
  Round round;
  const uint64_t reads = server.reads();
  for (std::string_view name : ScheduledJobNames()) {
    const double cpu = ProcessCpuSeconds(), server_cpu = server.CpuSeconds();
    const Clock::time_point start = Clock::now();
    const Status st = jobs.RunOnce(name);
    Cost c;
    c.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    c.server_cpu_s = server.CpuSeconds() - server_cpu;
    c.cpu_s = ProcessCpuSeconds() - cpu - c.server_cpu_s;
    round.jobs.push_back(c);
    round.total.cpu_s += c.cpu_s;
    round.total.wall_s += c.wall_s;
    round.total.server_cpu_s += c.server_cpu_s;
    if (!st.ok() && round.error.empty()) {
      round.error = std::string(name) + ": " + st.message();
    }
  }
  round.agent_reads = server.reads() - reads;
  return round;
}

// "gpu-allocation" -> "cpu_allocation_s".
std::string CounterName(std::string_view job) {
  std::string s(job);
  if (s.rfind("gpu-", 0) == 0) s = s.substr(4);
  std::replace(s.begin(), s.end(), '-', '_');
  return "cpu_" + s + "_s";
}

// The seeded store, the agents and the jobs, built once; the first round
// runs when they are built.
struct Fixture {
  AgentServer server;
  std::unique_ptr<Store> store;
  std::unique_ptr<ScheduledJobs> jobs;
  double seed_s = 0;
  Round first;
  int64_t device_changes = 0;  // CREATEs the first round logged
  std::string error;
};

std::unique_ptr<Fixture> g_fixture;

Fixture& SharedFixture() {
  if (g_fixture) return *g_fixture;
  g_fixture = std::make_unique<Fixture>();
  Fixture& f = *g_fixture;
  auto fail = [&](const std::string& what, const Status& st) -> Fixture& {
    f.error = what + ": " + st.message();
    return f;
  };
  if (Status st = f.server.Start(); !st.ok()) return fail("agents", st);
  auto store = Store::Open("sqlite://" + (g_dir / "jobs.db").string());
  if (!store.ok()) return fail("store", store.status());
  f.store = std::move(*store);
  const Clock::time_point start = Clock::now();
  if (Status st = Seed(*f.store); !st.ok()) return fail("seed", st);
  f.seed_s = std::chrono::duration<double>(Clock::now() - start).count();
  ScheduledJobsOptions o;
  for (int n = 0; n < kNodes; ++n) {
    o.agents.push_back(
        {NodeName(n), f.server.url() + "/n" + std::to_string(n)});
  }
  o.agent_concurrency = 16;
  o.node_info = {kAgentInterval, std::chrono::seconds(30)};
  o.device_info = {kAgentInterval, std::chrono::seconds(30)};
  auto jobs = ScheduledJobs::Create(o, f.store.get(), nullptr);
  if (!jobs.ok()) return fail("jobs", jobs.status());
  f.jobs = std::move(*jobs);
  f.first = RunRound(*f.jobs, f.server);
  auto changes = f.store->nodes().ListDeviceChanges("", {}, {1, 1});
  if (!changes.ok()) return fail("device changes", changes.status());
  f.device_changes = changes->total;
  return f;
}

// Counters of one round (or the mean of several).
void Report(benchmark::State& state, const Round& r) {
  state.counters["cpu_s"] = r.total.cpu_s;
  state.counters["server_cpu_s"] = r.total.server_cpu_s;
  state.counters["agent_reads"] = static_cast<double>(r.agent_reads);
  const auto& names = ScheduledJobNames();
  for (size_t i = 0; i < names.size(); ++i) {
    state.counters[CounterName(names[i])] = r.jobs[i].cpu_s;
  }
}

// The mean of `rounds`, job by job.
Round Mean(const std::vector<Round>& rounds) {
  Round m;
  const double k = static_cast<double>(rounds.size());
  auto add = [k](const Cost& c, Cost* sum) {
    sum->cpu_s += c.cpu_s / k;
    sum->wall_s += c.wall_s / k;
    sum->server_cpu_s += c.server_cpu_s / k;
  };
  for (const Round& r : rounds) {
    m.jobs.resize(r.jobs.size());
    for (size_t i = 0; i < r.jobs.size(); ++i) add(r.jobs[i], &m.jobs[i]);
    add(r.total, &m.total);
    m.agent_reads += r.agent_reads;
  }
  m.agent_reads /= std::max<size_t>(1, rounds.size());
  return m;
}

// The per-job figures on stderr, beside the benchmark's table.
void PrintJobs(const char* title, const Round& r) {
  std::fprintf(stderr, "%s:\n", title);
  auto line = [](std::string_view name, const Cost& c) {
    std::fprintf(stderr,
                 "  %-16.*s cpu %7.1f ms  wall %7.1f ms  server cpu %6.1f ms\n",
                 static_cast<int>(name.size()), name.data(), c.cpu_s * 1e3,
                 c.wall_s * 1e3, c.server_cpu_s * 1e3);
  };
  const auto& names = ScheduledJobNames();
  for (size_t i = 0; i < names.size(); ++i) line(names[i], r.jobs[i]);
  line("round", r.total);
}

// The first round: every agent read, 8,000 GPUs and 4,000 RDMA devices
// synced (CREATE in the change log), a history point per node.
void BM_FirstRound(benchmark::State& state) {
  Fixture& f = SharedFixture();
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  for (auto _ : state) state.SetIterationTime(f.first.total.wall_s);
  if (!f.first.error.empty()) return state.SkipWithError(f.first.error.c_str());
  Report(state, f.first);
  state.counters["device_changes"] = static_cast<double>(f.device_changes);
  state.counters["seed_s"] = f.seed_s;
  state.counters["report_bytes"] = static_cast<double>(f.server.report_bytes());
  state.counters["server_threads"] = static_cast<double>(f.server.threads());
  state.SetItemsProcessed(kNodes);
  PrintJobs("first round", f.first);
}
BENCHMARK(BM_FirstRound)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// A round after the first: every agent read again, nothing new to sync.
void BM_SteadyRound(benchmark::State& state) {
  Fixture& f = SharedFixture();
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  std::vector<Round> rounds;
  for (auto _ : state) {
    std::this_thread::sleep_for(kRoundGap);  // every agent answer is old
    Round r = RunRound(*f.jobs, f.server);
    state.SetIterationTime(r.total.wall_s);
    if (!r.error.empty()) return state.SkipWithError(r.error.c_str());
    if (r.agent_reads != kNodes) {
      const std::string why = "the round read " +
                              std::to_string(r.agent_reads) +
                              " agents, not each once";
      return state.SkipWithError(why.c_str());
    }
    rounds.push_back(std::move(r));
  }
  const Round mean = Mean(rounds);
  Report(state, mean);
  state.SetItemsProcessed(state.iterations() * kNodes);
  PrintJobs("steady round (mean)", mean);
}
BENCHMARK(BM_SteadyRound)
    ->Iterations(5)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace lens

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  lens::g_dir = std::filesystem::temp_directory_path() /
                ("lens_jobs_bench_" + std::to_string(::getpid()));
  std::filesystem::create_directories(lens::g_dir);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (lens::g_fixture) lens::g_fixture->server.Stop();
  lens::g_fixture.reset();
  std::filesystem::remove_all(lens::g_dir);
  return 0;
}
