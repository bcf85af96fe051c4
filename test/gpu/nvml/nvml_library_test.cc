// The dlopen path of the NVML adapter: this machine's libnvidia-ml.so.1 (or
// its absence), and a stand-in library with an older driver's symbol set
// (fake_nvml.cc) that makes the adapter use every fallback it has.
#include "gpu/nvml/nvml_library.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "gpu/nvml/nvml_source.h"
#include "lens/gpu.h"

namespace lens::nvml {
namespace {

constexpr char kNoDriver[] =
    "libnvidia-ml.so.1 not found: no NVIDIA driver on this machine (";

bool ThisMachineHasNvml() {
  void* dl = dlopen(kNvmlLibraryName, RTLD_NOW | RTLD_LOCAL);
  if (dl != nullptr) dlclose(dl);
  return dl != nullptr;
}

TEST(NvmlLibraryTest, WithoutTheDriverNvmlIsUnavailableAndSaysWhy) {
  if (ThisMachineHasNvml()) {
    GTEST_SKIP() << "this machine has libnvidia-ml.so.1 "
                    "(RunsOnThisMachinesNvml covers it)";
  }
  auto library = OpenNvmlLibrary();
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(library.status().message().rfind(kNoDriver, 0), 0u)
      << library.status();
  auto source = NewNvmlGpuSource();  // the public entry point
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status(), library.status());
  // The one-shot probe treats that as "no NVIDIA GPUs".
  GpuProbeOptions nvml_only;
  nvml_only.amd_sysfs = false;
  auto gpus = ProbeGpus(HostRoots::Under("/nonexistent"), nvml_only);
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_TRUE(gpus->empty());
}

TEST(NvmlLibraryTest, RunsOnThisMachinesNvml) {
  if (!ThisMachineHasNvml()) {
    GTEST_SKIP() << "no libnvidia-ml.so.1 here (no NVIDIA driver)";
  }
  auto source = NewNvmlGpuSource();
  if (!source.ok()) {  // library present, driver not usable
    EXPECT_EQ(source.status().code(), StatusCode::kUnavailable);
    EXPECT_EQ(source.status().message().rfind("nvmlInit failed: ", 0), 0u);
    return;
  }
  auto infos = (*source)->Scan();
  ASSERT_TRUE(infos.ok()) << infos.status();
  std::vector<GpuSample> samples;
  ASSERT_TRUE((*source)->Sample(&samples).ok());
  ASSERT_EQ(samples.size(), infos->size());
  for (const GpuInfo& g : *infos) {
    EXPECT_EQ(g.bdf.size(), 12u) << g.bdf;
    EXPECT_EQ(g.unique_id.rfind("GPU-", 0), 0u) << g.unique_id;
    EXPECT_EQ(g.pci_vendor_id, 0x10de);
  }
}

TEST(NvmlLibraryTest, ALibraryThatIsNotNvmlIsRefused) {
  auto missing = OpenNvmlLibrary("/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(missing.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(missing.status().message().rfind(
                "/nonexistent/libnvidia-ml.so.1 not found: no NVIDIA driver "
                "on this machine (",
                0),
            0u);
  auto libm = OpenNvmlLibrary("libm.so.6");
  EXPECT_EQ(libm.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(libm.status().message(),
            "libm.so.6 has no nvmlInit_v2: not a usable NVML library");
}

TEST(NvmlLibraryTest, FallsBackToTheOlderEntryPointsOfAnOldDriver) {
  auto opened = OpenNvmlLibrary(LENS_FAKE_NVML_PATH);
  ASSERT_TRUE(opened.ok()) << opened.status();
  NvmlApi& api = **opened;
  EXPECT_EQ(api.DeviceCount().status().message(),
            "nvmlDeviceGetCount: Uninitialized")  // the v1 name answered
      << "before Init";
  ASSERT_TRUE(api.Init().ok());  // nvmlInit, there is no nvmlInit_v2
  EXPECT_EQ(*api.DeviceCount(), 2u);
  EXPECT_EQ(*api.DriverVersion(), "510.47.03");
  auto nvml_version = api.NvmlVersion();  // not exported at all
  EXPECT_EQ(nvml_version.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(nvml_version.status().message(),
            std::string("nvmlSystemGetNVMLVersion: not in ") +
                LENS_FAKE_NVML_PATH + " (driver too old)");
  auto lost = api.DeviceByIndex(1);
  EXPECT_EQ(lost.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(lost.status().message(),
            "nvmlDeviceGetHandleByIndex_v2: GPU is lost");
  auto d = api.DeviceByIndex(0);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*api.Name(*d), "Tesla P100-PCIE-16GB");
  auto pci = api.PciInfo(*d);  // v1 struct: the legacy busId slot
  ASSERT_TRUE(pci.ok()) << pci.status();
  EXPECT_EQ(pci->bdf, "0000:3b:00.0");
  EXPECT_EQ(pci->pci_device_id, 0x15F810DEu);
  EXPECT_EQ(pci->pci_subsystem_id, 0x118F10DEu);
  auto memory = api.Memory(*d);  // no _v2: used includes the reservation
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_EQ(memory->total_bytes, 16384ull << 20);
  EXPECT_EQ(memory->used_bytes, 103ull << 20);
  EXPECT_EQ(memory->reserved_bytes, std::nullopt);
  auto energy = api.TotalEnergyMillijoules(*d);
  EXPECT_EQ(energy.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(energy.status().message(),
            "nvmlDeviceGetTotalEnergyConsumption: Not Supported");
  EXPECT_EQ(api.TemperatureCelsius(*d, NvmlSensor::kMemory).status().code(),
            StatusCode::kNotFound);  // no nvmlDeviceGetFieldValues
  EXPECT_EQ(*api.TemperatureCelsius(*d, NvmlSensor::kGpu), 38);
  EXPECT_EQ(*api.ClocksEventReasons(*d), 0x1u);  // the "Throttle" name
  auto processes = api.ComputeProcesses(*d);     // v1 layout, 40 > first guess
  ASSERT_TRUE(processes.ok()) << processes.status();
  ASSERT_EQ(processes->size(), 40u);
  EXPECT_EQ((*processes)[0].pid, 4200u);
  EXPECT_EQ((*processes)[0].used_memory_bytes, 100ull << 20);
  EXPECT_EQ((*processes)[38].used_memory_bytes, 138ull << 20);
  EXPECT_EQ((*processes)[39].used_memory_bytes, std::nullopt);
  EXPECT_EQ(api.FanSpeedPercent(*d).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(api.Shutdown().ok());
}

TEST(NvmlLibraryTest, SourceOverTheLibraryScansSamplesAndShutsDown) {
  // Our own reference keeps the module loaded to read its Init count.
  void* dl = dlopen(LENS_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(dl, nullptr) << dlerror();
  auto init_count =
      reinterpret_cast<int (*)()>(dlsym(dl, "lens_fake_nvml_init_count"));
  ASSERT_NE(init_count, nullptr);
  {
    auto library = OpenNvmlLibrary(LENS_FAKE_NVML_PATH);
    ASSERT_TRUE(library.ok()) << library.status();
    auto source = NewNvmlGpuSourceFromApi(*std::move(library));
    ASSERT_TRUE(source.ok()) << source.status();
    EXPECT_EQ(init_count(), 1);
    auto infos = (*source)->Scan();
    ASSERT_TRUE(infos.ok()) << infos.status();
    ASSERT_EQ(infos->size(), 1u);  // the lost GPU cannot be identified
    EXPECT_EQ((*infos)[0].bdf, "0000:3b:00.0");
    EXPECT_EQ((*infos)[0].vram_total_bytes, 16384ull << 20);
    std::vector<GpuSample> samples;
    ASSERT_TRUE((*source)->Sample(&samples).ok());
    ASSERT_EQ(samples.size(), 1u);
    EXPECT_EQ(samples[0].power_watts, 26.16);
    EXPECT_EQ(samples[0].clock_memory_hz, 715e6);
    EXPECT_EQ(samples[0].throttle_reasons, std::vector<std::string>{"idle"});
    EXPECT_EQ(samples[0].processes.size(), 40u);
    EXPECT_EQ(*(*source)->DeviceSetToken(),
              "2|GPU-3b1f0c4e-8d7a-11ec-a3c2-0242ac120002|?");
  }
  EXPECT_EQ(init_count(), 0);
  dlclose(dl);
}

TEST(NvmlLibraryTest, InitFailureIsUnavailableAndNamesTheCall) {
  auto library = OpenNvmlLibrary(LENS_FAKE_NVML_PATH);
  ASSERT_TRUE(library.ok()) << library.status();
  setenv("LENS_FAKE_NVML", "driver_not_loaded", 1);
  auto source = NewNvmlGpuSourceFromApi(*std::move(library));
  unsetenv("LENS_FAKE_NVML");
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(source.status().message(),
            "nvmlInit failed: nvmlInit: Driver Not Loaded");
}

}  // namespace
}  // namespace lens::nvml
