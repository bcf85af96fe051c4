// NvmlReplay (the JSON stand-in for NVML) and the helpers both NvmlApi
// implementations share: return codes -> Status, bus ids -> BDF, PCIe
// generations -> GT/s.
#include "gpu/nvml/nvml_replay.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>
#include <vector>

#include "gpu/nvml/nvml_api.h"
#include "gpu/nvml/nvml_source.h"

namespace lens::nvml {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(LENS_FIXTURES_DIR) + "/nvml/" + name;
}

// Writes `text` to a file under the test's temp dir and returns its path.
std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/nvml_replay_" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(NvmlReturnTest, NotSupportedIsNotFoundAndOthersKeepTheirText) {
  Status st = NvmlStatus(kNvmlErrorNotSupported, "nvmlDeviceGetFanSpeed");
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_EQ(st.message(), "nvmlDeviceGetFanSpeed: Not Supported");
  st = NvmlStatus(15, "nvmlDeviceGetPowerUsage", "GPU is lost");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.message(), "nvmlDeviceGetPowerUsage: GPU is lost");
  st = NvmlStatus(4, "nvmlDeviceGetTotalEccErrors");
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);
  st = NvmlStatus(kNvmlErrorUnknown, "nvmlDeviceGetTemperature");
  EXPECT_EQ(st.code(), StatusCode::kUnknown);
  EXPECT_EQ(st.message(), "nvmlDeviceGetTemperature: Unknown Error");
  // A code newer than our table still fails, and says which code it was.
  st = NvmlStatus(31, "nvmlDeviceGetName", "Some New Error");
  EXPECT_EQ(st.code(), StatusCode::kUnknown);
  EXPECT_EQ(st.message(),
            "nvmlDeviceGetName: Some New Error (nvmlReturn_t 31)");
  EXPECT_EQ(NvmlReturnName(18), "NVML_ERROR_LIB_RM_VERSION_MISMATCH");
  EXPECT_EQ(NvmlReturnText(18), "Driver/library version mismatch");
  EXPECT_EQ(ParseNvmlReturnName("NVML_ERROR_GPU_IS_LOST"), 15);
  EXPECT_EQ(ParseNvmlReturnName("GPU_IS_LOST"), std::nullopt);
}

