// The change feed (the *WrittenSince reads), on both backends: every write
// path of gpu_pods, gpu_workloads, node_containers and gpu_devices shows up
// after a watermark and nothing before it does; pages never split one
// transaction's rows, and following the pages loses nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>

#include "lens/store.h"
#include "store_test_env.h"

namespace lens::test {
namespace {

constexpr int64_t kT0 = 1700000000123456;  // microseconds, not round
constexpr auto kUs = std::chrono::microseconds(1);

class ChangeFeedStore : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    db_ = std::make_unique<TestDatabase>(GetParam());
    ASSERT_FALSE(db_->url().empty());
    auto store = Store::Open(db_->url());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  // Stamps are the writer's clock in microseconds: make sure the next
  // transaction's is later than everything before.
  static void Tick() {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }

  static PodRecord Pod(std::string uid) {
    PodRecord p;
    p.uid = uid;
    p.name = uid;
    p.namespace_name = "ml";
    p.node = "node-a";
    p.phase = "Running";
    p.created_at = p.updated_at = At(kT0);
    return p;
  }

  static WorkloadRecord Workload(std::string uid) {
    WorkloadRecord w;
    w.uid = uid;
    w.kind = "PyTorchJob";
    w.name = uid;
    w.namespace_name = "ml";
    w.status = "Running";
    w.created_at = w.updated_at = At(kT0);
    return w;
  }

  static ContainerRecord Container(std::string id, int gpus) {
    ContainerRecord c;
    c.container_id = id;
    c.node = "node-a";
    c.pod_uid = "p-1";
    c.state = ContainerState::kRunning;
    c.created_at = c.updated_at = At(kT0);
    for (int i = 0; i < gpus; ++i) {
      c.devices.push_back({DeviceKind::kGpu, id + "-gpu" + std::to_string(i),
                           "", "pod-resources"});
    }
    return c;
  }

  template <typename T, typename Key>
  static std::vector<std::string> Keys(const Changes<T>& c, Key key) {
    std::vector<std::string> out;
    for (const T& item : c.items) out.push_back(key(item));
    return out;
  }

  static std::vector<std::string> Uids(const Changes<PodRecord>& c) {
    return Keys(c, [](const PodRecord& p) { return p.uid; });
  }

  std::unique_ptr<TestDatabase> db_;
  std::unique_ptr<Store> store_;
};

using Strings = std::vector<std::string>;

TEST_P(ChangeFeedStore, PodsWrittenSinceAWatermarkAndNothingBefore) {
  PodRepository& pods = store_->pods();
  auto empty = pods.ListPodsWrittenSince(Timestamp{});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->items.empty());
  EXPECT_EQ(empty->through, Timestamp{});

  ASSERT_TRUE(pods.UpsertPods(std::vector{Pod("p-2"), Pod("p-1")}).ok());
  auto first = pods.ListPodsWrittenSince(Timestamp{});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(Uids(*first), (Strings{"p-1", "p-2"}));  // one stamp, then by uid
  const Timestamp mark = first->through;
  EXPECT_GT(mark, At(kT0));  // the writer's clock, not the record's times
  EXPECT_LE(mark, std::chrono::time_point_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now()));

  Tick();
  PodRecord p3 = Pod("p-3");
  ASSERT_TRUE(pods.UpsertPods(std::span(&p3, 1)).ok());
  // Events, resources and links are other tables: not in the pods' feed.
  ASSERT_TRUE(pods.AddPodEvents(std::vector{PodEventRecord{
                                    "p-1", "Running", "Running", 0, At(kT0)}})
                  .ok());
  const std::pair<std::string, std::string> link[] = {{"w-1", "p-1"}};
  ASSERT_TRUE(pods.LinkPods(link).ok());
  auto after = pods.ListPodsWrittenSince(mark + kUs);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(Uids(*after), (Strings{"p-3"}));
  EXPECT_GT(after->through, mark);
  // From the watermark itself: its transaction's rows come again, first.
  EXPECT_EQ(Uids(*pods.ListPodsWrittenSince(mark)),
            (Strings{"p-1", "p-2", "p-3"}));
  // Nothing after the last write: `through` stays where it was asked.
  const Timestamp later = after->through + kUs;
  auto none = pods.ListPodsWrittenSince(later);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->items.empty());
  EXPECT_EQ(none->through, later);

  // A rewrite of an unchanged row is a write: it is reported again.
  Tick();
  ASSERT_TRUE(pods.UpsertPods(std::span(&p3, 1)).ok());
  auto again = pods.ListPodsWrittenSince(later);
  EXPECT_EQ(Uids(*again), (Strings{"p-3"}));
  EXPECT_EQ(pods.ListPodsWrittenSince(Timestamp{}, 0).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_P(ChangeFeedStore, WorkloadUpsertsAndStatusUpdatesAreFed) {
  PodRepository& pods = store_->pods();
  ASSERT_TRUE(
      pods.UpsertWorkloads(std::vector{Workload("w-1"), Workload("w-2")}).ok());
  auto first = pods.ListWorkloadsWrittenSince(Timestamp{});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->items.size(), 2u);
  const Timestamp mark = first->through;

  Tick();
  WorkloadRecord done = Workload("w-2");
  done.status = "Succeeded";
  done.ended_at = At(kT0 + 9);
  done.updated_at = At(kT0 + 10);
  ASSERT_TRUE(pods.UpdateWorkloadStatus(std::span(&done, 1)).ok());
  auto changed = pods.ListWorkloadsWrittenSince(mark + kUs);
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_EQ(changed->items.size(), 1u);
  EXPECT_EQ(changed->items[0].uid, "w-2");
  EXPECT_EQ(changed->items[0].status, "Succeeded");
  EXPECT_EQ(changed->items[0].ended_at, At(kT0 + 9));
  EXPECT_GT(changed->through, mark);

  // A failed update writes nothing, so it feeds nothing.
  Tick();
  WorkloadRecord ghost = Workload("nope");
  WorkloadRecord w1 = Workload("w-1");
  const WorkloadRecord batch[] = {w1, ghost};
  EXPECT_EQ(pods.UpdateWorkloadStatus(batch).code(), StatusCode::kNotFound);
  EXPECT_TRUE(
      pods.ListWorkloadsWrittenSince(changed->through + kUs)->items.empty());
}

