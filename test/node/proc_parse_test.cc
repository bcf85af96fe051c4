// The procfs / os-release parsers on the fixture hosts' files and on the
// shapes those files take elsewhere (arm64 cpuinfo, NVIDIA's two module
// flavours).
#include "host/proc_parse.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace lens::host {
namespace {

std::string HostFile(const std::string& host, const std::string& rel) {
  std::ifstream in(std::string(LENS_FIXTURES_DIR) + "/hosts/" + host + "/" +
                   rel);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << host << "/" << rel;
  return text.str();
}

TEST(ParseCpuInfoTest, CountsProcessorsAndDistinctSockets) {
  CpuInfo epyc = ParseCpuInfo(HostFile("mi300x-8x-mlx5", "proc/cpuinfo"));
  EXPECT_EQ(epyc.model, "AMD EPYC 9654 96-Core Processor");
  EXPECT_EQ(epyc.logical_cpus, 8);  // the fixture lists 4 CPUs per socket
  EXPECT_EQ(epyc.sockets, 2);
  CpuInfo ryzen = ParseCpuInfo(HostFile("radeon-workstation", "proc/cpuinfo"));
  EXPECT_EQ(ryzen.model, "AMD Ryzen 9 7950X 16-Core Processor");
  EXPECT_EQ(ryzen.logical_cpus, 32);
  EXPECT_EQ(ryzen.sockets, 1);
}

TEST(ParseCpuInfoTest, TopologyHiddenByTheHypervisorLeavesSocketsUnknown) {
  CpuInfo vm = ParseCpuInfo(HostFile("quirks", "proc/cpuinfo"));
  EXPECT_EQ(vm.logical_cpus, 2);
  EXPECT_EQ(vm.sockets, std::nullopt);
  EXPECT_EQ(vm.model, "Intel(R) Xeon(R) Platinum 8480+");
}

TEST(ParseCpuInfoTest, Arm64HasProcessorsButNoModelName) {
  // arch/arm64/kernel/cpuinfo.c c_show(): no "model name", no "physical id".
  const char* text =
      "processor\t: 0\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd evtstrm aes "
      "pmull sha1 sha2 crc32 atomics\nCPU implementer\t: 0x41\nCPU "
      "architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU "
      "revision\t: 1\n\nprocessor\t: 1\nBogoMIPS\t: 2000.00\nCPU "
      "implementer\t: 0x41\nCPU part\t: 0xd0c\n\n";
  CpuInfo arm = ParseCpuInfo(text);
  EXPECT_EQ(arm.logical_cpus, 2);
  EXPECT_EQ(arm.model, "");
  EXPECT_EQ(arm.sockets, std::nullopt);
}

TEST(ParseMemInfoTest, ConvertsKibibytesToBytes) {
  MemInfo mem = ParseMemInfo(HostFile("mi300x-8x-mlx5", "proc/meminfo"));
  EXPECT_EQ(mem.total_bytes, uint64_t{1584710736} * 1024);
  EXPECT_EQ(mem.available_bytes, uint64_t{1489213444} * 1024);
}

TEST(ParseMemInfoTest, KernelsWithoutMemAvailableLeaveItUnset) {
  MemInfo mem = ParseMemInfo(HostFile("quirks", "proc/meminfo"));
  EXPECT_EQ(mem.total_bytes, uint64_t{8167548} * 1024);
  EXPECT_EQ(mem.available_bytes, std::nullopt);
}

TEST(ParseMemInfoTest, MalformedValuesAreLeftOutNotZero) {
  MemInfo mem = ParseMemInfo("MemTotal:       lots kB\nMemAvailable: 12 kB\n");
  EXPECT_EQ(mem.total_bytes, std::nullopt);
  EXPECT_EQ(mem.available_bytes, 12u * 1024);
  EXPECT_EQ(ParseMemInfo("MemTotal: 99999999999999999999 kB\n").total_bytes,
            std::nullopt);
}

TEST(ParseUptimeTest, ReadsTheFirstNumber) {
  EXPECT_EQ(ParseUptime("3724915.42 1402251877.16\n"), 3724915.42);
  EXPECT_EQ(ParseUptime("42.00 80.17"), 42.0);
  EXPECT_EQ(ParseUptime(""), std::nullopt);
  EXPECT_EQ(ParseUptime("up 3 days"), std::nullopt);
  EXPECT_EQ(ParseUptime("12.5x 3"), std::nullopt);
}

TEST(ParseOsReleaseTest, ReadsQuotedAndBareValues) {
  auto ubuntu =
      ParseOsRelease(HostFile("mi300x-8x-mlx5", "proc/1/root/etc/os-release"));
  EXPECT_EQ(ubuntu["PRETTY_NAME"], "Ubuntu 22.04.4 LTS");
  EXPECT_EQ(ubuntu["ID"], "ubuntu");
  EXPECT_EQ(ubuntu["VERSION_ID"], "22.04");
  auto rocky =
      ParseOsRelease(HostFile("mi250-mi210", "proc/1/root/etc/os-release"));
  EXPECT_EQ(rocky["ID"], "rocky");
  EXPECT_EQ(rocky["ID_LIKE"], "rhel centos fedora");
}

TEST(ParseOsReleaseTest, HandlesCommentsSingleQuotesAndEscapes) {
  auto quirks =
      ParseOsRelease(HostFile("quirks", "proc/1/root/etc/os-release"));
  EXPECT_EQ(quirks["NAME"], "Lens Quirk OS");
  EXPECT_EQ(quirks["PRETTY_NAME"], "Lens \"Quirk\" OS 1.0 $stable");
  EXPECT_EQ(quirks["VERSION_ID"], "1.0");
  EXPECT_EQ(quirks.count("# indented comment"), 0u);
  EXPECT_EQ(quirks.size(), 6u);
}

TEST(ParseNvidiaDriverVersionTest, ReadsBothKernelModuleFlavours) {
  EXPECT_EQ(ParseNvidiaDriverVersion(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  "
                "Fri May 31 09:35:42 UTC 2024\nGCC version:  gcc version "
                "12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04) \n"),
            "550.90.07");
  EXPECT_EQ(ParseNvidiaDriverVersion(
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                "570.195.03  Release Build  (dvs-builder@U22-I3-H04-03-1)  "
                "Sat Sep 20 00:47:16 UTC 2025\nGCC version:  gcc version "
                "12.3.0\n"),
            "570.195.03");
  EXPECT_EQ(ParseNvidiaDriverVersion(
                "NVRM version: NVIDIA UNIX aarch64 Kernel Module  535.129.03  "
                "Thu Oct 19 18:42:10 UTC 2023\n"),
            "535.129.03");
}

TEST(ParseNvidiaDriverVersionTest, NoVersionGivesEmpty) {
  EXPECT_EQ(ParseNvidiaDriverVersion(""), "");
  EXPECT_EQ(ParseNvidiaDriverVersion(
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64 "
                "malformed\n"),
            "");
  EXPECT_EQ(ParseNvidiaDriverVersion("GCC version:  gcc version 12.3.0\n"), "");
}

}  // namespace
}  // namespace lens::host
