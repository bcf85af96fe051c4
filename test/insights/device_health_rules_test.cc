// Device health rules on scripted, time-stamped histories: escalation and
// clearing, thresholds, a port never up, AMD RAS blocks (health_history.h
// has the defaults the answers are worked out against).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "health_history.h"
#include "lens/insights_health.h"

namespace lens {
namespace {

using namespace health_test;  // NOLINT: the histories' helpers
using std::chrono::seconds;

TEST(DeviceHealthTest, WorseEvidenceEscalatesAndClearsOneLevelAtATime) {
  HealthSample start;
  start.gpus = {HealthyGpu(0, "S")};
  auto samples = History("n1", 7500, start, [](int t, HealthSample* s) {
    s->gpus[0].throttle_reasons =
        t <= 5400 ? uint32_t{kThrottleHwSlowdown} : 0u;
    if (t == 600) s->gpus[0].ecc_uncorrectable = 1;
  });
  DeviceHealthReport r = Compute(samples);
  // The first sample has no interval behind it; 30..300 s is 300 s
  // throttled -> degraded at 300. +1 uncorrectable at 600 -> unhealthy.
  // That clears at 4200 while throttling (until 5400) still holds
  // degraded; degraded clears at 5400 + 1800 = 7200.
  ASSERT_EQ(r.transitions.size(), 4u);
  const int times[] = {300, 600, 4200, 7200};
  const DeviceHealth to[] = {DeviceHealth::kDegraded, DeviceHealth::kUnhealthy,
                             DeviceHealth::kDegraded, DeviceHealth::kHealthy};
  const HealthSignal cause[] = {
      HealthSignal::kThrottle, HealthSignal::kEccUncorrectable,
      HealthSignal::kEccUncorrectable, HealthSignal::kThrottle};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(SecondsOf(r.transitions[i].time), times[i]) << i;
    EXPECT_EQ(r.transitions[i].to, to[i]) << i;
    EXPECT_EQ(r.transitions[i].cause.signal, cause[i]) << i;
    EXPECT_EQ(r.transitions[i].cleared, i >= 2) << i;
    EXPECT_EQ(r.transitions[i].sequence, i + 1);
  }
}

TEST(DeviceHealthTest, RatesBelowThresholdsAreNotEvidence) {
  HealthSample start;
  start.gpus = {HealthyGpu(0, "slow"), HealthyGpu(1, "fast")};
  start.ports = {HealthyPort("mlx5_0", 1, "g")};
  auto samples = History("n1", 3 * 3600, start, [](int t, HealthSample* s) {
    if (t > 0 && t % 60 == 0) ++*s->gpus[0].ecc_correctable;  // 60 / h
    if (t > 0 && t <= 1200) *s->gpus[1].ecc_correctable += 10;
    if (t > 0 && t % 300 == 0)
      ++Err(s->ports[0], PortErrorCounter::kSymbolError);
  });
  DeviceHealthReport r = Compute(samples);
  // "slow": at most 60 in any 3600 s: never. "fast": 10 per sample from
  // 30 s; the 10th increase (300 s) makes 100 -> degraded at 300; the last
  // increase is at 1200 -> healthy at 3000. The port's 1 symbol error per
  // 300 s (2 per 600 s) stays under 100.
  EXPECT_TRUE(Of(r, "slow").empty());
  EXPECT_TRUE(Of(r, "g/1").empty());
  auto fast = Of(r, "fast");
  ASSERT_EQ(fast.size(), 2u);
  EXPECT_EQ(SecondsOf(fast[0].time), 300);
  EXPECT_EQ(fast[0].cause.signal, HealthSignal::kEccCorrectable);
  EXPECT_EQ(fast[0].cause.amount, 100u);
  EXPECT_EQ(SecondsOf(fast[1].time), 3000);
}

TEST(DeviceHealthTest, PortNeverActiveIsNotDownButALostLinkIs) {
  HealthSample start;
  start.ports = {HealthyPort("mlx5_0", 1, "g"), HealthyPort("mlx5_0", 2, "g")};
  start.ports[1].state = RdmaLinkState::kDown;
  start.ports[1].phys_state = RdmaPhysState::kDisabled;  // uncabled
  start.ports[0].state = RdmaLinkState::kInit;           // waiting for the SM
  start.ports[0].phys_state = RdmaPhysState::kLinkUp;
  auto samples = History("n1", 1200, start, [](int t, HealthSample* s) {
    if (t == 60) s->ports[0].state = RdmaLinkState::kActive;
    if (t == 600) s->ports[0].state = RdmaLinkState::kInit;  // SM lost
  });
  DeviceHealthReport r = Compute(samples);
  // Port 2 never came up: healthy, not "down". Port 1 was INIT before it
  // was ever ACTIVE (bring-up), then ACTIVE at 60, INIT at 600: unhealthy.
  EXPECT_TRUE(Of(r, "g/2").empty());
  EXPECT_FALSE(Find(r, "g/2")->link_seen_active);
  auto t = Of(r, "g/1");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(SecondsOf(t[0].time), 600);
  EXPECT_EQ(t[0].cause.detail, "INIT/LinkUp");
  EXPECT_EQ(r.devices[0].device.id, "g/1");
  EXPECT_EQ(r.devices[0].state, DeviceHealth::kUnhealthy);
}

TEST(DeviceHealthTest, AmdRasBlocksNameTheBlockAndCountOnce) {
  HealthSample start;
  start.gpus = {HealthyGpu(0, "MI300X-1")};
  auto& g = start.gpus[0];
  for (const char* block : {"umc", "gfx", "sdma"}) {
    g.ras_blocks.push_back({block, 0, 0});
  }
  auto samples = History("n1", 1800, start, [](int t, HealthSample* s) {
    auto& g = s->gpus[0];
    if (t == 300) {  // one uncorrectable error in UMC (HBM); the total too
      g.ras_blocks[0].uncorrectable = 1;
      g.ecc_uncorrectable = 1;
    }
  });
  DeviceHealthReport r = Compute(samples);
  auto t = Of(r, "MI300X-1");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(SecondsOf(t[0].time), 300);
  EXPECT_EQ(t[0].cause.signal, HealthSignal::kRasUncorrectable);
  EXPECT_EQ(t[0].cause.counter, "umc");
  EXPECT_EQ(t[0].cause.detail, "umc ue +1");
  EXPECT_EQ(Find(r, "MI300X-1")->cause->counter, "umc");
}

}  // namespace
}  // namespace lens
