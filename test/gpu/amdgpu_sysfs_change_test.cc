// The amdgpu sysfs GpuSource on copies of the host fixture trees that a test
// changes (a GPU appears, stops answering, a file is malformed), and the
// cost of Sample.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>

#include "amdgpu_test_hosts.h"
#include "lens/gpu.h"

// Counts heap allocations while `g_count_allocations` is set, to check that
// Sample allocates nothing.
namespace {
std::atomic<bool> g_count_allocations{false};
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  if (g_count_allocations.load(std::memory_order_relaxed)) ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// GCC 12 flags free() on memory from the replaced operator new as a
// mismatch once both are inlined; they are a matching pair here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// The nothrow forms too (std::stable_sort's temporary buffer uses them): every
// form must come from this malloc/free pair, or sanitizers see a mismatch.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace lens {
namespace {

namespace fs = std::filesystem;

using testing_hosts::Host;
using testing_hosts::Probe;
using testing_hosts::ScanAndSample;
using testing_hosts::TempHost;
using testing_hosts::WriteFile;

TEST(AmdGpuSysfsTest, DeviceSetTokenChangesWhenACardAppears) {
  TempHost host("mi250-mi210");
  auto source = NewAmdGpuSysfsSource(host.roots());
  auto before = source->DeviceSetToken();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(*before, *source->DeviceSetToken());  // stable
  auto gpus = source->Scan();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 4u);

  // A fifth GPU: a copy of the MI210 at 0000:63:00.0 as 0000:64:00.0, with
  // card4/renderD132 in class/drm.
  const fs::path original = host.Device("card2");
  const fs::path added = original.parent_path() / "0000:64:00.0";
  fs::copy(original, added,
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::rename(added / "drm/card2", added / "drm/card4");
  fs::rename(added / "drm/renderD130", added / "drm/renderD132");
  fs::create_symlink(
      fs::relative(added / "drm/card4", host.sys() / "class/drm"),
      host.sys() / "class/drm/card4");
  fs::create_symlink(
      fs::relative(added / "drm/renderD132", host.sys() / "class/drm"),
      host.sys() / "class/drm/renderD132");
  fs::remove(added / "drm/card4/device");
  fs::create_symlink("../../../0000:64:00.0", added / "drm/card4/device");

  auto after = source->DeviceSetToken();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_NE(*after, *before);
  auto rescanned = source->Scan();
  ASSERT_TRUE(rescanned.ok()) << rescanned.status();
  ASSERT_EQ(rescanned->size(), 5u);
  EXPECT_EQ((*rescanned)[3].bdf, "0000:64:00.0");
  EXPECT_EQ((*rescanned)[3].drm_card, "card4");
  EXPECT_EQ((*rescanned)[3].index, 3);
  EXPECT_EQ((*rescanned)[4].bdf, "0001:c3:00.0");
}

TEST(AmdGpuSysfsTest, DeviceSetTokenChangesWithTheKfdGeneration) {
  // A compute-partition switch replaces the KFD nodes; the amdgpu_xcp DRM
  // nodes exist in every mode, so class/drm alone would not show it.
  TempHost host("mi300x-cpx");
  auto source = NewAmdGpuSysfsSource(host.roots());
  auto before = source->DeviceSetToken();
  ASSERT_TRUE(before.ok()) << before.status();
  WriteFile(host.sys() / "class/kfd/kfd/topology/generation_id", "49\n");
  auto after = source->DeviceSetToken();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_NE(*after, *before);
}

// Truncates every regular file under `dir`: reads then return nothing, the
// way reads of a removed device's attributes fail (kernfs returns ENODEV;
// a fixture's unlinked files would stay readable through open descriptors).
void SilenceDevice(const fs::path& dir) {
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && !entry.is_symlink()) {
      fs::resize_file(entry.path(), 0);
    }
  }
}

