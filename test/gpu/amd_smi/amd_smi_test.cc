// Parsing `amd-smi <command> --json` output of several ROCm versions
// (test/fixtures/amd-smi/README.md says which real format each fixture
// follows): shapes, units, "N/A", trailing commas, and errors with paths.
#include "lens/amd_smi.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "amd_smi_fixtures.h"

namespace lens {
namespace {

constexpr double kMiB = 1048576.0;

std::string Fixture(const std::string& name) { return AmdSmiFixture(name); }

std::vector<AmdSmiGpu> Parse(const std::string& name) {
  auto gpus = ParseAmdSmiJson(Fixture(name));
  EXPECT_TRUE(gpus.ok()) << name << ": " << gpus.status();
  return gpus.ok() ? *std::move(gpus) : std::vector<AmdSmiGpu>();
}

// The error message for `json`, which must fail with `code`.
std::string ErrorOf(std::string_view json,
                    StatusCode code = StatusCode::kInvalidArgument) {
  auto gpus = ParseAmdSmiJson(json);
  EXPECT_FALSE(gpus.ok()) << json;
  if (gpus.ok()) return "";
  EXPECT_EQ(gpus.status().code(), code) << gpus.status();
  return gpus.status().message();
}

const std::vector<std::string> kMi300xBdfs = {
    "0000:0c:00.0", "0000:22:00.0", "0000:38:00.0", "0000:5c:00.0",
    "0000:9f:00.0", "0000:af:00.0", "0000:bf:00.0", "0000:df:00.0"};

TEST(AmdSmiParseTest, Rocm61ListGivesIndexBdfAndUuidPerGpu) {
  auto gpus = Parse("mi300x-8x_rocm6.1_list.json");
  ASSERT_EQ(gpus.size(), 8u);
  for (size_t i = 0; i < gpus.size(); ++i) {
    EXPECT_EQ(gpus[i].gpu, static_cast<int>(i));
    EXPECT_EQ(gpus[i].bdf, kMi300xBdfs[i]);
    // amdsmi_uuid_gen: <serial byte 7>ff<device id>-0000-1000-80...
    EXPECT_TRUE(std::regex_match(
        gpus[i].uuid, std::regex("[0-9a-f]{2}ff74a1-0000-1000-80[0-9a-f]{2}-"
                                 "[0-9a-f]{12}")))
        << gpus[i].uuid;
    EXPECT_FALSE(gpus[i].partition_id.has_value());  // 6.1 has no partition_id
  }
}

TEST(AmdSmiParseTest, Rocm61StaticConvertsUnitsAndReadsIdentity) {
  auto gpus = Parse("mi300x-8x_rocm6.1_static.json");
  ASSERT_EQ(gpus.size(), 8u);
  const AmdSmiGpu& g = gpus[4];
  EXPECT_EQ(g.gpu, 4);
  EXPECT_EQ(g.bdf, "0000:9f:00.0");  // from bus.bdf
  EXPECT_EQ(g.market_name, "AMD Instinct MI300X");
  EXPECT_EQ(g.product_name, "AMD Instinct MI300X OAM");
  EXPECT_EQ(g.serial.size(), 12u);
  EXPECT_TRUE(std::regex_match(g.asic_serial, std::regex("0x[0-9A-F]{16}")));
  EXPECT_EQ(g.vbios_part_number, "113-M3000100-102");
  EXPECT_EQ(g.vbios_version, "022.040.003.042.000001");
  EXPECT_EQ(g.driver_name, "amdgpu");
  EXPECT_EQ(g.driver_version, "6.7.0");
  EXPECT_EQ(g.compute_partition, "SPX");
  EXPECT_EQ(g.memory_partition, "NPS1");
  EXPECT_EQ(g.pci_vendor_id, 0x1002);
  EXPECT_EQ(g.pci_device_id, 0x74a1);
  EXPECT_EQ(g.pci_subsystem_vendor_id, 0x1002);
  EXPECT_FALSE(g.pci_subsystem_device_id.has_value());  // not in 6.1 asic
  EXPECT_EQ(g.numa_node, 1);
  EXPECT_EQ(gpus[0].numa_node, 0);
  EXPECT_EQ(g.vram_total_bytes, uint64_t{196592} * 1048576);
  EXPECT_EQ(g.power_cap_watts, 750.0);
  EXPECT_EQ(g.power_cap_max_watts, 750.0);
  EXPECT_EQ(g.pcie_max_speed_gtps, 32.0);
  EXPECT_EQ(g.pcie_max_width, 16);
  EXPECT_FALSE(g.sample.processes_known);
}

TEST(AmdSmiParseTest, Rocm61MetricIsInBaseUnitsWithNaAsNotReported) {
  auto gpus = Parse("mi300x-8x_rocm6.1_metric.json");
  ASSERT_EQ(gpus.size(), 8u);
  const GpuSample& s = gpus[0].sample;
  EXPECT_TRUE(gpus[0].bdf.empty());  // metric output has no BDF
  EXPECT_DOUBLE_EQ(*s.utilization_ratio, 0.98);
  EXPECT_DOUBLE_EQ(*s.memory_utilization_ratio, 0.14);
  EXPECT_EQ(s.power_watts, 734.0);
  EXPECT_FALSE(s.temperature_edge_celsius.has_value());  // "N/A" on MI300X
  EXPECT_EQ(s.temperature_junction_celsius, 60.0);
  EXPECT_EQ(s.temperature_memory_celsius, 49.0);
  EXPECT_EQ(s.clock_graphics_hz, 2100e6);  // clock.gfx.clk (6.1 naming)
  EXPECT_EQ(s.clock_memory_hz, 1300e6);    // clock.MEM.clk
  EXPECT_FALSE(s.clock_soc_hz.has_value());
  EXPECT_EQ(s.vram_total_bytes, uint64_t{196592} * 1048576);
  EXPECT_EQ(s.vram_used_bytes, uint64_t{4976} * 1048576);
  EXPECT_EQ(s.ecc_correctable_errors, 0u);
  EXPECT_EQ(gpus[5].sample.ecc_correctable_errors, 3u);
  EXPECT_EQ(s.ecc_uncorrectable_errors, 0u);
  EXPECT_EQ(s.pcie_link_width, 16);
  EXPECT_EQ(s.pcie_link_speed_gtps, 32.0);
  EXPECT_EQ(s.pcie_replay_count, 0u);
  EXPECT_FALSE(s.fan_speed_ratio.has_value());  // fan.usage "N/A", not 0
  EXPECT_GT(*s.energy_joules, 1.4e7);
  EXPECT_EQ(gpus[3].sample.utilization_ratio, 0.0);  // a real 0 stays 0
}

TEST(AmdSmiParseTest, Rocm61ProcessOutputHasThreeShapes) {
  auto gpus = Parse("mi300x-8x_rocm6.1_process.json");
  ASSERT_EQ(gpus.size(), 8u);
  // One process: "process_info" merged into the GPU object, raw bytes.
  ASSERT_EQ(gpus[0].sample.processes.size(), 1u);
  EXPECT_EQ(gpus[0].sample.processes[0],
            (GpuProcess{207590, "pt_main_thread", 7838315315u}));
  // Several: a "values" list.
  ASSERT_EQ(gpus[1].sample.processes.size(), 2u);
  EXPECT_EQ(gpus[1].sample.processes[1].pid, 207777);
  EXPECT_EQ(gpus[1].sample.processes[1].used_memory_bytes, 536870912u);
  // None: "process_info": "Not Found" is known-empty, not unknown.
  for (int i : {0, 1, 2, 7}) EXPECT_TRUE(gpus[i].sample.processes_known);
  EXPECT_TRUE(gpus[7].sample.processes.empty());
}

TEST(AmdSmiParseTest, Rocm62ProcessListUsesVramBytesAndBlankNames) {
  auto gpus = Parse("mi300x-8x_rocm6.2_process.json");
  ASSERT_EQ(gpus.size(), 8u);
  ASSERT_EQ(gpus[0].sample.processes.size(), 2u);
  EXPECT_EQ(gpus[0].sample.processes[0],
            (GpuProcess{2427396, "rvs", 2147483648u}));
  // name "N/A" is "not reported", not a process called "N/A".
  EXPECT_EQ(gpus[0].sample.processes[1],
            (GpuProcess{2431002, "", 8589934592u}));
  EXPECT_EQ(gpus[2].sample.processes[0].used_memory_bytes,
            2147483648u + 2 * 104857600u);
  EXPECT_TRUE(gpus[3].sample.processes_known);
  EXPECT_TRUE(gpus[3].sample.processes.empty());
}

TEST(AmdSmiParseTest, GpuDataWrapperAndLeadingWarningLineAreAccepted) {
  std::string text = Fixture("mi300x-8x_rocm6.4_static.json");
  ASSERT_EQ(text.rfind("WARNING: User is missing", 0), 0u);
  auto gpus = Parse("mi300x-8x_rocm6.4_static.json");
  ASSERT_EQ(gpus.size(), 8u);
  for (size_t i = 0; i < gpus.size(); ++i) {
    EXPECT_EQ(gpus[i].bdf, kMi300xBdfs[i]);
    EXPECT_EQ(gpus[i].partition_id, 0);  // static.partition.partition_id
    EXPECT_EQ(gpus[i].pci_subsystem_device_id, 0x74a1);
  }
  EXPECT_EQ(gpus[3].power_cap_watts, 650.0);
  EXPECT_EQ(gpus[2].power_cap_watts, 750.0);
  EXPECT_EQ(gpus[2].driver_version, "6.10.5");
}

TEST(AmdSmiParseTest, Rocm70MetricReadsPerEngineClocksAndNaValueObjects) {
  auto gpus = Parse("mi300x-8x_rocm7.0_metric.json");
  ASSERT_EQ(gpus.size(), 8u);
  const GpuSample& s = gpus[1].sample;
  EXPECT_EQ(s.power_watts, 658.0);
  EXPECT_EQ(s.clock_graphics_hz, 1995e6);  // gfx_0, the first engine
  EXPECT_EQ(s.clock_memory_hz, 1300e6);
  EXPECT_EQ(s.clock_soc_hz, 1143e6);
  EXPECT_EQ(s.vram_used_bytes, uint64_t{4977} * 1048576);
  EXPECT_EQ(gpus[6].sample.pcie_replay_count, 2u);
  EXPECT_EQ(gpus[3].sample.clock_soc_hz, 28e6);
}

TEST(AmdSmiParseTest, TrailingCommasParseLikeStrictJson) {
  std::string with_commas =
      Fixture("mi250-mi210_rocm6.3_static_trailing_commas.json");
  std::string strict =
      std::regex_replace(with_commas, std::regex(",(\\s*[\\]}])"), "$1");
  ASSERT_NE(strict, with_commas);
  auto a = ParseAmdSmiJson(with_commas);
  auto b = ParseAmdSmiJson(strict);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*a, *b);
  ASSERT_EQ(a->size(), 4u);
  const AmdSmiGpu& mi210 = (*a)[3];
  EXPECT_EQ(mi210.bdf, "0001:c3:00.0");  // PCI domain 1
  EXPECT_EQ(mi210.market_name, "AMD Instinct MI210");
  EXPECT_TRUE(mi210.product_name.empty());  // board.product_name "N/A"
  EXPECT_EQ(mi210.serial, "PCB051233-0142");
  EXPECT_EQ(mi210.vram_total_bytes, uint64_t{65520} * 1048576);
  EXPECT_EQ(mi210.power_cap_watts, 300.0);
  EXPECT_EQ(mi210.pcie_max_speed_gtps, 16.0);
  EXPECT_EQ(mi210.numa_node, 1);
  EXPECT_TRUE(mi210.compute_partition.empty());  // "N/A": no partitions
  EXPECT_EQ((*a)[0].power_cap_watts, 560.0);
  EXPECT_EQ((*a)[0].product_name, "AMD INSTINCT MI250 (MCM) OAM AC MBA");
}

TEST(AmdSmiParseTest, MetricSectionsOfNaLeaveEveryValueNotReported) {
  auto gpus = Parse("mi250-mi210_rocm6.3_metric_na.json");
  ASSERT_EQ(gpus.size(), 4u);
  const GpuSample& live = gpus[0].sample;
  EXPECT_EQ(live.temperature_edge_celsius, 64.0);
  EXPECT_EQ(live.temperature_junction_celsius, 81.0);
  EXPECT_DOUBLE_EQ(*live.utilization_ratio, 1.0);
  EXPECT_EQ(live.ecc_correctable_errors, 12u);
  EXPECT_EQ(live.ecc_uncorrectable_errors, 1u);
  EXPECT_EQ(live.pcie_replay_count, 7u);
  EXPECT_EQ(live.clock_graphics_hz, 1700e6);
  // The second GCD of the MI250 has no package power: "N/A", not 0 W.
  EXPECT_FALSE(gpus[1].sample.power_watts.has_value());
  EXPECT_DOUBLE_EQ(*gpus[1].sample.utilization_ratio, 0.97);
  // Every section of GPU 3 is "N/A" (or holds only "N/A"): all nullopt.
  EXPECT_EQ(gpus[3].sample, GpuSample());
  EXPECT_EQ(gpus[3].gpu, 3);
}

TEST(AmdSmiParseTest, CpxListHasOneRecordPerPartitionOfEachBdf) {
  auto gpus = Parse("mi300x-8x-cpx_rocm7.0_list.json");
  ASSERT_EQ(gpus.size(), 64u);
  std::set<uint64_t> kfd_ids;
  for (size_t i = 0; i < gpus.size(); ++i) {
    EXPECT_EQ(gpus[i].bdf, kMi300xBdfs[i / 8]);
    EXPECT_EQ(gpus[i].partition_id, static_cast<int>(i % 8));
    EXPECT_EQ(gpus[i].uuid, gpus[i - i % 8].uuid);  // one uuid per OAM
    EXPECT_EQ(gpus[i].kfd_node_id, static_cast<int>(2 + i));
    ASSERT_TRUE(gpus[i].kfd_id.has_value());
    kfd_ids.insert(*gpus[i].kfd_id);
  }
  EXPECT_EQ(kfd_ids.size(), 64u);
}

TEST(AmdSmiParseTest, BadValueIsReportedWithItsPath) {
  EXPECT_EQ(ErrorOf(R"({"gpu_data": [{"gpu": 0}, {"gpu": 1},
      {"gpu": 2, "power": {"socket_power": {"value": "abc", "unit": "W"}}}]})"),
            "gpu_data[2].power.socket_power.value: expected a number, got "
            "\"abc\"");
  EXPECT_EQ(ErrorOf(R"([{"gpu": 0, "mem_usage": {"used_vram":
      {"value": 5, "unit": "mV"}}}])"),
            "[0].mem_usage.used_vram.unit: unit \"mV\" is not a memory unit");
  EXPECT_EQ(ErrorOf(R"([{"gpu": 0, "usage": 5}])"),
            "[0].usage: expected an object or \"N/A\", got 5");
  EXPECT_EQ(ErrorOf(R"([{"gpu": 0, "bdf": "0c:00.0"}])"),
            "[0].bdf: expected a PCI address (\"0000:0c:00.0\"), got "
            "\"0c:00.0\"");
  EXPECT_EQ(ErrorOf(R"([{"gpu": 0, "ecc": {"total_correctable_count": -1}}])"),
            "[0].ecc.total_correctable_count: expected a non-negative "
            "integer, got -1");
  EXPECT_EQ(ErrorOf(R"([{"gpu": "x"}])"),
            "[0].gpu: expected an integer, got \"x\"");
  EXPECT_EQ(ErrorOf(R"([{"gpu": 0, "asic": {"device_id": "0x1074a1"}}])"),
            "[0].asic.device_id: expected a PCI id (\"0x1002\"), got "
            "\"0x1074a1\"");
  EXPECT_EQ(ErrorOf(R"([{"gpu": 0, "process_list": [{"process_info":
      {"name": "python3"}}]}])"),
            "[0].process_list[0].process_info.pid: expected a process id, "
            "got nothing");
}

