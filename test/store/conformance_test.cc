// The store conformance suite: every test runs unchanged on SQLite and on a
// real PostgreSQL server (ctest: store.conformance.sqlite / .postgres).
#include <gtest/gtest.h>

#include <thread>

#include "lens/store.h"
#include "store/open.h"
#include "store_test_env.h"

namespace lens::test {
namespace {

constexpr int64_t kT0 = 1700000000123456;  // microseconds, not round

class StoreConformance : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    db_ = std::make_unique<TestDatabase>(GetParam());
    ASSERT_FALSE(db_->url().empty());
    auto store = Store::Open(db_->url());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  NodeRecord Node(std::string name, int64_t at = kT0) {
    NodeRecord n;
    n.name = std::move(name);
    n.gpu_vendor = "amd";
    n.gpu_model = "MI300X";
    n.gpu_count = 8;
    n.labels = {{"zone", "a"}};
    n.updated_at = At(at);
    return n;
  }

  std::unique_ptr<TestDatabase> db_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreConformance, MigratesOnOpenAndReportsStatus) {
  auto status = store_->GetSchemaStatus();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->current_version, status->latest_version);
  EXPECT_GE(status->latest_version, 1);
  ASSERT_FALSE(status->migrations.empty());
  EXPECT_TRUE(status->migrations[0].applied);
  EXPECT_TRUE(status->migrations[0].applied_at.has_value());
  // Opening again applies nothing and fails nothing.
  auto again = Store::Open(db_->url());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->GetSchemaStatus()->current_version,
            status->current_version);
}

TEST_P(StoreConformance, ConcurrentOpenersMigrateOnce) {
  TestDatabase fresh(GetParam());
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] {
      auto s = Store::Open(fresh.url());
      if (s.ok()) {
        ++ok;
      } else {
        ADD_FAILURE() << s.status();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 6);
  auto db = store::OpenDatabase(fresh.url(), {});
  ASSERT_TRUE(db.ok());
  store::Rows rows;
  ASSERT_TRUE((*db)
                  ->Read([&](store::Conn& c) {
                    return c.Execute(
                        "SELECT version, count(*) FROM lens_schema_migrations "
                        "GROUP BY version",
                        {}, &rows);
                  })
                  .ok());
  ASSERT_GE(rows.size(), 1u);
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows.Int(i, 1), 1);
}

TEST_P(StoreConformance, SchemaNewerThanBuildIsRefused) {
  auto db = store::OpenDatabase(db_->url(), {});
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)
                  ->Write([](store::Conn& c) {
                    return c.Execute(
                        "INSERT INTO lens_schema_migrations (version, name, "
                        "applied_at_us) VALUES (9999, 'future', 1)",
                        {});
                  })
                  .ok());
  auto reopened = Store::Open(db_->url());
  ASSERT_FALSE(reopened.ok());
  EXPECT_EQ(reopened.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(reopened.status().message().find("9999"), std::string::npos);
}

TEST_P(StoreConformance, NodeUpsertIsIdempotentAndKeepsCreatedAt) {
  ASSERT_TRUE(store_->nodes().UpsertNode(Node("n1", kT0)).ok());
  NodeRecord later = Node("n1", kT0 + 5000000);
  later.status = "Ready";
  later.created_at = At(kT0 + 5000000);  // ignored on update
  ASSERT_TRUE(store_->nodes().UpsertNode(later).ok());
  auto got = store_->nodes().GetNode("n1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->status, "Ready");
  EXPECT_EQ(got->created_at, At(kT0));  // microseconds preserved
  EXPECT_EQ(got->updated_at, At(kT0 + 5000000));
  EXPECT_EQ(got->gpu_count, 8);
  auto page = store_->nodes().ListNodes({});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 1);
  EXPECT_EQ(store_->nodes().GetNode("nope").status().code(),
            StatusCode::kNotFound);
}

