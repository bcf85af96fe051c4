// ContainerTracker against a real containerd + runc (test/support): real
// containers with CRI labels and device nodes, their lifecycle events, a
// privileged container, and a containerd restart.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "containerd_env.h"
#include "lens/containers.h"
#include "lens/gpu.h"
#include "lens/rdma.h"

namespace lens {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kFixtures = LENS_FIXTURES_DIR;
class TrackerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test::g_containerd == nullptr) {
      GTEST_SKIP() << "no private containerd: " << test::g_skip;
    }
    roots_ = HostRoots::Under(kFixtures + "/hosts/mi300x-8x-mlx5");
    auto gpus = NewAmdGpuSysfsSource(roots_)->Scan();
    ASSERT_TRUE(gpus.ok()) << gpus.status();
    inventory_.gpus = *gpus;
    dev_dir_ = test::g_containerd->dir() + "/testdev";
    // Device nodes with the real DRM numbers: GPU 0 of the fixture host is
    // card0 + renderD128.
    ASSERT_TRUE(
        test::MakeCharDevice(dev_dir_ + "/dri/renderD128", 226, 128).ok());
    ASSERT_TRUE(test::MakeCharDevice(dev_dir_ + "/dri/card0", 226, 0).ok());
    ASSERT_TRUE(
        test::MakeCharDevice(dev_dir_ + "/dri/renderD129", 226, 129).ok());
  }

  ContainerTrackerOptions Options() const {
    ContainerTrackerOptions o;
    o.node = "node-under-test";
    o.containerd_socket = test::g_containerd->socket_path();
    o.pod_resources_socket = "";
    o.roots = roots_;
    // Real processes: their start times come from this machine's /proc.
    o.roots.procfs = "/proc";
    o.reconnect_min = milliseconds(50);
    o.reconnect_max = milliseconds(500);
    return o;
  }

  test::ContainerSpec Pod(const std::string& id, const std::string& pod) {
    test::ContainerSpec spec;
    spec.id = id;
    spec.image = test::kBusyboxImage;
    spec.labels = {{"io.kubernetes.pod.name", pod},
                   {"io.kubernetes.pod.namespace", "ml-team"},
                   {"io.kubernetes.pod.uid", "uid-" + pod},
                   {"io.kubernetes.container.name", "trainer"}};
    return spec;
  }

  HostRoots roots_;
  DeviceInventory inventory_;
  std::string dev_dir_;
};

TEST_F(TrackerTest, FollowsALifecycleWithPodIdentityAndDevices) {
  test::Recorder rec;
  ContainerTracker tracker(Options());
  tracker.SetInventory(inventory_);
  tracker.SetListener([&](const ContainerChange& c) { rec.Add(c); });
  ASSERT_TRUE(tracker.Start().ok());

  test::ContainerSpec spec = Pod("trk-life", "llama-0");
  spec.devices = {dev_dir_ + "/dri/card0", dev_dir_ + "/dri/renderD128"};
  ASSERT_TRUE(test::g_containerd->RunDetached(spec).ok());

  auto started = rec.Wait("trk-life", "start");
  ASSERT_TRUE(started.has_value()) << "no start event";
  const ContainerRecord& r = started->container;
  EXPECT_EQ(r.node, "node-under-test");
  EXPECT_EQ(r.runtime_namespace, "k8s.io");
  EXPECT_EQ(r.pod_name, "llama-0");
  EXPECT_EQ(r.pod_namespace, "ml-team");
  EXPECT_EQ(r.pod_uid, "uid-llama-0");
  EXPECT_EQ(r.container_name, "trainer");
  EXPECT_EQ(r.state, ContainerState::kRunning);
  EXPECT_GT(r.pid, 0);
  EXPECT_FALSE(r.privileged);
  ASSERT_TRUE(r.started_at.has_value());
  ASSERT_EQ(r.devices.size(), 1u) << "card0 and renderD128 are one GPU";
  EXPECT_EQ(r.devices[0].kind, DeviceKind::kGpu);
  EXPECT_EQ(r.devices[0].bdf, "0000:0c:00.0");
  EXPECT_EQ(r.devices[0].device_key, inventory_.gpus[0].serial);
  EXPECT_EQ(r.devices[0].source, kDeviceSourceOciSpec);
  EXPECT_TRUE(rec.Wait("trk-life", "create").has_value());

  ASSERT_TRUE(test::g_containerd->KillTask("trk-life", SIGKILL).ok());
  auto exited = rec.Wait("trk-life", "exit");
  ASSERT_TRUE(exited.has_value()) << "no exit event";
  EXPECT_EQ(exited->container.state, ContainerState::kExited);
  ASSERT_TRUE(exited->container.exit_code.has_value());
  EXPECT_EQ(*exited->container.exit_code, 128 + SIGKILL);
  EXPECT_TRUE(exited->container.finished_at.has_value());

  ASSERT_TRUE(test::g_containerd->DeleteTask("trk-life").ok());
  ASSERT_TRUE(test::g_containerd->DeleteContainer("trk-life").ok());
  auto deleted = rec.Wait("trk-life", "delete");
  ASSERT_TRUE(deleted.has_value());
  EXPECT_EQ(deleted->container.state, ContainerState::kDeleted);
  for (const ContainerRecord& c : tracker.Containers()) {
    EXPECT_NE(c.container_id, "trk-life") << "deleted containers are dropped";
  }
  EXPECT_EQ(rec.Types("trk-life"),
            (std::vector<std::string>{"create", "task-create", "start", "exit",
                                      "task-delete", "delete"}));
}

