// Merging several amd-smi outputs into one record per GPU, and applying the
// records to sysfs inventories without overriding what sysfs reported.
#include <gtest/gtest.h>

#include <string>

#include "amd_smi_fixtures.h"
#include "lens/amd_smi.h"

namespace lens {
namespace {

std::vector<AmdSmiGpu> ParseAll(const std::vector<std::string>& names) {
  return ParseAmdSmiFixtures(names);
}

std::vector<AmdSmiGpu> Rocm61Node() {
  return ParseAll({"mi300x-8x_rocm6.1_metric.json",  // no BDF: joined by index
                   "mi300x-8x_rocm6.1_list.json",
                   "mi300x-8x_rocm6.1_static.json",
                   "mi300x-8x_rocm6.1_process.json"});
}

// What the sysfs source reports for an MI300X (fields it cannot know empty).
GpuInfo SysfsInfo(std::string bdf, int partition = 0) {
  GpuInfo info;
  info.bdf = std::move(bdf);
  info.partition_id = partition;
  info.model = "AMD GPU 0x74a1";
  info.pci_vendor_id = 0x1002;
  info.pci_device_id = 0x74a1;
  return info;
}

TEST(AmdSmiMergeTest, OutputsOfAllCommandsJoinByGpuIndex) {
  auto gpus = Rocm61Node();
  ASSERT_EQ(gpus.size(), 8u);
  for (const AmdSmiGpu& g : gpus) {
    EXPECT_FALSE(g.bdf.empty());
    EXPECT_EQ(g.market_name, "AMD Instinct MI300X");
    EXPECT_TRUE(g.sample.power_watts.has_value()) << g.gpu;
    EXPECT_TRUE(g.sample.processes_known) << g.gpu;
  }
  EXPECT_EQ(gpus[2].bdf, "0000:38:00.0");
  EXPECT_EQ(gpus[2].gpu, 2);
  EXPECT_EQ(gpus[2].sample.power_watts, 376.0);
  EXPECT_EQ(gpus[1].sample.processes.size(), 2u);
  EXPECT_FALSE(gpus[0].uuid.empty());
}

TEST(AmdSmiMergeTest, FirstReportedValueWinsAndSortIsByBdfThenPartition) {
  auto first = ParseAmdSmiJson(R"([{"gpu": 1, "bdf": "0000:22:00.0",
      "asic": {"market_name": "A"}}, {"gpu": 0, "bdf": "0000:0C:00.0"}])");
  auto second = ParseAmdSmiJson(R"([{"gpu": 1, "asic": {"market_name": "B",
      "device_id": "0x74a1"}}, {"gpu": 7, "usage": {"gfx_activity": 5}}])");
  ASSERT_TRUE(first.ok() && second.ok());
  std::vector<AmdSmiGpu> gpus;
  ASSERT_TRUE(MergeAmdSmiGpus(*first, &gpus).ok());
  ASSERT_TRUE(MergeAmdSmiGpus(*second, &gpus).ok());
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0].bdf, "0000:0c:00.0");  // lower-cased
  EXPECT_EQ(gpus[1].market_name, "A");
  EXPECT_EQ(gpus[1].pci_device_id, 0x74a1);  // filled from the second
  EXPECT_EQ(gpus[2].gpu, 7);                 // no BDF: last
}

TEST(AmdSmiMergeTest, OutputsThatDisagreeOnBdfAreRejected) {
  std::vector<std::string_view> outputs = {
      R"([{"gpu": 3, "bdf": "0000:5c:00.0"}])",
      R"([{"gpu": 3, "bus": {"bdf": "0000:38:00.0"}}])"};
  auto gpus = ParseAmdSmiOutputs(outputs);
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(gpus.status().message(),
            "output 2: amd-smi gpu 3: BDF 0000:5c:00.0 in one output, "
            "0000:38:00.0 in another");
  auto parse_error = ParseAmdSmiOutputs({"[]", "[{"});
  ASSERT_FALSE(parse_error.ok());
  EXPECT_EQ(parse_error.status().message().rfind("output 2: offset 2:", 0), 0u);
}