TEST(NvmlBusIdTest, NormalisesToALowerCaseBdfWithTheRealDomain) {
  struct Case {
    const char* bus_id;
    const char* bdf;
  };
  for (const Case& c : {Case{"00000000:17:00.0", "0000:17:00.0"},
                        Case{"00000000:DB:00.0", "0000:db:00.0"},
                        Case{"0000:3B:00.0", "0000:3b:00.0"},  // v1 legacy
                        Case{"00000001:0A:1F.7", "0001:0a:1f.7"},
                        Case{"00010000:01:00.0", "10000:01:00.0"}}) {
    auto bdf = NormalizeNvmlBusId(c.bus_id);
    ASSERT_TRUE(bdf.ok()) << c.bus_id << ": " << bdf.status();
    EXPECT_EQ(*bdf, c.bdf);
  }
  for (const char* bad :
       {"", "17:00.0", "00000000:17:00", "0000:17:20.0", "0000:zz:00.0",
        "000000000:17:00.0", "0000:17:00.8", "0000:17:00.0 "}) {
    auto bdf = NormalizeNvmlBusId(bad);
    EXPECT_EQ(bdf.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(NvmlPcieTest, GenerationsMapToTransferRatesPerLane) {
  EXPECT_EQ(PcieGenerationGtps(1), 2.5);
  EXPECT_EQ(PcieGenerationGtps(3), 8.0);
  EXPECT_EQ(PcieGenerationGtps(4), 16.0);
  EXPECT_EQ(PcieGenerationGtps(5), 32.0);
  EXPECT_EQ(PcieGenerationGtps(6), 64.0);
  EXPECT_EQ(PcieGenerationGtps(0), std::nullopt);
  EXPECT_EQ(PcieGenerationGtps(7), std::nullopt);
}

TEST(NvmlReplayTest, AnswersLikeNvmlWithTheRecordedFailures) {
  auto replay = NvmlReplay::Open(Fixture("h100_8x_gpu_lost_550.90.07.json"));
  ASSERT_TRUE(replay.ok()) << replay.status();
  NvmlApi& api = **replay;
  // Before nvmlInit every call fails the way NVML's do.
  EXPECT_EQ(api.DeviceCount().status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(api.DeviceCount().status().message(),
            "nvmlDeviceGetCount_v2: Uninitialized");
  ASSERT_TRUE(api.Init().ok());
  EXPECT_EQ(*api.DeviceCount(), 8u);
  EXPECT_EQ(*api.DriverVersion(), "550.90.07");
  EXPECT_EQ(*api.NvmlVersion(), "12.550.90.07");
  auto lost = api.DeviceByIndex(2);
  EXPECT_EQ(lost.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(lost.status().message(),
            "nvmlDeviceGetHandleByIndex_v2: GPU is lost");
  EXPECT_EQ(api.DeviceByIndex(8).status().code(), StatusCode::kInternal);
  auto d1 = api.DeviceByIndex(1);
  ASSERT_TRUE(d1.ok());
  auto power = api.PowerUsageMilliwatts(*d1);
  EXPECT_EQ(power.status().code(), StatusCode::kUnknown);
  EXPECT_EQ(power.status().message(), "nvmlDeviceGetPowerUsage: Unknown Error");
  auto fan = api.FanSpeedPercent(*d1);
  EXPECT_EQ(fan.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*api.EnforcedPowerLimitMilliwatts(*d1), 700000u);
  EXPECT_EQ(*api.ClocksEventReasons(*d1), 0x4u);
  EXPECT_EQ(*api.ClockMhz(*d1, NvmlClock::kSm), 1755u);
  auto memory = api.Memory(*d1);
  ASSERT_TRUE(memory.ok());
  EXPECT_EQ(memory->reserved_bytes, 479ull << 20);
  auto pci = api.PciInfo(*d1);
  ASSERT_TRUE(pci.ok());
  EXPECT_EQ(pci->bdf, "0000:3b:00.0");
  EXPECT_EQ(pci->pci_device_id, 0x233010deu);
  EXPECT_EQ(pci->pci_subsystem_id, 0x16c110deu);
  EXPECT_EQ(*api.MinorNumber(*d1), 1u);
  auto aggregate = api.EccErrors(*d1, NvmlEccCounter::kAggregate);
  ASSERT_TRUE(aggregate.ok());
  EXPECT_EQ(aggregate->corrected, 0u);
  ASSERT_TRUE(api.Shutdown().ok());
  EXPECT_EQ(api.Shutdown().code(), StatusCode::kFailedPrecondition);
}

TEST(NvmlReplayTest, FixtureMistakesNameTheFileTheDeviceAndTheKey) {
  const std::string path =
      WriteTemp("missing.json",
                R"({"nvmlSystemGetDriverVersion": "550.90.07",
          "nvmlSystemGetNVMLVersion": "12.550.90.07",
          "devices": [{"nvmlDeviceGetName": {"nvmlReturn": "NVML_ERROR_NOT_SUPPORTED"},
                       "nvmlDeviceGetPowerUsage": "72 W",
                       "nvmlDeviceGetFanSpeed": {"nvmlReturn": "FAN_BROKEN"}}]})");
  auto replay = NvmlReplay::Open(path);
  ASSERT_TRUE(replay.ok()) << replay.status();
  ASSERT_TRUE((*replay)->Init().ok());
  auto d0 = (*replay)->DeviceByIndex(0);
  ASSERT_TRUE(d0.ok());
  auto serial = (*replay)->Serial(*d0);
  EXPECT_EQ(serial.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(serial.status().message(),
            path + ": devices[0]: no \"nvmlDeviceGetSerial\"");
  auto power = (*replay)->PowerUsageMilliwatts(*d0);
  EXPECT_EQ(power.status().message(),
            path +
                ": devices[0].nvmlDeviceGetPowerUsage: expected an "
                "unsigned integer or \"0x...\"");
  auto fan = (*replay)->FanSpeedPercent(*d0);
  EXPECT_EQ(fan.status().message(),
            path +
                ": devices[0].nvmlDeviceGetFanSpeed: unknown nvmlReturn "
                "\"FAN_BROKEN\"");
  EXPECT_EQ((*replay)->Name(*d0).status().code(), StatusCode::kNotFound);
}

TEST(NvmlReplayTest, RejectsFilesThatAreNotReplays) {
  auto missing = NvmlReplay::Open(Fixture("no_such_machine.json"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("no_such_machine.json"),
            std::string::npos);
  const std::string broken = WriteTemp("broken.json", R"({"devices": [)");
  auto parsed = NvmlReplay::Open(broken);
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message().rfind(broken + ": offset ", 0), 0u)
      << parsed.status();
  const std::string no_devices = WriteTemp("nodevices.json", R"({"gpus": []})");
  EXPECT_EQ(NvmlReplay::Open(no_devices).status().message(),
            no_devices + ": expected an object with a \"devices\" array");
  // Load keeps the old machine when the new file is bad.
  auto replay = NvmlReplay::Open(Fixture("l40s_595.80.json"));
  ASSERT_TRUE(replay.ok());
  EXPECT_FALSE((*replay)->Load(broken).ok());
  ASSERT_TRUE((*replay)->Init().ok());
  EXPECT_EQ(*(*replay)->DriverVersion(), "595.80");
}

// A GPU swapped while the agent samples: calls on other threads see the old
// machine or the new one, never a freed document (ASan and TSan check it).
TEST(NvmlReplayTest, LoadWhileOtherThreadsCallIsSafe) {
  auto replay = NvmlReplay::Open(Fixture("h100_8x_550.90.07.json"));
  ASSERT_TRUE(replay.ok()) << replay.status();
  ASSERT_TRUE((*replay)->Init().ok());
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        auto d = (*replay)->DeviceByIndex(0);
        if (!d.ok()) continue;
        auto clock = (*replay)->ClockMhz(*d, NvmlClock::kSm);
        auto name = (*replay)->Name(*d);
        auto memory = (*replay)->Memory(*d);
        if (clock.ok() && name.ok() && memory.ok()) ++answered;
      }
    });
  }
  const std::string machines[] = {Fixture("l40s_595.80.json"),
                                  Fixture("h100_8x_550.90.07.json")};
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE((*replay)->Load(machines[i % 2]).ok());
  }
  // Every reader answers from a machine after the swaps too.
  const int before = answered.load();
  while (answered.load() < before + 30) std::this_thread::yield();
  stop = true;
  for (std::thread& t : readers) t.join();
  EXPECT_EQ((*replay)->init_count(), 1);
}

