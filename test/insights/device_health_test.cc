// Device health on scripted, time-stamped histories: recovery, flapping,
// swapped boards, counter restarts and a NIC dropping packets
// (health_history.h has the defaults the answers are worked out against).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "health_history.h"
#include "lens/insights_health.h"

namespace lens {
namespace {

using namespace health_test;  // NOLINT: the histories' helpers
using std::chrono::seconds;

TEST(DeviceHealthTest, GpuThatRecoversReturnsToHealthy) {
  HealthSample start;
  start.gpus = {HealthyGpu(0, "S0"), HealthyGpu(1, "S1")};
  start.gpus[0].ecc_uncorrectable_lifetime = 3;  // old errors: no evidence
  auto samples = History("n1", 7200, start, [](int t, HealthSample* s) {
    // GPU 0: one new uncorrectable error at 600 s.
    if (t == 600) s->gpus[0].ecc_uncorrectable_lifetime = 4;
    // GPU 1: power capping all along (not evidence); thermal throttling on
    // the samples 1200..1800 s.
    s->gpus[1].throttle_reasons =
        kThrottlePowerCap |
        (t >= 1200 && t <= 1800 ? uint32_t{kThrottleHwThermal} : 0u);
  });
  DeviceHealthReport r = Compute(samples);

  // GPU 0: unhealthy at once at 600; quiet from then, clear at 600 + 3600.
  auto g0 = Of(r, "S0");
  ASSERT_EQ(g0.size(), 2u);
  EXPECT_EQ(SecondsOf(g0[0].time), 600);
  EXPECT_EQ(g0[0].from, DeviceHealth::kHealthy);
  EXPECT_EQ(g0[0].to, DeviceHealth::kUnhealthy);
  EXPECT_EQ(g0[0].cause.signal, HealthSignal::kEccUncorrectable);
  EXPECT_EQ(g0[0].cause.counter, "ecc_uncorrectable_errors_lifetime");
  EXPECT_EQ(g0[0].cause.amount, 1u);
  EXPECT_EQ(SecondsOf(g0[1].time), 4200);
  EXPECT_EQ(g0[1].to, DeviceHealth::kHealthy);
  EXPECT_TRUE(g0[1].cleared);

  // GPU 1: each throttled sample counts the 30 s since the one before:
  // 1200, 1230, ..., 1470 is ten samples = 300 s -> degraded at 1470. The
  // last throttled sample is 1800 -> healthy at 1800 + 1800 = 3600.
  auto g1 = Of(r, "S1");
  ASSERT_EQ(g1.size(), 2u);
  EXPECT_EQ(SecondsOf(g1[0].time), 1470);
  EXPECT_EQ(g1[0].to, DeviceHealth::kDegraded);
  EXPECT_EQ(g1[0].cause.signal, HealthSignal::kThrottle);
  EXPECT_EQ(g1[0].cause.counter, "hw_thermal");
  EXPECT_EQ(g1[0].cause.amount, 300u);
  EXPECT_EQ(SecondsOf(g1[1].time), 3600);
  EXPECT_EQ(g1[1].to, DeviceHealth::kHealthy);

  for (const auto& d : r.devices) {
    EXPECT_EQ(d.state, DeviceHealth::kHealthy) << d.device.id;
    EXPECT_FALSE(d.cause.has_value());
  }
  EXPECT_EQ(SecondsOf(Find(r, "S0")->since), 4200);
}

TEST(DeviceHealthTest, FlappingPortDoesNotFlapTheState) {
  HealthSample start;
  start.ports = {HealthyPort("mlx5_0", 1, "946d:ae03:004a:1b20")};
  auto samples = History("n1", 3 * 3600, start, [](int t, HealthSample* s) {
    PortHealthObservation& p = s->ports[0];
    const bool down = t == 600 || t == 630 || t == 900 || t == 1500;
    p.state = down ? RdmaLinkState::kDown : RdmaLinkState::kActive;
    p.phys_state = down ? RdmaPhysState::kPolling : RdmaPhysState::kLinkUp;
    if (t == 600 || t == 900 || t == 1500) {
      ++Err(p, PortErrorCounter::kLinkDowned);
    }
  });
  DeviceHealthReport r = Compute(samples);
  // Down at 600 -> unhealthy; the downs at 630, 900 and 1500 renew it, and
  // link_downed (threshold 1) holds degraded until 1500 + 1800 = 3300,
  // under the unhealthy state. Unhealthy clears at 1500 + 3600 = 5100.
  // Three up/down cycles, two transitions.
  auto t = Of(r, "946d:ae03:004a:1b20/1");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(SecondsOf(t[0].time), 600);
  EXPECT_EQ(t[0].to, DeviceHealth::kUnhealthy);
  EXPECT_EQ(t[0].cause.signal, HealthSignal::kLinkDown);
  EXPECT_EQ(t[0].cause.detail, "DOWN/Polling");
  EXPECT_EQ(SecondsOf(t[1].time), 5100);
  EXPECT_EQ(t[1].from, DeviceHealth::kUnhealthy);
  EXPECT_EQ(t[1].to, DeviceHealth::kHealthy);
  EXPECT_EQ(t[1].cause.signal, HealthSignal::kLinkDown);
  EXPECT_EQ(SecondsOf(t[1].cause.at), 1500);
  const DeviceHealthStatus* port = Find(r, "946d:ae03:004a:1b20/1");
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->state, DeviceHealth::kHealthy);
  EXPECT_EQ(port->device.device, "mlx5_0");
  EXPECT_EQ(port->device.port, 1);
  EXPECT_TRUE(port->link_seen_active);
}

TEST(DeviceHealthTest, SwappedGpuStartsCleanAndTheOldOneKeepsItsHistory) {
  auto tracker = DeviceHealthTracker::Create({});
  ASSERT_TRUE(tracker.ok());
  auto observe = [&](const std::string& node, int t, GpuHealthObservation g) {
    HealthSample s;
    s.node = node;
    s.time = At(t);
    s.gpus = {std::move(g)};
    ASSERT_TRUE((*tracker)->Observe(s).ok());
  };
  GpuHealthObservation a = HealthyGpu(3, "A");
  for (int t = 0; t <= 870; t += 30) {
    if (t == 300) a.ecc_uncorrectable = 2;  // +2: unhealthy at 300
    observe("n1", t, a);
  }
  // Index 3 now holds board B, whose counters (5 since load, 40 over its
  // life) are higher than A's: no evidence, B starts clean.
  GpuHealthObservation b = HealthyGpu(3, "B");
  b.ecc_uncorrectable = 5;
  b.ecc_uncorrectable_lifetime = 40;
  for (int t = 900; t <= 1170; t += 30) observe("n1", t, b);
  auto sb = (*tracker)->State(HealthDeviceKind::kGpu, "B");
  ASSERT_TRUE(sb.ok());
  EXPECT_EQ(sb->state, DeviceHealth::kHealthy);
  EXPECT_EQ(sb->transitions, 0u);
  EXPECT_EQ(SecondsOf(sb->first_seen), 900);
  EXPECT_TRUE(sb->present);
  auto sa = (*tracker)->State(HealthDeviceKind::kGpu, "A");
  ASSERT_TRUE(sa.ok());
  EXPECT_EQ(sa->state, DeviceHealth::kUnhealthy);
  EXPECT_FALSE(sa->present);
  EXPECT_EQ(SecondsOf(sa->last_seen), 870);
  EXPECT_EQ(SecondsOf(*sa->clears_at), 300 + 3600);

  // B's own history: 5 -> 6 at 1200 is unhealthy for B.
  b.ecc_uncorrectable = 6;
  observe("n1", 1200, b);
  // A shows up in node n2 at 2000 with its counter where it was (2): its
  // history continues there, still unhealthy, no new transition.
  observe("n2", 2000, a);
  auto after = (*tracker)->TransitionsSince(kT0);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].device.id, "A");
  EXPECT_EQ(SecondsOf(after[0].time), 300);
  EXPECT_EQ(after[0].cause.amount, 2u);
  EXPECT_EQ(after[1].device.id, "B");
  EXPECT_EQ(SecondsOf(after[1].time), 1200);
  EXPECT_EQ(after[1].cause.amount, 1u);
  sa = (*tracker)->State(HealthDeviceKind::kGpu, "A");
  EXPECT_TRUE(sa->present);
  EXPECT_EQ(sa->device.node, "n2");
  EXPECT_EQ(sa->device.device, "3");
  EXPECT_EQ(sa->transitions, 1u);
  // B's slot is untouched by A's move.
  EXPECT_TRUE((*tracker)->State(HealthDeviceKind::kGpu, "B")->present);
}

