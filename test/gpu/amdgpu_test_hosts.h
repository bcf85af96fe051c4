// Shared by the amdgpu sysfs tests: one Scan + Sample of a fixture host.
#ifndef LENS_TEST_GPU_AMDGPU_TEST_HOSTS_H_
#define LENS_TEST_GPU_AMDGPU_TEST_HOSTS_H_

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "lens/gpu.h"

namespace lens::testing_hosts {

// Scan + Sample of one source; failures are reported, not fatal.
struct Probe {
  std::unique_ptr<GpuSource> source;
  std::vector<GpuInfo> gpus;
  std::vector<GpuSample> samples;
};

inline Probe ScanAndSample(const HostRoots& roots) {
  Probe probe{NewAmdGpuSysfsSource(roots), {}, {}};
  auto gpus = probe.source->Scan();
  EXPECT_TRUE(gpus.ok()) << gpus.status();
  if (!gpus.ok()) return probe;
  probe.gpus = *gpus;
  Status sampled = probe.source->Sample(&probe.samples);
  EXPECT_TRUE(sampled.ok()) << sampled;
  EXPECT_EQ(probe.samples.size(), probe.gpus.size());
  return probe;
}

}  // namespace lens::testing_hosts

#endif  // LENS_TEST_GPU_AMDGPU_TEST_HOSTS_H_
