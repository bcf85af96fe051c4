// Helpers of the device health tests: observations of a GPU and an RDMA port
// as a healthy node reports them, one node's history of 30 s samples (as the
// node agent takes them), and the report's devices and transitions by
// identity. The tests work each expected answer out by hand against the
// defaults: unhealthy clears after 3600 s quiet, degraded after 1800 s;
// throttling degrades at 300 s within 600 s; correctable errors at 100
// within 3600 s; port errors per counter within 600 s.
#ifndef LENS_TEST_INSIGHTS_HEALTH_HISTORY_H_
#define LENS_TEST_INSIGHTS_HEALTH_HISTORY_H_

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lens/insights_health.h"

namespace lens::health_test {

// 2026-01-01T00:00:00Z: history time 0.
inline const Timestamp kT0 = Timestamp(std::chrono::seconds(1767225600));
inline Timestamp At(int s) { return kT0 + std::chrono::seconds(s); }
inline int SecondsOf(Timestamp t) {
  return static_cast<int>(
      std::chrono::duration_cast<std::chrono::seconds>(t - kT0).count());
}

inline GpuHealthObservation HealthyGpu(int index, std::string serial) {
  GpuHealthObservation g;
  g.index = index;
  g.serial = std::move(serial);
  g.ecc_uncorrectable = 0;
  g.ecc_correctable = 0;
  g.throttle_known = true;
  return g;
}

inline PortHealthObservation HealthyPort(std::string device, int port,
                                         std::string guid) {
  PortHealthObservation p;
  p.device = std::move(device);
  p.port = port;
  p.node_guid = std::move(guid);
  p.state = RdmaLinkState::kActive;
  p.phys_state = RdmaPhysState::kLinkUp;
  for (auto& e : p.errors) e = 0;
  return p;
}

inline uint64_t& Err(PortHealthObservation& p, PortErrorCounter c) {
  auto& slot = p.errors[static_cast<size_t>(c)];
  if (!slot) slot = 0;
  return *slot;
}

// One node's samples every 30 s over [0, end_s]; `fill` sets sample t's
// values (it sees the previous sample's, so counters accumulate).
inline std::vector<HealthSample> History(
    const std::string& node, int end_s, HealthSample start,
    const std::function<void(int t, HealthSample*)>& fill) {
  std::vector<HealthSample> out;
  HealthSample s = std::move(start);
  s.node = node;
  for (int t = 0; t <= end_s; t += 30) {
    s.time = At(t);
    fill(t, &s);
    out.push_back(s);
  }
  return out;
}

inline DeviceHealthReport Compute(const std::vector<HealthSample>& samples,
                                  const DeviceHealthOptions& options = {}) {
  auto report = ComputeDeviceHealth(samples, options);
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *report : DeviceHealthReport{};
}

inline const DeviceHealthStatus* Find(const DeviceHealthReport& r,
                                      const std::string& id) {
  for (const auto& d : r.devices) {
    if (d.device.id == id) return &d;
  }
  return nullptr;
}

inline std::vector<HealthTransition> Of(const DeviceHealthReport& r,
                                        const std::string& id) {
  std::vector<HealthTransition> out;
  for (const auto& t : r.transitions) {
    if (t.device.id == id) out.push_back(t);
  }
  return out;
}

}  // namespace lens::health_test

#endif  // LENS_TEST_INSIGHTS_HEALTH_HISTORY_H_
