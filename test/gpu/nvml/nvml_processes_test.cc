// Compute processes: the entry layouts NVML's process calls write, and the
// names read from procfs (fixture trees and this machine's own /proc).
#include "gpu/nvml/nvml_processes.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "gpu/nvml/nvml_abi.h"

namespace lens::nvml {
namespace {

namespace fs = std::filesystem;

template <typename Entry>
std::vector<std::byte> Bytes(const std::vector<Entry>& entries) {
  std::vector<std::byte> out(entries.size() * sizeof(Entry));
  std::memcpy(out.data(), entries.data(), out.size());
  return out;
}

TEST(NvmlProcessLayoutTest, TheV3LayoutFollowsTheExportsOfItsDriver) {
  // R530 to early R535: ConfCompute but no DetailList -> 32-byte entries.
  EXPECT_EQ(NvmlV3ProcessLayout(true, false), NvmlProcessLayout::kV3cc);
  EXPECT_EQ(NvmlV3ProcessLayout(true, true), NvmlProcessLayout::kV2);
  EXPECT_EQ(NvmlV3ProcessLayout(false, false), NvmlProcessLayout::kV2);
  EXPECT_EQ(NvmlProcessEntryBytes(NvmlProcessLayout::kV1), 16u);
  EXPECT_EQ(NvmlProcessEntryBytes(NvmlProcessLayout::kV2), 24u);
  EXPECT_EQ(NvmlProcessEntryBytes(NvmlProcessLayout::kV3cc), 32u);
}

TEST(NvmlProcessLayoutTest, DecodesEachLayoutWithMigIdsAndUnknownMemory) {
  const std::vector<abi::nvmlProcessInfo_v2_t> v2 = {
      {12249, 2194ull << 20, 2, 1},
      {12250, abi::kNvmlValueNotAvailable, abi::kNvmlInstanceIdNone,
       abi::kNvmlInstanceIdNone}};
  auto p = DecodeNvmlProcesses(Bytes(v2), 2, NvmlProcessLayout::kV2);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].pid, 12249u);
  EXPECT_EQ(p[0].used_memory_bytes, 2194ull << 20);
  EXPECT_EQ(p[0].gpu_instance_id, 2u);
  EXPECT_EQ(p[0].compute_instance_id, 1u);
  EXPECT_EQ(p[1].used_memory_bytes, std::nullopt);
  EXPECT_EQ(p[1].gpu_instance_id, std::nullopt);
  EXPECT_EQ(p[1].compute_instance_id, std::nullopt);

  const std::vector<abi::nvmlProcessInfo_v3cc_t> v3cc = {
      {11327, 2566ull << 20, 9, 0, 0}, {11328, 1542ull << 20, 10, 0, 0}};
  p = DecodeNvmlProcesses(Bytes(v3cc), 2, NvmlProcessLayout::kV3cc);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[1].pid, 11328u);
  EXPECT_EQ(p[1].used_memory_bytes, 1542ull << 20);
  EXPECT_EQ(p[1].gpu_instance_id, 10u);
  // Read with the v2 stride, the second entry is garbage: what the layout
  // choice prevents.
  p = DecodeNvmlProcesses(Bytes(v3cc), 2, NvmlProcessLayout::kV2);
  EXPECT_NE(p[1].pid, 11328u);

  const std::vector<abi::nvmlProcessInfo_v1_t> v1 = {{4200, 100ull << 20}};
  p = DecodeNvmlProcesses(Bytes(v1), 1, NvmlProcessLayout::kV1);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].gpu_instance_id, std::nullopt);  // v1 has no MIG ids
  // A count past the buffer stops at the buffer.
  EXPECT_EQ(DecodeNvmlProcesses(Bytes(v1), 5, NvmlProcessLayout::kV1).size(),
            1u);
}

class NvmlProcessNamesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("nvml_proc_" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  fs::path root_;
};

TEST_F(NvmlProcessNamesTest, NamesFromCommAndNothingForAVanishedPid) {
  Write("12249/comm", "memhog\n");
  Write("12267/comm", "gpu_burn\n");
  Write("12267/cmdline", std::string("./gpu_burn\0--token=s3cret\0", 27));
  NvmlProcessNames names(root_.string());
  names.BeginCycle();
  EXPECT_EQ(names.Name(12249), "memhog");
  EXPECT_EQ(names.Name(12267), "gpu_burn");  // comm only, never cmdline
  EXPECT_EQ(names.Name(12250), "");          // exited since NVML listed it
  // Cached while NVML keeps listing the pid; forgotten when it does not.
  Write("12249/comm", "renamed\n");
  Write("12267/comm", "reused\n");
  names.BeginCycle();
  EXPECT_EQ(names.Name(12249), "memhog");
  names.BeginCycle();  // 12267 was not listed in the last cycle
  EXPECT_EQ(names.Name(12267), "reused");
}

TEST_F(NvmlProcessNamesTest, AProcfsOfAnAncestorPidNamespaceNamesNothing) {
  // The agent in a pod's PID namespace reading the host's /proc: NVML's
  // pid 7 is the pod's pid 7, not the host's.
  Write("self/status",
        "Name:\tlens-node-agent\nPid:\t41234\n"
        "NSpid:\t41234\t7\nNSpgid:\t41234\t7\n");
  Write("7/comm", "systemd-journal\n");
  NvmlProcessNames names(root_.string());
  names.BeginCycle();
  EXPECT_FALSE(names.usable());
  EXPECT_EQ(names.Name(7), "");
  // One level: the procfs is of the reader's own namespace.
  Write("self/status", "Name:\tlens-node-agent\nNSpid:\t41234\n");
  NvmlProcessNames own(root_.string());
  own.BeginCycle();
  EXPECT_TRUE(own.usable());
  EXPECT_EQ(own.Name(7), "systemd-journal");
}

TEST(NvmlProcessNamesRealProcTest, NamesThisProcessAndNotAReapedChild) {
  std::ifstream self("/proc/self/comm");
  std::string comm;
  std::getline(self, comm);
  ASSERT_FALSE(comm.empty());
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  NvmlProcessNames names("/proc");
  names.BeginCycle();
  ASSERT_TRUE(names.usable()) << "this test runs in its own /proc's namespace";
  EXPECT_EQ(names.Name(static_cast<uint32_t>(::getpid())), comm);
  EXPECT_EQ(names.Name(static_cast<uint32_t>(child)), "");
}

}  // namespace
}  // namespace lens::nvml
