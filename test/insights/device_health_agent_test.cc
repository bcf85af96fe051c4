// Device health fed from real formats: the node agent's GPU and RDMA readers
// on fixture host trees (test/fixtures/hosts), changed the way the kernel
// changes them; and the API's edges (state strings, options, ordering,
// retention).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lens/gpu.h"
#include "lens/insights_health.h"
#include "lens/rdma.h"

namespace lens {
namespace {

using std::chrono::seconds;

const Timestamp kT0 = Timestamp(seconds(1767225600));

std::string HealthFixtureHost(const std::string& host) {
  return std::string(LENS_FIXTURES_DIR) + "/hosts/" + host;
}

// A private copy of a fixture host's sys/ tree, removed afterwards.
class HealthHostCopy {
 public:
  explicit HealthHostCopy(const std::string& host) {
    std::string pattern = ::testing::TempDir() + "lens_health_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) return;
    root_ = pattern;
    std::filesystem::copy(HealthFixtureHost(host) + "/sys", root_ + "/sys",
                          std::filesystem::copy_options::recursive |
                              std::filesystem::copy_options::copy_symlinks);
  }
  ~HealthHostCopy() {
    std::error_code ignored;
    if (!root_.empty()) std::filesystem::remove_all(root_, ignored);
  }
  HostRoots roots() const { return HostRoots::Under(root_); }
  // Rewrites a file in place (same inode: the readers keep files open).
  void Write(const std::string& rel, const std::string& text) const {
    std::ofstream out(root_ + "/sys/" + rel, std::ios::trunc);
    out << text;
    ASSERT_TRUE(out.good()) << rel;
  }
  bool ok() const { return !root_.empty(); }

 private:
  std::string root_;
};

// One agent cycle on a host: GPUs and RDMA ports, converted.
struct HealthAgent {
  std::unique_ptr<GpuSource> gpu;
  RdmaReader rdma;
  std::vector<GpuInfo> gpus;
  std::vector<RdmaDevice> hcas;

