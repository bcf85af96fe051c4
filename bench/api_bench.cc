// lens-api's routes over HTTP on loopback (a real HttpServer with the
// lens-api service's limits: 8 worker threads, no per-peer cap), on SQLite
// (a temp file) and PostgreSQL (a server this program starts, as the tests
// do), over a cluster of 1,000 nodes, 1,000 workloads, 10,000 pods and
// 1,000,000 training iterations (100,000 of them one workload's, in two
// runs):
//   BM_Route/route:0  GET /api/v1/nodes, a page of 50 sorted by gpuAllocated
//   BM_Route/route:1  GET /api/v1/pods, running pods, newest 50
//   BM_Route/route:2  GET /api/v1/workloads, newest 50
//   BM_Route/route:3  GET .../training-series?points=500 of the 100,000
//                     iterations (budget: p99 < 100 ms)
//   BM_Load           200 concurrent keep-alive clients on the three list
//                     routes for 20 s ($LENS_BENCH_LOAD_SECONDS): every
//                     answer must be a 200, and RSS must grow by < 256 MiB.
// Counters: p50_ms and p99_ms per request (manual timing); a run over
// budget, with errors or with RSS beyond its bound is reported as an error.
#include <benchmark/benchmark.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/api.h"
#include "bench_stores.h"
#include "http/http.h"
#include "lens/store.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kNodes = 1000;
constexpr int kWorkloads = 1000;
constexpr int kPodsPerWorkload = 10;
constexpr int kBigIterations = 100000;  // workload w-0000, runs 1 and 2
constexpr int kOtherTrainers = 90;      // w-0001..w-0090: 10,000 each
constexpr int kOtherIterations = 10000;
constexpr int kClients = 200;
constexpr double kTrainingBudgetMs = 100;
constexpr double kRssBoundMiB = 256;

const char* const kRoutes[] = {
    "/api/v1/nodes?pageSize=50&sort=gpuAllocated&order=desc",
    "/api/v1/pods?pageSize=50&running=true&sort=createdAt&order=desc",
    "/api/v1/workloads?pageSize=50&sort=createdAt&order=desc",
    "/api/v1/workloads/w-0000/training-series?points=500",
};

std::string g_urls[2];  // SQLite, PostgreSQL ("" when it could not start)

lens::Timestamp At(int64_t s) {
  return lens::Timestamp(std::chrono::seconds(s));
}

std::string Name(const char* prefix, int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s-%04d", prefix, i);
  return buf;
}

lens::Status WriteIterations(lens::Store& store, const std::string& uid,
                             int count, int runs) {
  LENS_ASSIGN_OR_RETURN(lens::TrainingWriter writer,
                        store.training().OpenWriter(uid, uid + "/trainer"));
  std::vector<lens::IterationRecord> batch;
  for (int i = 0; i < count; ++i) {
    lens::IterationRecord r;
    r.run = 1 + i * runs / count;  // a restart starts iterations again
    r.iteration = 1 + i - (r.run - 1) * count / runs;
    r.line = static_cast<uint64_t>(i + 1);
    r.timestamp_s = 1.7e9 + i * 8.1;
    using F = lens::IterationField;
    r.Set(F::kLoss, 3.5 - i * 1e-5);
    r.Set(F::kElapsedMs, 8100.5 + i % 7);
    r.Set(F::kTflopsPerGpu, 395.3 + i % 11);
    r.Set(F::kTokensPerSPerGpu, 12009.0);
    r.Set(F::kLearningRate, 2.9e-4);
    r.Set(F::kGradNorm, 0.72);
    batch.push_back(r);
    if (batch.size() == 5000 || i + 1 == count) {
      LENS_RETURN_IF_ERROR(writer.Write(batch, {}));
      batch.clear();
    }
  }
  return lens::OkStatus();
}