TEST(AmdGpuSysfsTest, SampleKeepsOtherGpusWhenOneStopsAnswering) {
  TempHost host("mi250-mi210");
  auto source = NewAmdGpuSysfsSource(host.roots());
  ASSERT_TRUE(source->Scan().ok());
  SilenceDevice(host.Device("card2"));
  std::vector<GpuSample> samples;
  ASSERT_TRUE(source->Sample(&samples).ok());
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_FALSE(samples[2].power_watts);
  EXPECT_FALSE(samples[2].temperature_edge_celsius);
  EXPECT_FALSE(samples[2].clock_graphics_hz);
  EXPECT_FALSE(samples[2].ecc_correctable_errors);
  EXPECT_EQ(samples[3].power_watts, 43.0);
}

TEST(AmdGpuSysfsTest, SampleFailsCleanlyWhenEveryGpuIsGone) {
  TempHost host("quirks");
  auto source = NewAmdGpuSysfsSource(host.roots());
  auto gpus = source->Scan();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 2u);
  SilenceDevice(host.Device("card0"));
  SilenceDevice(host.Device("card1"));
  std::vector<GpuSample> samples;
  Status status = source->Sample(&samples);
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status;
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_FALSE(samples[0].power_watts);
  EXPECT_FALSE(samples[1].vram_used_bytes);
}

TEST(AmdGpuSysfsTest, ReadsAnHwmonEnergyCounterWhenPresent) {
  // energy1_input is the hwmon ABI's energy counter (microjoules); amdgpu
  // does not create it today, other drivers do.
  TempHost host("mi300x-8x-mlx5");
  WriteFile(host.Device("card0") / "hwmon/hwmon2/energy1_input",
            "1234567890123\n");
  Probe probe = ScanAndSample(host.roots());
  ASSERT_EQ(probe.samples.size(), 8u);
  EXPECT_DOUBLE_EQ(*probe.samples[0].energy_joules, 1234567.890123);
  EXPECT_FALSE(probe.samples[1].energy_joules);
}

TEST(AmdGpuSysfsTest, WithoutKfdListsPhysicalGpusOnly) {
  TempHost host("mi300x-cpx");
  fs::remove_all(host.sys() / "class/kfd");
  Probe probe = ScanAndSample(host.roots());
  ASSERT_EQ(probe.gpus.size(), 2u);
  EXPECT_FALSE(probe.gpus[0].kfd_gpu_id);
  EXPECT_EQ(probe.gpus[0].compute_partition, "CPX");
  EXPECT_EQ(probe.gpus[1].bdf, "0000:22:00.0");
  EXPECT_EQ(probe.samples[1].power_watts, 138.0);
}

// A garbage PCI id file costs only that field: every GPU is still listed.
TEST(AmdGpuSysfsTest, AMalformedPciIdFileCostsOnlyThatField) {
  TempHost host("quirks");
  auto before = NewAmdGpuSysfsSource(host.roots())->Scan();
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_GT(before->size(), 1u);
  WriteFile(host.Device("card1") / "device", "N/A\n");
  WriteFile(host.Device("card1") / "vendor", "garbage\n");
  auto gpus = NewAmdGpuSysfsSource(host.roots())->Scan();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), before->size());
  int unset = 0;
  for (size_t i = 0; i < gpus->size(); ++i) {
    const GpuInfo& now = (*gpus)[i];
    const GpuInfo& was = (*before)[i];
    EXPECT_EQ(now.bdf, was.bdf);
    EXPECT_EQ(now.serial, was.serial);
    if (now.pci_device_id == 0 && was.pci_device_id != 0) {
      ++unset;
      EXPECT_EQ(now.pci_vendor_id, 0);
    } else {
      EXPECT_EQ(now.pci_device_id, was.pci_device_id);
    }
  }
  EXPECT_EQ(unset, 1);  // card1 only
}