  explicit HealthAgent(const HostRoots& roots)
      : gpu(NewAmdGpuSysfsSource(roots)), rdma(roots) {
    auto g = gpu->Scan();
    EXPECT_TRUE(g.ok()) << g.status();
    if (g.ok()) gpus = *g;
    auto r = rdma.Scan();
    EXPECT_TRUE(r.ok()) << r.status();
    if (r.ok()) hcas = *r;
  }
  HealthSample Cycle(Timestamp t) {
    std::vector<GpuSample> samples;
    EXPECT_TRUE(gpu->Sample(&samples).ok());
    std::vector<RdmaPortCounters> ports;
    EXPECT_TRUE(rdma.Sample(&ports).ok());
    return HealthSampleFromAgent("node-a", t, gpus, samples, hcas, ports);
  }
};

TEST(DeviceHealthAgentTest, FixtureHostFromHealthyToAnHbmErrorAndADeadLink) {
  HealthHostCopy host("mi300x-8x-mlx5");
  ASSERT_TRUE(host.ok());
  HealthAgent agent(host.roots());
  ASSERT_EQ(agent.gpus.size(), 8u);
  ASSERT_EQ(agent.hcas.size(), 8u);

  HealthSample first = agent.Cycle(kT0);
  ASSERT_EQ(first.gpus.size(), 8u);
  ASSERT_EQ(first.ports.size(), 8u);
  EXPECT_EQ(first.gpus[0].serial, agent.gpus[0].serial);
  EXPECT_FALSE(first.gpus[0].serial.empty());
  EXPECT_EQ(first.gpus[0].ecc_uncorrectable, 0u);  // the RAS blocks' sum
  EXPECT_EQ(first.ports[2].device, "mlx5_2");
  EXPECT_EQ(first.ports[2].node_guid, agent.hcas[2].node_guid);
  EXPECT_EQ(first.ports[2].state, RdmaLinkState::kActive);
  EXPECT_EQ(first.ports[2].phys_state, RdmaPhysState::kLinkUp);
  ASSERT_TRUE(first.ports[2]
                  .errors[static_cast<size_t>(PortErrorCounter::kSymbolError)]
                  .has_value());

  auto tracker = DeviceHealthTracker::Create({});
  ASSERT_TRUE(tracker.ok());
  ASSERT_TRUE((*tracker)->Observe(first).ok());

  // One uncorrectable HBM error on GPU 0 (amdgpu_ras.c's "ue: %lu\nce:
  // %lu\n"), and mlx5_2's link lost (the kernel's "%d: %s" state files).
  const std::string card = agent.gpus[0].drm_card;
  host.Write("class/drm/" + card + "/device/ras/umc_err_count",
             "ue: 1\nce: 0\n");
  const std::string port = "class/infiniband/mlx5_2/ports/1/";
  host.Write(port + "state", "1: DOWN\n");
  host.Write(port + "phys_state", "3: Disabled\n");
  HealthSample second = agent.Cycle(kT0 + seconds(30));
  ASSERT_TRUE((*tracker)->Observe(second).ok());

  std::vector<DeviceHealthStatus> states = (*tracker)->States();
  ASSERT_EQ(states.size(), 16u);
  EXPECT_EQ(states[0].device.kind, HealthDeviceKind::kGpu);
  EXPECT_EQ(states[0].device.id, agent.gpus[0].serial);
  EXPECT_EQ(states[0].state, DeviceHealth::kUnhealthy);
  EXPECT_EQ(states[0].cause->counter, "ecc_uncorrectable_errors");
  EXPECT_EQ(states[0].cause->amount, 1u);
  EXPECT_EQ(states[1].device.id, agent.hcas[2].node_guid + "/1");
  EXPECT_EQ(states[1].state, DeviceHealth::kUnhealthy);
  EXPECT_EQ(states[1].cause->detail, "DOWN/Disabled");
  for (size_t i = 2; i < states.size(); ++i) {
    EXPECT_EQ(states[i].state, DeviceHealth::kHealthy) << states[i].device.id;
  }
  EXPECT_EQ((*tracker)->observations(), 32u);
  EXPECT_EQ((*tracker)->last_sequence(), 2u);
}

TEST(DeviceHealthAgentTest, PartitionedGpuIsObservedOnce) {
  HealthAgent agent(HostRoots::Under(HealthFixtureHost("mi300x-cpx")));
  ASSERT_EQ(agent.gpus.size(), 16u);  // 2 MI300X in CPX: 8 partitions each
  HealthSample s = agent.Cycle(kT0);
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_NE(s.gpus[0].serial, s.gpus[1].serial);
  EXPECT_EQ(s.gpus[0].bdf, agent.gpus[0].bdf);
}

TEST(DeviceHealthAgentTest, ThrottleReasonsAndCountersMapByName) {
  GpuInfo info;
  info.index = 2;
  info.serial = "PHB";
  GpuSample sample;
  sample.throttle_reasons = {"power_cap", "thermal", "no_such_reason"};
  sample.throttle_known = true;
  sample.ecc_uncorrectable_errors_lifetime = 7;
  RdmaDevice hca;
  hca.name = "mlx5_1";
  hca.node_guid = "b8ce:f603:00a1:2b3c";
  RdmaPortCounters port;
  port.device = "mlx5_1";
  port.port = 1;
  port.state = "ACTIVE";
  port.phys_state = "LinkUp";
  port.counters = {{"link_downed", false, 4},
                   {"port_rcv_errors", false, 9},
                   {"out_of_buffer", true, 1000},  // hw_counters: not used
                   {"symbol_error", true, 55}};
  HealthSample s = HealthSampleFromAgent("n", kT0, {&info, 1}, {&sample, 1},
                                         {&hca, 1}, {&port, 1});
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].throttle_reasons, kThrottlePowerCap | kThrottleThermal);
  EXPECT_EQ(s.gpus[0].ecc_uncorrectable_lifetime, 7u);
  EXPECT_EQ(s.gpus[0].index, 2);
  ASSERT_EQ(s.ports.size(), 1u);
  const auto& e = s.ports[0].errors;
  EXPECT_EQ(e[static_cast<size_t>(PortErrorCounter::kLinkDowned)], 4u);
  EXPECT_EQ(e[static_cast<size_t>(PortErrorCounter::kPortRcvErrors)], 9u);
  EXPECT_FALSE(e[static_cast<size_t>(PortErrorCounter::kSymbolError)]);
  EXPECT_EQ(s.ports[0].node_guid, "b8ce:f603:00a1:2b3c");
  EXPECT_EQ(GpuThrottleBitName(kThrottleHwPowerBrake), "hw_power_brake");
  EXPECT_EQ(GpuThrottleBitName(3), "");
}