TEST(AmdSmiParseTest, MalformedDocumentsAreInvalidArgument) {
  EXPECT_EQ(ErrorOf(R"([{"gpu" 0}])"),
            "offset 8: Missing a colon after a name of object member.");
  EXPECT_EQ(ErrorOf("[1]"), "[0]: expected a GPU object, got 1");
  EXPECT_EQ(ErrorOf(R"({"cpu_data": []})"),
            "top level: expected an array of GPU objects or an object with "
            "\"gpu_data\", got an object without \"gpu_data\"");
  EXPECT_EQ(ErrorOf(R"({"gpu_data": {}})"),
            "gpu_data: expected an array, got an object");
  EXPECT_EQ(ErrorOf(""),
            "no JSON array or object in the amd-smi output (empty)");
  EXPECT_EQ(ErrorOf("WARNING: no GPUs\n"),
            "no JSON array or object in the amd-smi output");
  // Text after the JSON is not silently dropped.
  EXPECT_NE(ErrorOf("[]\n[]").find("offset 3:"), std::string::npos);
}

TEST(AmdSmiParseTest, DeeplyNestedInputFailsWithoutExhaustingTheStack) {
  std::string deep(200000, '[');
  EXPECT_NE(ErrorOf(deep).find("offset 200000"), std::string::npos);
}