TEST(AmdSmiApplyTest, FillsOnlyWhatSysfsLeftEmpty) {
  auto smi = Rocm61Node();
  std::vector<GpuInfo> infos = {SysfsInfo("0000:0c:00.0"),
                                SysfsInfo("0000:22:00.0")};
  infos[0].model = "AMD Instinct MI300X OAM (sysfs)";
  infos[0].serial = "SYSFS-SERIAL";
  infos[0].power_cap_watts = 700.0;
  infos[0].numa_node = 3;
  std::vector<GpuSample> samples(2);
  samples[0].power_watts = 100.0;
  samples[1].processes_known = true;  // sysfs-side process list wins
  auto matched = ApplyAmdSmi(smi, &infos, &samples);
  ASSERT_TRUE(matched.ok()) << matched.status();
  EXPECT_EQ(*matched, 2u);
  // Kept from sysfs.
  EXPECT_EQ(infos[0].serial, "SYSFS-SERIAL");
  EXPECT_EQ(infos[0].power_cap_watts, 700.0);
  EXPECT_EQ(infos[0].numa_node, 3);
  EXPECT_EQ(samples[0].power_watts, 100.0);
  EXPECT_TRUE(samples[1].processes.empty());
  EXPECT_EQ(infos[0].model, "AMD Instinct MI300X OAM (sysfs)");
  // Filled from amd-smi; the PCI-id fallback model is replaced.
  EXPECT_EQ(infos[1].model, "AMD Instinct MI300X");
  EXPECT_EQ(infos[1].serial, smi[1].serial);
  EXPECT_EQ(infos[1].power_cap_watts, 750.0);
  EXPECT_EQ(infos[1].numa_node, 0);
  EXPECT_EQ(infos[0].compute_partition, "SPX");
  EXPECT_EQ(infos[0].memory_partition, "NPS1");
  EXPECT_EQ(infos[0].vbios_version, "113-M3000100-102");
  EXPECT_EQ(infos[0].vram_total_bytes, uint64_t{196592} << 20);
  EXPECT_EQ(infos[0].driver_version, "6.7.0");
  EXPECT_EQ(infos[0].pci_subsystem_vendor_id, 0x1002);
  EXPECT_EQ(samples[0].temperature_junction_celsius, 60.0);
  EXPECT_EQ(samples[1].power_watts, 652.0);
  EXPECT_EQ(samples[0].processes.size(), 1u);
  EXPECT_TRUE(samples[0].processes_known);
}

TEST(AmdSmiApplyTest, FillsIdentityOfAGpuWithoutFruData) {
  auto smi = ParseAll({"mi250-mi210_rocm6.3_list.json",
                       "mi250-mi210_rocm6.3_static_trailing_commas.json"});
  ASSERT_EQ(smi.size(), 4u);
  GpuInfo info = SysfsInfo("0001:C3:00.0");
  info.model = "AMD GPU 0x740f";  // no product_name, id not in the name table
  std::vector<GpuInfo> infos = {info};
  ASSERT_EQ(*ApplyAmdSmi(smi, &infos, nullptr), 1u);
  EXPECT_EQ(infos[0].model, "AMD Instinct MI210");
  EXPECT_EQ(infos[0].serial, "PCB051233-0142");
  EXPECT_EQ(infos[0].unique_id, "320b853690005e2a");  // as sysfs prints it
  EXPECT_EQ(infos[0].kfd_gpu_id, 16136u);
  EXPECT_EQ(infos[0].numa_node, 1);
  EXPECT_EQ(infos[0].pci_subsystem_device_id, 0x0c34);
  EXPECT_TRUE(infos[0].compute_partition.empty());  // "N/A" fills nothing
}

TEST(AmdSmiApplyTest, AsicSerialStandsInForAMissingBoardSerial) {
  auto smi = ParseAmdSmiJson(R"([{"gpu": 0, "bdf": "0000:63:00.0",
      "asic": {"asic_serial": "0x0FC4F68F0CA46CBC"},
      "board": {"product_serial": "N/A"}}])");
  ASSERT_TRUE(smi.ok());
  std::vector<GpuInfo> infos = {SysfsInfo("0000:63:00.0")};
  ASSERT_EQ(*ApplyAmdSmi(*smi, &infos, nullptr), 1u);
  EXPECT_EQ(infos[0].serial, "0fc4f68f0ca46cbc");
  EXPECT_EQ(infos[0].unique_id, "0fc4f68f0ca46cbc");
}

