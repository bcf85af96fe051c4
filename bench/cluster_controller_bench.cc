// The cluster controller against a 1,000-node cluster with 10,000 pods
// (1,000 of them 8-GPU pods of 125 PyTorchJobs): the initial sync, with the
// CPU and peak RSS it costs, and watch throughput (pod updates per second
// into SQLite). Budgets: under 2 s of CPU and 100 MB for the sync, at least
// 5,000 watch events/s.
//
// The API server (test/support's fake) runs in a forked child, so that
// getrusage() and /proc/self/status of this process count the controller
// (informers, decoding, SQLite) alone; the server's own CPU and RSS come
// back from the child as the server_* counters. Objects are the fixtures of
// test/fixtures/kube with names, uids, owners and nodes templated.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster/controller.h"
#include "cluster/pod_model.h"
#include "kube_api_server.h"
#include "lens/kube.h"
#include "lens/store.h"

namespace lens::cluster {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kNodes = 1000;
constexpr int kJobs = 125;
constexpr int kPodsPerJob = 8;
constexpr int kGpuPods = kJobs * kPodsPerJob;
constexpr int kReplicaSets = 700;
constexpr int kPodsPerReplicaSet = 10;
constexpr int kBarePods = 2000;  // 7,000 + 2,000 pods without GPUs
constexpr int kUpdates = 20000;  // a multiple of kGpuPods: each gets 20

std::filesystem::path g_dir;  // the temp dir of this run

// ---- measuring this process ----------------------------------------------

double CpuSeconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// VmRSS and VmHWM (peak) of this process, in MB.
struct Memory {
  double rss_mb = 0;
  double peak_mb = 0;
};
Memory ReadMemory() {
  Memory m;
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0)
      m.rss_mb = std::stod(line.substr(6)) / 1024;
    if (line.rfind("VmHWM:", 0) == 0) {
      m.peak_mb = std::stod(line.substr(6)) / 1024;
    }
  }
  return m;
}
// Returns freed heap to the system and resets VmHWM to the current RSS
// (Linux >= 4.0), so that each benchmark's peak is its own.
void ResetPeakRss() {
  ::malloc_trim(0);
  std::ofstream("/proc/self/clear_refs") << "5";
}

bool WaitUntil(const std::function<bool()>& done, std::chrono::seconds limit) {
  const auto end = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// ---- the cluster's objects (built in the server's process) -----------------

using Document = rapidjson::Document;

Document FixtureObject(const char* file, const char* name) {
  std::ifstream in(std::string(LENS_FIXTURES_DIR) + "/kube/" + file);
  std::stringstream text;
  text << in.rdbuf();
  Document all;
  all.Parse(text.str().c_str());
  Document out;
  for (const auto& o : all.GetArray()) {
    if (std::strcmp(o["metadata"]["name"].GetString(), name) == 0) {
      out.CopyFrom(o, out.GetAllocator());
      out["metadata"].RemoveMember("resourceVersion");
      return out;
    }
  }
  std::fprintf(stderr, "no object %s in %s\n", name, file);
  std::_Exit(2);
}

void Set(Document& d, rapidjson::Value& object, const char* name,
         const std::string& value) {
  rapidjson::Value v(value.c_str(),
                     static_cast<rapidjson::SizeType>(value.size()),
                     d.GetAllocator());
  if (auto it = object.FindMember(name); it != object.MemberEnd()) {
    it->value = v;
  } else {
    object.AddMember(rapidjson::Value(name, d.GetAllocator()), v,
                     d.GetAllocator());
  }
}

std::string Json(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// Unique per (kind tag, index), in the form of a v4 UUID.
std::string Uid(int tag, int index) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-be9c-4c1a-8d2e-%012x", tag, index);
  return buf;
}

std::string NodeName(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "mi300x-node-%04d", i);
  return buf;
}