TEST(AmdGpuSysfsTest, ScanFailsOnAMalformedKfdPropertiesFile) {
  TempHost host("mi250-mi210");
  WriteFile(host.sys() / "class/kfd/kfd/topology/nodes/3/properties",
            "simd_count 416\nlocation_id\n");
  auto gpus = NewAmdGpuSysfsSource(host.roots())->Scan();
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(gpus.status().message().find("nodes/3/properties line 2"),
            std::string::npos)
      << gpus.status();
}

TEST(AmdGpuSysfsTest, SampleBeforeScanReportsNothing) {
  auto source = NewAmdGpuSysfsSource(Host("mi300x-8x-mlx5"));
  std::vector<GpuSample> samples(3);
  EXPECT_TRUE(source->Sample(&samples).ok());
  EXPECT_TRUE(samples.empty());
}

// Sample cost per GPU with every GPU's gpu_metrics table installed (the
// MI300X v1.7 table, 2208 bytes), for comparison with the test above.
TEST(AmdGpuSysfsTest, SampleWithGpuMetricsIsQuickAndAllocatesNothing) {
  TempHost host("mi300x-8x-mlx5");
  for (int g = 0; g < 8; ++g) {
    testing_hosts::InstallMetrics(host, "card" + std::to_string(8 * g),
                                  "mi300x_spx_v1_7.bin");
  }
  auto source = NewAmdGpuSysfsSource(host.roots());
  ASSERT_TRUE(source->Scan().ok());
  std::vector<GpuSample> samples;
  ASSERT_TRUE(source->Sample(&samples).ok());  // sizes the vectors once
  ASSERT_TRUE(source->Sample(&samples).ok());  // throttle reasons known
  ASSERT_EQ(samples[7].xcds.size(), 8u);
  constexpr int kCycles = 2000;
  g_allocations = 0;
  g_count_allocations = true;
  const auto start = std::chrono::steady_clock::now();
  bool all_ok = true;
  for (int i = 0; i < kCycles; ++i) all_ok &= source->Sample(&samples).ok();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  g_count_allocations = false;
  EXPECT_TRUE(all_ok);
  EXPECT_EQ(g_allocations.load(), 0);
  EXPECT_TRUE(samples[3].energy_joules);
  const double per_gpu_us =
      std::chrono::duration<double, std::micro>(elapsed).count() / kCycles /
      static_cast<double>(samples.size());
  std::printf("amdgpu-sysfs Sample with gpu_metrics: %.2f us per GPU\n",
              per_gpu_us);
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
  EXPECT_LT(per_gpu_us, 200.0);
#endif
}

TEST(AmdGpuSysfsTest, SampleIsQuickAndAllocatesNothing) {
  auto source = NewAmdGpuSysfsSource(Host("mi300x-8x-mlx5"));
  ASSERT_TRUE(source->Scan().ok());
  std::vector<GpuSample> samples;
  ASSERT_TRUE(source->Sample(&samples).ok());  // sizes the output once
  constexpr int kCycles = 2000;
  g_allocations = 0;
  g_count_allocations = true;
  const auto start = std::chrono::steady_clock::now();
  bool all_ok = true;
  for (int i = 0; i < kCycles; ++i) all_ok &= source->Sample(&samples).ok();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  g_count_allocations = false;
  EXPECT_TRUE(all_ok);
  EXPECT_EQ(g_allocations.load(), 0);
  const double per_gpu_us =
      std::chrono::duration<double, std::micro>(elapsed).count() / kCycles /
      static_cast<double>(samples.size());
  std::printf("amdgpu-sysfs Sample: %.2f us per GPU (8 GPUs, %d cycles)\n",
              per_gpu_us, kCycles);
  // The target is 10 us per GPU; the bound leaves room for a loaded test
  // machine while still catching a per-cycle rescan. Sanitizer builds are
  // an order of magnitude slower and only report the figure.
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
  EXPECT_LT(per_gpu_us, 200.0);
#endif
}

}  // namespace
}  // namespace lens