TEST_P(ChangeFeedStore, ContainerUpsertsAndMarkMissingDeletedAreFed) {
  ContainerRepository& containers = store_->containers();
  ASSERT_TRUE(
      containers
          .UpsertContainers(std::vector{
              Container("c-1", 2), Container("c-2", 1), Container("c-3", 0)})
          .ok());
  auto first = containers.ListContainersWrittenSince(Timestamp{}, true);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->items.size(), 3u);
  EXPECT_EQ(first->items[0].container_id, "c-1");
  ASSERT_EQ(first->items[0].devices.size(), 2u);
  EXPECT_EQ(first->items[0].devices[1].device_key, "c-1-gpu1");
  EXPECT_EQ(first->items[1].devices.size(), 1u);
  EXPECT_TRUE(first->items[2].devices.empty());
  auto bare = containers.ListContainersWrittenSince(Timestamp{}, false);
  ASSERT_TRUE(bare.ok());
  EXPECT_TRUE(bare->items[0].devices.empty());
  Timestamp mark = first->through;

  // New devices of one container: that container, with its current set.
  Tick();
  ContainerRecord c1 = Container("c-1", 3);
  ASSERT_TRUE(containers.UpsertContainers(std::span(&c1, 1)).ok());
  auto changed = containers.ListContainersWrittenSince(mark + kUs, true);
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_EQ(changed->items.size(), 1u);
  EXPECT_EQ(changed->items[0].devices.size(), 3u);
  mark = changed->through;

  // A resync that no longer lists c-2 and c-3 marks them deleted.
  Tick();
  const std::string live[] = {"c-1"};
  auto marked = containers.MarkMissingDeleted("node-a", live, At(kT0 + 50));
  ASSERT_TRUE(marked.ok()) << marked.status();
  EXPECT_EQ(*marked, 2);
  auto deleted = containers.ListContainersWrittenSince(mark + kUs, true);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  ASSERT_EQ(deleted->items.size(), 2u);
  EXPECT_EQ(deleted->items[0].container_id, "c-2");
  EXPECT_EQ(deleted->items[0].state, ContainerState::kDeleted);
  EXPECT_EQ(deleted->items[0].finished_at, At(kT0 + 50));
  EXPECT_EQ(deleted->items[0].devices.size(), 1u);
  EXPECT_EQ(deleted->items[1].container_id, "c-3");
  EXPECT_GT(deleted->through, mark);
  // Marking again changes nothing and writes nothing.
  Tick();
  ASSERT_EQ(*containers.MarkMissingDeleted("node-a", live, At(kT0 + 60)), 0);
  EXPECT_TRUE(
      containers.ListContainersWrittenSince(deleted->through + kUs, false)
          ->items.empty());
}

