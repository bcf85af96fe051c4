// The "nvml" GpuSource over NVML replays of real machines
// (test/fixtures/nvml/README.md says where each file's values come from):
// inventory and samples in base units, "not supported" as nullopt, failures
// confined to the device and value they hit, and the device-set token.
#include <gtest/gtest.h>

#include <set>

#include "gpu/nvml/nvml_replay.h"
#include "gpu/nvml/nvml_source.h"

namespace lens::nvml {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

std::string Fixture(const std::string& name) {
  return std::string(LENS_FIXTURES_DIR) + "/nvml/" + name;
}

std::shared_ptr<NvmlReplay> Replay(const std::string& name) {
  auto replay = NvmlReplay::Open(Fixture(name));
  EXPECT_TRUE(replay.ok()) << replay.status();
  return replay.ok() ? *replay : nullptr;
}

// A source over `replay`, scanned and sampled once.
struct Probed {
  std::unique_ptr<GpuSource> source;
  std::vector<GpuInfo> infos;
  std::vector<GpuSample> samples;
};
Probed Probe(std::shared_ptr<NvmlReplay> replay) {
  Probed p;
  auto source = NewNvmlGpuSourceFromApi(std::move(replay));
  EXPECT_TRUE(source.ok()) << source.status();
  if (!source.ok()) return p;
  p.source = *std::move(source);
  auto infos = p.source->Scan();
  EXPECT_TRUE(infos.ok()) << infos.status();
  if (infos.ok()) p.infos = *std::move(infos);
  Status sampled = p.source->Sample(&p.samples);
  EXPECT_TRUE(sampled.ok()) << sampled;
  return p;
}

const GpuInfo* ByBdf(const Probed& p, const std::string& bdf) {
  for (const GpuInfo& info : p.infos) {
    if (info.bdf == bdf) return &info;
  }
  return nullptr;
}

TEST(NvmlSourceTest, ScansAnHgxH100NodeSortedByBdfWithIdentity) {
  Probed p = Probe(Replay("h100_8x_550.90.07.json"));
  ASSERT_EQ(p.source->name(), "nvml");
  const std::vector<std::string> bdfs = {
      "0000:19:00.0", "0000:3b:00.0", "0000:4c:00.0", "0000:5d:00.0",
      "0000:9b:00.0", "0000:bb:00.0", "0000:cb:00.0", "0000:db:00.0"};
  ASSERT_EQ(p.infos.size(), bdfs.size());
  std::set<std::string> uuids, serials;
  for (size_t i = 0; i < p.infos.size(); ++i) {
    const GpuInfo& g = p.infos[i];
    SCOPED_TRACE(g.bdf);
    EXPECT_EQ(g.index, static_cast<int>(i));
    EXPECT_EQ(g.bdf, bdfs[i]);
    EXPECT_EQ(g.vendor, GpuVendor::kNvidia);
    EXPECT_EQ(g.model, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(g.unique_id.rfind("GPU-", 0), 0u);
    EXPECT_EQ(g.unique_id.size(), 40u);  // GPU- + 8-4-4-4-12
    EXPECT_EQ(g.serial.size(), 13u);
    uuids.insert(g.unique_id);
    serials.insert(g.serial);
    EXPECT_EQ(g.vbios_version, "96.00.74.00.01");
    EXPECT_EQ(g.pci_vendor_id, 0x10de);
    EXPECT_EQ(g.pci_device_id, 0x2330);
    EXPECT_EQ(g.pci_subsystem_vendor_id, 0x10de);
    EXPECT_EQ(g.pci_subsystem_device_id, 0x16c1);
    EXPECT_EQ(g.numa_node, std::nullopt);  // NVML has no roots to read it
    EXPECT_EQ(g.driver, "nvidia");
    EXPECT_EQ(g.driver_version, "550.90.07");
    EXPECT_EQ(g.vram_total_bytes, 81559 * kMiB);
    EXPECT_EQ(g.pcie_max_speed_gtps, 32.0);
    EXPECT_EQ(g.pcie_max_width, 16);
    EXPECT_EQ(g.power_cap_watts, 700.0);
    EXPECT_TRUE(g.drm_card.empty());
    EXPECT_EQ(g.kfd_gpu_id, std::nullopt);
  }
  EXPECT_EQ(uuids.size(), 8u);
  EXPECT_EQ(serials.size(), 8u);
}

TEST(NvmlSourceTest, SamplesAGpuUnderLoadInBaseUnits) {
  Probed p = Probe(Replay("h100_8x_550.90.07.json"));
  ASSERT_EQ(p.samples.size(), 8u);
  const GpuSample& s = p.samples[0];  // 0000:19:00.0, running gpu_burn
  EXPECT_GT(s.time.time_since_epoch().count(), 0);
  EXPECT_EQ(s.utilization_ratio, 1.0);
  EXPECT_EQ(s.memory_utilization_ratio, 0.11);
  EXPECT_EQ(s.vram_used_bytes, 19818 * kMiB);  // v2: without the reservation
  EXPECT_EQ(s.vram_total_bytes, 81559 * kMiB);
  EXPECT_DOUBLE_EQ(*s.power_watts, 629.45);
  EXPECT_DOUBLE_EQ(*s.energy_joules, 31118245.067);
  EXPECT_EQ(s.temperature_edge_celsius, 59.0);
  EXPECT_EQ(s.temperature_memory_celsius, 55.0);
  EXPECT_EQ(s.temperature_junction_celsius, std::nullopt);
  EXPECT_EQ(s.clock_graphics_hz, 1980e6);
  EXPECT_EQ(s.clock_memory_hz, 2619e6);
  EXPECT_EQ(s.clock_soc_hz, std::nullopt);
  EXPECT_EQ(s.fan_speed_ratio, std::nullopt);  // SXM: NOT_SUPPORTED
  EXPECT_EQ(s.pcie_link_speed_gtps, 32.0);
  EXPECT_EQ(s.pcie_link_width, 16);
  EXPECT_EQ(s.pcie_replay_count, 9u);
  EXPECT_EQ(s.ecc_correctable_errors, 0u);
  EXPECT_EQ(s.ecc_uncorrectable_errors, 0u);
  EXPECT_TRUE(s.throttle_known);
  EXPECT_TRUE(s.throttle_reasons.empty());
  ASSERT_TRUE(s.processes_known);
  const std::vector<GpuProcess> want = {{11327, "", 2566 * kMiB},
                                        {11328, "", 1542 * kMiB},
                                        {11345, "", 15690 * kMiB}};
  EXPECT_EQ(s.processes, want);
}

TEST(NvmlSourceTest, MapsClockEventReasonBitsToTheThrottleVocabulary) {
  Probed p = Probe(Replay("h100_8x_550.90.07.json"));
  ASSERT_EQ(p.samples.size(), 8u);
  EXPECT_EQ(p.samples[1].throttle_reasons,
            std::vector<std::string>{"sw_power_cap"});  // at 700 W
  for (size_t i = 2; i < 8; ++i) {                      // idle GPUs
    EXPECT_TRUE(p.samples[i].throttle_known);
    EXPECT_EQ(p.samples[i].throttle_reasons, std::vector<std::string>{"idle"});
    EXPECT_TRUE(p.samples[i].processes_known);
    EXPECT_TRUE(p.samples[i].processes.empty());
    EXPECT_EQ(p.samples[i].clock_graphics_hz, 345e6);
  }
  EXPECT_EQ(ClocksEventReasonNames(0x1ff),
            (std::vector<std::string>{"idle", "applications_clocks",
                                      "sw_power_cap", "hw_slowdown",
                                      "sync_boost", "sw_thermal", "hw_thermal",
                                      "hw_power_brake", "display_clocks"}));
  EXPECT_EQ(ClocksEventReasonNames(0x48),
            (std::vector<std::string>{"hw_slowdown", "hw_thermal"}));
  // Bits nvml.h does not define (yet) are not invented a name.
  EXPECT_TRUE(ClocksEventReasonNames(0x8000000000000200ull).empty());
}

TEST(NvmlSourceTest, ReportsVolatileEccCountsAndReplays) {
  Probed p = Probe(Replay("h100_8x_550.90.07.json"));
  ASSERT_EQ(p.samples.size(), 8u);
  EXPECT_EQ(p.samples[3].pcie_replay_count, 120u);
  // Since driver load (volatile: 2), not the lifetime aggregate (14).
  EXPECT_EQ(p.samples[4].ecc_correctable_errors, 2u);
  EXPECT_EQ(p.samples[4].ecc_uncorrectable_errors, 0u);
}

TEST(NvmlSourceTest, LeavesWhatAnL40sDoesNotReportAsNullopt) {
  Probed p = Probe(Replay("l40s_595.80.json"));
  ASSERT_EQ(p.infos.size(), 1u);
  const GpuInfo& g = p.infos[0];
  EXPECT_EQ(g.model, "NVIDIA L40S");
  EXPECT_EQ(g.bdf, "0000:01:00.0");
  EXPECT_EQ(g.pci_device_id, 0x26b9);
  EXPECT_EQ(g.pci_subsystem_device_id, 0x1851);
  EXPECT_EQ(g.driver_version, "595.80");
  EXPECT_EQ(g.pcie_max_speed_gtps, 16.0);
  EXPECT_EQ(g.power_cap_watts, 350.0);
  const GpuSample& s = p.samples[0];
  EXPECT_EQ(s.fan_speed_ratio, std::nullopt);
  // GDDR6 without a memory sensor: the field reads 0, which is not 0 °C.
  EXPECT_EQ(s.temperature_memory_celsius, std::nullopt);
  EXPECT_EQ(s.temperature_edge_celsius, 54.0);
  EXPECT_EQ(s.clock_memory_hz, 9001e6);
  EXPECT_DOUBLE_EQ(*s.power_watts, 110.24);
  EXPECT_EQ(s.vram_used_bytes, 1235 * kMiB);
  ASSERT_EQ(s.processes.size(), 2u);
  EXPECT_EQ(s.processes[1].pid, 20038);
  EXPECT_EQ(s.processes[1].used_memory_bytes, 681 * kMiB);
}

TEST(NvmlSourceTest, LeavesWhatAPascalGpuCannotReportAsNullopt) {
  Probed p = Probe(Replay("tesla_p100_510.47.03.json"));
  ASSERT_EQ(p.infos.size(), 1u);
  EXPECT_EQ(p.infos[0].model, "Tesla P100-PCIE-16GB");
  EXPECT_EQ(p.infos[0].bdf, "0000:00:04.0");
  EXPECT_EQ(p.infos[0].pcie_max_speed_gtps, 8.0);
  const GpuSample& s = p.samples[0];
  EXPECT_EQ(s.energy_joules, std::nullopt);  // Volta and newer only
  EXPECT_EQ(s.fan_speed_ratio, std::nullopt);
  EXPECT_EQ(s.temperature_memory_celsius, std::nullopt);
  EXPECT_DOUBLE_EQ(*s.power_watts, 26.16);
  EXPECT_EQ(s.temperature_edge_celsius, 38.0);
  EXPECT_EQ(s.clock_graphics_hz, 405e6);
  // The pre-R535 name of the reasons call still answers.
  EXPECT_TRUE(s.throttle_known);
  EXPECT_EQ(s.throttle_reasons, std::vector<std::string>{"idle"});
  EXPECT_EQ(s.ecc_correctable_errors, 0u);  // 3 in the aggregate only
  EXPECT_TRUE(s.processes_known);
  EXPECT_TRUE(s.processes.empty());
}

TEST(NvmlSourceTest, KeepsTheOtherGpusWhenOneIsLostOrOneCallFails) {
  Probed p = Probe(Replay("h100_8x_gpu_lost_550.90.07.json"));
  ASSERT_EQ(p.infos.size(), 7u);
  EXPECT_EQ(ByBdf(p, "0000:4c:00.0"), nullptr);  // handle: GPU is lost
  for (size_t i = 0; i < p.infos.size(); ++i) {
    EXPECT_EQ(p.infos[i].index, static_cast<int>(i));
  }
  ASSERT_EQ(p.samples.size(), 7u);
  // 0000:3b:00.0: power and energy fail with Unknown Error, the rest reads.
  ASSERT_EQ(p.infos[1].bdf, "0000:3b:00.0");
  EXPECT_EQ(p.samples[1].power_watts, std::nullopt);
  EXPECT_EQ(p.samples[1].energy_joules, std::nullopt);
  EXPECT_EQ(p.samples[1].temperature_edge_celsius, 66.0);
  EXPECT_EQ(p.samples[1].utilization_ratio, 1.0);
  EXPECT_TRUE(p.samples[1].processes_known);
  for (size_t i = 0; i < p.samples.size(); ++i) {
    if (i == 1) continue;
    EXPECT_TRUE(p.samples[i].power_watts.has_value()) << p.infos[i].bdf;
  }
}

TEST(NvmlSourceTest, DeviceSetTokenIsCountAndUuidsAndFollowsTheDeviceSet) {
  auto replay = Replay("h100_8x_550.90.07.json");
  Probed p = Probe(replay);
  auto token = p.source->DeviceSetToken();
  ASSERT_TRUE(token.ok()) << token.status();
  std::string want = "8";
  for (const GpuInfo& g : p.infos) want += "|" + g.unique_id;
  EXPECT_EQ(*token, want);
  EXPECT_EQ(*p.source->DeviceSetToken(), want);  // stable while unchanged

  ASSERT_TRUE(replay->Load(Fixture("h100_8x_gpu_lost_550.90.07.json")).ok());
  auto lost = p.source->DeviceSetToken();
  ASSERT_TRUE(lost.ok());
  EXPECT_NE(*lost, want);
  std::string want_lost = "8";  // the lost GPU's UUID cannot be read
  for (size_t i = 0; i < p.infos.size(); ++i) {
    want_lost += "|" + (i == 2 ? std::string("?") : p.infos[i].unique_id);
  }
  EXPECT_EQ(*lost, want_lost);

  ASSERT_TRUE(replay->Load(Fixture("l40s_595.80.json")).ok());
  auto l40s = p.source->DeviceSetToken();
  ASSERT_TRUE(l40s.ok());
  EXPECT_EQ(l40s->rfind("1|GPU-", 0), 0u);

  ASSERT_TRUE(replay->Load(Fixture("h100_8x_550.90.07.json")).ok());
  EXPECT_EQ(*p.source->DeviceSetToken(), want);
}

TEST(NvmlSourceTest, SampleFailsOnlyWhenNoGpuAnswers) {
  auto replay = Replay("h100_8x_550.90.07.json");
  Probed p = Probe(replay);
  ASSERT_EQ(p.infos.size(), 8u);
  // The machine now has one GPU: seven stale handles fail, one answers.
  ASSERT_TRUE(replay->Load(Fixture("l40s_595.80.json")).ok());
  std::vector<GpuSample> samples;
  ASSERT_TRUE(p.source->Sample(&samples).ok());
  ASSERT_EQ(samples.size(), 8u);
  EXPECT_EQ(samples[0].temperature_edge_celsius, 54.0);
  EXPECT_EQ(samples[7].temperature_edge_celsius, std::nullopt);
  EXPECT_FALSE(samples[7].throttle_known);
  EXPECT_FALSE(samples[7].processes_known);
  // No GPU left: nothing can be read, so the caller must rescan.
  ASSERT_TRUE(replay->Load(Fixture("driver_not_loaded.json")).ok());
  Status st = p.source->Sample(&samples);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st;
  EXPECT_NE(st.message().find("Invalid Argument"), std::string::npos) << st;
  auto rescan = p.source->Scan();
  ASSERT_TRUE(rescan.ok()) << rescan.status();
  EXPECT_TRUE(rescan->empty());
  EXPECT_TRUE(p.source->Sample(&samples).ok());
  EXPECT_TRUE(samples.empty());
}

TEST(NvmlSourceTest, InitFailureIsUnavailableAndNamesTheNvmlError) {
  auto replay = Replay("driver_not_loaded.json");
  auto source = NewNvmlGpuSourceFromApi(replay);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(source.status().message(),
            "nvmlInit failed: nvmlInit_v2: Driver Not Loaded");
  EXPECT_EQ(replay->init_count(), 0);
}

TEST(NvmlSourceTest, ShutsNvmlDownWhenDestroyed) {
  auto replay = Replay("l40s_595.80.json");
  {
    auto source = NewNvmlGpuSourceFromApi(replay);
    ASSERT_TRUE(source.ok()) << source.status();
    EXPECT_EQ(replay->init_count(), 1);
  }
  EXPECT_EQ(replay->init_count(), 0);
}

}  // namespace
}  // namespace lens::nvml