// Sets metadata name/namespace/uid and the controller owner reference.
void Identify(Document& d, const std::string& name, const std::string& ns,
              const std::string& uid, const std::string& owner_name = "",
              const std::string& owner_uid = "") {
  rapidjson::Value& meta = d["metadata"];
  Set(d, meta, "name", name);
  if (!ns.empty()) Set(d, meta, "namespace", ns);
  Set(d, meta, "uid", uid);
  if (!owner_uid.empty()) {
    rapidjson::Value& ref = meta["ownerReferences"][0];
    Set(d, ref, "name", owner_name);
    Set(d, ref, "uid", owner_uid);
  }
}

struct Cluster {
  std::vector<std::string> objects;  // in creation order: owners first
  // Each GPU pod split around its container's restartCount, for updates.
  std::vector<std::pair<std::string, std::string>> gpu_pods;
};

Cluster MakeCluster() {
  Cluster c;
  Document node = FixtureObject("nodes.json", "mi300x-node-01");
  for (int i = 0; i < kNodes; ++i) {
    Identify(node, NodeName(i), "", Uid(1, i));
    Set(node, node["metadata"]["labels"], "kubernetes.io/hostname",
        NodeName(i));
    c.objects.push_back(Json(node));
  }
  Document job = FixtureObject("pytorchjob.json", "llama-pretrain");
  job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = kPodsPerJob - 1;
  Document master = FixtureObject("pytorchjob.json", "llama-pretrain-master-0");
  Document worker = FixtureObject("pytorchjob.json", "llama-pretrain-worker-0");
  for (int j = 0; j < kJobs; ++j) {
    const std::string name = "llama-pretrain-" + std::to_string(j);
    const std::string ns = "ml-" + std::to_string(j % 5);
    Identify(job, name, ns, Uid(2, j));
    c.objects.push_back(Json(job));
    for (int r = 0; r < kPodsPerJob; ++r) {
      Document& pod = r == 0 ? master : worker;
      const int i = j * kPodsPerJob + r;
      Identify(
          pod,
          name + (r == 0 ? "-master-0" : "-worker-" + std::to_string(r - 1)),
          ns, Uid(3, i), name, Uid(2, j));
      rapidjson::Value& labels = pod["metadata"]["labels"];
      Set(pod, labels, "training.kubeflow.org/job-name", name);
      Set(pod, labels, "training.kubeflow.org/replica-index",
          std::to_string(r == 0 ? 0 : r - 1));
      Set(pod, pod["spec"], "nodeName", NodeName(i % kNodes));
      std::string json = Json(pod);
      // The last restartCount is the training container's.
      const std::string key = "\"restartCount\":";
      const size_t at = json.rfind(key) + key.size();
      const size_t end = json.find_first_not_of("0123456789", at);
      c.gpu_pods.emplace_back(json.substr(0, at), json.substr(end));
      c.objects.push_back(std::move(json));
    }
  }
  Document rs = FixtureObject("deployment.json", "vllm-serve-7d9f8c6b5d");
  rs["metadata"].RemoveMember("ownerReferences");
  Document rs_pod =
      FixtureObject("plain-pods.json", "coredns-7db6d8ff4d-nx29g");
  int plain = 0;
  for (int r = 0; r < kReplicaSets; ++r) {
    const std::string name = "svc-" + std::to_string(r) + "-7db6d8ff4d";
    const std::string ns = "team-" + std::to_string(r % 40);
    Identify(rs, name, ns, Uid(4, r));
    c.objects.push_back(Json(rs));
    for (int p = 0; p < kPodsPerReplicaSet; ++p, ++plain) {
      Identify(rs_pod, name + "-" + std::to_string(10000 + p), ns,
               Uid(5, plain), name, Uid(4, r));
      Set(rs_pod, rs_pod["spec"], "nodeName", NodeName(plain % kNodes));
      c.objects.push_back(Json(rs_pod));
    }
  }
  Document bare = FixtureObject("plain-pods.json", "netshoot-debug");
  for (int b = 0; b < kBarePods; ++b, ++plain) {
    Identify(bare, "debug-" + std::to_string(b),
             "team-" + std::to_string(b % 40), Uid(5, plain));
    Set(bare, bare["spec"], "nodeName", NodeName(plain % kNodes));
    c.objects.push_back(Json(bare));
  }
  return c;
}