// A driver reload restarts the counts since the driver loaded: what a
// counter reads after going down is what it counted since (PromQL's
// increase()), never a negative or (unsigned) wrapped increase. A lifetime
// total kept on the board that goes down is a new baseline, not evidence.
TEST(DeviceHealthTest, CounterThatGoesDownCountsWhatItCountedSinceTheRestart) {
  HealthSample start;
  start.gpus = {HealthyGpu(0, "S")};
  start.gpus[0].ecc_uncorrectable = 5;
  start.gpus[0].ecc_correctable = 1000;
  start.gpus[0].ecc_uncorrectable_lifetime = 7;
  start.ports = {HealthyPort("mlx5_0", 1, "g0")};
  Err(start.ports[0], PortErrorCounter::kSymbolError) = 5000;
  auto samples = History("n1", 1800, start, [](int t, HealthSample* s) {
    if (t == 600) {  // driver reload: every count restarts
      s->gpus[0].ecc_uncorrectable = 0;
      s->gpus[0].ecc_correctable = 0;
      s->gpus[0].ecc_uncorrectable_lifetime = 6;  // a board's total: rebased
      Err(s->ports[0], PortErrorCounter::kSymbolError) = 0;
    }
    if (t == 630) Err(s->ports[0], PortErrorCounter::kSymbolError) = 3;
    if (t == 900) s->gpus[0].ecc_uncorrectable = 1;  // a real new error
  });
  DeviceHealthReport r = Compute(samples);
  // The first evidence is +1 at 900 after the reset (0 -> 1).
  auto g = Of(r, "S");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(SecondsOf(g[0].time), 900);
  EXPECT_EQ(g[0].cause.amount, 1u);
  EXPECT_EQ(Find(r, "S")->counter_resets, 3u);
  // The port: reset, then +3 symbol errors (< 100 in 600 s): healthy.
  EXPECT_TRUE(Of(r, "g0/1").empty());
  EXPECT_EQ(Find(r, "g0/1")->counter_resets, 1u);
  EXPECT_EQ(Find(r, "g0/1")->state, DeviceHealth::kHealthy);

  // The reload came with an uncorrectable error: the first reading after it
  // (5 -> 1) is +1, unhealthy at once; the lifetime total's drop is not.
  samples = History("n1", 1800, start, [](int t, HealthSample* s) {
    if (t == 600) {
      s->gpus[0].ecc_uncorrectable = 1;
      s->gpus[0].ecc_uncorrectable_lifetime = 3;
    }
  });
  r = Compute(samples);
  g = Of(r, "S");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(SecondsOf(g[0].time), 600);
  EXPECT_EQ(g[0].to, DeviceHealth::kUnhealthy);
  EXPECT_EQ(g[0].cause.amount, 1u);
  EXPECT_EQ(g[0].cause.signal, HealthSignal::kEccUncorrectable);
}

