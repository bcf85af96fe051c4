// Choosing the container runtime: the names, auto-detection by socket, the
// config keys (nodeExporter.containerRuntime, dockerSocket) and what the
// node service makes of them.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>

#include "lens/containers.h"
#include "service/config.h"
#include "service/node_service.h"

namespace lens {
namespace {

class SocketDir {
 public:
  SocketDir() {
    std::string pattern = ::testing::TempDir() + "lens_rt_XXXXXX";
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  ~SocketDir() {
    for (int fd : fds_) ::close(fd);
    std::filesystem::remove_all(dir_);
  }
  // A listening unix socket at <dir>/<name>.
  std::string Listen(const std::string& name) {
    const std::string path = dir_ + "/" + name;
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    fds_.push_back(fd);
    return path;
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
  std::vector<int> fds_;
};

TEST(ContainerRuntimeTest, NamesRoundTrip) {
  for (auto r : {ContainerRuntime::kContainerd, ContainerRuntime::kDocker,
                 ContainerRuntime::kAuto}) {
    auto parsed = ParseContainerRuntime(ToString(r));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, r);
  }
  auto bad = ParseContainerRuntime("podman");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("containerd, docker or auto"),
            std::string::npos);
}

TEST(ContainerRuntimeTest, AutoFollowsTheSocketsThatExist) {
  SocketDir dir;
  ContainerTrackerOptions o;
  o.runtime = ContainerRuntime::kAuto;
  o.containerd_socket = dir.Path("containerd.sock");
  o.docker_socket = dir.Path("docker.sock");
  EXPECT_EQ(ResolveContainerRuntime(o), ContainerRuntime::kContainerd)
      << "neither: containerd, which the tracker keeps trying";
  dir.Listen("docker.sock");
  EXPECT_EQ(ResolveContainerRuntime(o), ContainerRuntime::kDocker)
      << "only Docker's socket (mounted alone into the agent)";
  dir.Listen("containerd.sock");
  EXPECT_EQ(ResolveContainerRuntime(o), ContainerRuntime::kContainerd)
      << "both (Docker runs on containerd): the kubelet's CRI decides";
  o.runtime = ContainerRuntime::kDocker;
  EXPECT_EQ(ResolveContainerRuntime(o), ContainerRuntime::kDocker)
      << "an explicit choice is kept";
}

TEST(ContainerRuntimeTest, ConfigKeysAreValidated) {
  auto c = ParseConfig(
      "nodeExporter:\n  containerRuntime: docker\n"
      "  dockerSocket: /host/run/docker.sock\n",
      "test.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->node_exporter.container_runtime, "docker");
  EXPECT_EQ(c->node_exporter.docker_socket, "/host/run/docker.sock");
  EXPECT_EQ(Config().node_exporter.container_runtime, "auto");

  auto bad =
      ParseConfig("nodeExporter:\n  containerRuntime: podman\n", "test.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("containerRuntime"), std::string::npos)
      << bad.status();
  auto empty = ParseConfig(
      "nodeExporter:\n  containerRuntime: docker\n  dockerSocket: \"\"\n",
      "test.yaml");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("dockerSocket"), std::string::npos)
      << empty.status();
}

TEST(ContainerRuntimeTest, TheNodeServiceTakesTheRuntimeAndSocket) {
  SocketDir dir;
  Config c;
  c.node_exporter.container_runtime = "docker";
  c.node_exporter.docker_socket = dir.Path("docker.sock");
  c.node_exporter.containerd_socket = dir.Path("containerd.sock");
  auto o = NodeServiceOptionsFromConfig(c, kNodeFlows | kNodeContainers);
  ASSERT_TRUE(o.ok()) << o.status();
  ASSERT_TRUE(o->containers.has_value());
  EXPECT_EQ(o->containers->runtime, ContainerRuntime::kDocker);
  EXPECT_EQ(o->containers->docker_socket, dir.Path("docker.sock"));

  // One machine (lens up): tracking is on only where the runtime's socket
  // is.
  const unsigned one = kNodeFlows | kNodeContainers | kNodeOnOneMachine;
  o = NodeServiceOptionsFromConfig(c, one);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->containers.has_value()) << "no Docker socket yet";
  dir.Listen("docker.sock");
  o = NodeServiceOptionsFromConfig(c, one);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->containers.has_value());
  c.node_exporter.container_runtime = "containerd";
  o = NodeServiceOptionsFromConfig(c, one);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->containers.has_value())
      << "containerd named, and only Docker's socket exists";
}

}  // namespace
}  // namespace lens