// ---- the API server's process ----------------------------------------------

// Lines over two pipes. Parent -> child: "usage", "update <n>"; EOF ends
// the child. Child -> parent: "ready <url>" once populated, "usage <cpu_s>
// <rss_mb> <peak_mb>", "updated <seconds> <last pod uid> <its last
// resourceVersion> <restarts>".
[[noreturn]] void ServeInChild(FILE* in, FILE* out) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  Cluster cluster = MakeCluster();
  test::KubeApiServer server;
  if (!server.ok()) {
    std::fprintf(out, "error %s\n", server.error().c_str());
    std::fflush(out);
    std::_Exit(1);
  }
  for (const std::string& o : cluster.objects) {
    if (server.Create(o).empty()) {
      std::fprintf(out, "error cannot create %.200s\n", o.c_str());
      std::fflush(out);
      std::_Exit(1);
    }
  }
  cluster.objects = {};
  std::fprintf(out, "ready %s\n", server.url().c_str());
  std::fflush(out);
  std::vector<int> restarts(cluster.gpu_pods.size(), 0);
  char line[256];
  while (std::fgets(line, sizeof line, in)) {
    int n = 0;
    if (std::strncmp(line, "usage", 5) == 0) {
      const Memory m = ReadMemory();
      std::fprintf(out, "usage %f %f %f\n", CpuSeconds(), m.rss_mb, m.peak_mb);
    } else if (std::sscanf(line, "update %d", &n) == 1) {
      const auto start = Clock::now();
      size_t pod = 0;
      for (int k = 0; k < n; ++k) {
        pod = static_cast<size_t>(k) % cluster.gpu_pods.size();
        const auto& [head, tail] = cluster.gpu_pods[pod];
        if (server.Update(head + std::to_string(++restarts[pod]) + tail)
                .empty()) {
          std::fprintf(out, "error update %zu failed\n", pod);
          break;
        }
      }
      std::fprintf(out, "updated %f %s %llu %d\n", Since(start),
                   Uid(3, static_cast<int>(pod)).c_str(),
                   static_cast<unsigned long long>(server.resource_version()),
                   restarts[pod]);
    }
    std::fflush(out);
  }
  std::_Exit(0);  // no atexit handlers or stdio buffers of the parent
}

class ServerProcess {
 public:
  struct Usage {
    double cpu_s = 0;
    double rss_mb = 0;
    double peak_mb = 0;
  };
  struct Updated {
    double seconds = 0;
    std::string last_uid;
    std::string last_resource_version;
    int restarts = 0;
  };

  // Forks while this process has one thread (between benchmarks).
  ServerProcess() {
    int down[2], up[2];
    if (::pipe(down) != 0 || ::pipe(up) != 0) return;
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(down[1]);
      ::close(up[0]);
      ServeInChild(::fdopen(down[0], "r"), ::fdopen(up[1], "w"));
    }
    ::close(down[0]);
    ::close(up[1]);
    pid_ = pid;
    to_ = ::fdopen(down[1], "w");
    from_ = ::fdopen(up[0], "r");
    const std::string line = ReadLine();
    if (line.rfind("ready ", 0) == 0) {
      url_ = line.substr(6);
    } else {
      error_ = line.empty() ? "the server's process ended" : line;
    }
  }
  ~ServerProcess() {
    if (to_) std::fclose(to_);
    if (from_) std::fclose(from_);
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
  }

  const std::string& url() const { return url_; }
  const std::string& error() const { return error_; }

  Usage GetUsage() {
    Send("usage");
    Usage u;
    std::sscanf(ReadLine().c_str(), "usage %lf %lf %lf", &u.cpu_s, &u.rss_mb,
                &u.peak_mb);
    return u;
  }
  void StartUpdates(int count) { Send("update " + std::to_string(count)); }
  Updated WaitUpdated() {
    const std::string line = ReadLine();
    Updated u;
    char uid[64] = {}, rv[32] = {};
    if (std::sscanf(line.c_str(), "updated %lf %63s %31s %d", &u.seconds, uid,
                    rv, &u.restarts) == 4) {
      u.last_uid = uid;
      u.last_resource_version = rv;
    }
    return u;
  }

 private:
  void Send(const std::string& line) {
    std::fprintf(to_, "%s\n", line.c_str());
    std::fflush(to_);
  }
  std::string ReadLine() {
    char buf[512];
    if (!from_ || !std::fgets(buf, sizeof buf, from_)) return "";
    std::string s(buf);
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }

  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  std::string url_;
  std::string error_;
};

