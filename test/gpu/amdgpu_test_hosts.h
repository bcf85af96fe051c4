// Shared by the amdgpu sysfs tests: the fixture host trees, changeable
// copies of them, the gpu_metrics fixtures, and one Scan + Sample.
#ifndef LENS_TEST_GPU_AMDGPU_TEST_HOSTS_H_
#define LENS_TEST_GPU_AMDGPU_TEST_HOSTS_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "lens/gpu.h"

namespace lens::testing_hosts {

namespace fs = std::filesystem;

inline const fs::path kHosts = fs::path(LENS_FIXTURES_DIR) / "hosts";

inline HostRoots Host(const std::string& name) {
  return HostRoots::Under((kHosts / name).string());
}

// A copy of a host tree that a test may change; removed afterwards.
class TempHost {
 public:
  explicit TempHost(const std::string& name)
      : root_(fs::path(testing::TempDir()) /
              ("lens_amdgpu_" + name + "_" + std::to_string(::getpid()) + "_" +
               std::to_string(counter_++))) {
    // sys and dev only: the amdgpu source never reads proc.
    for (const char* part : {"sys", "dev"}) {
      if (!fs::exists(kHosts / name / part)) continue;
      fs::create_directories(root_ / part);
      fs::copy(kHosts / name / part, root_ / part,
               fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    }
  }
  ~TempHost() { fs::remove_all(root_); }
  TempHost(const TempHost&) = delete;
  TempHost& operator=(const TempHost&) = delete;
  HostRoots roots() const { return HostRoots::Under(root_.string()); }
  fs::path sys() const { return root_ / "sys"; }
  // The PCI function directory behind class/drm/<card>.
  fs::path Device(const std::string& card) const {
    return fs::canonical(sys() / "class/drm" / card / "device");
  }

 private:
  static inline int counter_ = 0;
  fs::path root_;
};

inline void WriteFile(const fs::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// A gpu_metrics fixture (test/fixtures/gpu-metrics/<name>), as bytes.
inline std::vector<uint8_t> MetricsFixture(const std::string& name) {
  std::ifstream in(fs::path(LENS_FIXTURES_DIR) / "gpu-metrics" / name,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing gpu-metrics fixture " << name;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Installs a gpu_metrics fixture as <card>'s device/gpu_metrics.
inline void InstallMetrics(const TempHost& host, const std::string& card,
                           const std::string& fixture) {
  const std::vector<uint8_t> bytes = MetricsFixture(fixture);
  WriteFile(host.Device(card) / "gpu_metrics",
            std::string(bytes.begin(), bytes.end()));
}

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