TEST(DeviceHealthTest, NicThatDropsPacketsWhileTheGpusAreFine) {
  HealthSample start;
  for (int i = 0; i < 8; ++i) {
    start.gpus.push_back(HealthyGpu(i, "GPU" + std::to_string(i)));
    start.ports.push_back(HealthyPort("mlx5_" + std::to_string(i), 1,
                                      "guid" + std::to_string(i)));
  }
  auto samples = History("n1", 3600, start, [](int t, HealthSample* s) {
    // Busy GPUs: power capping, a correctable error every 120 s (30 per
    // hour, under 100): fine.
    for (auto& g : s->gpus) {
      g.throttle_reasons = kThrottlePowerCap;
      if (t % 120 == 0 && t > 0) ++*g.ecc_correctable;
    }
    PortHealthObservation& p = s->ports[3];
    if (t >= 300 && t <= 1200) {
      Err(p, PortErrorCounter::kPortRcvErrors) += 4;
      Err(p, PortErrorCounter::kPortXmitDiscards) += 1;  // 20 per 600 s
    }
  });
  DeviceHealthReport r = Compute(samples);
  // port_rcv_errors in 600 s: 4 at 300, 8 at 330, 12 at 360 >= 10 ->
  // degraded at 360. The last increase is at 1200 -> healthy at 3000.
  ASSERT_EQ(r.transitions.size(), 2u);
  EXPECT_EQ(r.transitions[0].device.id, "guid3/1");
  EXPECT_EQ(SecondsOf(r.transitions[0].time), 360);
  EXPECT_EQ(r.transitions[0].to, DeviceHealth::kDegraded);
  EXPECT_EQ(r.transitions[0].cause.counter, "port_rcv_errors");
  EXPECT_EQ(r.transitions[0].cause.amount, 12u);
  EXPECT_EQ(r.transitions[0].cause.detail,
            "port_rcv_errors: 12 in 600 s (>= 10)");
  EXPECT_EQ(r.transitions[1].device.id, "guid3/1");
  EXPECT_EQ(SecondsOf(r.transitions[1].time), 3000);
  EXPECT_EQ(r.transitions[1].to, DeviceHealth::kHealthy);
  ASSERT_EQ(r.devices.size(), 16u);

  // Mid-way (samples up to 600 s), the port leads the list, alone.
  std::vector<HealthSample> first(samples.begin(), samples.begin() + 21);
  DeviceHealthReport mid = Compute(first);
  ASSERT_EQ(mid.devices.size(), 16u);
  EXPECT_EQ(mid.devices[0].device.id, "guid3/1");
  EXPECT_EQ(mid.devices[0].state, DeviceHealth::kDegraded);
  EXPECT_EQ(SecondsOf(*mid.devices[0].clears_at), 600 + 1800);
  for (size_t i = 1; i < mid.devices.size(); ++i) {
    EXPECT_EQ(mid.devices[i].state, DeviceHealth::kHealthy);
  }
  // Then the GPUs by index, then the other ports.
  EXPECT_EQ(mid.devices[1].device.id, "GPU0");
  EXPECT_EQ(mid.devices[8].device.id, "GPU7");
  EXPECT_EQ(mid.devices[9].device.kind, HealthDeviceKind::kRdmaPort);
}

}  // namespace
}  // namespace lens
