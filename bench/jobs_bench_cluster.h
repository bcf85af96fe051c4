// The cluster of bench/jobs_bench.cc: its sizes, the CPU accounting of this
// process's threads, what each node agent publishes, the agents' HTTP
// server, and the store seeded as the controller and the container stream
// write it. One translation unit includes it.
#ifndef LENS_BENCH_JOBS_BENCH_CLUSTER_H_
#define LENS_BENCH_JOBS_BENCH_CLUSTER_H_

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

#include "agent/node_agent.h"
#include "agent/rest.h"
#include "http/http.h"
#include "lens/store.h"
#include "scheduled/jobs.h"

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
    d.ports.push_back({.port = 1,
                       .state = "ACTIVE",
                       .phys_state = "LinkUp",
                       .link_layer = "InfiniBand",
                       .rate = "400 Gb/sec (4X NDR)",
                       .rate_gbps = 400.0,
                       .lid = static_cast<uint32_t>(n * kRdmaPerNode + r + 1)});
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

}  // namespace
}  // namespace lens

#endif  // LENS_BENCH_JOBS_BENCH_CLUSTER_H_