TEST_F(TrackerTest, MarksPrivilegedContainersWithoutOwningEveryDevice) {
  test::Recorder rec;
  ContainerTracker tracker(Options());
  tracker.SetInventory(inventory_);
  tracker.SetListener([&](const ContainerChange& c) { rec.Add(c); });
  ASSERT_TRUE(tracker.Start().ok());
  test::ContainerSpec spec = Pod("trk-priv", "debug-0");
  spec.privileged = true;
  spec.devices = {dev_dir_ + "/dri/renderD129"};
  ASSERT_TRUE(test::g_containerd->RunDetached(spec).ok());
  auto started = rec.Wait("trk-priv", "start");
  ASSERT_TRUE(started.has_value());
  EXPECT_TRUE(started->container.privileged);
  EXPECT_TRUE(started->container.devices.empty())
      << "seeing every device proves no ownership";
  ASSERT_TRUE(test::g_containerd->KillTask("trk-priv", SIGKILL).ok());
  ASSERT_TRUE(test::g_containerd->DeleteTask("trk-priv").ok());
  ASSERT_TRUE(test::g_containerd->DeleteContainer("trk-priv").ok());
  EXPECT_TRUE(rec.Wait("trk-priv", "delete").has_value());
}

TEST_F(TrackerTest, ReportsAnOomKill) {
  test::Recorder rec;
  ContainerTracker tracker(Options());
  tracker.SetListener([&](const ContainerChange& c) { rec.Add(c); });
  ASSERT_TRUE(tracker.Start().ok());
  test::ContainerSpec spec = Pod("trk-oom", "oom-0");
  spec.memory_limit_bytes = 16 << 20;
  spec.args = {"sh", "-c", "head -c 256m /dev/zero | tail"};
  ASSERT_TRUE(test::g_containerd->RunDetached(spec).ok());
  auto oom = rec.Wait("trk-oom", "oom", seconds(20));
  ASSERT_TRUE(oom.has_value()) << "no OOM event";
  auto exited = rec.Wait("trk-oom", "exit");
  ASSERT_TRUE(exited.has_value());
  EXPECT_NE(exited->container.exit_code.value_or(0), 0);
  ASSERT_TRUE(test::g_containerd->DeleteTask("trk-oom").ok());
  ASSERT_TRUE(test::g_containerd->DeleteContainer("trk-oom").ok());
}

