// MIG devices, the /dev/nvidiaN minor and lifetime ECC counts through the
// NVML adapter: MIG profile names, the replay of a real H200 in MIG mode
// (test/fixtures/nvml/README.md), and the stand-in libraries of a current
// driver (fake_nvml_mig.cc) and of an old one (fake_nvml.cc).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "gpu/nvml/nvml_library.h"
#include "gpu/nvml/nvml_replay.h"
#include "gpu/nvml/nvml_source.h"

namespace lens::nvml {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// A source over `api`, scanned and sampled once.
struct Probed {
  std::unique_ptr<GpuSource> source;
  std::vector<GpuInfo> infos;
  std::vector<GpuSample> samples;
};
Probed Probe(std::shared_ptr<NvmlApi> api, NvmlSourceOptions options = {}) {
  Probed p;
  auto source = NewNvmlGpuSourceFromApi(std::move(api), std::move(options));
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

std::shared_ptr<NvmlApi> Replay(const std::string& name) {
  auto replay =
      NvmlReplay::Open(std::string(LENS_FIXTURES_DIR) + "/nvml/" + name);
  EXPECT_TRUE(replay.ok()) << replay.status();
  return replay.ok() ? *replay : nullptr;
}

std::shared_ptr<NvmlApi> Library(const char* path) {
  auto library = OpenNvmlLibrary(path);
  EXPECT_TRUE(library.ok()) << library.status();
  if (!library.ok()) return nullptr;
  return std::shared_ptr<NvmlApi>(*std::move(library));
}

NvmlDeviceAttributes Slices(unsigned g, unsigned c, uint64_t mib) {
  return NvmlDeviceAttributes{0, g, c, mib};
}

TEST(MigProfileNameTest, NamesProfilesAsNvidiaSmiDoes) {
  // H200 (143771 MiB), the sizes nvidia-smi prints beside -L's names.
  const uint64_t h200 = 143771 * kMiB;
  EXPECT_EQ(MigProfileName(Slices(3, 1, 71424), h200), "1c.3g.71gb");
  EXPECT_EQ(MigProfileName(Slices(3, 2, 71424), h200), "2c.3g.71gb");
  EXPECT_EQ(MigProfileName(Slices(2, 2, 33280), h200), "2g.35gb");
  EXPECT_EQ(MigProfileName(Slices(1, 1, 16384), h200), "1g.18gb");
  // H100 80GB (81559 MiB): mig -lgip's 9.75 and 39.50 GiB.
  const uint64_t h100 = 85520809984ull;
  EXPECT_EQ(MigProfileName(Slices(1, 1, 9984), h100), "1g.10gb");
  EXPECT_EQ(MigProfileName(Slices(3, 3, 40448), h100), "3g.40gb");
  EXPECT_EQ(MigProfileName(Slices(7, 7, 81152), h100), "7g.80gb");
  // A100 40GB (40960 MiB): 4.75 and 39.25 GiB.
  EXPECT_EQ(MigProfileName(Slices(1, 1, 4864), 40960 * kMiB), "1g.5gb");
  EXPECT_EQ(MigProfileName(Slices(7, 7, 40192), 40960 * kMiB), "7g.40gb");
  EXPECT_EQ(MigProfileName(Slices(1, 1, 9984), 0), "");
  EXPECT_EQ(MigProfileName(Slices(0, 0, 9984), h100), "");
}

TEST(NvmlMigReplayTest, ScansTheMigDevicesOfAnH200WithTheirParent) {
  Probed p = Probe(Replay("h200_mig_590.48.01.json"));
  ASSERT_EQ(p.infos.size(), 1u);
  const GpuInfo& g = p.infos[0];
  EXPECT_EQ(g.bdf, "0000:83:00.0");
  EXPECT_EQ(g.nvidia_minor, 0);
  EXPECT_EQ(g.mig_enabled, true);
  // nvidia-smi -L of the capture, in MIG index order (5 and 6 are empty).
  const struct {
    const char* profile;
    uint32_t gi, ci;
    int sm;
    uint64_t mib;
  } want[] = {{"1c.3g.71gb", 2, 0, 16, 71424},
              {"2c.3g.71gb", 2, 1, 32, 71424},
              {"2g.35gb", 3, 0, 32, 33280},
              {"1g.18gb", 9, 0, 16, 16384},
              {"1g.18gb", 10, 0, 16, 16384}};
  ASSERT_EQ(g.mig_devices.size(), std::size(want));
  for (size_t i = 0; i < std::size(want); ++i) {
    const MigDevice& m = g.mig_devices[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(m.index, static_cast<int>(i));
    EXPECT_EQ(m.uuid.rfind("MIG-", 0), 0u);
    EXPECT_EQ(m.uuid.size(), 40u);
    EXPECT_EQ(m.profile, want[i].profile);
    EXPECT_EQ(m.gpu_instance_id, want[i].gi);
    EXPECT_EQ(m.compute_instance_id, want[i].ci);
    EXPECT_EQ(m.multiprocessor_count, want[i].sm);
    EXPECT_EQ(m.memory_total_bytes, want[i].mib * kMiB);
  }
  ASSERT_EQ(p.samples.size(), 1u);
  const GpuSample& s = p.samples[0];
  EXPECT_EQ(s.utilization_ratio, std::nullopt);  // N/A in MIG mode
  const std::vector<std::optional<uint64_t>> used = {
      16925 * kMiB, 16925 * kMiB, 17 * kMiB, 9 * kMiB, 9 * kMiB};
  EXPECT_EQ(s.mig_memory_used_bytes, used);
  ASSERT_EQ(s.processes.size(), 3u);
  for (const GpuProcess& proc : s.processes) {
    EXPECT_EQ(proc.gpu_instance_id, 2u);  // all in MIG device 1
    EXPECT_EQ(proc.compute_instance_id, 1u);
  }
  EXPECT_EQ(s.ecc_correctable_errors_lifetime, 0u);
  const std::string token = *p.source->DeviceSetToken();
  EXPECT_EQ(token.rfind("1|GPU-5e2b7c41-93d0-4f6a-b1c8-0d7e6a2f9b35[MIG-", 0),
            0u)
      << token;
  EXPECT_NE(token.find(g.mig_devices[4].uuid + "]"), std::string::npos);
}

TEST(NvmlMigReplayTest, GpusWithoutMigAndTheTwoEccCounters) {
  Probed h100 = Probe(Replay("h100_8x_550.90.07.json"));
  ASSERT_EQ(h100.infos.size(), 8u);
  for (size_t i = 0; i < h100.infos.size(); ++i) {
    EXPECT_EQ(h100.infos[i].mig_enabled, false);  // capable, switched off
    EXPECT_TRUE(h100.infos[i].mig_devices.empty());
    EXPECT_EQ(h100.infos[i].nvidia_minor, static_cast<int>(i));
  }
  // GPU 4 (9b:00.0): volatile 2 since the driver loaded, 14 in its life.
  EXPECT_EQ(h100.samples[4].ecc_correctable_errors, 2u);
  EXPECT_EQ(h100.samples[4].ecc_correctable_errors_lifetime, 14u);
  EXPECT_EQ(h100.samples[4].ecc_uncorrectable_errors_lifetime, 0u);
  Probed p100 = Probe(Replay("tesla_p100_510.47.03.json"));
  ASSERT_EQ(p100.infos.size(), 1u);
  EXPECT_EQ(p100.infos[0].mig_enabled, std::nullopt);  // Pascal: no MIG
  EXPECT_EQ(p100.samples[0].ecc_correctable_errors, 0u);
  EXPECT_EQ(p100.samples[0].ecc_correctable_errors_lifetime, 3u);
}

// This process's comm, and the pid of a child that has already exited.
struct Pids {
  std::string self_comm;
  pid_t gone = -1;
};
Pids SelfAndGone() {
  Pids p;
  std::ifstream("/proc/self/comm") >> p.self_comm;
  p.gone = ::fork();
  if (p.gone == 0) ::_exit(0);
  int status = 0;
  ::waitpid(p.gone, &status, 0);
  return p;
}

void ExpectTheCurrentDriverMachine(const char* library) {
  const Pids pids = SelfAndGone();
  const std::string list =
      std::to_string(::getpid()) + "," + std::to_string(pids.gone);
  setenv("LENS_FAKE_NVML_PIDS", list.c_str(), 1);
  Probed p = Probe(Library(library));
  unsetenv("LENS_FAKE_NVML_PIDS");
  ASSERT_EQ(p.infos.size(), 2u);
  const GpuInfo& mig = p.infos[0];
  const GpuInfo& plain = p.infos[1];
  EXPECT_EQ(mig.bdf, "0000:4c:00.0");
  EXPECT_EQ(mig.nvidia_minor, 2);
  EXPECT_EQ(plain.nvidia_minor, 5);
  EXPECT_EQ(mig.mig_enabled, true);
  EXPECT_EQ(plain.mig_enabled, false);
  ASSERT_EQ(mig.mig_devices.size(), 3u);  // indexes 2, 4, 5, 6 are empty
  EXPECT_EQ(mig.mig_devices[0].profile, "1g.10gb");
  EXPECT_EQ(mig.mig_devices[1].gpu_instance_id, 10u);
  EXPECT_EQ(mig.mig_devices[2].index, 3);
  EXPECT_EQ(mig.mig_devices[2].profile, "3g.40gb");
  EXPECT_EQ(mig.mig_devices[2].uuid,
            "MIG-1c0e2a94-7d35-5b8f-a6e1-3f9d20c4b703");
  EXPECT_EQ(mig.mig_devices[2].memory_total_bytes, 40448 * kMiB);
  ASSERT_EQ(p.samples.size(), 2u);
  const std::vector<std::optional<uint64_t>> used = {13 * kMiB, 13 * kMiB,
                                                     20010 * kMiB};
  EXPECT_EQ(p.samples[0].mig_memory_used_bytes, used);
  EXPECT_EQ(p.samples[1].ecc_correctable_errors, 2u);
  EXPECT_EQ(p.samples[1].ecc_correctable_errors_lifetime, 14u);
  EXPECT_EQ(p.samples[1].ecc_uncorrectable_errors_lifetime, 1u);
  ASSERT_EQ(p.samples[0].processes.size(), 1u);
  EXPECT_EQ(p.samples[0].processes[0].gpu_instance_id, 2u);
  ASSERT_EQ(p.samples[1].processes.size(), 2u);
  const GpuProcess& self = p.samples[1].processes[0];
  EXPECT_EQ(self.pid, ::getpid());
  EXPECT_EQ(self.name, pids.self_comm);
  EXPECT_EQ(self.used_memory_bytes, 1024 * kMiB);
  EXPECT_EQ(self.gpu_instance_id, std::nullopt);
  const GpuProcess& gone = p.samples[1].processes[1];
  EXPECT_EQ(gone.pid, pids.gone);
  EXPECT_EQ(gone.name, "");  // exited: listed, but nameless
}

TEST(NvmlMigLibraryTest, ACurrentDriverWithMigEccAndNamedProcesses) {
  ExpectTheCurrentDriverMachine(LENS_FAKE_NVML_MIG_PATH);
}

TEST(NvmlMigLibraryTest, TheThirtyTwoByteV3LayoutOfR535IsReadRight) {
  ExpectTheCurrentDriverMachine(LENS_FAKE_NVML_V3CC_PATH);
}

TEST(NvmlMigLibraryTest, MigCallsAnswerLikeNvml) {
  std::shared_ptr<NvmlApi> api = Library(LENS_FAKE_NVML_MIG_PATH);
  ASSERT_NE(api, nullptr);
  ASSERT_TRUE(api->Init().ok());
  NvmlDevice gpu = *api->DeviceByIndex(0);
  EXPECT_EQ(*api->MaxMigDeviceCount(gpu), 7u);
  auto empty = api->MigDeviceByIndex(gpu, 2);
  EXPECT_EQ(empty.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(empty.status().message(),
            "nvmlDeviceGetMigDeviceHandleByIndex: Not Found");
  NvmlDevice mig = *api->MigDeviceByIndex(gpu, 3);
  EXPECT_EQ(*api->Uuid(mig), "MIG-1c0e2a94-7d35-5b8f-a6e1-3f9d20c4b703");
  EXPECT_EQ(*api->GpuInstanceId(mig), 2u);
  EXPECT_EQ(api->Attributes(mig)->multiprocessor_count, 60u);
  // Attributes answer only for MIG handles.
  EXPECT_EQ(api->Attributes(gpu).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(api->Shutdown().ok());
}

TEST(NvmlMigLibraryTest, AnOldDriverWithoutMigOrEccCountsReportsNeither) {
  std::shared_ptr<NvmlApi> api = Library(LENS_FAKE_NVML_PATH);
  ASSERT_NE(api, nullptr);
  ASSERT_TRUE(api->Init().ok());
  NvmlDevice gpu = *api->DeviceByIndex(0);
  auto mig = api->MigEnabled(gpu);
  EXPECT_EQ(mig.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(mig.status().message(),
            std::string("nvmlDeviceGetMigMode: not in ") + LENS_FAKE_NVML_PATH +
                " (driver too old)");
  ASSERT_TRUE(api->Shutdown().ok());
  Probed p = Probe(api);
  ASSERT_EQ(p.infos.size(), 1u);
  EXPECT_EQ(p.infos[0].mig_enabled, std::nullopt);
  EXPECT_EQ(p.infos[0].nvidia_minor, std::nullopt);  // not exported either
  EXPECT_EQ(p.samples[0].ecc_correctable_errors_lifetime, std::nullopt);
  EXPECT_EQ(p.samples[0].processes.size(), 40u);  // v1 call, no v3
  EXPECT_EQ(p.samples[0].processes[0].gpu_instance_id, std::nullopt);
}

}  // namespace
}  // namespace lens::nvml