// ---- the controller's process ----------------------------------------------

KubeConnection Connection(const std::string& url) {
  KubeConnection c;
  c.server = url;
  return c;
}

// A controller on its own thread, on a fresh SQLite store.
class RunningController {
 public:
  explicit RunningController(const std::string& url, const std::string& db) {
    db_ = (g_dir / db).string();
    auto client = KubeClient::Create(Connection(url));
    auto store = Store::Open("sqlite://" + db_);
    if (!client.ok() || !store.ok()) {
      error_ =
          !client.ok() ? client.status().message() : store.status().message();
      return;
    }
    client_ = std::move(*client);
    store_ = std::move(*store);
    controller_ = std::make_unique<Controller>(client_.get(), store_.get(),
                                               ControllerOptions{});
    thread_ = std::thread([this] { (void)controller_->Run(); });
  }
  ~RunningController() {
    if (controller_) controller_->Stop();
    if (thread_.joinable()) thread_.join();
    controller_.reset();
    store_.reset();
    std::filesystem::remove(db_);
  }

  const std::string& error() const { return error_; }
  Controller& controller() { return *controller_; }
  Store& store() { return *store_; }

  // Ready, every GPU pod, workload and node written, nothing queued.
  bool Synced() {
    const ControllerStats s = controller_->Stats();
    if (!s.ready || s.gpu_pods < kGpuPods || s.nodes_written < kNodes ||
        s.queue_depth > 0) {
      return false;
    }
    WorkloadQuery q;
    q.page.page_size = 1;
    auto w = store_->pods().ListWorkloads(q);
    return w.ok() && w->total >= kJobs;
  }

 private:
  std::string db_;
  std::string error_;
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Controller> controller_;
  std::thread thread_;
};

void Fail(benchmark::State& state, const std::string& why) {
  state.SkipWithError(why.c_str());
}