TEST_F(TrackerTest, ResyncsAfterContainerdRestartsAndCatchesWhatItMissed) {
  test::Recorder rec;
  ContainerTracker tracker(Options());
  tracker.SetListener([&](const ContainerChange& c) { rec.Add(c); });
  std::vector<std::vector<ContainerRecord>> resyncs;
  std::mutex resync_mu;
  tracker.SetResyncListener([&](const std::vector<ContainerRecord>& all) {
    std::lock_guard lock(resync_mu);
    resyncs.push_back(all);
  });
  ASSERT_TRUE(test::g_containerd->RunDetached(Pod("trk-keep", "keep-0")).ok());
  ASSERT_TRUE(test::g_containerd->RunDetached(Pod("trk-dies", "dies-0")).ok());
  ASSERT_TRUE(tracker.Start().ok());
  auto running = rec.Wait("trk-dies", "start");
  ASSERT_TRUE(running.has_value())
      << "containers running before Start; seen: "
      << ::testing::PrintToString(rec.Types("trk-dies"));
  const int64_t pid = running->container.pid;
  ASSERT_GT(pid, 0);

  // containerd dies; meanwhile a container's process is killed.
  ASSERT_TRUE(test::g_containerd->Kill(SIGKILL).ok());
  ASSERT_EQ(::kill(static_cast<pid_t>(pid), SIGKILL), 0);
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_FALSE(tracker.Connected());
  ASSERT_TRUE(test::g_containerd->StartAgain().ok());

  auto exited = rec.Wait("trk-dies", "exit", seconds(20));
  ASSERT_TRUE(exited.has_value()) << "the exit missed while containerd was "
                                     "down must come from the relist";
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
    EXPECT_TRUE(last.count("trk-keep") && last.count("trk-dies"))
        << "the resync after the reconnect is the full set";
  }
  // Events flow again on the new subscription.
  ASSERT_TRUE(
      test::g_containerd->RunDetached(Pod("trk-after", "after-0")).ok());
  EXPECT_TRUE(rec.Wait("trk-after", "start").has_value());

  std::set<std::string> ids;
  for (const ContainerRecord& c : tracker.Containers())
    ids.insert(c.container_id);
  EXPECT_TRUE(ids.count("trk-keep") && ids.count("trk-dies") &&
              ids.count("trk-after"));
  for (const char* id : {"trk-keep", "trk-dies", "trk-after"}) {
    (void)test::g_containerd->KillTask(id, SIGKILL);
    EXPECT_TRUE(test::g_containerd->DeleteTask(id).ok()) << id;
    EXPECT_TRUE(test::g_containerd->DeleteContainer(id).ok()) << id;
  }
}

TEST_F(TrackerTest, ListOnceSeesWhatCtrSees) {
  test::ContainerSpec spec = Pod("trk-list", "list-0");
  spec.create_only = true;
  spec.devices = {dev_dir_ + "/dri/renderD128"};
  ASSERT_TRUE(test::g_containerd->RunDetached(spec).ok());
  auto list = ContainerTracker::ListOnce(Options(), inventory_);
  ASSERT_TRUE(list.ok()) << list.status();
  const ContainerRecord* found = nullptr;
  for (const auto& c : *list) {
    if (c.container_id == "trk-list") found = &c;
  }
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->state, ContainerState::kCreated);
  EXPECT_EQ(found->pod_name, "list-0");
  ASSERT_EQ(found->devices.size(), 1u);
  EXPECT_EQ(found->devices[0].bdf, "0000:0c:00.0");
  ASSERT_TRUE(test::g_containerd->DeleteContainer("trk-list").ok());
}

TEST(TrackerErrorsTest, NamesAMissingSocket) {
  ContainerTrackerOptions o;
  o.containerd_socket = "/nonexistent/containerd.sock";
  o.pod_resources_socket = "";
  auto list = ContainerTracker::ListOnce(o, {});
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), StatusCode::kNotFound);
  EXPECT_NE(list.status().message().find("/nonexistent/containerd.sock"),
            std::string::npos);
}

}  // namespace
}  // namespace lens

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new lens::test::ContainerdEnv);
  return RUN_ALL_TESTS();
}
