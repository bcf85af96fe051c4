// The ownership index built from a store as the controller, the container
// stream and lens-jobs write it: pods by name over time, GPUs by every
// identity, privileged containers and old history left out.
#include "telemetry/ownership_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace lens::telemetry {
namespace {

constexpr int64_t kT0 = 1795624473000;  // ms

Timestamp At(int64_t ms) { return Timestamp(std::chrono::milliseconds(ms)); }

class OwnershipStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "ownership-" + std::to_string(::getpid()) +
            ".db";
    std::filesystem::remove(path_);
    auto store = Store::Open("sqlite://" + path_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove(path_);
  }
  PodRecord Pod(std::string uid, std::string name, std::string owner,
                int64_t start, std::optional<int64_t> end) {
    PodRecord p;
    p.uid = uid;
    p.name = name;
    p.namespace_name = "ml";
    p.node = "node-a";
    p.owner_uid = owner;
    p.phase = end ? "Succeeded" : "Running";
    p.running = !end;
    p.gpu_allocated = 1;
    p.created_at = At(start - 5000);
    p.started_at = At(start);
    if (end) p.ended_at = At(*end);
    p.updated_at = At(end.value_or(start));
    return p;
  }
  ContainerRecord Container(std::string id, std::string pod, int64_t start,
                            std::optional<int64_t> end, std::string serial,
                            bool privileged = false) {
    ContainerRecord c;
    c.container_id = id;
    c.node = "node-a";
    c.pod_uid = pod;
    c.state = end ? ContainerState::kExited : ContainerState::kRunning;
    c.privileged = privileged;
    c.created_at = At(start - 1000);
    c.started_at = At(start);
    if (end) c.finished_at = At(*end);
    c.updated_at = At(end.value_or(start));
    c.devices.push_back({DeviceKind::kGpu, serial, "", "pod-resources"});
    return c;
  }
  std::string path_;
  std::unique_ptr<Store> store_;
};

TEST_F(OwnershipStoreTest, BuildsPodsAndGpusOverTimeFromTheStore) {
  NodeRecord node;
  node.name = "node-a";
  node.updated_at = At(kT0);
  ASSERT_TRUE(store_->nodes().UpsertNode(node).ok());
  GpuDeviceRecord gpu;
  gpu.gpu_index = 2;
  gpu.serial = "692353001198";
  gpu.bdf = "0000:0c:00.0";
  gpu.uuid = "GPU-amd-2";
  ASSERT_TRUE(store_->nodes()
                  .SyncGpuDevices("node-a", std::span(&gpu, 1), At(kT0))
                  .ok());
  WorkloadRecord pretrain;
  pretrain.uid = "w-pretrain";
  pretrain.kind = "PyTorchJob";
  pretrain.name = "pretrain";
  pretrain.namespace_name = "ml";
  pretrain.created_at = pretrain.updated_at = At(kT0);
  pretrain.ended_at = At(kT0 + 60000);
  WorkloadRecord finetune = pretrain;
  finetune.uid = "w-finetune";
  finetune.name = "finetune";
  finetune.ended_at.reset();
  ASSERT_TRUE(
      store_->pods().UpsertWorkloads(std::vector{pretrain, finetune}).ok());
  // The same pod name, first for pretrain (ended), then for finetune; a
  // bare pod; and one that ended long before the window.
  const PodRecord pods[] = {
      Pod("p-1", "worker-0", "w-pretrain", kT0, kT0 + 60000),
      Pod("p-2", "worker-0", "w-finetune", kT0 + 70000, std::nullopt),
      Pod("p-bare", "notebook", "", kT0, std::nullopt),
      Pod("p-old", "ancient", "w-pretrain", kT0 - 9000000, kT0 - 8000000)};
  ASSERT_TRUE(store_->pods().UpsertPods(pods).ok());
  // The GPU passed from p-1's container to p-2's; a privileged debug
  // container of the notebook sees it too.
  const ContainerRecord containers[] = {
      Container("c-1", "p-1", kT0 + 1000, kT0 + 59000, "692353001198"),
      Container("c-2", "p-2", kT0 + 71000, std::nullopt, "692353001198"),
      Container("c-debug", "p-bare", kT0, std::nullopt, "692353001198", true)};
  ASSERT_TRUE(store_->containers().UpsertContainers(containers).ok());

  auto index =
      BuildOwnershipIndex(*store_, At(kT0 + 100000), std::chrono::hours(1));
  ASSERT_TRUE(index.ok()) << index.status();
  const OwnershipIndex& ix = **index;
  const Owner* o = ix.PodAt("ml", "worker-0", kT0 + 30000);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->workload_name, "pretrain");
  EXPECT_EQ(o->pod_uid, "p-1");
  o = ix.PodAt("ml", "worker-0", kT0 + 80000);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->workload_uid, "w-finetune");
  EXPECT_EQ(ix.PodAt("ml", "worker-0", kT0 + 65000), nullptr);  // between
  o = ix.PodAt("ml", "notebook", kT0 + 1);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->workload_kind, "Pod");
  EXPECT_EQ(o->workload_name, "notebook");
  EXPECT_EQ(ix.PodAt("ml", "ancient", kT0 - 8500000), nullptr);  // too old
  // The GPU, under each of its identities.
  for (const char* id :
       {"692353001198", "0000:0c:00.0", "GPU-amd-2", "index:2"}) {
    o = ix.DeviceAt("node-a", id, kT0 + 2000);
    ASSERT_NE(o, nullptr) << id;
    EXPECT_EQ(o->workload_name, "pretrain") << id;
    o = ix.DeviceAt("node-a", id, kT0 + 72000);
    ASSERT_NE(o, nullptr) << id;
    EXPECT_EQ(o->workload_name, "finetune") << id;
  }
  // Nobody held it between the two (the privileged container never does).
  EXPECT_EQ(ix.DeviceAt("node-a", "692353001198", kT0 + 65000), nullptr);
  EXPECT_EQ(ix.DeviceAt("node-b", "692353001198", kT0 + 2000), nullptr);
}

