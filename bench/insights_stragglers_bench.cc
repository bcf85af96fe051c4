// The stragglers insight at cluster scale: 1,000 nodes x 8 GPUs over 24 h
// of 30 s samples (2,880 per series):
//   measures  every GPU's utilisation and every rank's step time (one
//             logged step per 30 s): 2 x 8,000 series, 46 M points
//   evidence  every node's: per GPU junction temperature, hw_thermal
//             throttling and uncorrectable ECC errors; per node
//             port_rcv_errors, port_xmit_wait and the pod's TCP
//             retransmits: 27,000 series, 78 M points
// Ten slow ranks (hot, throttled GPUs) and one slow node (NIC errors) are
// planted among noisy peers; the run checks they are found.
//   BM_FindStragglers  FindStragglers on the whole input (budget: < 1 s of
//                      CPU per call)
// A call over budget, or a wrong answer, is reported as an error.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "lens/insights_stragglers.h"

namespace {

using lens::SamplePoint;
using lens::StragglerEvidenceKind;

constexpr int kNodes = 1000;
constexpr int kGpusPerNode = 8;
constexpr int kSamples = 24 * 3600 / 30;
constexpr int64_t kT0Ms = 1764000000000;
constexpr int kSlowNode = 500;  // every rank slow, NIC errors
constexpr double kBudgetCpuS = 1.0;

bool SlowRank(int node, int gpu) { return node % 100 == 7 && gpu == 3; }

// A small deterministic generator: the same input on every run.
struct BenchNoise {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  double Next() {  // [-1, 1)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) / 4503599627370496.0 - 1;
  }
};

std::vector<SamplePoint> Series(double base, double spread, BenchNoise& noise,
                                double slope = 0) {
  std::vector<SamplePoint> points(kSamples);
  for (int k = 0; k < kSamples; ++k) {
    points[k] = {kT0Ms + int64_t{k} * 30000,
                 base + spread * noise.Next() + slope * k};
  }
  return points;
}

lens::StragglerEvidenceSeries Evidence(StragglerEvidenceKind kind,
                                       std::string node, std::string gpu,
                                       std::string device, std::string name,
                                       std::vector<SamplePoint> points) {
  return {kind,
          std::move(node),
          std::move(gpu),
          std::move(device),
          std::move(name),
          std::move(points)};
}

const lens::StragglerInput& Input() {
  static const lens::StragglerInput* input = [] {
    auto* in = new lens::StragglerInput;
    in->from = lens::Timestamp(std::chrono::milliseconds(kT0Ms));
    in->to = lens::Timestamp(
        std::chrono::milliseconds(kT0Ms + int64_t{kSamples - 1} * 30000));
    BenchNoise noise;
    for (int n = 0; n < kNodes; ++n) {
      const std::string node = "node-" + std::to_string(n);
      for (int g = 0; g < kGpusPerNode; ++g) {
        const std::string gpu = std::to_string(g);
        const bool slow = SlowRank(n, g) || n == kSlowNode;
        in->utilization.push_back(
            {node, gpu, Series(SlowRank(n, g) ? 0.7 : 0.95, 0.03, noise)});
        in->steps.push_back({node, gpu, n * kGpusPerNode + g,
                             Series(slow ? 1300 : 1000, 20, noise)});
        const bool hot = SlowRank(n, g);
        in->evidence.push_back(Evidence(StragglerEvidenceKind::kGpuTemperature,
                                        node, gpu, "", "junction",
                                        Series(hot ? 95 : 70, 3, noise)));
        std::vector<SamplePoint> throttle = Series(0, 0, noise);
        if (hot) {
          for (int k = 0; k < kSamples; k += 2) throttle[k].value = 1;
        }
        in->evidence.push_back(Evidence(StragglerEvidenceKind::kGpuThrottle,
                                        node, gpu, "", "hw_thermal",
                                        std::move(throttle)));
        in->evidence.push_back(Evidence(StragglerEvidenceKind::kGpuEccErrors,
                                        node, gpu, "", "uncorrectable",
                                        Series(0, 0, noise)));
      }
      const double errors = n == kSlowNode ? 3 : 0;
      in->evidence.push_back(Evidence(StragglerEvidenceKind::kRdmaPortErrors,
                                      node, "", "mlx5_0/1", "port_rcv_errors",
                                      Series(0, 0, noise, errors)));
      in->evidence.push_back(Evidence(StragglerEvidenceKind::kRdmaCongestion,
                                      node, "", "mlx5_0/1", "port_xmit_wait",
                                      Series(0, 0, noise, 100)));
      in->evidence.push_back(Evidence(StragglerEvidenceKind::kTcpRetransmits,
                                      node, "", "train/worker-" + node, "",
                                      Series(0, 0, noise, 1)));
    }
    return in;
  }();
  return *input;
}

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// The ten slow ranks and the slow node, and nothing else.
bool Expected(const lens::StragglerReport& r) {
  if (r.suspects.size() != 11) return false;
  for (const lens::StragglerSuspect& s : r.suspects) {
    if (s.scope == lens::StragglerScope::kNode) {
      if (s.node != "node-" + std::to_string(kSlowNode) || s.evidence.empty() ||
          s.evidence[0].kind != StragglerEvidenceKind::kRdmaPortErrors)
        return false;
    } else if (s.gpu != "3" || s.findings.size() != 2 || s.evidence.empty() ||
               s.evidence[0].kind != StragglerEvidenceKind::kGpuThrottle) {
      return false;
    }
  }
  return true;
}

void BM_FindStragglers(benchmark::State& state) {
  const lens::StragglerInput& in = Input();
  double cpu_s = 0, worst_s = 0;
  bool right = true;
  for (auto _ : state) {
    const double start = ProcessCpuSeconds();
    auto report = lens::FindStragglers(in, {});
    const double used = ProcessCpuSeconds() - start;
    cpu_s += used;
    worst_s = std::max(worst_s, used);
    right = right && report.ok() && Expected(*report);
    benchmark::DoNotOptimize(report);
  }
  const int64_t points = 2 * int64_t{kNodes} * kGpusPerNode * kSamples;
  state.SetItemsProcessed(state.iterations() * points);
  state.counters["cpu_s_per_call"] = cpu_s / state.iterations();
  state.counters["worst_cpu_s"] = worst_s;
  if (!right) {
    state.SkipWithError("wrong answer: the planted stragglers not found");
  } else if (worst_s >= kBudgetCpuS) {
    static std::string msg;
    msg = "over budget: " + std::to_string(worst_s) + " s of CPU >= 1 s";
    state.SkipWithError(msg.c_str());
  }
}
BENCHMARK(BM_FindStragglers)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

BENCHMARK_MAIN();