TEST_P(StoreConformance, ListNodesFiltersSortsAndPaginates) {
  for (int i = 0; i < 7; ++i) {
    NodeRecord n = Node("node-" + std::to_string(i));
    n.gpu_vendor = i % 2 ? "nvidia" : "amd";
    n.gpu_count = i;
    n.gpu_allocated = 7 - i;
    ASSERT_TRUE(store_->nodes().UpsertNode(n).ok());
  }
  NodeQuery by_allocated;
  by_allocated.sort = {"gpu_allocated", true};
  auto allocated = store_->nodes().ListNodes(by_allocated);
  ASSERT_TRUE(allocated.ok()) << allocated.status();
  ASSERT_EQ(allocated->items.size(), 7u);
  EXPECT_EQ(allocated->items[0].name, "node-0");
  EXPECT_EQ(allocated->items[6].gpu_allocated, 1);
  NodeQuery q;
  q.gpu_vendor = "amd";
  q.sort = {"gpu_count", true};
  q.page = {1, 3};
  auto page = store_->nodes().ListNodes(q);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->total, 4);  // 0, 2, 4, 6
  ASSERT_EQ(page->items.size(), 3u);
  EXPECT_EQ(page->items[0].gpu_count, 6);
  EXPECT_EQ(page->items[2].gpu_count, 2);
  q.page = {2, 3};
  page = store_->nodes().ListNodes(q);
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].gpu_count, 0);
  NodeQuery prefix;
  prefix.name_prefix = "node-1";
  EXPECT_EQ(store_->nodes().ListNodes(prefix)->total, 1);
}

TEST_P(StoreConformance, UnknownSortKeyAndBadPagesAreClearErrors) {
  NodeQuery q;
  q.sort.key = "name; DROP TABLE nodes";
  auto page = store_->nodes().ListNodes(q);
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(page.status().message().find("allowed: name, updated_at"),
            std::string::npos)
      << page.status();
  q = {};
  q.page.page_size = 1001;
  EXPECT_EQ(store_->nodes().ListNodes(q).status().code(),
            StatusCode::kInvalidArgument);
  q.page = {0, 10};
  EXPECT_EQ(store_->nodes().ListNodes(q).status().code(),
            StatusCode::kInvalidArgument);
  // The table is still there.
  EXPECT_TRUE(store_->nodes().ListNodes({}).ok());
}

TEST_P(StoreConformance, GpuSyncWritesChangeLog) {
  ASSERT_TRUE(store_->nodes().UpsertNode(Node("n1")).ok());
  std::vector<GpuDeviceRecord> gpus(3);
  for (int i = 0; i < 3; ++i) {
    gpus[i].node = "n1";
    gpus[i].gpu_index = i;
    gpus[i].serial = "SER" + std::to_string(i);
    gpus[i].bdf = "0000:0" + std::to_string(i) + ":00.0";
    gpus[i].vram_bytes = int64_t{192} << 30;
  }
  auto r = store_->nodes().SyncGpuDevices("n1", gpus, At(kT0));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->created, 3);
  // Same inventory again: nothing changes, nothing logged.
  r = store_->nodes().SyncGpuDevices("n1", gpus, At(kT0 + 1));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->unchanged, 3);
  // GPU 1 swapped for another board, GPU 2 gone.
  gpus[1].serial = "SER9";
  gpus.pop_back();
  r = store_->nodes().SyncGpuDevices("n1", gpus, At(kT0 + 2));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->replaced, 1);
  EXPECT_EQ(r->deleted, 1);
  auto listed = store_->nodes().ListGpuDevices("n1");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[1].serial, "SER9");
  EXPECT_EQ((*listed)[1].vram_bytes, int64_t{192} << 30);
  auto changes = store_->nodes().ListDeviceChanges("n1", {}, {});
  ASSERT_TRUE(changes.ok());
  EXPECT_EQ(changes->total, 5);
  const DeviceChangeRecord& newest = changes->items[0];
  EXPECT_EQ(newest.at, At(kT0 + 2));
  bool saw_replace = false;
  for (const auto& c : changes->items) {
    if (c.change == DeviceChange::kReplace) {
      saw_replace = true;
      EXPECT_EQ(c.device_key, "1");
      EXPECT_EQ(c.old_serial, "SER1");
      EXPECT_EQ(c.new_serial, "SER9");
    }
  }
  EXPECT_TRUE(saw_replace);
  EXPECT_EQ(store_->nodes().GetGpuDevice("n1", 2).status().code(),
            StatusCode::kNotFound);
}