TEST(AmdSmiApplyTest, CpxPartitionsMatchByBdfAndPartitionId) {
  auto smi = ParseAll({"mi300x-8x-cpx_rocm7.0_list.json",
                       "mi300x-8x-cpx_rocm7.0_static_partition.json"});
  ASSERT_EQ(smi.size(), 64u);
  std::vector<GpuInfo> infos;
  for (const char* bdf : {"0000:bf:00.0", "0000:0c:00.0"}) {
    for (int p = 7; p >= 0; --p) infos.push_back(SysfsInfo(bdf, p));
  }
  auto matched = ApplyAmdSmi(smi, &infos, nullptr);
  ASSERT_TRUE(matched.ok());
  EXPECT_EQ(*matched, 16u);
  for (const GpuInfo& info : infos) {
    const AmdSmiGpu* want = nullptr;
    for (const AmdSmiGpu& g : smi) {
      if (g.bdf == info.bdf && g.partition_id == info.partition_id) want = &g;
    }
    ASSERT_NE(want, nullptr);
    EXPECT_EQ(info.kfd_gpu_id, want->kfd_id)
        << info.bdf << " " << info.partition_id;
    EXPECT_EQ(info.compute_partition, "CPX");
    EXPECT_EQ(info.memory_partition, "NPS4");
  }
}

TEST(AmdSmiApplyTest, RecordsWithoutPartitionIdAreNotGuessedForPartitions) {
  // ROCm 6.1 `list` in CPX: several records with one BDF and no partition.
  auto smi = ParseAmdSmiJson(R"([
      {"gpu": 0, "bdf": "0000:0c:00.0", "uuid": "a"},
      {"gpu": 1, "bdf": "0000:0c:00.0", "uuid": "b"},
      {"gpu": 2, "bdf": "0000:22:00.0", "uuid": "c",
       "asic": {"market_name": "AMD Instinct MI300X"}}])");
  ASSERT_TRUE(smi.ok());
  std::vector<GpuInfo> infos = {SysfsInfo("0000:0c:00.0", 0),
                                SysfsInfo("0000:0c:00.0", 1),
                                SysfsInfo("0000:22:00.0", 0)};
  auto matched = ApplyAmdSmi(*smi, &infos, nullptr);
  ASSERT_TRUE(matched.ok());
  EXPECT_EQ(*matched, 1u);  // only the unpartitioned 0000:22:00.0
  EXPECT_EQ(infos[0].model, "AMD GPU 0x74a1");
  EXPECT_EQ(infos[2].model, "AMD Instinct MI300X");
}

TEST(AmdSmiApplyTest, PartitionInPciFunctionBitsMatchesThePhysicalBdf) {
  auto smi = ParseAmdSmiJson(R"([
      {"gpu": 0, "bdf": "0000:0c:00.0", "partition_id": 0, "kfd_id": 100},
      {"gpu": 3, "bdf": "0000:0C:00.3", "partition_id": 3, "kfd_id": 103}])");
  ASSERT_TRUE(smi.ok());
  std::vector<GpuInfo> infos = {SysfsInfo("0000:0c:00.0", 3),
                                SysfsInfo("0000:0c:00.0", 0),
                                SysfsInfo("0000:0c:00.0", 5)};
  auto matched = ApplyAmdSmi(*smi, &infos, nullptr);
  ASSERT_TRUE(matched.ok());
  EXPECT_EQ(*matched, 2u);
  EXPECT_EQ(infos[0].kfd_gpu_id, 103u);
  EXPECT_EQ(infos[1].kfd_gpu_id, 100u);
  EXPECT_FALSE(infos[2].kfd_gpu_id.has_value());
}

TEST(AmdSmiApplyTest, SkipsNvidiaGpusRecordsWithoutBdfAndCaseDifferences) {
  auto metric_only = ParseAll({"mi300x-8x_rocm6.1_metric.json"});
  std::vector<GpuInfo> infos = {SysfsInfo("0000:0C:00.0")};
  std::vector<GpuSample> samples(1);
  auto matched = ApplyAmdSmi(metric_only, &infos, &samples);
  ASSERT_TRUE(matched.ok());
  EXPECT_EQ(*matched, 0u);  // metric records carry no BDF
  EXPECT_FALSE(samples[0].power_watts.has_value());

  auto smi = Rocm61Node();
  infos[0].vendor = GpuVendor::kNvidia;
  EXPECT_EQ(*ApplyAmdSmi(smi, &infos, &samples), 0u);
  infos[0].vendor = GpuVendor::kAmd;  // upper-case BDF still matches
  EXPECT_EQ(*ApplyAmdSmi(smi, &infos, &samples), 1u);
  EXPECT_EQ(samples[0].power_watts, 734.0);
}

TEST(AmdSmiApplyTest, SampleVectorMustMatchTheInventory) {
  std::vector<GpuInfo> infos(2);
  std::vector<GpuSample> samples(1);
  auto matched = ApplyAmdSmi({}, &infos, &samples);
  ASSERT_FALSE(matched.ok());
  EXPECT_EQ(matched.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lens
