// Running amd-smi: small shell scripts written to a temp dir stand in for the
// tool (one printing fixtures, one sleeping past the limit, one failing).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "lens/amd_smi.h"

namespace lens {
namespace {

using std::chrono::milliseconds;

class AmdSmiRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "lens_amd_smi_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes an executable /bin/sh script and returns its path.
  std::string Script(const std::string& name, const std::string& body,
                     mode_t mode = 0755) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    ::chmod(path.c_str(), mode);
    return path;
  }

  // A stand-in amd-smi that prints the fixture of the requested command.
  std::string FakeAmdSmi(const std::string& fixture_prefix) {
    return Script("amd-smi",
                  "[ \"$2\" = --json ] || { echo \"usage: $0\" >&2; exit 2; }\n"
                  "exec cat \"" LENS_FIXTURES_DIR "/amd-smi/" +
                      fixture_prefix + "$1.json\"\n");
  }

  std::string Read(const std::string& name) {
    std::ifstream in(dir_ + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string dir_;
};

// A process that no longer exists, or a zombie waiting for its reaper.
bool IsGone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t paren = line.rfind(')');
  return paren != std::string::npos && line.size() > paren + 2 &&
         line[paren + 2] == 'Z';
}

TEST_F(AmdSmiRunTest, CommandOutputIsStdoutOfExecutableWithJsonFlag) {
  AmdSmiRunOptions options;
  options.executable = FakeAmdSmi("mi300x-8x_rocm6.1_");
  auto out = RunAmdSmiCommand(options, AmdSmiCommand::kList);
  ASSERT_TRUE(out.ok()) << out.status();
  std::ifstream fixture(LENS_FIXTURES_DIR
                        "/amd-smi/mi300x-8x_rocm6.1_list.json");
  std::stringstream want;
  want << fixture.rdbuf();
  EXPECT_EQ(*out, want.str());
}

TEST_F(AmdSmiRunTest, RunAmdSmiMergesEveryCommandsOutput) {
  AmdSmiRunOptions options;
  options.executable = FakeAmdSmi("mi300x-8x_rocm6.1_");
  auto gpus = RunAmdSmi(options);
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 8u);
  EXPECT_EQ((*gpus)[7].bdf, "0000:df:00.0");
  EXPECT_EQ((*gpus)[7].market_name, "AMD Instinct MI300X");
  EXPECT_EQ((*gpus)[7].sample.power_watts, 434.0);
  EXPECT_TRUE((*gpus)[7].sample.processes_known);
  EXPECT_EQ(AmdSmiCommandName(AmdSmiCommand::kProcess), "process");
}

TEST_F(AmdSmiRunTest, TimeoutKillsTheProcessGroupWithinTheLimit) {
  AmdSmiRunOptions options;
  options.executable =
      Script("amd-smi", "echo $$ > \"" + dir_ + "/shell.pid\"\n" +
                            "sleep 30 &\necho $! > \"" + dir_ +
                            "/sleep.pid\"\nwait\n");
  options.timeout = milliseconds(400);
  auto start = std::chrono::steady_clock::now();
  auto out = RunAmdSmiCommand(options, AmdSmiCommand::kMetric);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(out.status().message(),
            options.executable +
                " metric --json: no result within 400 ms; its process group "
                "was killed");
  EXPECT_GE(took, milliseconds(400));
  EXPECT_LT(took, milliseconds(400 + 1500));
  pid_t shell = std::stoi(Read("shell.pid"));
  pid_t sleeper = std::stoi(Read("sleep.pid"));
  EXPECT_TRUE(IsGone(shell));  // killed and reaped by us
  for (int i = 0; i < 200 && !IsGone(sleeper); ++i) ::usleep(10000);
  EXPECT_TRUE(IsGone(sleeper));  // the grandchild died with the group
}

TEST_F(AmdSmiRunTest, MissingExecutableIsNotFound) {
  AmdSmiRunOptions options;
  options.executable = dir_ + "/no-such-dir/amd-smi";
  auto out = RunAmdSmiCommand(options, AmdSmiCommand::kStatic);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kNotFound) << out.status();
  EXPECT_NE(out.status().message().find("static --json"), std::string::npos);

  options.executable = "lens-test-no-such-amd-smi";  // looked up in PATH
  out = RunAmdSmiCommand(options, AmdSmiCommand::kStatic);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kNotFound) << out.status();
}

