// ReadNodeFacts on every fixture host's proc/ (README-rdma-node.md) and on
// small procfs trees written here for the cases the hosts do not cover.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "lens/node.h"

namespace lens {
namespace {

std::string HostDir(const std::string& host) {
  return std::string(LENS_FIXTURES_DIR) + "/hosts/" + host;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct ExpectedFacts {
  std::string host;
  std::string hostname, kernel_release, os_name, os_id, os_version_id;
  std::string cpu_model;
  int cpu_count;
  std::optional<int> cpu_sockets;
  uint64_t memory_total_kib;
  std::optional<uint64_t> memory_available_kib;
  double uptime_seconds;
};

const std::vector<ExpectedFacts>& HostFacts() {
  static const std::vector<ExpectedFacts> kHosts = {
      {"mi300x-8x-mlx5", "mi300x-gpu-node-017", "5.15.0-119-generic",
       "Ubuntu 22.04.4 LTS", "ubuntu", "22.04",
       "AMD EPYC 9654 96-Core Processor", 8, 2, 1584710736, 1489213444,
       3724915.42},
      {"mi300x-cpx", "mi300x-gpu-node-031", "5.15.0-119-generic",
       "Ubuntu 22.04.4 LTS", "ubuntu", "22.04",
       "AMD EPYC 9654 96-Core Processor", 8, 2, 1584710736, 1502004920,
       86421.07},
      {"mi250-mi210", "mi250-node-03.cluster.local",
       "5.14.0-362.8.1.el9_3.x86_64", "Rocky Linux 9.3 (Blue Onyx)", "rocky",
       "9.3", "AMD EPYC 7763 64-Core Processor", 8, 2, 527993412, 498877120,
       1209618.77},
      {"radeon-workstation", "ws-radeon", "6.1.0-18-amd64",
       "Debian GNU/Linux 12 (bookworm)", "debian", "12",
       "AMD Ryzen 9 7950X 16-Core Processor", 32, 1, 65015752, 51322876,
       5123.48},
      {"empty", "cpu-only-vm-4", "6.8.0-1015-gcp", "Ubuntu 24.04.1 LTS",
       "ubuntu", "24.04", "Intel(R) Xeon(R) Platinum 8480+", 4, 1, 16365484,
       14921072, 734.12},
      {"quirks", "quirk-host", "6.1.0-18-amd64",
       "Lens \"Quirk\" OS 1.0 $stable", "lensquirk", "1.0",
       "Intel(R) Xeon(R) Platinum 8480+", 2, std::nullopt, 8167548,
       std::nullopt, 42.0},
  };
  return kHosts;
}

class NodeFactsHostTest : public ::testing::TestWithParam<ExpectedFacts> {};

TEST_P(NodeFactsHostTest, ReadsTheHostsFacts) {
  const ExpectedFacts& want = GetParam();
  const std::string dir = HostDir(want.host);
  auto facts = ReadNodeFacts(HostRoots::Under(dir));
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->hostname, want.hostname);
  EXPECT_EQ(facts->kernel_release, want.kernel_release);
  std::string version = Slurp(dir + "/proc/sys/kernel/version");
  ASSERT_FALSE(version.empty());
  version.pop_back();  // the newline
  EXPECT_EQ(facts->kernel_version, version);
  EXPECT_EQ(facts->os_name, want.os_name);
  EXPECT_EQ(facts->os_id, want.os_id);
  EXPECT_EQ(facts->os_version_id, want.os_version_id);
  EXPECT_EQ(facts->cpu_model, want.cpu_model);
  EXPECT_EQ(facts->cpu_count, want.cpu_count);
  EXPECT_EQ(facts->cpu_sockets, want.cpu_sockets);
  EXPECT_EQ(facts->memory_total_bytes, want.memory_total_kib * 1024);
  if (want.memory_available_kib) {
    EXPECT_EQ(facts->memory_available_bytes, *want.memory_available_kib * 1024);
  } else {
    EXPECT_EQ(facts->memory_available_bytes, std::nullopt);
  }
  EXPECT_EQ(facts->uptime_seconds, want.uptime_seconds);
  EXPECT_EQ(facts->nvidia_driver_version, "");  // AMD hosts only
  // sys/module/amdgpu belongs to the GPU fixture: whatever it says, trimmed.
  std::string amdgpu = Slurp(dir + "/sys/module/amdgpu/version");
  while (!amdgpu.empty() && (amdgpu.back() == '\n' || amdgpu.back() == '\0')) {
    amdgpu.pop_back();
  }
  EXPECT_EQ(facts->amdgpu_driver_version, amdgpu);
}

INSTANTIATE_TEST_SUITE_P(
    Hosts, NodeFactsHostTest, ::testing::ValuesIn(HostFacts()),
    [](const ::testing::TestParamInfo<ExpectedFacts>& info) {
      std::string name = info.param.host;
      for (char& c : name) {
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

// A scratch host tree (proc/ and sys/) removed at the end of the test.
class ScratchHost : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "lens_node_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& rel, const std::string& content) {
    const std::filesystem::path path = root_ + "/" + rel;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << content;
  }
  HostRoots roots() const { return HostRoots::Under(root_); }
  std::string root_;
};

TEST_F(ScratchHost, DirectoryWithoutCpuinfoOrMeminfoIsNotAProcfs) {
  Write("proc/uptime", "1.00 2.00\n");
  auto facts = ReadNodeFacts(roots());
  ASSERT_FALSE(facts.ok());
  EXPECT_EQ(facts.status().code(), StatusCode::kNotFound);
  EXPECT_NE(facts.status().message().find(root_ + "/proc"), std::string::npos);
}

TEST_F(ScratchHost, MissingFilesLeaveTheirFieldsEmpty) {
  Write("proc/meminfo", "MemTotal:        1024 kB\n");
  auto facts = ReadNodeFacts(roots());
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->memory_total_bytes, 1024u * 1024);
  EXPECT_EQ(facts->cpu_count, 0);
  EXPECT_EQ(facts->hostname, "");
  EXPECT_EQ(facts->uptime_seconds, std::nullopt);
  // procfs is not "/proc": the machine's own /etc/os-release is not used.
  EXPECT_EQ(facts->os_id, "");
  EXPECT_EQ(facts->os_name, "");
}

TEST_F(ScratchHost, ReadsDriverVersionsOfBothVendors) {
  Write("proc/cpuinfo", Slurp(HostDir("empty") + "/proc/cpuinfo"));
  Write("proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May "
        "31 09:35:42 UTC 2024\nGCC version:  gcc version 12.3.0 (Ubuntu "
        "12.3.0-1ubuntu1~22.04) \n");
  Write("sys/module/amdgpu/version", "6.8.5\n");
  auto facts = ReadNodeFacts(roots());
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->nvidia_driver_version, "550.90.07");
  EXPECT_EQ(facts->amdgpu_driver_version, "6.8.5");
  EXPECT_EQ(facts->cpu_count, 4);
}

TEST_F(ScratchHost, UsrLibOsReleaseIsTheFallbackUnderPid1Root) {
  Write("proc/meminfo", "MemTotal:        1024 kB\n");
  Write("proc/1/root/usr/lib/os-release",
        "NAME=\"Fedora Linux\"\nID=fedora\nVERSION_ID=40\n");
  auto facts = ReadNodeFacts(roots());
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->os_id, "fedora");
  EXPECT_EQ(facts->os_name, "Fedora Linux");  // no PRETTY_NAME: NAME
  EXPECT_EQ(facts->os_version_id, "40");
}

