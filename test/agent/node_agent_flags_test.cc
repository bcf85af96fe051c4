// lens-node-agent's container runtime flags: --container-runtime and
// --docker-socket reach the tracker, and bad values exit 2 naming the flag.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "command.h"

namespace lens {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

const std::string kHost =
    std::string(LENS_FIXTURES_DIR) + "/hosts/mi300x-8x-mlx5";

TEST(NodeAgentFlagsTest, ContainerRuntimeFlagsReachTheTrackerOrExitTwo) {
  auto bad = test::RunCommand({LENS_NODE_AGENT_BIN, "--container-runtime",
                               "podman", "--sysfs-root", kHost + "/sys"},
                              seconds(20));
  ASSERT_TRUE(bad.ok()) << bad.status();
  EXPECT_EQ(test::Describe(bad->wait_status), "exit status 2");
  EXPECT_NE(bad->err.find("--container-runtime=podman: "
                          "nodeExporter.containerRuntime: 'podman' is not "
                          "containerd, docker or auto"),
            std::string::npos)
      << bad->err;

  // Docker at a socket of the flag's choosing: the agent serves and keeps
  // retrying the Engine there (nothing listens in this test).
  const std::string dir =
      ::testing::TempDir() + "agent-flags-" + std::to_string(::getpid());
  fs::create_directories(dir);
  const std::string socket = dir + "/docker-of-the-flag.sock";
  const std::string log = dir + "/agent.log";
  const pid_t pid = test::Spawn(
      {LENS_NODE_AGENT_BIN, "--container-runtime", "docker", "--docker-socket",
       socket, "--sysfs-root", kHost + "/sys", "--procfs-root", kHost + "/proc",
       "--dev-root", kHost + "/dev", "--listen", "127.0.0.1:0", "--no-nvml"},
      log);
  ASSERT_GT(pid, 0);
  bool seen = false;
  for (int i = 0; i < 400 && !seen; ++i) {  // 20 s
    const std::string text = test::ReadFile(log);
    seen = text.find("Docker Engine at " + socket) != std::string::npos &&
           text.find("lens-node-agent serving") != std::string::npos;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(seen) << test::ReadFile(log);
  ::kill(pid, SIGTERM);
  auto status = test::WaitExit(pid, seconds(15));
  if (!status) ::kill(pid, SIGKILL);
  ASSERT_TRUE(status);
  EXPECT_EQ(test::Describe(*status), "exit status 0") << test::ReadFile(log);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lens
