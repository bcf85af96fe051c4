// The node agent's /metrics text from the fixture hosts through Prometheus's
// own linter (`promtool check metrics`, Debian's prometheus package): Lens's
// names must draw no finding at all; with --compat-names the only findings
// allowed are those of the original platform's names, kept as they were.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "agent/node_agent.h"

namespace lens {
namespace {

constexpr const char* kPromtool = "/usr/bin/promtool";

struct PromtoolRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs `promtool check metrics` on `text` (through a file on stdin).
PromtoolRun Promtool(const std::string& text) {
  std::string path = ::testing::TempDir() + "lens_metrics_XXXXXX";
  const int fd = ::mkstemp(path.data());
  EXPECT_GE(fd, 0);
  if (fd < 0) return {};
  ::close(fd);
  std::ofstream(path, std::ios::binary) << text;
  const std::string command =
      std::string(kPromtool) + " check metrics < " + path + " 2>&1";
  PromtoolRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) {
    run.output.append(buf.data(), n);
  }
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::filesystem::remove(path);
  return run;
}

std::string Render(const std::string& host, bool compat) {
  NodeAgentOptions o;
  o.roots = HostRoots::Under(std::string(LENS_FIXTURES_DIR) + "/hosts/" + host);
  o.node_name = "fixture";
  o.nvidia_gpus = false;
  o.compat_names = compat;
  NodeAgent agent(o, DefaultNodeCollectors(o));
  EXPECT_TRUE(agent.RunOnce().ok()) << host;
  return agent.RenderMetrics();
}

class PromtoolTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (::access(kPromtool, X_OK) != 0) {
      GTEST_SKIP() << kPromtool << " not installed (Debian package prometheus)";
    }
  }
};

TEST_P(PromtoolTest, LensNamesDrawNoFinding) {
  const std::string text = Render(GetParam(), false);
  ASSERT_NE(text.find("lens_"), std::string::npos);
  const PromtoolRun run = Promtool(text);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, "");
}

TEST_P(PromtoolTest, CompatNamesParseAndOnlyTheOriginalsNamesAreFlagged) {
  const std::string text = Render(GetParam(), true);
  const PromtoolRun run = Promtool(text);
  // 0: clean, 3: lint findings; anything else (1: parse error) fails.
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 3) << run.output;
  const std::vector<std::string> kOriginal = {
      "gpu_utilization", "node_k8s_gpu_allocation_rate", "rdma_stat_",
      "pod_ephemeral_storage_usage_bytes", "node_ephemeral_storage_"};
  std::istringstream lines(run.output);
  for (std::string line; std::getline(lines, line);) {
    bool original = false;
    for (const std::string& prefix : kOriginal) {
      original = original || line.rfind(prefix, 0) == 0;
    }
    EXPECT_TRUE(original) << "finding on a Lens name: " << line;
  }
}

INSTANTIATE_TEST_SUITE_P(FixtureHosts, PromtoolTest,
                         ::testing::Values("mi300x-8x-mlx5", "mi250-mi210",
                                           "quirks", "radeon-workstation"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace lens