TEST_F(ScratchHost, CpuinfoOfHundredsOfCpusIsReadWhole) {
  // 768 logical CPUs (2x 192-core parts) make a cpuinfo over 1 MiB.
  const std::string one = Slurp(HostDir("mi300x-8x-mlx5") + "/proc/cpuinfo");
  const std::string block = one.substr(0, one.find("\n\n") + 2);
  std::string text;
  for (int i = 0; i < 768; ++i) text += block;
  ASSERT_GT(text.size(), size_t{1} << 20);
  Write("proc/cpuinfo", text);
  auto facts = ReadNodeFacts(roots());
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->cpu_count, 768);
}

TEST(NodeFactsLiveTest, ReadsThisMachine) {
  auto facts = ReadNodeFacts(HostRoots{});
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->cpu_count, sysconf(_SC_NPROCESSORS_ONLN));
  char hostname[256] = {};
  ASSERT_EQ(gethostname(hostname, sizeof hostname), 0);
  EXPECT_EQ(facts->hostname, hostname);
  ASSERT_TRUE(facts->memory_total_bytes.has_value());
  EXPECT_GT(*facts->memory_total_bytes, uint64_t{64} << 20);
  // Through /proc/1/root or, unprivileged, /etc/os-release.
  EXPECT_NE(facts->os_id, "");
  EXPECT_GT(facts->uptime_seconds.value_or(0), 0.0);
}

}  // namespace
}  // namespace lens
