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
#include "jobs_bench_cluster.h"

namespace lens {
namespace {

// node-info and device-info every 2 s: an agent answer younger than half
// that is not read again, so the two jobs of a round share one read of each
// agent (as they do at the default 10 s), and rounds start kRoundGap apart
// so that every round reads all agents again.
constexpr auto kAgentInterval = std::chrono::seconds(2);
constexpr auto kRoundGap = std::chrono::milliseconds(1100);

std::filesystem::path g_dir;  // the temp dir of this run

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
