// ContainerTracker on the Docker Engine API against a real, private dockerd
// (test/support/docker_harness): containers with CRI labels, device nodes
// and a secret in their environment; their lifecycle events; a privileged
// container; a --device directory; a dockerd restart; auto-detection.
#include <gtest/gtest.h>
#include <signal.h>

#include <mutex>
#include <set>
#include <thread>

#include "containerd_env.h"      // Recorder
#include "containerd_harness.h"  // MakeCharDevice
#include "docker_env.h"
#include "lens/containers.h"
#include "lens/gpu.h"

namespace lens {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kFixtures = LENS_FIXTURES_DIR;
const std::string kImage = test::kDockerBusyboxImage;
constexpr char kSecret[] = "LENS_TEST_SECRET=do-not-leak-7f3a";
using test::g_docker;

class DockerTrackerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (g_docker == nullptr)
      GTEST_SKIP() << "no private dockerd: " << test::g_docker_skip;
    roots_ = HostRoots::Under(kFixtures + "/hosts/mi300x-8x-mlx5");
    auto gpus = NewAmdGpuSysfsSource(roots_)->Scan();
    ASSERT_TRUE(gpus.ok()) << gpus.status();
    inventory_.gpus = *gpus;
    // Device nodes with the real DRM numbers of the fixture host's GPU 0
    // (card0 + renderD128) and GPU 1 (renderD136).
    dev_dir_ = g_docker->dir() + "/testdev";
    for (auto [name, minor] :
         {std::pair{"card0", 0}, {"renderD128", 128}, {"renderD136", 136}}) {
      ASSERT_TRUE(
          test::MakeCharDevice(dev_dir_ + "/dri/" + name, 226, minor).ok());
    }
  }

  ContainerTrackerOptions Options() const {
    ContainerTrackerOptions o;
    o.node = "node-under-test";
    o.runtime = ContainerRuntime::kDocker;
    o.docker_socket = g_docker->socket_path();
    o.pod_resources_socket = "";
    o.roots = roots_;
    o.roots.procfs = "/proc";  // real processes' start times
    o.reconnect_min = milliseconds(50);
    o.reconnect_max = milliseconds(500);
    return o;
  }

  test::DockerContainerSpec Pod(const std::string& name,
                                const std::string& pod) {
    test::DockerContainerSpec spec;
    spec.name = name;
    spec.image = kImage;
    spec.labels = {{"io.kubernetes.pod.name", pod},
                   {"io.kubernetes.pod.namespace", "ml-team"},
                   {"io.kubernetes.pod.uid", "uid-" + pod},
                   {"io.kubernetes.container.name", "trainer"}};
    spec.env = {kSecret};
    return spec;
  }

  // Creates and starts `spec`; the container id.
  std::string Run(const test::DockerContainerSpec& spec) {
    auto id = g_docker->CreateContainer(spec);
    EXPECT_TRUE(id.ok()) << id.status();
    if (!id.ok()) return "";
    Status st = g_docker->Docker({"start", *id}).status();
    EXPECT_TRUE(st.ok()) << st;
    return *id;
  }

  HostRoots roots_;
  DeviceInventory inventory_;
  std::string dev_dir_;
};