// From controller start until every GPU pod and workload is stored and the
// controller is Ready(); manual time is that wall time.
void BM_InitialSync(benchmark::State& state) {
  ServerProcess server;
  if (!server.error().empty()) return Fail(state, server.error());
  for (auto _ : state) {
    ResetPeakRss();
    const Memory before = ReadMemory();
    const ServerProcess::Usage server_before = server.GetUsage();
    const double cpu_before = CpuSeconds();
    const auto start = Clock::now();
    RunningController c(server.url(), "sync.db");
    if (!c.error().empty()) return Fail(state, c.error());
    if (!WaitUntil([&] { return c.Synced(); }, std::chrono::seconds(60))) {
      return Fail(state,
                  "no sync within 60 s: " + c.controller().Stats().last_error);
    }
    const double wall = Since(start);
    const double cpu = CpuSeconds() - cpu_before;
    const Memory after = ReadMemory();
    const ServerProcess::Usage server_after = server.GetUsage();
    state.SetIterationTime(wall);
    const ControllerStats s = c.controller().Stats();
    PodQuery all;
    all.page.page_size = 1;
    auto pods = c.store().pods().ListPods(all);
    state.counters["cpu_s"] = cpu;
    state.counters["server_cpu_s"] = server_after.cpu_s - server_before.cpu_s;
    // The controller's process (the server is not in it); base: before the
    // controller started (the benchmark program itself).
    state.counters["rss_mb"] = after.peak_mb;
    state.counters["rss_base_mb"] = before.rss_mb;
    state.counters["rss_now_mb"] = after.rss_mb;
    state.counters["server_rss_mb"] = server_after.rss_mb;
    WorkloadQuery jobs;
    jobs.page.page_size = 1;
    auto workloads = c.store().pods().ListWorkloads(jobs);
    state.counters["gpu_pods"] = pods.ok() ? pods->total : -1;
    state.counters["workloads"] = workloads.ok() ? workloads->total : -1;
    state.counters["pods_cached"] = s.pods.objects;
    state.counters["nodes_cached"] = s.nodes.objects;
    state.counters["flushes"] = s.flushes;
    state.counters["flush_s"] = s.flush_seconds_total;
  }
}
BENCHMARK(BM_InitialSync)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// The floor under the sync: the same lists through the informers alone
// (transport, metadata decoding, cache), no controller, no store.
void BM_InformersOnlySync(benchmark::State& state) {
  ServerProcess server;
  if (!server.error().empty()) return Fail(state, server.error());
  class Counter : public KubeEventHandler {
   public:
    void OnAdd(const KubeObject&) override { ++added; }
    void OnUpdate(const KubeObject&, const KubeObject&) override {}
    void OnDelete(const KubeObject&, bool) override {}
    std::atomic<int> added{0};
  };
  const GpuResourceMatcher gpus;
  for (auto _ : state) {
    ResetPeakRss();
    const Memory before = ReadMemory();
    const ServerProcess::Usage server_before = server.GetUsage();
    const double cpu_before = CpuSeconds();
    const auto start = Clock::now();
    auto client = KubeClient::Create(Connection(server.url()));
    if (!client.ok()) return Fail(state, client.status().message());
    Counter pod_count, node_count;
    KubeInformerOptions pods;
    pods.resource = {"", "v1", "pods", "Pod", true};
    pods.keep_json = [&](std::string_view json) {
      return MayRequestGpus(json, gpus);
    };
    KubeInformerOptions nodes;
    nodes.resource = {"", "v1", "nodes", "Node", false};
    KubeInformer pod_informer(client->get(), pods, &pod_count);
    KubeInformer node_informer(client->get(), nodes, &node_count);
    std::thread a([&] { (void)pod_informer.Run(); });
    std::thread b([&] { (void)node_informer.Run(); });
    const bool synced = WaitUntil(
        [&] {
          return pod_informer.Stats().synced && node_informer.Stats().synced;
        },
        std::chrono::seconds(60));
    const double wall = Since(start);
    const double cpu = CpuSeconds() - cpu_before;
    const ServerProcess::Usage server_after = server.GetUsage();
    pod_informer.Stop();
    node_informer.Stop();
    a.join();
    b.join();
    if (!synced) return Fail(state, "informers did not sync within 60 s");
    state.SetIterationTime(wall);
    state.counters["cpu_s"] = cpu;
    state.counters["server_cpu_s"] = server_after.cpu_s - server_before.cpu_s;
    state.counters["rss_mb"] = ReadMemory().peak_mb;
    state.counters["rss_base_mb"] = before.rss_mb;
    state.counters["objects"] = pod_count.added + node_count.added;
  }
}
BENCHMARK(BM_InformersOnlySync)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// After the sync, kUpdates MODIFIED events (a GPU pod's training container
// restarts once more) as fast as the server takes them; manual time runs
// until the informer has applied them all and the last pod's row and
// snapshot in SQLite show its last state.
void BM_WatchThroughput(benchmark::State& state) {
  ServerProcess server;
  if (!server.error().empty()) return Fail(state, server.error());
  ResetPeakRss();
  const Memory base = ReadMemory();
  RunningController c(server.url(), "watch.db");
  if (!c.error().empty()) return Fail(state, c.error());
  if (!WaitUntil([&] { return c.Synced(); }, std::chrono::seconds(60))) {
    return Fail(state, "no sync within 60 s");
  }
  const double rss_sync_mb = ReadMemory().peak_mb;
  for (auto _ : state) {
    ResetPeakRss();
    const ControllerStats before = c.controller().Stats();
    const ServerProcess::Usage server_before = server.GetUsage();
    const double cpu_before = CpuSeconds();
    const auto start = Clock::now();
    server.StartUpdates(kUpdates);
    if (!WaitUntil(
            [&] {
              return c.controller().Stats().pods.events >=
                     before.pods.events + kUpdates;
            },
            std::chrono::seconds(60))) {
      return Fail(state, "the watch did not deliver every update in 60 s");
    }
    const double delivered = Since(start);
    const ServerProcess::Updated u = server.WaitUpdated();
    if (u.last_uid.empty()) return Fail(state, "the updates failed");
    auto caught_up = [&] {
      auto pod = c.store().pods().GetPod(u.last_uid);
      if (!pod.ok() || pod->restarts != u.restarts) return false;
      auto snaps = c.store().pods().ListPodSnapshots(u.last_uid);
      if (!snaps.ok()) return false;
      for (const PodSnapshotRecord& s : *snaps) {
        if (s.resource_version == u.last_resource_version) return true;
      }
      return false;
    };
    if (!WaitUntil(caught_up, std::chrono::seconds(60))) {
      return Fail(state, "the store did not catch up in 60 s");
    }
    const double wall = Since(start);
    const double cpu = CpuSeconds() - cpu_before;
    const ServerProcess::Usage server_after = server.GetUsage();
    state.SetIterationTime(wall);
    const ControllerStats after = c.controller().Stats();
    state.counters["events_per_s"] = kUpdates / wall;
    state.counters["delivered_per_s"] = kUpdates / delivered;
    state.counters["server_accept_per_s"] = kUpdates / u.seconds;
    state.counters["cpu_s"] = cpu;
    state.counters["server_cpu_s"] = server_after.cpu_s - server_before.cpu_s;
    state.counters["pods_written"] = after.pods_written - before.pods_written;
    state.counters["snapshots"] =
        after.snapshots_written - before.snapshots_written;
    state.counters["events_written"] =
        after.pod_events_written - before.pod_events_written;
    state.counters["flushes"] = after.flushes - before.flushes;
    state.counters["flush_s"] =
        after.flush_seconds_total - before.flush_seconds_total;
    state.counters["rss_mb"] = ReadMemory().peak_mb;  // during the updates
    state.counters["rss_sync_mb"] = rss_sync_mb;
    state.counters["rss_base_mb"] = base.rss_mb;
    state.counters["server_rss_mb"] = server_after.rss_mb;
  }
  state.SetItemsProcessed(kUpdates);
}
BENCHMARK(BM_WatchThroughput)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// One owner read as the controller makes it (a GET of a PyTorchJob through
// KubeClient on a kept-alive connection).
void BM_OwnerGet(benchmark::State& state) {
  ServerProcess server;
  if (!server.error().empty()) return Fail(state, server.error());
  auto client = KubeClient::Create(Connection(server.url()));
  if (!client.ok()) return Fail(state, client.status().message());
  const std::string path =
      "/apis/kubeflow.org/v1/namespaces/ml-0/pytorchjobs/llama-pretrain-0";
  for (auto _ : state) {
    auto r = (*client)->Request("GET", path);
    if (!r.ok() || r->status != 200) return Fail(state, "GET failed");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_OwnerGet)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace lens::cluster

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  lens::cluster::g_dir =
      std::filesystem::temp_directory_path() /
      ("lens_cluster_controller_bench_" + std::to_string(::getpid()));
  std::filesystem::create_directories(lens::cluster::g_dir);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::filesystem::remove_all(lens::cluster::g_dir);
  return 0;
}