lens::Status Fill(lens::Store& store) {
  for (int i = 0; i < kNodes; ++i) {
    lens::NodeRecord n;
    n.name = Name("node", i);
    n.status = i % 50 == 0 ? "NotReady" : "Ready";
    n.gpu_vendor = "amd";
    n.gpu_model = "MI300X";
    n.gpu_count = n.gpu_allocatable = 8;
    n.gpu_allocated = i % 9;
    n.agent_state = "ok";
    n.updated_at = At(1700000000 + i);
    LENS_RETURN_IF_ERROR(store.nodes().UpsertNode(n));
  }
  std::vector<lens::WorkloadRecord> workloads(kWorkloads);
  std::vector<lens::PodRecord> pods;
  std::vector<std::pair<std::string, std::string>> links;
  for (int w = 0; w < kWorkloads; ++w) {
    lens::WorkloadRecord& wl = workloads[w];
    wl.uid = Name("w", w);
    wl.kind = "PyTorchJob";
    wl.name = Name("train", w);
    wl.namespace_name = "ml-" + std::to_string(w % 20);
    wl.status = w % 3 == 0 ? "Succeeded" : "Running";
    wl.gpu_request = 8 * kPodsPerWorkload;
    wl.created_at = wl.updated_at = At(1700000000 + w * 60);
    for (int p = 0; p < kPodsPerWorkload; ++p) {
      lens::PodRecord pod;
      pod.uid = wl.uid + "-pod-" + std::to_string(p);
      pod.name = wl.name + "-worker-" + std::to_string(p);
      pod.namespace_name = wl.namespace_name;
      pod.node = Name("node", (w * kPodsPerWorkload + p) % kNodes);
      pod.phase = wl.status == "Running" ? "Running" : "Succeeded";
      pod.running = wl.status == "Running";
      pod.owner_uid = wl.uid;
      pod.gpu_allocated = 8;
      pod.created_at = pod.updated_at = At(1700000000 + w * 60 + p);
      links.emplace_back(wl.uid, pod.uid);
      pods.push_back(std::move(pod));
    }
  }
  LENS_RETURN_IF_ERROR(store.pods().UpsertWorkloads(workloads));
  LENS_RETURN_IF_ERROR(store.pods().UpsertPods(pods));
  LENS_RETURN_IF_ERROR(store.pods().LinkPods(links));
  LENS_RETURN_IF_ERROR(WriteIterations(store, "w-0000", kBigIterations, 2));
  for (int w = 1; w <= kOtherTrainers; ++w) {
    LENS_RETURN_IF_ERROR(
        WriteIterations(store, Name("w", w), kOtherIterations, 1));
  }
  return lens::OkStatus();
}

struct Served {
  std::unique_ptr<lens::Store> store;
  std::unique_ptr<lens::HttpServer> server;
};

// The filled store of `backend` and an API server over it, made once.
Served* Serve(int backend) {
  static std::map<int, Served> served;
  Served& s = served[backend];
  if (s.server) return &s;
  if (g_urls[backend].empty()) return nullptr;
  auto store = lens::Store::Open(g_urls[backend]);
  if (!store.ok()) return nullptr;
  s.store = std::move(*store);
  const auto t0 = Clock::now();
  if (lens::Status st = Fill(*s.store); !st.ok()) {
    fprintf(stderr, "fill: %s\n", st.message().c_str());
    s.store.reset();
    return nullptr;
  }
  lens::IterationQuery all;
  all.workload_uid = "w-0001";
  all.page.page_size = 1;
  auto one = s.store->training().ListIterations(all);
  all.workload_uid = "w-0000";
  auto big = s.store->training().ListIterations(all);
  fprintf(stderr,
          "filled %s in %.1f s (iterations: w-0000 %lld, w-0001 %lld)\n",
          backend == 0 ? "sqlite" : "pg",
          std::chrono::duration<double>(Clock::now() - t0).count(),
          big.ok() ? static_cast<long long>(big->total) : -1LL,
          one.ok() ? static_cast<long long>(one->total) : -1LL);
  lens::HttpServerOptions http;
  http.listen = "127.0.0.1:0";
  http.threads = 8;  // as lens-api (liblens/service/api_service_options.cc)
  http.max_connections_per_peer = 256;  // as lens-api
  auto server = lens::HttpServer::Create(http);
  if (!server.ok()) return nullptr;
  s.server = std::move(*server);
  if (!lens::AddApiRoutes(s.store.get(), nullptr, {}, s.server.get()).ok() ||
      !s.server->Start().ok()) {
    s.server.reset();
    return nullptr;
  }
  return &s;
}