TEST_F(DockerTrackerTest, FollowsALifecycleWithPodIdentityAndDevices) {
  test::Recorder rec;
  ContainerTracker tracker(Options());
  tracker.SetInventory(inventory_);
  tracker.SetListener([&](const ContainerChange& c) { rec.Add(c); });
  ASSERT_TRUE(tracker.Start().ok());

  test::DockerContainerSpec spec = Pod("dk-life", "llama-0");
  spec.devices = {dev_dir_ + "/dri/card0",
                  dev_dir_ + "/dri/renderD128:/dev/dri/renderD128"};
  const std::string id = Run(spec);
  ASSERT_FALSE(id.empty());

  auto started = rec.Wait(id, "start");
  ASSERT_TRUE(started.has_value())
      << "no start; seen " << ::testing::PrintToString(rec.Types(id));
  const ContainerRecord& r = started->container;
  EXPECT_EQ(r.node, "node-under-test");
  EXPECT_EQ(r.runtime_namespace, "moby");
  EXPECT_EQ(r.image, kImage);
  EXPECT_EQ(r.pod_name, "llama-0");
  EXPECT_EQ(r.pod_namespace, "ml-team");
  EXPECT_EQ(r.pod_uid, "uid-llama-0");
  EXPECT_EQ(r.container_name, "trainer");
  EXPECT_EQ(r.state, ContainerState::kRunning);
  EXPECT_GT(r.pid, 0);
  ASSERT_TRUE(r.started_at.has_value());
  EXPECT_FALSE(r.privileged);
  ASSERT_EQ(r.devices.size(), 1u) << "card0 and renderD128 are one GPU";
  EXPECT_EQ(r.devices[0].kind, DeviceKind::kGpu);
  EXPECT_EQ(r.devices[0].bdf, "0000:0c:00.0");
  EXPECT_EQ(r.devices[0].device_key, inventory_.gpus[0].serial);
  EXPECT_EQ(r.devices[0].source, kDeviceSourceOciSpec);
  auto created = rec.Wait(id, "create");
  ASSERT_TRUE(created.has_value());
  // The environment is never kept, nor shown.
  EXPECT_EQ(ContainersJson(tracker.Containers()).find("do-not-leak"),
            std::string::npos);
  for (const auto& [k, v] : r.labels) {
    EXPECT_EQ(v.find("do-not-leak"), std::string::npos) << k;
  }

  ASSERT_TRUE(g_docker->Docker({"pause", id}).ok());
  ASSERT_TRUE(rec.Wait(id, "pause").has_value());
  ASSERT_TRUE(g_docker->Docker({"unpause", id}).ok());
  ASSERT_TRUE(rec.Wait(id, "resume").has_value());

  ASSERT_TRUE(g_docker->Docker({"kill", "--signal", "KILL", id}).ok());
  auto exited = rec.Wait(id, "exit");
  ASSERT_TRUE(exited.has_value()) << "no exit event";
  EXPECT_EQ(exited->container.state, ContainerState::kExited);
  EXPECT_EQ(exited->container.exit_code, 128 + SIGKILL);
  ASSERT_TRUE(exited->container.finished_at.has_value());
  EXPECT_EQ(exited->event.at, *exited->container.finished_at)
      << "the exit's time is Docker's FinishedAt, as a list would say";
  EXPECT_EQ(exited->container.pid, 0);

  ASSERT_TRUE(g_docker->Docker({"rm", id}).ok());
  auto deleted = rec.Wait(id, "delete");
  ASSERT_TRUE(deleted.has_value());
  EXPECT_EQ(deleted->container.state, ContainerState::kDeleted);
  for (const ContainerRecord& c : tracker.Containers()) {
    EXPECT_NE(c.container_id, id) << "deleted containers are dropped";
  }
  EXPECT_EQ(rec.Types(id),
            (std::vector<std::string>{"create", "start", "pause", "resume",
                                      "exit", "delete"}));
}

TEST_F(DockerTrackerTest, ExpandsADeviceDirectoryAndSkipsPrivileged) {
  test::Recorder rec;
  ContainerTracker tracker(Options());
  tracker.SetInventory(inventory_);
  tracker.SetListener([&](const ContainerChange& c) { rec.Add(c); });
  ASSERT_TRUE(tracker.Start().ok());
  test::DockerContainerSpec dir = Pod("dk-dir", "dir-0");
  dir.devices = {dev_dir_ + "/dri:/dev/dri"};
  const std::string dir_id = Run(dir);
  // Created, not started: a sandbox may refuse a privileged container's
  // capabilities, and HostConfig says it all already.
  test::DockerContainerSpec priv = Pod("dk-priv", "debug-0");
  priv.privileged = true;
  priv.devices = {dev_dir_ + "/dri/renderD136"};
  auto created = g_docker->CreateContainer(priv);
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string priv_id = *created;

  auto d = rec.Wait(dir_id, "start");
  ASSERT_TRUE(d.has_value());
  std::set<std::string> bdfs;
  for (const auto& dev : d->container.devices) bdfs.insert(dev.bdf);
  EXPECT_EQ(bdfs, (std::set<std::string>{"0000:0c:00.0", "0000:22:00.0"}))
      << "card0+renderD128 (GPU 0) and renderD136 (GPU 1)";
  auto p = rec.Wait(priv_id, "create");
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->container.privileged);
  EXPECT_TRUE(p->container.devices.empty())
      << "a privileged container sees every device, which proves nothing";
  ASSERT_TRUE(g_docker->Docker({"rm", "-f", dir_id, priv_id}).ok());
  EXPECT_TRUE(rec.Wait(priv_id, "delete").has_value());
}

