// amd-smi records applied to what the amdgpu sysfs source reads from the
// fixture tree of the same host (test/fixtures/hosts/<host>): every GPU is
// matched by BDF, the two sources agree on identity, and nothing sysfs
// reported changes.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "amd_smi_fixtures.h"
#include "lens/amd_smi.h"
#include "lens/gpu.h"
#include "lens/host.h"

namespace lens {
namespace {

struct Scanned {
  std::vector<GpuInfo> infos;
  std::vector<GpuSample> samples;
};

Scanned ScanHost(const std::string& host) {
  auto source = NewAmdGpuSysfsSource(
      HostRoots::Under(std::string(LENS_FIXTURES_DIR) + "/hosts/" + host));
  Scanned out;
  auto infos = source->Scan();
  EXPECT_TRUE(infos.ok()) << host << ": " << infos.status();
  if (!infos.ok()) return out;
  out.infos = *infos;
  Status sampled = source->Sample(&out.samples);
  EXPECT_TRUE(sampled.ok()) << host << ": " << sampled;
  out.samples.resize(out.infos.size());
  return out;
}

// Fields that were set before ApplyAmdSmi are unchanged after it (the PCI-id
// fallback model "AMD GPU 0x...." may be replaced by a marketing name).
void ExpectSysfsValuesKept(const GpuInfo& before, const GpuInfo& after) {
  SCOPED_TRACE(before.bdf);
  if (before.model.rfind("AMD GPU 0x", 0) != 0) {
    EXPECT_EQ(after.model, before.model);
  }
  for (auto member :
       {&GpuInfo::serial, &GpuInfo::unique_id, &GpuInfo::vbios_version,
        &GpuInfo::compute_partition, &GpuInfo::memory_partition,
        &GpuInfo::driver, &GpuInfo::driver_version}) {
    if (!(before.*member).empty()) {
      EXPECT_EQ(after.*member, before.*member);
    }
  }
  if (before.numa_node) {
    EXPECT_EQ(after.numa_node, before.numa_node);
  }
  if (before.vram_total_bytes) {
    EXPECT_EQ(after.vram_total_bytes, before.vram_total_bytes);
  }
  if (before.kfd_gpu_id) {
    EXPECT_EQ(after.kfd_gpu_id, before.kfd_gpu_id);
  }
  if (before.power_cap_watts) {
    EXPECT_EQ(after.power_cap_watts, before.power_cap_watts);
  }
  EXPECT_EQ(after.bdf, before.bdf);
  EXPECT_EQ(after.partition_id, before.partition_id);
}

void ExpectSampleValuesKept(const GpuSample& before, const GpuSample& after) {
  for (auto member : {&GpuSample::utilization_ratio, &GpuSample::power_watts,
                      &GpuSample::temperature_edge_celsius,
                      &GpuSample::temperature_junction_celsius,
                      &GpuSample::clock_graphics_hz}) {
    if (before.*member) {
      EXPECT_EQ(after.*member, before.*member);
    }
  }
  if (before.vram_used_bytes) {
    EXPECT_EQ(after.vram_used_bytes, before.vram_used_bytes);
  }
}

void ApplyAndCheck(const std::string& host,
                   const std::vector<std::string>& outputs) {
  Scanned scanned = ScanHost(host);
  ASSERT_FALSE(scanned.infos.empty()) << host;
  std::vector<AmdSmiGpu> smi = ParseAmdSmiFixtures(outputs);
  Scanned before = scanned;
  auto matched = ApplyAmdSmi(smi, &scanned.infos, &scanned.samples);
  ASSERT_TRUE(matched.ok()) << matched.status();
  EXPECT_EQ(*matched, scanned.infos.size());
  for (size_t i = 0; i < scanned.infos.size(); ++i) {
    ExpectSysfsValuesKept(before.infos[i], scanned.infos[i]);
    ExpectSampleValuesKept(before.samples[i], scanned.samples[i]);
    // Both sources describe the same hardware.
    const AmdSmiGpu* record = nullptr;
    for (const AmdSmiGpu& g : smi) {
      if (g.bdf == scanned.infos[i].bdf) record = &g;
    }
    ASSERT_NE(record, nullptr) << scanned.infos[i].bdf;
    EXPECT_EQ(scanned.infos[i].serial, record->serial);
    EXPECT_EQ("0x" + scanned.infos[i].unique_id, [&] {
      std::string s = record->asic_serial;
      for (char& c : s) c = static_cast<char>(std::tolower(c));
      return s;
    }()) << scanned.infos[i].bdf;
    EXPECT_TRUE(scanned.samples[i].processes_known);
  }
}

TEST(AmdSmiSysfsTest, Mi300xNodeMatchesEveryGpuAndKeepsSysfsValues) {
  ApplyAndCheck(
      "mi300x-8x-mlx5",
      {"mi300x-8x_rocm6.1_list.json", "mi300x-8x_rocm6.1_static.json",
       "mi300x-8x_rocm6.1_metric.json", "mi300x-8x_rocm6.2_process.json"});
}

TEST(AmdSmiSysfsTest, Mi250Mi210NodeMatchesEveryGpuAndKeepsSysfsValues) {
  ApplyAndCheck("mi250-mi210",
                {"mi250-mi210_rocm6.3_list.json",
                 "mi250-mi210_rocm6.3_static_trailing_commas.json",
                 "mi250-mi210_rocm6.3_metric_na.json",
                 "mi250-mi210_rocm6.3_process.json"});
}

}  // namespace
}  // namespace lens