void Percentiles(benchmark::State& state, std::vector<double>& ms) {
  if (ms.empty()) return;
  std::sort(ms.begin(), ms.end());
  state.counters["p50_ms"] = ms[ms.size() / 2];
  state.counters["p99_ms"] = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
}

void BM_Route(benchmark::State& state) {
  const int backend = static_cast<int>(state.range(0));
  const int route = static_cast<int>(state.range(1));
  Served* s = Serve(backend);
  if (!s) return state.SkipWithError("no PostgreSQL, or fill failed");
  httplib::Client client("127.0.0.1", s->server->port());
  client.set_keep_alive(true);
  std::vector<double> ms;
  size_t bytes = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    auto res = client.Get(kRoutes[route]);
    ms.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!res || res->status != 200)
      return state.SkipWithError(res ? res->body.c_str() : "no answer");
    bytes += res->body.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  Percentiles(state, ms);
  if (route == 3 && ms.size() >= 20 &&
      ms[ms.size() * 99 / 100] > kTrainingBudgetMs)
    state.SkipWithError("over budget: training-series p99 >= 100 ms");
}

double RssMiB(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0)
      return std::strtod(line.c_str() + std::strlen(field), nullptr) / 1024;
  }
  return 0;
}

void BM_Load(benchmark::State& state) {
  const int backend = static_cast<int>(state.range(0));
  Served* s = Serve(backend);
  if (!s) return state.SkipWithError("no PostgreSQL, or fill failed");
  const char* env = std::getenv("LENS_BENCH_LOAD_SECONDS");
  const int seconds = env ? std::max(1, std::atoi(env)) : 20;
  const double rss_before = RssMiB("VmRSS:");
  std::atomic<int64_t> errors{0};
  std::vector<std::vector<double>> latencies(kClients);
  for (auto _ : state) {
    const auto deadline = Clock::now() + std::chrono::seconds(seconds);
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; ++c) {
      clients.emplace_back([&, c] {
        httplib::Client client("127.0.0.1", s->server->port());
        client.set_keep_alive(true);
        client.set_read_timeout(std::chrono::seconds(30));
        for (int i = c; Clock::now() < deadline; ++i) {
          const auto t0 = Clock::now();
          auto res = client.Get(kRoutes[i % 3]);
          latencies[c].push_back(
              std::chrono::duration<double, std::milli>(Clock::now() - t0)
                  .count());
          if (!res || res->status != 200) ++errors;
        }
      });
    }
    for (std::thread& t : clients) t.join();
  }
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  state.counters["requests"] = static_cast<double>(all.size());
  state.counters["requests_per_s"] = static_cast<double>(all.size()) / seconds;
  state.counters["errors"] = static_cast<double>(errors.load());
  const double rss_after = RssMiB("VmRSS:");
  state.counters["rss_mib"] = rss_after;
  state.counters["rss_growth_mib"] = rss_after - rss_before;
  state.counters["rss_peak_mib"] = RssMiB("VmHWM:");
  Percentiles(state, all);
  static std::string msg;
  if (errors.load() > 0) {
    msg = "load: " + std::to_string(errors.load()) + " errors";
    state.SkipWithError(msg.c_str());
  } else if (rss_after - rss_before > kRssBoundMiB) {
    msg = "load: RSS grew by " + std::to_string(rss_after - rss_before) +
          " MiB (bound 256)";
    state.SkipWithError(msg.c_str());
  }
}

BENCHMARK(BM_Route)
    ->ArgNames({"pg", "route"})
    ->ArgsProduct({{0, 1}, {0, 1, 2, 3}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Load)
    ->ArgName("pg")
    ->Arg(0)
    ->Arg(1)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kSecond);

}  // namespace

int main(int argc, char** argv) {
  return lens::bench::RunWithStores(argc, argv, "api_bench", &g_urls[0],
                                    &g_urls[1]);
}