TEST_F(DockerTrackerTest, ResyncsAfterDockerdRestartsAndCatchesWhatItMissed) {
  test::Recorder rec;
  std::mutex resync_mu;
  std::vector<std::vector<ContainerRecord>> resyncs;
  ContainerTracker tracker(Options());
  tracker.SetListener([&](const ContainerChange& c) { rec.Add(c); });
  tracker.SetResyncListener([&](const std::vector<ContainerRecord>& all) {
    std::lock_guard lock(resync_mu);
    resyncs.push_back(all);
  });
  // Running before the tracker starts: its first list reports them.
  const std::string keep = Run(Pod("dk-keep", "keep-0"));
  const std::string dies = Run(Pod("dk-dies", "dies-0"));
  ASSERT_TRUE(tracker.Start().ok());
  auto running = rec.Wait(dies, "start");
  ASSERT_TRUE(running.has_value());
  const int64_t pid = running->container.pid;
  ASSERT_GT(pid, 0);

  // dockerd dies (its containerd and containers stay); meanwhile a
  // container's process is killed.
  ASSERT_TRUE(g_docker->Kill(SIGKILL).ok());
  ASSERT_EQ(::kill(static_cast<pid_t>(pid), SIGKILL), 0);
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_FALSE(tracker.Connected());
  Status again = g_docker->StartAgain();
  ASSERT_TRUE(again.ok()) << again;

  auto exited = rec.Wait(dies, "exit", seconds(20));
  ASSERT_TRUE(exited.has_value())
      << "the exit missed while dockerd was down must come from the relist; "
      << "seen " << ::testing::PrintToString(rec.Types(dies));
  EXPECT_EQ(exited->container.state, ContainerState::kExited);
  EXPECT_GE(tracker.Reconnects(), 1u);
  for (int i = 0; i < 100; ++i) {
    {
      std::lock_guard lock(resync_mu);
      if (resyncs.size() >= 2) break;
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  {
    std::lock_guard lock(resync_mu);
    ASSERT_GE(resyncs.size(), 2u) << "start and reconnect";
    std::set<std::string> last;
    for (const auto& c : resyncs.back()) last.insert(c.container_id);
    EXPECT_TRUE(last.count(keep) && last.count(dies))
        << "the resync after the reconnect is the full set";
  }
  // Events flow again on the new subscription.
  const std::string after = Run(Pod("dk-after", "after-0"));
  EXPECT_TRUE(rec.Wait(after, "start").has_value());
  ASSERT_TRUE(g_docker->Docker({"rm", "-f", keep, dies, after}).ok());
}

TEST_F(DockerTrackerTest, AutoPicksDockerWhenOnlyItsSocketExists) {
  ContainerTrackerOptions o = Options();
  o.runtime = ContainerRuntime::kAuto;
  o.containerd_socket = g_docker->dir() + "/no-containerd.sock";
  EXPECT_EQ(ResolveContainerRuntime(o), ContainerRuntime::kDocker);
  o.docker_socket = g_docker->dir() + "/no-docker.sock";
  EXPECT_EQ(ResolveContainerRuntime(o), ContainerRuntime::kContainerd);

  o = Options();
  o.runtime = ContainerRuntime::kAuto;
  o.containerd_socket = g_docker->dir() + "/no-containerd.sock";
  test::DockerContainerSpec spec = Pod("dk-once", "once-0");
  auto id = g_docker->CreateContainer(spec);
  ASSERT_TRUE(id.ok()) << id.status();
  auto listed = ContainerTracker::ListOnce(o, inventory_);
  ASSERT_TRUE(listed.ok()) << listed.status();
  bool found = false;
  for (const ContainerRecord& c : *listed) {
    if (c.container_id != *id) continue;
    found = true;
    EXPECT_EQ(c.state, ContainerState::kCreated);
    EXPECT_EQ(c.pod_name, "once-0");
    EXPECT_EQ(c.runtime_namespace, "moby");
  }
  EXPECT_TRUE(found);
  ASSERT_TRUE(g_docker->Docker({"rm", *id}).ok());
}

}  // namespace
}  // namespace lens

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new lens::test::DockerEnv);
  return RUN_ALL_TESTS();
}