TEST_P(StoreConformance, DeviceSyncNeedsTheNode) {
  GpuDeviceRecord g;
  g.gpu_index = 0;
  auto r = store_->nodes().SyncGpuDevices("ghost", {&g, 1}, At(kT0));
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
}

TEST_P(StoreConformance, RdmaSyncReplacesOnGuidChange) {
  ASSERT_TRUE(store_->nodes().UpsertNode(Node("n1")).ok());
  RdmaDeviceRecord d;
  d.name = "mlx5_0";
  d.node_guid = "b859:9f03:00d4:a1b2";
  ASSERT_TRUE(store_->nodes().SyncRdmaDevices("n1", {&d, 1}, At(kT0)).ok());
  d.node_guid = "b859:9f03:00d4:ffff";
  auto r = store_->nodes().SyncRdmaDevices("n1", {&d, 1}, At(kT0 + 1));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->replaced, 1);
  EXPECT_EQ(store_->nodes().ListRdmaDevices("n1")->at(0).node_guid,
            "b859:9f03:00d4:ffff");
}

PodRecord Pod(std::string uid, std::string ns, int64_t created) {
  PodRecord p;
  p.uid = std::move(uid);
  p.name = "pod-" + p.uid;
  p.namespace_name = std::move(ns);
  p.node = "n1";
  p.phase = "Running";
  p.running = true;
  p.gpu_allocated = 8;
  p.created_at = At(created);
  p.updated_at = At(created);
  return p;
}

TEST_P(StoreConformance, PodsUpsertFilterAndEvents) {
  std::vector<PodRecord> pods;
  for (int i = 0; i < 5; ++i) {
    pods.push_back(Pod("u" + std::to_string(i), i < 3 ? "train" : "infer",
                       kT0 + i * 1000000));
  }
  pods[4].running = false;
  ASSERT_TRUE(store_->pods().UpsertPods(pods).ok());
  ASSERT_TRUE(store_->pods().UpsertPods(pods).ok());  // idempotent
  PodQuery q;
  q.namespace_name = "train";
  auto page = store_->pods().ListPods(q);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->total, 3);
  EXPECT_EQ(page->items[0].uid, "u2");  // newest first by default
  q = {};
  q.running = false;
  EXPECT_EQ(store_->pods().ListPods(q)->total, 1);
  q = {};
  q.created.from = At(kT0 + 1000000);
  q.created.to = At(kT0 + 3000000);
  EXPECT_EQ(store_->pods().ListPods(q)->total, 2);

  PodEventRecord e{"u0", "Running", "Running", 0, At(kT0)};
  std::vector<PodEventRecord> events = {e, e};
  ASSERT_TRUE(store_->pods().AddPodEvents(events).ok());
  ASSERT_TRUE(store_->pods().AddPodEvents(events).ok());
  EXPECT_EQ(store_->pods().ListPodEvents("u0")->size(), 1u);
  e.at = {};
  EXPECT_EQ(store_->pods().AddPodEvents({&e, 1}).code(),
            StatusCode::kInvalidArgument);
}

TEST_P(StoreConformance, SnapshotWrittenOnlyWhenChanged) {
  PodSnapshotRecord s{"u1", "100", R"({"phase":"Pending"})", At(kT0)};
  EXPECT_TRUE(*store_->pods().PutPodSnapshot(s));
  s.resource_version = "101";
  s.at = At(kT0 + 1);
  EXPECT_FALSE(*store_->pods().PutPodSnapshot(s));  // same content
  s.resource_version = "102";
  s.snapshot_json = R"({"phase":"Running"})";
  s.at = At(kT0 + 2);
  EXPECT_TRUE(*store_->pods().PutPodSnapshot(s));
  auto all = store_->pods().ListPodSnapshots("u1");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[1].resource_version, "102");
}

