// Stragglers on scripted histories: a 10-minute interval of 30 s samples
// (21 per series), 16 ranks or GPUs, step times and evidence written by
// hand, with the medians, MADs and modified z-scores (0.6745 (x - median) /
// MAD, or (x - median) / (1.253314 MeanAD) when MAD is 0) worked out in the
// comments.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "lens/insights_stragglers.h"

namespace lens {
namespace {

constexpr int64_t kT0Ms = 1764000000000;  // 2025-11-24 16:00:00 UTC
constexpr int64_t kStepMs = 30'000;

Timestamp AtMs(int64_t ms) { return Timestamp(std::chrono::milliseconds(ms)); }

// Samples k = 0..20 at T0 + 30 s k.
std::vector<SamplePoint> Every30s(const std::function<double(int)>& value) {
  std::vector<SamplePoint> out;
  for (int k = 0; k <= 20; ++k) out.push_back({kT0Ms + k * kStepMs, value(k)});
  return out;
}

StragglerInput TenMinutes() {
  StragglerInput in;
  in.from = AtMs(kT0Ms);
  in.to = AtMs(kT0Ms + 20 * kStepMs);
  return in;
}

// Rank r on node-(r / per_node), GPU r % per_node, every step `ms`.
void AddRanks(StragglerInput& in, int ranks, int per_node,
              const std::function<double(int)>& ms) {
  for (int r = 0; r < ranks; ++r) {
    const double v = ms(r);
    in.steps.push_back({.node = "node-" + std::to_string(r / per_node),
                        .gpu = std::to_string(r % per_node),
                        .rank = r,
                        .steps = Every30s([v](int) { return v; })});
  }
}

void AddUtilization(StragglerInput& in, int gpus, int per_node,
                    const std::function<double(int)>& value) {
  for (int g = 0; g < gpus; ++g) {
    const double v = value(g);
    in.utilization.push_back({"node-" + std::to_string(g / per_node),
                              std::to_string(g % per_node),
                              Every30s([v](int) { return v; })});
  }
}

void AddEvidence(StragglerInput& in, StragglerEvidenceKind kind,
                 std::string node, std::string gpu, std::string device,
                 std::string name, std::vector<SamplePoint> points) {
  in.evidence.push_back({kind, std::move(node), std::move(gpu),
                         std::move(device), std::move(name),
                         std::move(points)});
}

using K = StragglerEvidenceKind;

// 2 nodes x 8 GPUs; rank r's step time 1000 + r % 4 ms, rank 5 (node-0,
// GPU 5) 1300 ms and hot. Step medians per rank: rank 5 has one 1000 ms
// step among 20 at 1300 (median 1300); rank 0 one 5000 ms checkpoint step
// among 20 at 1000 (median 1000; its mean, 1190.5, would be out).
//   values: 1000 x4, 1001 x3, 1002 x4, 1003 x4, 1300
//   median: 8th and 9th of 16 = 1002, 1002 -> 1002
//   |x - 1002|: 0 x4, 1 x7, 2 x4, 298 -> MAD = 1
//   z(rank 5) = 0.6745 x 298 / 1 = 201.001; the others <= 1.349
// Utilisation: every GPU 0.97 (MAD 0, MeanAD 0: no outlier).
TEST(Stragglers, OneSlowRankAmongSixteenWithThermalThrottling) {
  StragglerInput in = TenMinutes();
  AddRanks(in, 16, 8, [](int r) { return r == 5 ? 1300.0 : 1000.0 + r % 4; });
  in.steps[5].steps[3].value = 1000;
  in.steps[0].steps[7].value = 5000;
  AddUtilization(in, 16, 8, [](int) { return 0.97; });
  // GPU 5: hw_thermal in k = 10..20 (11 of 21 samples); "idle" (benign) at
  // k = 0. GPU 2 is slowed too but is not a suspect: not GPU 5's evidence.
  AddEvidence(in, K::kGpuThrottle, "node-0", "5", "", "hw_thermal",
              Every30s([](int k) { return k >= 10 ? 1.0 : 0.0; }));
  AddEvidence(in, K::kGpuThrottle, "node-0", "5", "", "idle",
              Every30s([](int k) { return k == 0 ? 1.0 : 0.0; }));
  AddEvidence(in, K::kGpuThrottle, "node-0", "2", "", "hw_slowdown",
              Every30s([](int) { return 1.0; }));
  // Junction maxima: GPUs 0-4 70..74, 6 75, 7 76, GPU 5 97 (at k = 15):
  // peers' median 73; 97 >= 90 (hot).
  // Power: cap 700 W, limit 0.98 x 700 = 686 W; GPU 5 at 695 W for k < 15
  // (15/21 at the cap), the others at 500 W (0): 15/21 - 0 >= 0.2.
  for (int g = 0; g < 8; ++g) {
    const std::string gpu = std::to_string(g);
    const double t = g < 5 ? 70 + g : 69 + g;
    AddEvidence(
        in, K::kGpuTemperature, "node-0", gpu, "", "junction",
        Every30s([&](int k) { return g != 5 ? t : (k == 15 ? 97.0 : 80.0); }));
    AddEvidence(in, K::kGpuPowerCap, "node-0", gpu, "", "",
                Every30s([](int) { return 700.0; }));
    AddEvidence(in, K::kGpuPower, "node-0", gpu, "", "", Every30s([&](int k) {
                  return g == 5 && k < 15 ? 695.0 : 500.0;
                }));
    AddEvidence(in, K::kGpuEccErrors, "node-0", gpu, "", "correctable",
                Every30s([](int) { return 4.0; }));
  }
  AddEvidence(in, K::kRdmaPortErrors, "node-0", "", "mlx5_0/1",
              "port_rcv_errors", Every30s([](int) { return 0.0; }));

  auto report = FindStragglers(in, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->suspects.size(), 1u);
  const StragglerSuspect& s = report->suspects[0];
  EXPECT_EQ(s.scope, StragglerScope::kGpu);
  EXPECT_EQ(s.node, "node-0");
  EXPECT_EQ(s.gpu, "5");
  EXPECT_EQ(s.rank, 5);
  EXPECT_NEAR(s.score, 201.001, 1e-9);
  ASSERT_EQ(s.findings.size(), 1u);
  EXPECT_EQ(s.findings[0].measure, StragglerMeasure::kStepTime);
  EXPECT_EQ(s.findings[0].value, 1300);
  EXPECT_EQ(s.findings[0].job_median, 1002);
  EXPECT_NEAR(s.findings[0].deviation_ratio, 298.0 / 1002, 1e-12);
  ASSERT_EQ(s.evidence.size(), 3u);
  EXPECT_EQ(s.evidence[0].kind, K::kGpuThrottle);
  EXPECT_EQ(s.evidence[0].name, "hw_thermal");
  EXPECT_NEAR(s.evidence[0].amount, 11.0 / 21, 1e-12);
  EXPECT_EQ(s.evidence[1].kind, K::kGpuTemperature);
  EXPECT_EQ(s.evidence[1].amount, 97);
  EXPECT_EQ(s.evidence[1].peer_median, 73);
  EXPECT_EQ(s.evidence[2].kind, K::kGpuPower);
  EXPECT_NEAR(s.evidence[2].amount, 15.0 / 21, 1e-12);
  EXPECT_EQ(s.evidence[2].peer_median, 0);
  ASSERT_TRUE(report->step_time && report->utilization);
  EXPECT_EQ(report->step_time->entities, 16);
  EXPECT_EQ(report->step_time->median, 1002);
  EXPECT_EQ(report->step_time->mad, 1);
  EXPECT_EQ(report->step_time->nodes, 2);  // too few for node outliers
  EXPECT_NEAR(report->utilization->median, 0.97, 1e-12);
  EXPECT_EQ(report->utilization->mad, 0);
}

// 4 nodes x 4 GPUs; rank r = 4 n + g. Nodes 0-2: 1000 + n + g ms; node 3,
// whose NIC drops packets (GPUs fine: utilisation 0.96 everywhere, 70 C,
// no throttling), 1200 + g ms.
//   ranks: 1000, 1001 x2, 1002 x3, 1003 x3, 1004 x2, 1005, 1200..1203
//   median: 8th, 9th = 1003 -> 1003; |x - 1003|: 0 x3, 1 x5, 2 x3, 3,
//   197..200 -> MAD = (1 + 2) / 2 = 1.5: node 3's four ranks are out
//   (z >= 0.6745 x 197 / 1.5 = 88.58) and fold into the node.
//   nodes (median of their ranks): 1001.5, 1002.5, 1003.5, 1201.5
//   median 1003; |x - 1003|: 1.5, 0.5, 0.5, 198.5 -> MAD 1
//   z(node-3) = 0.6745 x 198.5 / 1 = 133.88825
StragglerInput NicJob(bool with_evidence) {
  StragglerInput in = TenMinutes();
  AddRanks(in, 16, 4, [](int r) {
    const int n = r / 4, g = r % 4;
    return n < 3 ? 1000.0 + n + g : 1200.0 + g;
  });
  AddUtilization(in, 16, 4, [](int) { return 0.96; });
  for (int n = 0; n < 4 && with_evidence; ++n) {
    const std::string node = "node-" + std::to_string(n);
    for (int g = 0; g < 4; ++g) {
      AddEvidence(in, K::kGpuTemperature, node, std::to_string(g), "", "edge",
                  Every30s([](int) { return 70.0; }));
      AddEvidence(in, K::kGpuThrottle, node, std::to_string(g), "",
                  "hw_thermal", Every30s([](int) { return 0.0; }));
    }
    AddEvidence(in, K::kRdmaPortErrors, node, "", "mlx5_0/1", "symbol_error",
                Every30s([](int) { return 3.0; }));
  }
  if (!with_evidence) return in;
  // node-3 port_rcv_errors: 1000 at T0 - 30 s (the baseline), then
  // 1000 + 50 (k + 1): increase 50 x 21 = 1050 (last - first in the
  // interval would say 1000).
  std::vector<SamplePoint> rcv =
      Every30s([](int k) { return 1050.0 + 50 * k; });
  rcv.insert(rcv.begin(), SamplePoint{kT0Ms - kStepMs, 1000});
  AddEvidence(in, K::kRdmaPortErrors, "node-3", "", "mlx5_0/1",
              "port_rcv_errors", rcv);
  // port_xmit_wait 5000 k: 100000. The pod's retransmits 2 k: 40.
  AddEvidence(in, K::kRdmaCongestion, "node-3", "", "mlx5_0/1",
              "port_xmit_wait", Every30s([](int k) { return 5000.0 * k; }));
  AddEvidence(in, K::kTcpRetransmits, "node-3", "", "train/worker-3", "",
              Every30s([](int k) { return 2.0 * k; }));
  // Errors on a node that is not slow are no one's evidence.
  AddEvidence(in, K::kRdmaPortErrors, "node-1", "", "mlx5_0/1",
              "port_rcv_errors", Every30s([](int k) { return 7.0 * k; }));
  return in;
}

TEST(Stragglers, NodeWhoseNicDropsPacketsIsASuspectWithNicEvidence) {
  auto report = FindStragglers(NicJob(true), {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->suspects.size(), 1u);
  const StragglerSuspect& s = report->suspects[0];
  EXPECT_EQ(s.scope, StragglerScope::kNode);
  EXPECT_EQ(s.node, "node-3");
  EXPECT_EQ(s.gpu, "");
  EXPECT_EQ(s.ranks_out, (std::vector<int32_t>{12, 13, 14, 15}));
  EXPECT_EQ(s.gpus_out, (std::vector<std::string>{"0", "1", "2", "3"}));
  EXPECT_NEAR(s.score, 133.88825, 1e-9);
  ASSERT_EQ(s.findings.size(), 1u);
  EXPECT_EQ(s.findings[0].value, 1201.5);
  EXPECT_EQ(s.findings[0].job_median, 1003);
  ASSERT_EQ(s.evidence.size(), 3u);
  EXPECT_EQ(s.evidence[0].kind, K::kRdmaPortErrors);
  EXPECT_EQ(s.evidence[0].device, "mlx5_0/1");
  EXPECT_EQ(s.evidence[0].name, "port_rcv_errors");
  EXPECT_EQ(s.evidence[0].amount, 1050);
  EXPECT_EQ(s.evidence[1].kind, K::kRdmaCongestion);
  EXPECT_EQ(s.evidence[1].amount, 100000);
  EXPECT_EQ(s.evidence[2].kind, K::kTcpRetransmits);
  EXPECT_EQ(s.evidence[2].device, "train/worker-3");
  EXPECT_EQ(s.evidence[2].amount, 40);
  EXPECT_EQ(report->step_time->median, 1003);
  EXPECT_EQ(report->step_time->mad, 1.5);
  EXPECT_EQ(report->step_time->node_median, 1003);
  EXPECT_EQ(report->step_time->node_mad, 1);
  EXPECT_EQ(report->utilization->entities, 16);
}

TEST(Stragglers, SlowNodeWithoutEvidenceIsStillASuspect) {
  auto report = FindStragglers(NicJob(false), {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->suspects.size(), 1u);
  EXPECT_EQ(report->suspects[0].node, "node-3");
  EXPECT_TRUE(report->suspects[0].evidence.empty());
  auto nodes = FindStragglerSuspectNodes(NicJob(false), {});
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(*nodes, std::vector<std::string>{"node-3"});
}

// All 16 ranks at 1000 ms: median 1000, MAD 0, MeanAD 0: no one is out,
// whatever errors a node shows.
TEST(Stragglers, AllRanksEqualGiveNoSuspects) {
  StragglerInput in = TenMinutes();
  AddRanks(in, 16, 8, [](int) { return 1000.0; });
  AddUtilization(in, 16, 8, [](int) { return 0.9; });
  AddEvidence(in, K::kRdmaPortErrors, "node-0", "", "mlx5_0/1", "symbol_error",
              Every30s([](int k) { return 10.0 * k; }));
  auto report = FindStragglers(in, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_TRUE(report->suspects.empty());
  EXPECT_EQ(report->step_time->median, 1000);
  EXPECT_EQ(report->step_time->mad, 0);
}

// 15 ranks at 1000, rank 7 at 1100: median 1000, MAD 0 (15 zeros), MeanAD
// 100 / 16 = 6.25: z = 100 / (1.253314 x 6.25) = 12.766155. At 1010 the z
// is the same but 10 / 1000 = 1% < 5%: not a straggler.
TEST(Stragglers, MadZeroFallsBackToMeanAbsoluteDeviation) {
  for (double slow : {1100.0, 1010.0}) {
    StragglerInput in = TenMinutes();
    AddRanks(in, 16, 8, [&](int r) { return r == 7 ? slow : 1000.0; });
    auto report = FindStragglers(in, {});
    ASSERT_TRUE(report.ok()) << report.status().message();
    EXPECT_EQ(report->step_time->mad, 0);
    if (slow == 1010) {
      EXPECT_TRUE(report->suspects.empty());
      continue;
    }
    ASSERT_EQ(report->suspects.size(), 1u);
    EXPECT_EQ(report->suspects[0].rank, 7);
    EXPECT_NEAR(report->suspects[0].score, 100 / (1.253314 * 6.25), 1e-9);
    EXPECT_NEAR(report->suspects[0].score, 12.766155, 1e-6);
  }
}

// Rank 5 slow as in the first test (z 201.001); its counters:
//   ECC uncorrectable 10, 12, 15, 3 (driver reload), 5: 2 + 3 + 3 + 2 = 10
//     (last - first = -5 would hide it)
//   port_rcv_errors 0 an hour before (too old a baseline), then 500, 505: 5
//   retransmits 100, 130, 0 (pod restarted), 20: 30 + 0 + 20 = 50
TEST(Stragglers, CounterResetCountsTheIncreaseAfterIt) {
  StragglerInput in = TenMinutes();
  AddRanks(in, 16, 8, [](int r) { return r == 5 ? 1300.0 : 1000.0 + r % 4; });
  auto points = [](std::vector<double> values) {
    std::vector<SamplePoint> out;
    for (size_t k = 0; k < values.size(); ++k)
      out.push_back({kT0Ms + int64_t(k) * kStepMs, values[k]});
    return out;
  };
  AddEvidence(in, K::kGpuEccErrors, "node-0", "5", "", "uncorrectable",
              points({10, 12, 15, 3, 5}));
  std::vector<SamplePoint> rcv = points({500, 505});
  rcv.insert(rcv.begin(), SamplePoint{kT0Ms - 3'600'000, 0});
  AddEvidence(in, K::kRdmaPortErrors, "node-0", "", "mlx5_0/1",
              "port_rcv_errors", rcv);
  AddEvidence(in, K::kTcpRetransmits, "node-0", "", "train/worker-0", "",
              points({100, 130, 0, 20}));
  auto report = FindStragglers(in, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->suspects.size(), 1u);
  const auto& e = report->suspects[0].evidence;
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].kind, K::kGpuEccErrors);
  EXPECT_EQ(e[0].amount, 10);
  EXPECT_EQ(e[1].kind, K::kRdmaPortErrors);
  EXPECT_EQ(e[1].amount, 5);
  EXPECT_EQ(e[2].kind, K::kTcpRetransmits);
  EXPECT_EQ(e[2].amount, 50);
}

// 2 nodes x 8; rank r 1000 + r % 4 except rank 3 (node-0 GPU 3) and rank
// 10 (node-1 GPU 2):
//   values: 1000 x4, 1001 x4, 1002 x3, 1003 x3, slow ones
//   median (1001 + 1002) / 2 = 1001.5; |x - 1001.5|: 0.5 x7, 1.5 x7, ...
//   MAD 1.5. At 1500: z = 0.6745 x 498.5 / 1.5 = 224.15883; at 1200:
//   0.6745 x 198.5 / 1.5 = 89.25883.
// Utilisation: node-0 0.95 x8, node-1 0.96 x7 and GPU 2 0.60: median 0.95,
// |x - 0.95|: 0 x8, 0.01 x7, 0.35 -> MAD 0.005; z = 0.35 x 0.6745 / 0.005
// = 47.215: merged into rank 10's suspect (same GPU).
StragglerInput TwoSlowRanks(double rank3_ms, double rank10_ms) {
  StragglerInput in = TenMinutes();
  AddRanks(in, 16, 8, [&](int r) {
    return r == 3 ? rank3_ms : r == 10 ? rank10_ms : 1000.0 + r % 4;
  });
  AddUtilization(in, 16, 8, [](int g) {
    return g < 8 ? 0.95 : g == 10 ? 0.60 : 0.96;
  });
  AddEvidence(in, K::kGpuThrottle, "node-1", "2", "", "hw_slowdown",
              Every30s([](int) { return 1.0; }));
  // At its power cap too, as every GPU of a job at full load may be: not
  // evidence (the power rule compares power with the node's other GPUs).
  AddEvidence(in, K::kGpuThrottle, "node-1", "2", "", "power_cap",
              Every30s([](int) { return 1.0; }));
  AddEvidence(in, K::kTcpRetransmits, "node-1", "", "train/worker-1", "",
              Every30s([](int k) { return 2.0 * k; }));
  return in;
}

TEST(Stragglers, TwoSuspectsRankedByScore) {
  auto report = FindStragglers(TwoSlowRanks(1500, 1200), {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->suspects.size(), 2u);
  const StragglerSuspect& a = report->suspects[0];
  const StragglerSuspect& b = report->suspects[1];
  // The farther out first, though it has no evidence and b has two items.
  EXPECT_EQ(a.node, "node-0");
  EXPECT_EQ(a.rank, 3);
  EXPECT_NEAR(a.score, 224.15883, 1e-5);
  EXPECT_TRUE(a.evidence.empty());
  EXPECT_EQ(b.node, "node-1");
  EXPECT_EQ(b.gpu, "2");
  EXPECT_EQ(b.rank, 10);
  EXPECT_NEAR(b.score, 89.25883, 1e-5);
  ASSERT_EQ(b.findings.size(), 2u);
  EXPECT_EQ(b.findings[1].measure, StragglerMeasure::kUtilization);
  EXPECT_NEAR(b.findings[1].score, 47.215, 1e-6);
  EXPECT_NEAR(b.findings[1].value, 0.60, 1e-12);
  EXPECT_NEAR(b.findings[1].job_median, 0.95, 1e-12);
  ASSERT_EQ(b.evidence.size(), 2u);
  EXPECT_EQ(b.evidence[0].name, "hw_slowdown");
  EXPECT_EQ(b.evidence[0].amount, 1);
  EXPECT_EQ(b.evidence[1].kind, K::kTcpRetransmits);
  EXPECT_EQ(b.evidence[1].amount, 40);
}

// Both at 1500 (z 224.15883 each): the one with evidence first.
TEST(Stragglers, EqualScoresRankedByEvidence) {
  auto report = FindStragglers(TwoSlowRanks(1500, 1500), {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->suspects.size(), 2u);
  EXPECT_EQ(report->suspects[0].score, report->suspects[1].score);
  EXPECT_EQ(report->suspects[0].node, "node-1");
  EXPECT_EQ(report->suspects[0].evidence.size(), 2u);
  EXPECT_EQ(report->suspects[1].node, "node-0");
  auto nodes = FindStragglerSuspectNodes(TwoSlowRanks(1500, 1500), {});
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(*nodes, (std::vector<std::string>{"node-0", "node-1"}));
}

TEST(Stragglers, StepsFromTrainingRecordsByRank) {
  // The Primus fixture (three jobs): its first, rank 7's 20 iterations
  // with "[20250729 08:02:59]" prefixes; iteration 1 took 9612.4 ms.
  auto log = ParseTrainingLogFile(std::string(LENS_FIXTURES_DIR) +
                                  "/training/primus_rocm.log");
  ASSERT_TRUE(log.ok()) << log.status().message();
  std::vector<StragglerRankSteps> steps;
  AppendStragglerSteps(log->records, "node-a", &steps);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps[0].node, "node-a");
  EXPECT_EQ(steps[0].rank, 7);
  EXPECT_EQ(steps[0].gpu, "");
  ASSERT_EQ(steps[0].steps.size(), 20u);
  EXPECT_EQ(steps[0].steps[0].value, 9612.4);
  EXPECT_EQ(steps[0].steps[0].timestamp_ms, 1753776179000);
  size_t placed = 0;
  for (const IterationRecord& r : log->records)
    placed += r.rank && r.timestamp_s && r.Has(IterationField::kElapsedMs);
  size_t points = 0;
  for (const StragglerRankSteps& s : steps) points += s.steps.size();
  EXPECT_EQ(points, placed);
  const size_t before = steps.size();
  // Records without a rank are skipped; another pod's log adds its ranks;
  // out-of-order records come back sorted.
  IterationRecord late, early, no_rank;
  late.rank = 3;
  late.timestamp_s = 1000.5;
  late.Set(IterationField::kElapsedMs, 20);
  early = late;
  early.timestamp_s = 999;
  early.Set(IterationField::kElapsedMs, 10);
  no_rank = late;
  no_rank.rank.reset();
  std::vector<IterationRecord> records{late, no_rank, early};
  AppendStragglerSteps(records, "node-b", &steps);
  ASSERT_EQ(steps.size(), before + 1);
  const StragglerRankSteps& added = steps.back();
  EXPECT_EQ(added.node, "node-b");
  EXPECT_EQ(added.rank, 3);
  ASSERT_EQ(added.steps.size(), 2u);
  EXPECT_EQ(added.steps[0].timestamp_ms, 999000);
  EXPECT_EQ(added.steps[0].value, 10);
  EXPECT_EQ(added.steps[1].timestamp_ms, 1000500);
}

TEST(Stragglers, RejectsBadOptionsAndIntervals) {
  StragglerInput in = TenMinutes();
  StragglerOptions o;
  o.z_threshold = 0;
  EXPECT_EQ(FindStragglers(in, o).status().code(),
            StatusCode::kInvalidArgument);
  o = {};
  o.min_entities = 2;
  EXPECT_EQ(FindStragglers(in, o).status().code(),
            StatusCode::kInvalidArgument);
  o = {};
  o.power_cap_ratio = 1.5;
  EXPECT_EQ(FindStragglers(in, o).status().code(),
            StatusCode::kInvalidArgument);
  std::swap(in.from, in.to);
  EXPECT_EQ(FindStragglers(in, {}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(FindStragglers(StragglerInput{}, {}).status().code(),
            StatusCode::kInvalidArgument);
  // Nothing measured is no suspects, not an error.
  auto empty = FindStragglers(TenMinutes(), {});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->suspects.empty());
  EXPECT_FALSE(empty->step_time);
}

}  // namespace
}  // namespace lens
