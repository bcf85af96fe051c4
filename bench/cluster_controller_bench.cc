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

#include <algorithm>
#include <atomic>
#include <cerrno>
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

#include "controller/controller.h"
#include "controller/pod_model.h"
#include "kube_api_server.h"
#include "lens/kube.h"
#include "lens/store.h"

namespace lens::controller {
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
    if (line.rfind("VmRSS:", 0) == 0) m.rss_mb = std::stod(line.substr(6));
    if (line.rfind("VmHWM:", 0) == 0) m.peak_mb = std::stod(line.substr(6));
  }
  m.rss_mb /= 1024;  // from kB
  m.peak_mb /= 1024;
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
// <rss_mb>", "updated <seconds> <last pod's uid> <its last resourceVersion>
// <its restarts>", or "error <why>".
[[noreturn]] void ServeInChild(FILE* in, FILE* out) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  auto fail = [&](const std::string& why) {
    std::fprintf(out, "error %.300s\n", why.c_str());
    std::fflush(out);
    std::_Exit(1);
  };
  Cluster cluster = MakeCluster();
  test::KubeApiServer server;
  if (!server.ok()) fail(server.error());
  for (const std::string& o : cluster.objects) {
    if (server.Create(o).empty()) fail("cannot create " + o);
  }
  cluster.objects = {};
  std::fprintf(out, "ready %s\n", server.url().c_str());
  std::fflush(out);
  std::vector<int> restarts(cluster.gpu_pods.size(), 0);
  char line[256];
  int n = 0;
  while (std::fgets(line, sizeof line, in)) {
    if (std::strncmp(line, "usage", 5) == 0) {
      std::fprintf(out, "usage %f %f\n", CpuSeconds(), ReadMemory().rss_mb);
    } else if (std::sscanf(line, "update %d", &n) == 1) {
      const auto start = Clock::now();
      size_t pod = 0;
      for (int k = 0; k < n; ++k) {
        pod = static_cast<size_t>(k) % cluster.gpu_pods.size();
        const auto& [head, tail] = cluster.gpu_pods[pod];
        const std::string json = head + std::to_string(++restarts[pod]) + tail;
        if (server.Update(json).empty()) fail("cannot update " + json);
      }
      std::fprintf(out, "updated %f %s %llu %d\n", Since(start),
                   Uid(3, static_cast<int>(pod)).c_str(),
                   static_cast<unsigned long long>(server.resource_version()),
                   restarts[pod]);
    }
    std::fflush(out);
  }
  std::_Exit(0);  // no atexit handlers, no stdio buffers of the parent
}

class ServerProcess {
 public:
  struct Updated {
    double seconds = 0;
    std::string last_uid;
    std::string last_resource_version;
    int restarts = 0;
  };

  // Forks: call while this process has one thread (between benchmarks).
  ServerProcess() {
    int down[2], up[2];
    std::fflush(nullptr);
    if (::pipe(down) != 0 || ::pipe(up) != 0 || (pid_ = ::fork()) < 0) {
      error_ = std::string("cannot start the server: ") + std::strerror(errno);
      return;
    }
    if (pid_ == 0) {
      ::close(down[1]);
      ::close(up[0]);
      ServeInChild(::fdopen(down[0], "r"), ::fdopen(up[1], "w"));
    }
    ::close(down[0]);
    ::close(up[1]);
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
    if (to_) std::fclose(to_);  // EOF: the child exits
    if (from_) std::fclose(from_);
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
  }

  const std::string& url() const { return url_; }
  const std::string& error() const { return error_; }

  // The server's CPU seconds so far and RSS now (MB).
  std::pair<double, double> Usage() {
    Send("usage");
    double cpu_s = 0, rss_mb = 0;
    std::sscanf(ReadLine().c_str(), "usage %lf %lf", &cpu_s, &rss_mb);
    return {cpu_s, rss_mb};
  }
  void StartUpdates(int count) { Send("update " + std::to_string(count)); }
  // Blocks until the updates are applied; last_uid "" when they failed.
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
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }

  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  std::string url_;
  std::string error_;
};