TEST_F(AmdSmiRunTest, FileWithoutExecuteBitIsPermissionDenied) {
  AmdSmiRunOptions options;
  options.executable = Script("amd-smi", "echo []\n", 0644);
  auto out = RunAmdSmiCommand(options, AmdSmiCommand::kList);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kPermissionDenied) << out.status();
}

TEST_F(AmdSmiRunTest, FailingExitIsUnknownWithStatusAndStderrStart) {
  AmdSmiRunOptions options;
  options.executable = Script(
      "amd-smi",
      "echo 'partial'\n"
      "echo 'ERROR:root:Unable to detect any GPU devices, check amdgpu version "
      "and module status (sudo modprobe amdgpu)' >&2\n"
      "echo 'AMDSMI_STATUS_NO_PERM' >&2\nexit 3\n");
  auto out = RunAmdSmiCommand(options, AmdSmiCommand::kStatic);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnknown);
  EXPECT_EQ(out.status().message(),
            options.executable +
                " static --json: exited with status 3; stderr: "
                "\"ERROR:root:Unable to detect any GPU devices, check amdgpu "
                "version and module status (sudo modprobe amdgpu) "
                "AMDSMI_STATUS_NO_PERM\"");
}

TEST_F(AmdSmiRunTest, ChildKilledBySignalIsUnknown) {
  AmdSmiRunOptions options;
  options.executable = Script("amd-smi", "kill -KILL $$\n");
  auto out = RunAmdSmiCommand(options, AmdSmiCommand::kList);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnknown);
  EXPECT_NE(out.status().message().find("killed by signal 9"),
            std::string::npos)
      << out.status();
}

TEST_F(AmdSmiRunTest, OutputOverTheLimitIsRefusedAndTheChildKilled) {
  AmdSmiRunOptions options;
  options.executable =
      Script("amd-smi", "while :; do echo '[1,2,3,4]'; done\n");
  options.max_output_bytes = 10000;
  auto start = std::chrono::steady_clock::now();
  auto out = RunAmdSmiCommand(options, AmdSmiCommand::kMetric);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted);
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000));
}

TEST_F(AmdSmiRunTest, ChildSeesDevNullStdinAndNoneOfOurDescriptors) {
  int fd = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC on purpose
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::dup2(fd, 77), 77);
  ::close(fd);
  AmdSmiRunOptions options;
  options.executable = Script(
      "amd-smi",
      "cat\n"  // stdin is /dev/null: returns at once
      "if [ -e /proc/$$/fd/77 ]; then echo leaked; else echo clean; fi\n");
  auto out = RunAmdSmiCommand(options, AmdSmiCommand::kList);
  ::close(77);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "clean\n");
}

TEST_F(AmdSmiRunTest, LargeStderrDoesNotBlockTheChild) {
  AmdSmiRunOptions options;
  options.executable = Script(
      "amd-smi", "head -c 2000000 /dev/zero | tr '\\0' 'w' >&2\necho '[]'\n");
  options.timeout = milliseconds(5000);
  auto gpus = RunAmdSmi(options);
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_TRUE(gpus->empty());
}

TEST_F(AmdSmiRunTest, UnparsableOutputNamesTheCommand) {
  AmdSmiRunOptions options;
  options.executable = Script("amd-smi", "echo 'GPU: 0'\necho '    BDF: x'\n");
  options.commands = {AmdSmiCommand::kList};
  auto gpus = RunAmdSmi(options);
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(gpus.status().message(),
            options.executable +
                " list --json: no JSON array or object in the amd-smi output");
}

TEST_F(AmdSmiRunTest, InvalidOptionsAreRejectedBeforeStarting) {
  AmdSmiRunOptions options;
  options.executable = FakeAmdSmi("mi300x-8x_rocm6.1_");
  options.timeout = milliseconds(0);
  auto out = RunAmdSmiCommand(options, AmdSmiCommand::kList);
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  options.executable.clear();
  options.timeout = milliseconds(1000);
  out = RunAmdSmiCommand(options, AmdSmiCommand::kList);
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lens