TEST(NvmlReplayTest, AGpuWithoutANameGetsOneFromItsPciIds) {
  const std::string path = WriteTemp("noname.json", R"({
    "nvmlSystemGetDriverVersion": {"nvmlReturn": "NVML_ERROR_NOT_SUPPORTED"},
    "devices": [{
      "nvmlDeviceGetName": {"nvmlReturn": "NVML_ERROR_NOT_SUPPORTED"},
      "nvmlDeviceGetUUID": "GPU-8f3f6c1e-2a1b-4c5d-9e0f-1a2b3c4d5e6f",
      "nvmlDeviceGetSerial": {"nvmlReturn": "NVML_ERROR_NOT_SUPPORTED"},
      "nvmlDeviceGetVbiosVersion": "96.00.74.00.01",
      "nvmlDeviceGetPciInfo_v3": {"busId": "00000000:19:00.0",
        "pciDeviceId": "0x233010DE", "pciSubSystemId": "0x16C110DE"},
      "nvmlDeviceGetMemoryInfo": {"total": 85520809984, "free": 85018542080,
                                  "used": 502267904},
      "nvmlDeviceGetMaxPcieLinkGeneration": 5,
      "nvmlDeviceGetMaxPcieLinkWidth": 16,
      "nvmlDeviceGetEnforcedPowerLimit": 700000}]})");
  auto replay = NvmlReplay::Open(path);
  ASSERT_TRUE(replay.ok()) << replay.status();
  auto source = NewNvmlGpuSourceFromApi(*replay);
  ASSERT_TRUE(source.ok()) << source.status();
  auto infos = (*source)->Scan();
  ASSERT_TRUE(infos.ok()) << infos.status();
  ASSERT_EQ(infos->size(), 1u);
  EXPECT_EQ((*infos)[0].model, "NVIDIA GPU 0x2330");
  EXPECT_EQ((*infos)[0].serial, "");
  EXPECT_EQ((*infos)[0].driver_version, "");
  EXPECT_EQ((*infos)[0].vram_total_bytes, 85520809984u);  // the v1 call
}

}  // namespace
}  // namespace lens::nvml