TEST_P(StoreConformance, WorkloadsReferencesAndResources) {
  WorkloadRecord top;
  top.uid = "w-top";
  top.kind = "PyTorchJob";
  top.api_version = "kubeflow.org/v1";
  top.name = "llama";
  top.namespace_name = "train";
  top.gpu_request = 16;
  top.updated_at = At(kT0);
  WorkloadRecord child = top;
  child.uid = "w-child";
  child.kind = "Job";
  child.parent_uid = "w-top";
  child.ended_at = At(kT0 + 7);
  ASSERT_TRUE(store_->pods()
                  .UpsertWorkloads(std::vector<WorkloadRecord>{top, child})
                  .ok());
  WorkloadQuery q;
  q.parent_uid = "";
  auto tops = store_->pods().ListWorkloads(q);
  ASSERT_TRUE(tops.ok()) << tops.status();
  ASSERT_EQ(tops->total, 1);
  EXPECT_EQ(tops->items[0].uid, "w-top");
  EXPECT_FALSE(tops->items[0].ended_at.has_value());
  EXPECT_EQ(store_->pods().GetWorkload("w-child")->ended_at, At(kT0 + 7));

  ASSERT_TRUE(store_->pods()
                  .UpsertPods(std::vector<PodRecord>{
                      Pod("p1", "train", kT0), Pod("p2", "train", kT0 + 1)})
                  .ok());
  std::vector<std::pair<std::string, std::string>> links = {
      {"w-top", "p1"}, {"w-top", "p2"}, {"w-top", "p1"}};
  ASSERT_TRUE(store_->pods().LinkPods(links).ok());
  ASSERT_TRUE(store_->pods().LinkPods(links).ok());
  auto pods = store_->pods().ListWorkloadPods("w-top");
  ASSERT_TRUE(pods.ok());
  ASSERT_EQ(pods->size(), 2u);
  EXPECT_EQ((*pods)[0].uid, "p1");

  PodResourcesRecord r{"p1", "amd", "MI300X",         8,
                       8,    96000, int64_t{1} << 40, At(kT0)};
  ASSERT_TRUE(store_->pods().UpsertPodResources({&r, 1}).ok());
  EXPECT_EQ(store_->pods().GetPodResources("p1")->memory_bytes,
            int64_t{1} << 40);
}

ContainerRecord Container(std::string id, std::vector<std::string> gpus) {
  ContainerRecord c;
  c.container_id = std::move(id);
  c.node = "n1";
  c.runtime_namespace = "k8s.io";
  c.pod_uid = "p1";
  c.pod_name = "trainer-0";
  c.pod_namespace = "train";
  c.container_name = "main";
  c.state = ContainerState::kRunning;
  c.pid = 4242;
  c.updated_at = At(kT0);
  c.started_at = At(kT0);
  for (auto& g : gpus)
    c.devices.push_back({DeviceKind::kGpu, g, "", "oci-spec"});
  return c;
}

TEST_P(StoreConformance, ContainerDevicesAreReplacedAndHoldersFound) {
  ASSERT_TRUE(
      store_->containers()
          .UpsertContainers(std::vector<ContainerRecord>{
              Container("c1", {"SER0", "SER1"}), Container("c2", {"SER2"})})
          .ok());
  auto c1 = store_->containers().GetContainer("c1");
  ASSERT_TRUE(c1.ok()) << c1.status();
  EXPECT_EQ(c1->devices.size(), 2u);
  EXPECT_EQ(c1->started_at, At(kT0));
  EXPECT_FALSE(c1->exit_code.has_value());
  // New full state: one GPU only, exited with 137.
  ContainerRecord next = Container("c1", {"SER1"});
  next.state = ContainerState::kExited;
  next.exit_code = 137;
  ASSERT_TRUE(store_->containers().UpsertContainers({&next, 1}).ok());
  c1 = store_->containers().GetContainer("c1");
  ASSERT_EQ(c1->devices.size(), 1u);
  EXPECT_EQ(c1->devices[0].device_key, "SER1");
  EXPECT_EQ(c1->exit_code, 137);
  EXPECT_EQ(
      store_->containers().FindDeviceHolders(DeviceKind::kGpu, "SER1")->size(),
      1u);
  EXPECT_EQ(
      store_->containers().FindDeviceHolders(DeviceKind::kGpu, "SER0")->size(),
      0u);

  const std::string live[] = {"c1"};
  auto marked =
      store_->containers().MarkMissingDeleted("n1", live, At(kT0 + 9));
  ASSERT_TRUE(marked.ok());
  EXPECT_EQ(*marked, 1);
  EXPECT_EQ(store_->containers().GetContainer("c2")->state,
            ContainerState::kDeleted);
  EXPECT_EQ(
      store_->containers().FindDeviceHolders(DeviceKind::kGpu, "SER2")->size(),
      0u);
  ContainerQuery q;
  q.state = ContainerState::kDeleted;
  EXPECT_EQ(store_->containers().ListContainers(q)->total, 1);
}

