// The amdgpu sysfs GpuSource on the host fixture trees as checked in
// (test/fixtures/hosts; README.md there says what each host contains and
// where its layout comes from): inventory and samples per host.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "amdgpu_test_hosts.h"
#include "gpu/kfd_topology.h"
#include "lens/gpu.h"

namespace lens {
namespace {

HostRoots Host(const std::string& name) {
  return HostRoots::Under(std::string(LENS_FIXTURES_DIR) + "/hosts/" + name);
}

using testing_hosts::Probe;
using testing_hosts::ScanAndSample;

// The KFD gpu_id of the node whose drm_render_minor is `minor`, read from
// the fixture's topology (a cross-check of the matching).
std::optional<uint32_t> KfdIdForRender(const HostRoots& roots, uint64_t minor) {
  auto topology = ReadKfdTopology(roots.sysfs);
  if (!topology.ok()) return std::nullopt;
  for (const KfdNode& node : topology->nodes) {
    if (node.is_gpu() && node.Property("drm_render_minor") == minor) {
      return node.gpu_id;
    }
  }
  return std::nullopt;
}

TEST(AmdGpuSysfsTest, NamesItself) {
  EXPECT_EQ(NewAmdGpuSysfsSource(Host("empty"))->name(), "amdgpu-sysfs");
}

TEST(AmdGpuSysfsTest, FindsEightMi300xWithTheirIdentity) {
  const HostRoots roots = Host("mi300x-8x-mlx5");
  Probe probe = ScanAndSample(roots);
  ASSERT_EQ(probe.gpus.size(), 8u);
  const char* kBdfs[] = {"0000:0c:00.0", "0000:22:00.0", "0000:38:00.0",
                         "0000:5c:00.0", "0000:9f:00.0", "0000:af:00.0",
                         "0000:bf:00.0", "0000:df:00.0"};
  std::set<std::string> serials;
  std::set<uint32_t> kfd_ids;
  for (size_t i = 0; i < probe.gpus.size(); ++i) {
    const GpuInfo& gpu = probe.gpus[i];
    SCOPED_TRACE(gpu.bdf);
    EXPECT_EQ(gpu.index, static_cast<int>(i));
    EXPECT_EQ(gpu.vendor, GpuVendor::kAmd);
    EXPECT_EQ(gpu.bdf, kBdfs[i]);
    EXPECT_EQ(gpu.model, "AMD Instinct MI300X OAM");  // product_name
    EXPECT_EQ(gpu.pci_vendor_id, 0x1002);
    EXPECT_EQ(gpu.pci_device_id, 0x74a1);
    EXPECT_EQ(gpu.pci_subsystem_device_id, 0x74a1);
    EXPECT_EQ(gpu.vbios_version, "113-M3000100-102");
    EXPECT_EQ(gpu.unique_id.size(), 16u);
    EXPECT_EQ(gpu.numa_node, i < 4 ? 0 : 1);
    EXPECT_EQ(gpu.vram_total_bytes, 206141652992u);
    EXPECT_EQ(gpu.drm_card, "card" + std::to_string(8 * i));
    EXPECT_EQ(gpu.drm_render, "renderD" + std::to_string(128 + 8 * i));
    EXPECT_EQ(gpu.compute_partition, "SPX");
    EXPECT_EQ(gpu.memory_partition, "NPS1");
    EXPECT_EQ(gpu.partition_id, 0);
    EXPECT_EQ(gpu.driver, "amdgpu");
    EXPECT_EQ(gpu.driver_version, "6.8.5");
    EXPECT_EQ(gpu.pcie_max_speed_gtps, 32.0);
    EXPECT_EQ(gpu.pcie_max_width, 16);
    EXPECT_EQ(gpu.power_cap_watts, 750.0);
    ASSERT_TRUE(gpu.kfd_gpu_id);
    EXPECT_EQ(gpu.kfd_gpu_id, KfdIdForRender(roots, 128 + 8 * i));
    serials.insert(gpu.serial);
    kfd_ids.insert(*gpu.kfd_gpu_id);
  }
  EXPECT_EQ(probe.gpus[0].serial, "692351001124");
  EXPECT_EQ(probe.gpus[0].unique_id, "3d298aac61474a19");
  EXPECT_EQ(serials.size(), 8u);
  EXPECT_EQ(kfd_ids.size(), 8u);
}

TEST(AmdGpuSysfsTest, SamplesAnIdleMi300xInBaseUnits) {
  Probe probe = ScanAndSample(Host("mi300x-8x-mlx5"));
  ASSERT_EQ(probe.samples.size(), 8u);
  const GpuSample& idle = probe.samples[0];
  EXPECT_GT(idle.time.time_since_epoch().count(), 0);
  EXPECT_EQ(idle.utilization_ratio, 0.0);
  EXPECT_EQ(idle.memory_utilization_ratio, 0.0);
  EXPECT_EQ(idle.vram_used_bytes, 287309824u);
  EXPECT_EQ(idle.vram_total_bytes, 206141652992u);
  EXPECT_EQ(idle.power_watts, 140.0);  // power1_input, microwatts
  EXPECT_EQ(idle.temperature_junction_celsius, 35.0);
  EXPECT_EQ(idle.temperature_memory_celsius, 31.0);
  // gc 9.4.3 has no edge sensor: not reported, not 0.
  EXPECT_FALSE(idle.temperature_edge_celsius);
  EXPECT_EQ(idle.clock_graphics_hz, 132e6);  // "S: 132Mhz *" deep sleep
  EXPECT_EQ(idle.clock_memory_hz, 900e6);
  EXPECT_EQ(idle.clock_soc_hz, 1143e6);
  EXPECT_EQ(idle.pcie_link_speed_gtps, 32.0);
  EXPECT_EQ(idle.pcie_link_width, 16);
  EXPECT_EQ(idle.pcie_replay_count, 0u);
  EXPECT_EQ(idle.ecc_correctable_errors, 0u);
  EXPECT_EQ(idle.ecc_uncorrectable_errors, 0u);
  // Passively cooled OAM module; amdgpu exposes no energy counter.
  EXPECT_FALSE(idle.fan_speed_ratio);
  EXPECT_FALSE(idle.energy_joules);
  EXPECT_FALSE(idle.throttle_known);
  EXPECT_FALSE(idle.processes_known);
}

TEST(AmdGpuSysfsTest, SamplesABusyMi300xAndSumsRasBlocks) {
  Probe probe = ScanAndSample(Host("mi300x-8x-mlx5"));
  ASSERT_EQ(probe.samples.size(), 8u);
  const GpuSample& busy = probe.samples[2];
  EXPECT_EQ(busy.utilization_ratio, 1.0);
  EXPECT_DOUBLE_EQ(*busy.memory_utilization_ratio, 0.41);
  EXPECT_EQ(busy.vram_used_bytes, 1799888896u);
  EXPECT_EQ(busy.power_watts, 592.0);
  EXPECT_EQ(busy.temperature_junction_celsius, 78.0);
  EXPECT_EQ(busy.clock_graphics_hz, 1897e6);
  EXPECT_EQ(busy.clock_memory_hz, 1300e6);
  EXPECT_EQ(busy.clock_soc_hz, 1200e6);
  // ras/*_err_count summed over umc, gfx, sdma, mmhub, xgmi_wafl, ...
  EXPECT_EQ(probe.samples[3].ecc_correctable_errors, 2u);
  EXPECT_EQ(probe.samples[5].ecc_correctable_errors, 15u);
  EXPECT_EQ(probe.samples[5].ecc_uncorrectable_errors, 0u);
  EXPECT_EQ(probe.samples[6].ecc_uncorrectable_errors, 1u);
  EXPECT_EQ(probe.samples[4].pcie_replay_count, 3u);
}

TEST(AmdGpuSysfsTest, ListsEveryCpxPartitionWithThePhysicalIdentity) {
  const HostRoots roots = Host("mi300x-cpx");
  Probe probe = ScanAndSample(roots);
  ASSERT_EQ(probe.gpus.size(), 16u);
  std::set<uint32_t> kfd_ids;
  for (size_t i = 0; i < probe.gpus.size(); ++i) {
    const GpuInfo& gpu = probe.gpus[i];
    const size_t physical = i / 8;
    const int partition = static_cast<int>(i % 8);
    SCOPED_TRACE("logical GPU " + std::to_string(i));
    EXPECT_EQ(gpu.index, static_cast<int>(i));
    EXPECT_EQ(gpu.bdf, physical == 0 ? "0000:0c:00.0" : "0000:22:00.0");
    EXPECT_EQ(gpu.partition_id, partition);
    EXPECT_EQ(gpu.serial, probe.gpus[physical * 8].serial);
    EXPECT_EQ(gpu.unique_id, probe.gpus[physical * 8].unique_id);
    EXPECT_EQ(gpu.compute_partition, "CPX");
    EXPECT_EQ(gpu.memory_partition, "NPS1");
    EXPECT_EQ(gpu.model, "AMD Instinct MI300X OAM");
    // Partition 0 is the PCI device's own DRM nodes, the others those of
    // the amdgpu_xcp platform devices.
    EXPECT_EQ(gpu.drm_card, "card" + std::to_string(i));
    EXPECT_EQ(gpu.drm_render, "renderD" + std::to_string(128 + i));
    ASSERT_TRUE(gpu.kfd_gpu_id);
    EXPECT_EQ(gpu.kfd_gpu_id, KfdIdForRender(roots, 128 + i));
    kfd_ids.insert(*gpu.kfd_gpu_id);
    // Device budgets appear once per physical GPU.
    EXPECT_EQ(gpu.vram_total_bytes.has_value(), partition == 0);
    EXPECT_EQ(gpu.power_cap_watts.has_value(), partition == 0);
  }
  EXPECT_EQ(kfd_ids.size(), 16u);
  EXPECT_NE(probe.gpus[0].serial, probe.gpus[8].serial);
}

TEST(AmdGpuSysfsTest, GivesDeviceValuesOnPartitionZeroOnly) {
  Probe probe = ScanAndSample(Host("mi300x-cpx"));
  ASSERT_EQ(probe.samples.size(), 16u);
  EXPECT_EQ(probe.samples[0].power_watts, 591.0);
  EXPECT_EQ(probe.samples[0].utilization_ratio, 1.0);
  EXPECT_EQ(probe.samples[8].power_watts, 138.0);
  // ras/aca_<block> files ("ue/ce/de") of the newer driver.
  EXPECT_EQ(probe.samples[8].ecc_correctable_errors, 5u);
  for (size_t i : {1, 5, 7, 9, 15}) {
    SCOPED_TRACE(i);
    const GpuSample& s = probe.samples[i];
    EXPECT_GT(s.time.time_since_epoch().count(), 0);
    EXPECT_FALSE(s.power_watts);
    EXPECT_FALSE(s.utilization_ratio);
    EXPECT_FALSE(s.vram_used_bytes);
    EXPECT_FALSE(s.vram_total_bytes);
    EXPECT_FALSE(s.temperature_junction_celsius);
    EXPECT_FALSE(s.clock_graphics_hz);
    EXPECT_FALSE(s.ecc_correctable_errors);
  }
}

TEST(AmdGpuSysfsTest, ReadsAMixedMi250AndMi210Node) {
  Probe probe = ScanAndSample(Host("mi250-mi210"));
  ASSERT_EQ(probe.gpus.size(), 4u);
  const std::vector<GpuInfo>& g = probe.gpus;
  EXPECT_EQ(g[0].bdf, "0000:29:00.0");
  EXPECT_EQ(g[1].bdf, "0000:2c:00.0");
  EXPECT_EQ(g[2].bdf, "0000:63:00.0");
  EXPECT_EQ(g[3].bdf, "0001:c3:00.0");  // PCI domain 1 kept
  EXPECT_EQ(g[0].model, "AMD INSTINCT MI250 (MCM) OAM AC MBA");
  // The two dies of one MI250 module: two GPUs, one board serial.
  EXPECT_EQ(g[0].serial, "PCB046982-0071");
  EXPECT_EQ(g[1].serial, g[0].serial);
  EXPECT_NE(g[1].unique_id, g[0].unique_id);
  // No product_name: the name table.
  EXPECT_EQ(g[2].model, "AMD Instinct MI210");
  EXPECT_EQ(g[3].model, "AMD Instinct MI210");
  EXPECT_EQ(g[3].numa_node, 1);
  EXPECT_EQ(g[3].drm_card, "card3");
  EXPECT_EQ(g[0].compute_partition, "");
  EXPECT_EQ(g[0].memory_partition, "");
  EXPECT_EQ(g[0].driver_version, "6.3.6");
  EXPECT_EQ(g[0].power_cap_watts, 560.0);
  EXPECT_EQ(g[2].power_cap_watts, 300.0);
  for (const GpuInfo& gpu : g) EXPECT_TRUE(gpu.kfd_gpu_id) << gpu.bdf;
  EXPECT_EQ(g[3].kfd_gpu_id, KfdIdForRender(Host("mi250-mi210"), 131));
}

TEST(AmdGpuSysfsTest, ReportsMi250PowerOnThePrimaryDieOnly) {
  Probe probe = ScanAndSample(Host("mi250-mi210"));
  ASSERT_EQ(probe.samples.size(), 4u);
  EXPECT_EQ(probe.samples[0].power_watts, 91.0);  // power1_average
  // The secondary die's power1_average reads 0: not reported.
  EXPECT_FALSE(probe.samples[1].power_watts);
  EXPECT_EQ(probe.samples[1].temperature_edge_celsius, 36.0);
  EXPECT_EQ(probe.samples[2].power_watts, 41.0);
  EXPECT_EQ(probe.samples[2].temperature_edge_celsius, 33.0);
  EXPECT_EQ(probe.samples[2].temperature_junction_celsius, 35.0);
  EXPECT_EQ(probe.samples[2].temperature_memory_celsius, 46.0);
  EXPECT_DOUBLE_EQ(*probe.samples[2].utilization_ratio, 0.23);
  EXPECT_EQ(probe.samples[2].clock_graphics_hz, 800e6);
  EXPECT_EQ(probe.samples[2].clock_memory_hz, 1600e6);
  EXPECT_EQ(probe.samples[2].clock_soc_hz, 1090e6);
  EXPECT_EQ(probe.samples[0].ecc_correctable_errors, 7u);
  EXPECT_EQ(probe.samples[3].ecc_correctable_errors, 1u);
  EXPECT_EQ(probe.samples[3].ecc_uncorrectable_errors, 0u);
}

TEST(AmdGpuSysfsTest, IgnoresConnectorsAndOtherDriversCards) {
  Probe probe = ScanAndSample(Host("radeon-workstation"));
  // card0-DP-1..4 are connectors, card1 is the ASPEED BMC (ast), 03:00.1 is
  // the board's audio function.
  ASSERT_EQ(probe.gpus.size(), 1u);
  const GpuInfo& gpu = probe.gpus[0];
  EXPECT_EQ(gpu.bdf, "0000:03:00.0");
  EXPECT_EQ(gpu.drm_card, "card0");
  EXPECT_EQ(gpu.drm_render, "renderD128");
  // Empty product_name: the table, by device id and revision.
  EXPECT_EQ(gpu.model, "AMD Radeon Pro W6600");
  // Neither serial_number nor unique_id on this board.
  EXPECT_EQ(gpu.serial, "");
  EXPECT_EQ(gpu.unique_id, "");
  EXPECT_FALSE(gpu.numa_node);        // numa_node -1
  EXPECT_EQ(gpu.driver_version, "");  // in-tree driver: no version file
  EXPECT_EQ(gpu.pcie_max_width, 8);
  EXPECT_EQ(gpu.power_cap_watts, 100.0);
  const GpuSample& s = probe.samples[0];
  EXPECT_DOUBLE_EQ(*s.fan_speed_ratio, 1130.0 / 3700.0);
  EXPECT_EQ(s.temperature_edge_celsius, 41.0);
  EXPECT_EQ(s.power_watts, 9.0);
  EXPECT_EQ(s.clock_graphics_hz, 500e6);
  EXPECT_EQ(s.pcie_link_width, 8);
  // Consumer boards have no RAS: not reported, not 0.
  EXPECT_FALSE(s.ecc_correctable_errors);
  EXPECT_FALSE(s.ecc_uncorrectable_errors);
}

TEST(AmdGpuSysfsTest, ReportsNoGpusOnAHostWithoutDrm) {
  Probe probe = ScanAndSample(Host("empty"));
  EXPECT_TRUE(probe.gpus.empty());
  EXPECT_TRUE(probe.samples.empty());
  auto token = probe.source->DeviceSetToken();
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, "kfd=-");
}

TEST(AmdGpuSysfsTest, TrimsNulPaddingAndKeepsUnreadableValuesUnreported) {
  Probe probe = ScanAndSample(Host("quirks"));
  ASSERT_EQ(probe.gpus.size(), 2u);
  const GpuInfo& mi210 = probe.gpus[0];
  EXPECT_EQ(mi210.serial, "PCB060112-0043");         // padded to 4096 with NULs
  EXPECT_EQ(mi210.vbios_version, "113-D67301-063");  // NULs before '\n'
  EXPECT_FALSE(mi210.numa_node);
  const GpuSample& s = probe.samples[0];
  EXPECT_FALSE(s.utilization_ratio);         // gpu_busy_percent missing
  EXPECT_FALSE(s.memory_utilization_ratio);  // "N/A", not 0
  EXPECT_FALSE(s.clock_memory_hz);           // "unavailable"
  EXPECT_EQ(s.clock_graphics_hz, 800e6);
  // Temperature channels without labels keep amdgpu's fixed meaning.
  EXPECT_EQ(s.temperature_edge_celsius, 34.0);
  EXPECT_EQ(s.temperature_junction_celsius, 36.0);
  EXPECT_EQ(s.temperature_memory_celsius, 47.0);
  // One RAS block inaccessible: no partial (falsely low) total.
  EXPECT_FALSE(s.ecc_correctable_errors);
  EXPECT_FALSE(s.ecc_uncorrectable_errors);
  EXPECT_EQ(s.power_watts, 42.0);
}

TEST(AmdGpuSysfsTest, FallsBackToUniqueIdWithoutASerialNumber) {
  Probe probe = ScanAndSample(Host("quirks"));
  ASSERT_EQ(probe.gpus.size(), 2u);
  const GpuInfo& mi100 = probe.gpus[1];
  EXPECT_EQ(mi100.bdf, "0000:02:00.0");
  EXPECT_EQ(mi100.model, "AMD Instinct MI100");
  EXPECT_EQ(mi100.unique_id.size(), 16u);
  EXPECT_EQ(mi100.serial, mi100.unique_id);
  EXPECT_EQ(mi100.pcie_max_speed_gtps, 16.0);
  const GpuSample& s = probe.samples[1];
  EXPECT_FALSE(s.pcie_link_speed_gtps);  // "Unknown"
  EXPECT_EQ(s.pcie_link_width, 16);
  EXPECT_EQ(s.clock_graphics_hz, 300e6);
  EXPECT_FALSE(s.ecc_correctable_errors);  // no ras/ directory
}

}  // namespace
}  // namespace lens
