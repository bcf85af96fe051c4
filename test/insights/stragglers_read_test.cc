// The stragglers evidence reader against a real SQLite store's sample
// history, with series named and labelled as the node agent and
// lens-netflow export them; then FindStragglers on what it read, the
// increases worked out by hand. And the RDMA counter table.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "lens/insights_stragglers.h"
#include "lens/store.h"
#include "lens/timeseries.h"

namespace lens {
namespace {

constexpr int64_t kT0Ms = 1764000000000;  // 2025-11-24 16:00:00 UTC
constexpr int64_t kStepMs = 30'000;

using K = StragglerEvidenceKind;
using Labels = std::vector<std::pair<std::string, std::string>>;

Timestamp AtMs(int64_t ms) { return Timestamp(std::chrono::milliseconds(ms)); }

// Samples k = 0..10 at T0 + 30 s k, value a + b k.
void Add(std::vector<MetricSample>& out, const std::string& metric,
         Labels labels, double a, double b = 0) {
  for (int k = 0; k <= 10; ++k)
    out.push_back({metric, labels, kT0Ms + k * kStepMs, a + b * k});
}

TEST(StragglersRead, ReadsTheSuspectNodesEvidenceFromTheSampleHistory) {
  const std::string path =
      ::testing::TempDir() + "stragglers-" + std::to_string(::getpid()) + ".db";
  std::filesystem::remove(path);
  auto opened = Store::Open("sqlite://" + path);
  ASSERT_TRUE(opened.ok()) << opened.status();
  Store& store = **opened;
  std::vector<MetricSample> s;
  const Labels a = {{"node", "node-a"}};
  auto with = [](Labels l, Labels more) {
    l.insert(l.end(), more.begin(), more.end());
    return l;
  };
  Add(s, "lens_gpu_throttled",
      with(a, {{"gpu", "0"}, {"reason", "hw_thermal"}}), 1);
  Add(s, "lens_gpu_throttled", with(a, {{"gpu", "0"}, {"reason", "idle"}}), 0);
  Add(s, "lens_gpu_temperature_celsius",
      with(a, {{"gpu", "0"}, {"sensor", "junction"}}), 95);
  Add(s, "lens_gpu_temperature_celsius",
      with(a, {{"gpu", "1"}, {"sensor", "junction"}}), 70);
  Add(s, "lens_gpu_ecc_errors_total",
      with(a, {{"gpu", "0"}, {"type", "uncorrectable"}}), 5);
  const Labels port = with(a, {{"device", "mlx5_0"}, {"port", "1"}});
  Add(s, "lens_rdma_port_stat_total",
      with(port, {{"counter", "port_rcv_errors"}}), 100, 10);
  Add(s, "lens_rdma_port_hw_stat_total",
      with(port, {{"counter", "np_cnp_sent"}}), 0, 7);
  Add(s, "lens_rdma_port_hw_stat_total",
      with(port, {{"counter", "rx_write_requests"}}), 0, 1e6);
  const Labels flow =
      with(a, {{"class", "cluster"}, {"direction", "outbound"}});
  Add(s, "lens_tcp_flow_retransmits_total",
      with(flow, {{"workload", "train/w-0"}}), 0, 3);
  Add(s, "lens_tcp_flow_retransmits_total",
      with(flow, {{"workload", "other/x"}}), 0, 50);
  Add(s, "lens_rdma_port_stat_total",
      {{"node", "node-b"},
       {"device", "mlx5_0"},
       {"port", "1"},
       {"counter", "port_rcv_errors"}},
      0, 99);
  Status st = store.samples().AppendSamples(s);
  ASSERT_TRUE(st.ok()) << st;

  // [T0 + 60 s, T0 + 300 s], read from a step earlier: k = 1..10.
  const std::vector<std::string> nodes{"node-a"}, pods{"train/w-0"};
  auto source = NewSampleHistorySource(&store);
  auto read = ReadStragglerEvidence(
      *source, nodes, pods, AtMs(kT0Ms + 2 * kStepMs),
      AtMs(kT0Ms + 10 * kStepMs), std::chrono::milliseconds(kStepMs));
  ASSERT_TRUE(read.ok()) << read.status();
  // Throttle x2, temperature x2, ECC, port_rcv_errors, np_cnp_sent, the
  // pod's retransmits; not rx_write_requests, other/x or node-b.
  ASSERT_EQ(read->size(), 8u);
  std::map<std::string, const StragglerEvidenceSeries*> by;
  for (const StragglerEvidenceSeries& e : *read) {
    EXPECT_EQ(e.node, "node-a");
    EXPECT_EQ(e.points.size(), 10u) << e.name;
    EXPECT_EQ(e.points.front().timestamp_ms, kT0Ms + kStepMs);
    by[std::string(StragglerEvidenceKindName(e.kind)) + ":" + e.gpu + ":" +
       e.name] = &e;
  }
  ASSERT_TRUE(by.count("rdma_port_errors::port_rcv_errors"));
  EXPECT_EQ(by["rdma_port_errors::port_rcv_errors"]->device, "mlx5_0/1");
  ASSERT_TRUE(by.count("rdma_congestion::np_cnp_sent"));
  ASSERT_TRUE(by.count("tcp_retransmits::cluster outbound"));
  EXPECT_EQ(by["tcp_retransmits::cluster outbound"]->device, "train/w-0");
  EXPECT_TRUE(by.count("gpu_throttle:0:hw_thermal"));
  EXPECT_TRUE(by.count("gpu_temperature:1:junction"));
  EXPECT_TRUE(by.count("gpu_ecc_errors:0:uncorrectable"));

  // Four ranks on four nodes, node-a's at 1500 ms: 1000, 1001, 1002, 1500,
  // median 1001.5, |x - 1001.5|: 1.5, 0.5, 0.5, 498.5, MAD 1: z = 0.6745 x
  // 498.5 = 336.23825, for the rank and for its node (one rank each): a
  // node suspect. Its evidence over the interval (baseline T0 + 30 s):
  //   hw_thermal 9 of 9 samples; junction 95 >= 90 (peer GPU 1: 70);
  //   port_rcv_errors 110 -> 200: 90; np_cnp_sent 7 -> 70: 63;
  //   retransmits 3 -> 30: 27; ECC flat: none.
  StragglerInput in;
  in.from = AtMs(kT0Ms + 2 * kStepMs);
  in.to = AtMs(kT0Ms + 10 * kStepMs);
  const double ms[] = {1500, 1000, 1001, 1002};
  for (int r = 0; r < 4; ++r) {
    StragglerRankSteps steps{
        .node = r == 0 ? "node-a" : "node-" + std::to_string(r),
        .gpu = "0",
        .rank = r,
        .steps = {}};
    for (int k = 2; k <= 10; ++k)
      steps.steps.push_back({kT0Ms + k * kStepMs, ms[r]});
    in.steps.push_back(std::move(steps));
  }
  auto suspect_nodes = FindStragglerSuspectNodes(in, {});
  ASSERT_TRUE(suspect_nodes.ok());
  EXPECT_EQ(*suspect_nodes, nodes);
  in.evidence = std::move(*read);
  auto report = FindStragglers(in, {});
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->suspects.size(), 1u);
  const StragglerSuspect& got = report->suspects[0];
  EXPECT_EQ(got.scope, StragglerScope::kNode);
  EXPECT_NEAR(got.score, 336.23825, 1e-9);
  EXPECT_EQ(got.ranks_out, std::vector<int32_t>{0});
  ASSERT_EQ(got.evidence.size(), 5u);
  EXPECT_EQ(got.evidence[0].kind, K::kGpuThrottle);
  EXPECT_EQ(got.evidence[0].amount, 1);
  EXPECT_EQ(got.evidence[1].kind, K::kGpuTemperature);
  EXPECT_EQ(got.evidence[1].amount, 95);
  EXPECT_EQ(got.evidence[1].peer_median, 70);
  EXPECT_EQ(got.evidence[2].amount, 90);
  EXPECT_EQ(got.evidence[3].amount, 63);
  EXPECT_EQ(got.evidence[4].amount, 27);
  std::filesystem::remove(path);
}

TEST(StragglersRead, ClassifiesRdmaCounters) {
  for (const char* c :
       {"symbol_error", "port_rcv_errors", "link_downed", "out_of_sequence",
        "VL15_dropped", "port_xmit_discards"})
    EXPECT_EQ(ClassifyRdmaCounter(c), K::kRdmaPortErrors) << c;
  for (const char* c : {"port_xmit_wait", "np_cnp_sent", "rp_cnp_handled",
                        "np_ecn_marked_roce_packets"})
    EXPECT_EQ(ClassifyRdmaCounter(c), K::kRdmaCongestion) << c;
  for (const char* c : {"port_xmit_data", "rx_write_requests", "lifespan", ""})
    EXPECT_EQ(ClassifyRdmaCounter(c), std::nullopt) << c;
}

}  // namespace
}  // namespace lens