// ---- the controller's process ----------------------------------------------

// A measured window: wall time (the manual time), this process's CPU and
// the server's CPU, and the peak RSS of this process since ResetPeakRss().
class Window {
 public:
  explicit Window(ServerProcess* server)
      : server_(server),
        server_cpu_(server->Usage().first),
        cpu_(CpuSeconds()),
        start_(Clock::now()) {}
  double seconds() const { return Since(start_); }
  void End(benchmark::State& state) {
    const double wall = seconds();
    const double cpu = CpuSeconds() - cpu_;
    const auto [server_cpu, server_rss] = server_->Usage();
    state.SetIterationTime(wall);
    state.counters["cpu_s"] = cpu;
    state.counters["rss_mb"] = ReadMemory().peak_mb;
    state.counters["server_cpu_s"] = server_cpu - server_cpu_;
    state.counters["server_rss_mb"] = server_rss;
  }

 private:
  ServerProcess* server_;
  double server_cpu_;
  double cpu_;
  Clock::time_point start_;
};

KubeConnection Connection(const std::string& url) {
  KubeConnection c;
  c.server = url;
  return c;
}

// A controller (default options) on its own thread, on a fresh SQLite
// store.
class RunningController {
 public:
  RunningController(const std::string& url, const std::string& db)
      : db_((g_dir / db).string()) {
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

  int64_t Workloads() {
    WorkloadQuery q;
    q.page.page_size = 1;
    auto w = store_->pods().ListWorkloads(q);
    return w.ok() ? w->total : -1;
  }
  // Ready, every GPU pod, workload and node written, nothing queued.
  bool Synced() {
    const ControllerStats s = controller_->Stats();
    return s.ready && s.gpu_pods >= kGpuPods && s.nodes_written >= kNodes &&
           s.queue_depth == 0 && Workloads() >= kJobs;
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
// controller is Ready(). rss_mb: this process's peak (the server is not in
// it); rss_base_mb: before the controller started.
void BM_InitialSync(benchmark::State& state) {
  ServerProcess server;
  if (!server.error().empty()) return Fail(state, server.error());
  for (auto _ : state) {
    ResetPeakRss();
    state.counters["rss_base_mb"] = ReadMemory().rss_mb;
    Window window(&server);
    RunningController c(server.url(), "sync.db");
    if (!c.error().empty()) return Fail(state, c.error());
    if (!WaitUntil([&] { return c.Synced(); }, std::chrono::seconds(60))) {
      return Fail(state,
                  "no sync within 60 s: " + c.controller().Stats().last_error);
    }
    window.End(state);
    const ControllerStats s = c.controller().Stats();
    state.counters["gpu_pods"] = static_cast<double>(s.gpu_pods);
    state.counters["workloads"] = static_cast<double>(c.Workloads());
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
  struct Counter : KubeEventHandler {
    void OnAdd(const KubeObject&) override { ++added; }
    void OnUpdate(const KubeObject&, const KubeObject&) override {}
    void OnDelete(const KubeObject&, bool) override {}
    std::atomic<int> added{0};
  };
  ServerProcess server;
  if (!server.error().empty()) return Fail(state, server.error());
  const GpuResourceMatcher gpus;
  for (auto _ : state) {
    ResetPeakRss();
    state.counters["rss_base_mb"] = ReadMemory().rss_mb;
    Window window(&server);
    auto client = KubeClient::Create(Connection(server.url()));
    if (!client.ok()) return Fail(state, client.status().message());
    KubeInformerOptions pods;
    pods.resource = {"", "v1", "pods", "Pod", true};
    pods.keep_json = [&](std::string_view json) {  // as the controller does
      return MayRequestGpus(json, gpus);
    };
    KubeInformerOptions nodes;
    nodes.resource = {"", "v1", "nodes", "Node", false};
    Counter counter;
    KubeInformer pod_informer(client->get(), pods, &counter);
    KubeInformer node_informer(client->get(), nodes, &counter);
    std::thread a([&] { (void)pod_informer.Run(); });
    std::thread b([&] { (void)node_informer.Run(); });
    const bool synced = WaitUntil(
        [&] {
          return pod_informer.Stats().synced && node_informer.Stats().synced;
        },
        std::chrono::seconds(60));
    if (synced) window.End(state);
    pod_informer.Stop();
    node_informer.Stop();
    a.join();
    b.join();
    if (!synced) return Fail(state, "the informers did not sync in 60 s");
    state.counters["objects"] = counter.added.load();
  }
}
BENCHMARK(BM_InformersOnlySync)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// After the sync, kUpdates MODIFIED events (a GPU pod's training container
// restarts once more) as fast as the server takes them, until the informer
// has applied them all and the last pod's row and snapshot in SQLite show
// its last state. delivered_per_s: the informer's rate alone;
// server_accept_per_s: the server's (the ceiling of this benchmark).
void BM_WatchThroughput(benchmark::State& state) {
  ServerProcess server;
  if (!server.error().empty()) return Fail(state, server.error());
  ResetPeakRss();
  RunningController c(server.url(), "watch.db");
  if (!c.error().empty()) return Fail(state, c.error());
  if (!WaitUntil([&] { return c.Synced(); }, std::chrono::seconds(60))) {
    return Fail(state, "no sync within 60 s");
  }
  state.counters["rss_sync_mb"] = ReadMemory().peak_mb;
  for (auto _ : state) {
    ResetPeakRss();
    const ControllerStats before = c.controller().Stats();
    Window window(&server);
    server.StartUpdates(kUpdates);
    const uint64_t events = before.pods.events + kUpdates;
    if (!WaitUntil([&] { return c.controller().Stats().pods.events >= events; },
                   std::chrono::seconds(60))) {
      return Fail(state, "the watch did not deliver every update in 60 s");
    }
    const double delivered = window.seconds();
    const ServerProcess::Updated u = server.WaitUpdated();
    if (u.last_uid.empty()) return Fail(state, "the updates failed");
    auto caught_up = [&] {
      auto pod = c.store().pods().GetPod(u.last_uid);
      auto snapshots = c.store().pods().ListPodSnapshots(u.last_uid);
      if (!pod.ok() || pod->restarts != u.restarts || !snapshots.ok()) {
        return false;
      }
      return std::any_of(snapshots->begin(), snapshots->end(), [&](auto& s) {
        return s.resource_version == u.last_resource_version;
      });
    };
    if (!WaitUntil(caught_up, std::chrono::seconds(60))) {
      return Fail(state, "the store did not catch up in 60 s");
    }
    state.counters["events_per_s"] = kUpdates / window.seconds();
    window.End(state);
    const ControllerStats after = c.controller().Stats();
    state.counters["delivered_per_s"] = kUpdates / delivered;
    state.counters["server_accept_per_s"] = kUpdates / u.seconds;
    state.counters["snapshots"] =
        static_cast<double>(after.snapshots_written - before.snapshots_written);
    state.counters["flush_s"] =
        after.flush_seconds_total - before.flush_seconds_total;
  }
  state.SetItemsProcessed(kUpdates);
}
BENCHMARK(BM_WatchThroughput)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// One owner read as the controller's writer makes it, serially, for every
// owner it refreshes: a GET of a PyTorchJob on a kept-alive connection.
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
}  // namespace lens::controller

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  lens::controller::g_dir =
      std::filesystem::temp_directory_path() /
      ("lens_cluster_controller_bench_" + std::to_string(::getpid()));
  std::filesystem::create_directories(lens::controller::g_dir);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::filesystem::remove_all(lens::controller::g_dir);
  return 0;
}