TEST(AmdSmiParseTest, InputOverTheSizeLimitIsRefused) {
  AmdSmiParseOptions options;
  options.max_input_bytes = 100;
  std::string text = Fixture("mi300x-8x_rocm6.1_list.json");
  auto gpus = ParseAmdSmiJson(text, options);
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(gpus.status().message().find("larger than the limit of 100"),
            std::string::npos);
}

TEST(AmdSmiParseTest, VariantKeysAndUnitsAreConverted) {
  auto gpus = ParseAmdSmiJson(R"({"gpu_data": [{"gpu": 0,
      "limit": {"ppt0": {"max_power_limit": {"value": 1000, "unit": "W"},
                         "socket_power_limit": {"value": 750000, "unit": "mW"}}},
      "ifwi": {"part_number": "113-M3000100-102", "version": "N/A"},
      "partition": {"accelerator_partition": "DPX", "memory_partition": "NPS1",
                    "partition_id": 1},
      "power": {"socket_power": {"value": "N/A", "unit": "W"},
                "average_socket_power": 203},
      "temperature": {"junction": "88"},
      "clock": {"gfx_0": {"clk": {"value": 1.5, "unit": "GHz"}}},
      "fan": {"usage": {"value": 37.5, "unit": "%"}},
      "mem_usage": {"total_vram": 65520, "used_vram": {"value": 2, "unit": "GB"}},
      "numa": {"node": -1}}], "cpu_data": [], "nic_data": []})");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  const AmdSmiGpu& g = (*gpus)[0];
  EXPECT_EQ(g.power_cap_watts, 750.0);
  EXPECT_EQ(g.power_cap_max_watts, 1000.0);
  EXPECT_EQ(g.vbios_part_number, "113-M3000100-102");
  EXPECT_TRUE(g.vbios_version.empty());
  EXPECT_EQ(g.compute_partition, "DPX");
  EXPECT_EQ(g.partition_id, 1);
  EXPECT_EQ(g.sample.power_watts, 203.0);  // socket_power N/A, next variant
  EXPECT_EQ(g.sample.temperature_junction_celsius, 88.0);
  EXPECT_EQ(g.sample.clock_graphics_hz, 1.5e9);
  EXPECT_DOUBLE_EQ(*g.sample.fan_speed_ratio, 0.375);
  EXPECT_EQ(g.sample.vram_total_bytes, static_cast<uint64_t>(65520 * kMiB));
  EXPECT_EQ(g.sample.vram_used_bytes, uint64_t{2} << 30);
  EXPECT_FALSE(g.numa_node.has_value());  // -1: no NUMA affinity
}

}  // namespace
}  // namespace lens