// After its first load, the feed reads only what was written since: a new
// pod and its container appear, an ended one closes, and the rows read are
// those changes, not the whole table again.
TEST_F(OwnershipStoreTest, FeedFollowsTheStoresChanges) {
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  std::vector<PodRecord> many;
  for (int i = 0; i < 200; ++i) {
    many.push_back(
        Pod("p-" + std::to_string(i), "w-" + std::to_string(i), "", now, {}));
  }
  ASSERT_TRUE(store_->pods().UpsertPods(many).ok());
  // Refreshes at the real time: the change feed is stamped with it.
  auto real_now = [] {
    return std::chrono::time_point_cast<std::chrono::microseconds>(
        std::chrono::system_clock::now());
  };
  OwnershipFeed feed(store_.get(), std::chrono::hours(1),
                     std::chrono::milliseconds(0));
  ASSERT_TRUE(feed.Refresh(real_now()).ok());
  const uint64_t loaded = feed.stats().rows_read;
  EXPECT_GE(loaded, 200u);
  EXPECT_EQ(feed.Current()->pods(), 200u);
  const std::shared_ptr<const OwnershipIndex> before = feed.Current();

  // Nothing changed: nothing read, the same rows in the index.
  ASSERT_TRUE(feed.Refresh(real_now()).ok());
  EXPECT_LE(feed.stats().rows_read - loaded, 0u);

  // A new pod with a GPU, and pod 7 ended.
  const PodRecord changed[] = {Pod("p-new", "late", "", now + 2000, {}),
                               Pod("p-7", "w-7", "", now, now + 2500)};
  ASSERT_TRUE(store_->pods().UpsertPods(changed).ok());
  const ContainerRecord c =
      Container("c-new", "p-new", now + 2000, {}, "692353001198");
  ASSERT_TRUE(store_->containers().UpsertContainers(std::span(&c, 1)).ok());
  ASSERT_TRUE(feed.Refresh(real_now()).ok());
  EXPECT_LE(feed.stats().rows_read - loaded, 3u) << "read more than changed";
  const std::shared_ptr<const OwnershipIndex> after = feed.Current();
  EXPECT_NE(before.get(), after.get()) << "a new snapshot is published";
  EXPECT_EQ(before->PodAt("ml", "late", now + 2500), nullptr)
      << "a published snapshot never changes";
  const Owner* o = after->PodAt("ml", "late", now + 2500);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->pod_uid, "p-new");
  o = after->DeviceAt("node-a", "692353001198", now + 2500);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->pod_uid, "p-new");
  EXPECT_NE(after->PodAt("ml", "w-7", now + 2400), nullptr);
  EXPECT_EQ(after->PodAt("ml", "w-7", now + 2600), nullptr) << "ended";
}

}  // namespace
}  // namespace lens::telemetry