TEST(DeviceHealthAgentTest, ParsesKernelPortStateStrings) {
  EXPECT_EQ(ParseRdmaLinkState("4: ACTIVE"), RdmaLinkState::kActive);
  EXPECT_EQ(ParseRdmaLinkState("ACTIVE\n"), RdmaLinkState::kActive);
  EXPECT_EQ(ParseRdmaLinkState("5: ACTIVE_DEFER"), RdmaLinkState::kActiveDefer);
  EXPECT_EQ(ParseRdmaLinkState("1: DOWN"), RdmaLinkState::kDown);
  EXPECT_EQ(ParseRdmaLinkState(""), RdmaLinkState::kUnknown);
  EXPECT_EQ(ParseRdmaLinkState("4: active"), RdmaLinkState::kUnknown);
  EXPECT_EQ(ParseRdmaPhysState("5: LinkUp"), RdmaPhysState::kLinkUp);
  EXPECT_EQ(ParseRdmaPhysState("3: Disabled"), RdmaPhysState::kDisabled);
  EXPECT_EQ(ParseRdmaPhysState("7: Phy Test"), RdmaPhysState::kPhyTest);
  EXPECT_EQ(ParseRdmaPhysState("6: LinkErrorRecovery"),
            RdmaPhysState::kLinkErrorRecovery);
  EXPECT_EQ(RdmaPhysStateName(RdmaPhysState::kPolling), "Polling");
}

TEST(DeviceHealthAgentTest, RejectsBadOptionsAndSamples) {
  DeviceHealthOptions bad;
  bad.throttle_threshold = seconds(700);  // over the 600 s window
  EXPECT_EQ(bad.Validate().code(), StatusCode::kInvalidArgument);
  bad = {};
  bad.degraded_clear_after = seconds(0);
  EXPECT_NE(bad.Validate().message().find("degraded_clear_after"),
            std::string::npos);
  EXPECT_FALSE(DeviceHealthTracker::Create(bad).ok());

  auto tracker = DeviceHealthTracker::Create({});
  ASSERT_TRUE(tracker.ok());
  HealthSample s;
  s.node = "n";
  s.time = kT0 + seconds(60);
  EXPECT_TRUE((*tracker)->Observe(s).ok());
  s.time = kT0;  // older than the node's last sample
  EXPECT_EQ((*tracker)->Observe(s).code(), StatusCode::kInvalidArgument);
  s.node = "";
  EXPECT_EQ((*tracker)->Observe(s).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*tracker)->State(HealthDeviceKind::kGpu, "x").status().code(),
            StatusCode::kNotFound);

  std::vector<HealthSample> samples(2);
  samples[0].node = "n";
  samples[0].time = kT0;
  auto report = ComputeDeviceHealth(samples, {});
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("samples[1]"), std::string::npos);
}

// Three transitions on one GPU: unhealthy at 0 + 30, healthy at 3630,
// unhealthy again at 4000.
std::vector<HealthSample> ThreeTransitions() {
  std::vector<HealthSample> out;
  uint64_t ue = 0;
  for (int t : {0, 30, 3600, 3630, 3660, 4000}) {
    if (t == 30 || t == 4000) ++ue;
    HealthSample s;
    s.node = "n";
    s.time = kT0 + seconds(t);
    GpuHealthObservation g;
    g.index = 0;
    g.serial = "S";
    g.ecc_uncorrectable = ue;
    s.gpus = {g};
    out.push_back(s);
  }
  return out;
}

TEST(DeviceHealthAgentTest, WholeHistoryInAnyOrderMatchesTheStream) {
  std::vector<HealthSample> samples = ThreeTransitions();
  std::vector<HealthSample> shuffled(samples.rbegin(), samples.rend());
  auto report = ComputeDeviceHealth(shuffled, {});
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->transitions.size(), 3u);
  const int times[] = {30, 3630, 4000};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(report->transitions[i].time, kT0 + seconds(times[i]));
  }
  EXPECT_EQ(report->devices[0].state, DeviceHealth::kUnhealthy);
  EXPECT_EQ(report->devices[0].transitions, 3u);
}

TEST(DeviceHealthAgentTest, KeepsTheLatestTransitionsAndResumesBySequence) {
  DeviceHealthOptions options;
  options.max_transitions = 2;
  auto tracker = DeviceHealthTracker::Create(options);
  ASSERT_TRUE(tracker.ok());
  for (const HealthSample& s : ThreeTransitions()) {
    ASSERT_TRUE((*tracker)->Observe(s).ok());
  }
  EXPECT_EQ((*tracker)->last_sequence(), 3u);
  auto kept = (*tracker)->TransitionsAfter(0);
  ASSERT_EQ(kept.size(), 2u);  // the first was dropped
  EXPECT_EQ(kept[0].sequence, 2u);
  EXPECT_TRUE(kept[0].cleared);
  EXPECT_EQ(kept[1].sequence, 3u);
  ASSERT_EQ((*tracker)->TransitionsAfter(2).size(), 1u);
  EXPECT_TRUE((*tracker)->TransitionsAfter(3).empty());
  EXPECT_EQ((*tracker)->TransitionsSince(kT0 + seconds(3700)).size(), 1u);
}

}  // namespace
}  // namespace lens