TEST_P(StoreConformance, ContainerStartTimeSurvivesAWriterThatDoesNotKnowIt) {
  ContainerRecord c = Container("c9", {});
  ASSERT_TRUE(store_->containers().UpsertContainers({&c, 1}).ok());
  // A writer that only listed the container (after a restart) sends no
  // start time: the stored one stays; a new one replaces it.
  c.started_at.reset();
  c.state = ContainerState::kExited;
  ASSERT_TRUE(store_->containers().UpsertContainers({&c, 1}).ok());
  auto got = store_->containers().GetContainer("c9");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->state, ContainerState::kExited);
  EXPECT_EQ(got->started_at, At(kT0));
  c.started_at = At(kT0 + 5);
  ASSERT_TRUE(store_->containers().UpsertContainers({&c, 1}).ok());
  EXPECT_EQ(store_->containers().GetContainer("c9")->started_at, At(kT0 + 5));
}

TEST_P(StoreConformance, ContainerEventsAreIdempotent) {
  std::vector<ContainerEventRecord> events;
  for (int i = 0; i < 10; ++i) {
    events.push_back(
        {"c1", "n1",
         i % 2 ? ContainerEventType::kStart : ContainerEventType::kCreate, i,
         R"({"pid":1})", At(kT0 + i)});
  }
  ASSERT_TRUE(store_->containers().AddContainerEvents(events).ok());
  ASSERT_TRUE(store_->containers().AddContainerEvents(events).ok());
  auto page = store_->containers().ListContainerEvents("c1", {}, {1, 4});
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->total, 10);
  ASSERT_EQ(page->items.size(), 4u);
  EXPECT_EQ(page->items[3].sequence, 3);
}

TEST_P(StoreConformance, LargeBatchesSpanSeveralStatementsAndLastWins) {
  std::vector<PodRecord> pods;
  for (int i = 0; i < 2500; ++i) {
    pods.push_back(Pod("u" + std::to_string(i), "ns", kT0 + i));
  }
  PodRecord dup = Pod("u7", "ns", kT0);
  dup.phase = "Failed";
  pods.push_back(dup);  // same key twice in one batch: the last wins
  ASSERT_TRUE(store_->pods().UpsertPods(pods).ok());
  EXPECT_EQ(store_->pods().ListPods({})->total, 2500);
  EXPECT_EQ(store_->pods().GetPod("u7")->phase, "Failed");
}

TEST_P(StoreConformance, StorageRefusesSecrets) {
  StorageRecord s{"pg-main", "postgresql", "ok",
                  R"({"host":"db","port":5432,"secretRef":"pg-cred"})",
                  At(kT0)};
  ASSERT_TRUE(store_->storage().UpsertStorage(s).ok());
  s.config_json = R"({"host":"db","auth":{"Password":"hunter2"}})";
  Status st = store_->storage().UpsertStorage(s);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message().find("hunter2"), std::string::npos);
  EXPECT_NE(st.message().find("auth.Password"), std::string::npos) << st;
  EXPECT_EQ(
      store_->storage().GetStorage("pg-main")->config_json.find("hunter2"),
      std::string::npos);
  EXPECT_EQ(store_->storage().ListStorage()->size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreConformance,
                         testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace lens::test
