// Device health tracker at cluster scale (docs/performance.md):
//   BM_HealthTracker  1,000 nodes x (8 GPUs + 8 RDMA ports) x 24 h of 30 s
//                     samples (46 M observations) through
//                     DeviceHealthTracker::Observe, with the faults a fleet
//                     has: thermal throttling, correctable and uncorrectable
//                     ECC errors, a NIC dropping packets, flapping links and
//                     swapped boards (budget: < 1 s of CPU per day of data)
// A run over its budget is reported as an error ("over budget").
#include <benchmark/benchmark.h>
#include <time.h>

#include <string>
#include <vector>

#include "lens/insights_health.h"

namespace {

using lens::HealthSample;
using lens::PortErrorCounter;

constexpr int kHealthNodes = 1000;
constexpr int kHealthDevices = 8;
constexpr int kHealthSteps = 24 * 3600 / 30;
constexpr double kHealthBudgetCpuS = 1.0;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::vector<HealthSample> Fleet() {
  std::vector<HealthSample> fleet(kHealthNodes);
  for (int n = 0; n < kHealthNodes; ++n) {
    HealthSample& s = fleet[n];
    s.node = "gpu-node-" + std::to_string(n);
    for (int d = 0; d < kHealthDevices; ++d) {
      lens::GpuHealthObservation g;
      g.index = d;
      g.serial = "69235100" + std::to_string(n * kHealthDevices + d);
      g.bdf = "0000:" + std::to_string(10 + d) + ":00.0";
      g.ecc_uncorrectable = 0;
      g.ecc_correctable = 0;
      g.throttle_known = true;
      g.throttle_reasons = lens::kThrottlePowerCap;  // busy, not evidence
      s.gpus.push_back(g);
      lens::PortHealthObservation p;
      p.device = "mlx5_" + std::to_string(d);
      p.port = 1;
      p.node_guid = std::to_string(n) + ":" + std::to_string(d) + ":ae03:1b20";
      p.state = lens::RdmaLinkState::kActive;
      p.phys_state = lens::RdmaPhysState::kLinkUp;
      for (auto& e : p.errors) e = 0;
      s.ports.push_back(p);
    }
  }
  return fleet;
}

uint64_t& PortErr(HealthSample& s, int port, PortErrorCounter c) {
  return *s.ports[port].errors[static_cast<size_t>(c)];
}

// The step's faults on node n (cheap branches; most steps change nothing
// but the time).
void Faults(int n, int step, HealthSample& s) {
  if ((step & 63) == 0) {  // a correctable error per GPU every 32 min
    for (auto& g : s.gpus) ++*g.ecc_correctable;
  }
  if (n % 13 == 0) {  // GPU 4 throttles thermally for 50 min
    s.gpus[4].throttle_reasons =
        step >= 600 && step < 700
            ? lens::kThrottlePowerCap | lens::kThrottleHwThermal
            : lens::kThrottlePowerCap;
  }
  if (n % 100 == 7 && step == 1200) ++*s.gpus[1].ecc_uncorrectable;
  if (n % 50 == 0 && step >= 1000 && step < 1100) {  // NIC dropping packets
    PortErr(s, 3, PortErrorCounter::kPortRcvErrors) += 5;
  }
  if (n % 20 == 3 && (step == 1500 || step == 1510 || step == 1520)) {
    s.ports[5].state = lens::RdmaLinkState::kDown;  // flapping link
    ++PortErr(s, 5, PortErrorCounter::kLinkDowned);
  } else if (n % 20 == 3 && (step == 1501 || step == 1511 || step == 1521)) {
    s.ports[5].state = lens::RdmaLinkState::kActive;
  }
  if (n % 333 == 0 && step == 2000) {  // GPU 2 swapped for a spare
    s.gpus[2].serial += "-spare";
    s.gpus[2].ecc_correctable = 17;
  }
  if (n % 250 == 1 && step == 2400) {  // driver reload: totals restart
    for (auto& g : s.gpus) *g.ecc_correctable = 0;
  }
}

void BM_HealthTracker(benchmark::State& state) {
  const lens::Timestamp t0 = lens::Timestamp(std::chrono::seconds(1767225600));
  double cpu_s = 0;
  uint64_t observations = 0;
  uint64_t transitions = 0;
  size_t unhealthy_end = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<HealthSample> fleet = Fleet();
    auto tracker = lens::DeviceHealthTracker::Create({});
    if (!tracker.ok()) return state.SkipWithError("tracker");
    state.ResumeTiming();
    const double start = ThreadCpuSeconds();
    for (int step = 0; step < kHealthSteps; ++step) {
      const lens::Timestamp t = t0 + std::chrono::seconds(30 * step);
      for (int n = 0; n < kHealthNodes; ++n) {
        HealthSample& s = fleet[n];
        s.time = t;
        Faults(n, step, s);
        if (!(*tracker)->Observe(s).ok()) return state.SkipWithError("observe");
      }
    }
    cpu_s += ThreadCpuSeconds() - start;
    observations += (*tracker)->observations();
    transitions = (*tracker)->last_sequence();
    state.PauseTiming();
    unhealthy_end = 0;
    for (const auto& d : (*tracker)->States()) {
      if (d.state != lens::DeviceHealth::kHealthy) ++unhealthy_end;
    }
    tracker->reset();
    state.ResumeTiming();
  }
  const double per_day = cpu_s / static_cast<double>(state.iterations());
  state.counters["cpu_s_per_day"] = per_day;
  state.counters["transitions"] = static_cast<double>(transitions);
  state.counters["not_healthy_at_end"] = static_cast<double>(unhealthy_end);
  state.counters["obs_per_s"] =
      benchmark::Counter(static_cast<double>(observations) / cpu_s);
  state.SetItemsProcessed(static_cast<int64_t>(observations));
  if (per_day > kHealthBudgetCpuS) {
    const std::string msg = "over budget: " + std::to_string(per_day) +
                            " s CPU per day of 1,000 nodes > " +
                            std::to_string(kHealthBudgetCpuS) + " s";
    state.SkipWithError(msg.c_str());
  }
}
BENCHMARK(BM_HealthTracker)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