TEST_P(ChangeFeedStore, DeviceSyncsFeedTheNodesWholeInventory) {
  NodeRepository& nodes = store_->nodes();
  for (const char* name : {"node-a", "node-b"}) {
    NodeRecord n;
    n.name = name;
    n.updated_at = At(kT0);
    ASSERT_TRUE(nodes.UpsertNode(n).ok());
  }
  auto gpus = [](std::string node, int count) {
    std::vector<GpuDeviceRecord> out;
    for (int i = 0; i < count; ++i) {
      GpuDeviceRecord g;
      g.gpu_index = i;
      g.serial = node + "-s" + std::to_string(i);
      out.push_back(g);
    }
    return out;
  };
  ASSERT_TRUE(nodes.SyncGpuDevices("node-a", gpus("node-a", 2), At(kT0)).ok());
  auto first = nodes.ListGpuDevicesWrittenSince(Timestamp{});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->items.size(), 2u);
  EXPECT_EQ(first->items[1].serial, "node-a-s1");
  Timestamp mark = first->through;

  // RDMA devices are another table: nothing for the GPU feed.
  Tick();
  RdmaDeviceRecord hca;
  hca.name = "mlx5_0";
  ASSERT_TRUE(
      nodes.SyncRdmaDevices("node-a", std::span(&hca, 1), At(kT0 + 1)).ok());
  EXPECT_TRUE(nodes.ListGpuDevicesWrittenSince(mark + kUs)->items.empty());

  // Several nodes in one transaction: every GPU of each, one stamp.
  Tick();
  std::vector<NodeInventory> inv = {{"node-a", gpus("node-a", 2), {}},
                                    {"node-b", gpus("node-b", 3), {}}};
  inv[0].gpus[0].serial = "swapped";
  ASSERT_TRUE(nodes.SyncNodeDevices(inv, At(kT0 + 2)).ok());
  auto synced = nodes.ListGpuDevicesWrittenSince(mark + kUs, 1);
  ASSERT_TRUE(synced.ok()) << synced.status();
  ASSERT_EQ(synced->items.size(), 5u);  // a page never splits a transaction
  EXPECT_EQ(synced->items[0].node, "node-a");
  EXPECT_EQ(synced->items[0].serial, "swapped");
  EXPECT_EQ(synced->items[4].node, "node-b");
  EXPECT_EQ(synced->items[4].gpu_index, 2);
}

// A reader that follows the feed page by page, as lens-telemetry does: from
// the watermark, reading on from each full page's `through`.
TEST_P(ChangeFeedStore, FollowingPagesLosesNothingAndEnds) {
  PodRepository& pods = store_->pods();
  std::vector<PodRecord> group;
  for (int i = 0; i < 5; ++i) group.push_back(Pod("g-" + std::to_string(i)));
  ASSERT_TRUE(pods.UpsertPods(group).ok());  // one transaction, one stamp
  for (int i = 0; i < 4; ++i) {
    Tick();
    PodRecord p = Pod("s-" + std::to_string(i));
    ASSERT_TRUE(pods.UpsertPods(std::span(&p, 1)).ok());
  }
  for (const size_t limit : {1, 2, 3, 100}) {
    std::set<std::string> seen;
    Timestamp since{};
    int pages = 0;
    for (;; ++pages) {
      ASSERT_LT(pages, 20) << "the feed did not move on (limit " << limit
                           << ")";
      auto page = pods.ListPodsWrittenSince(since, limit);
      ASSERT_TRUE(page.ok()) << page.status();
      for (const PodRecord& p : page->items) seen.insert(p.uid);
      if (page->items.size() < limit || page->through <= since) break;
      since = page->through;
    }
    EXPECT_EQ(seen.size(), 9u) << "limit " << limit;
  }
  // The first page at limit 1 holds the whole first transaction.
  auto first = pods.ListPodsWrittenSince(Timestamp{}, 1);
  EXPECT_EQ(first->items.size(), 5u);
  // Read on from `through` + 1 us instead: each row exactly once.
  std::vector<std::string> once;
  Timestamp since{};
  for (int pages = 0; pages < 20; ++pages) {
    auto page = pods.ListPodsWrittenSince(since, 2);
    ASSERT_TRUE(page.ok());
    for (const PodRecord& p : page->items) once.push_back(p.uid);
    if (page->items.size() < 2) break;
    since = page->through + kUs;
  }
  EXPECT_EQ(once.size(), 9u);
  EXPECT_EQ(std::set<std::string>(once.begin(), once.end()).size(), 9u);
}

INSTANTIATE_TEST_SUITE_P(Backends, ChangeFeedStore,
                         testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace lens::test
