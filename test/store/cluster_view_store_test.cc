// What lens-jobs writes beside the controller, on both backends: node
// columns owned per writer, the allocation history, workload status
// updates and the open-workload filter.
#include <gtest/gtest.h>

#include "lens/store.h"
#include "store_test_env.h"

namespace lens::test {
namespace {

constexpr int64_t kT0 = 1700000000123456;  // microseconds, not round

class ClusterViewStore : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    db_ = std::make_unique<TestDatabase>(GetParam());
    ASSERT_FALSE(db_->url().empty());
    auto store = Store::Open(db_->url());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  std::unique_ptr<TestDatabase> db_;
  std::unique_ptr<Store> store_;
};

TEST_P(ClusterViewStore, WritersOfANodeNeverOverwriteEachOther) {
  NodeRecord kube;
  kube.name = "node-a";
  kube.status = "Ready";
  kube.address = "10.0.0.11";
  kube.gpu_count = 8;
  kube.gpu_allocatable = 8;
  kube.kubelet_version = "v1.30.4";
  kube.cpu_model = "ignored: not the controller's";
  kube.labels = {{"zone", "a"}};
  kube.updated_at = At(kT0);
  ASSERT_TRUE(store_->nodes()
                  .UpsertNodes(std::span(&kube, 1), NodeColumns::kKubernetes)
                  .ok());
  NodeRecord agent;
  agent.name = "node-a";
  agent.cpu_model = "AMD EPYC 9654 96-Core Processor";
  agent.driver_version = "6.8.5";
  agent.gpu_allocated = 4;
  agent.gpu_utilization_ratio = 0.125;
  agent.agent_state = "ok";
  agent.agent_seen_at = At(kT0 + 5);
  agent.status = "ignored: not the agent's";
  agent.updated_at = At(kT0 + 10);
  ASSERT_TRUE(store_->nodes()
                  .UpsertNodes(std::span(&agent, 1), NodeColumns::kAgent)
                  .ok());
  // The controller writes again (the node changed): the agent's stay.
  kube.status = "NotReady";
  kube.updated_at = At(kT0 + 20);
  ASSERT_TRUE(store_->nodes()
                  .UpsertNodes(std::span(&kube, 1), NodeColumns::kKubernetes)
                  .ok());
  auto n = store_->nodes().GetNode("node-a");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->status, "NotReady");
  EXPECT_EQ(n->address, "10.0.0.11");
  EXPECT_EQ(n->kubelet_version, "v1.30.4");
  EXPECT_EQ(n->labels.at("zone"), "a");
  EXPECT_EQ(n->cpu_model, "AMD EPYC 9654 96-Core Processor");
  EXPECT_EQ(n->driver_version, "6.8.5");
  EXPECT_EQ(n->gpu_allocated, 4);
  EXPECT_EQ(n->gpu_utilization_ratio, 0.125);
  EXPECT_EQ(n->agent_state, "ok");
  EXPECT_EQ(n->agent_seen_at, At(kT0 + 5));
  EXPECT_EQ(n->created_at, At(kT0));
  EXPECT_EQ(n->updated_at, At(kT0 + 20));

  // A node only its agent knows (no cluster): the host facts too.
  NodeRecord host;
  host.name = "workstation";
  host.status = "Ready";
  host.gpu_count = 2;
  host.kernel_version = "6.1.0-18-amd64";
  host.kubelet_version = "ignored";
  host.agent_state = "ok";
  host.updated_at = At(kT0);
  ASSERT_TRUE(store_->nodes()
                  .UpsertNodes(std::span(&host, 1), NodeColumns::kAgentAndHost)
                  .ok());
  auto h = store_->nodes().GetNode("workstation");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->status, "Ready");
  EXPECT_EQ(h->gpu_count, 2);
  EXPECT_EQ(h->kernel_version, "6.1.0-18-amd64");
  EXPECT_EQ(h->kubelet_version, "");
  EXPECT_EQ(h->agent_state, "ok");
  EXPECT_FALSE(h->gpu_utilization_ratio.has_value());
}

TEST_P(ClusterViewStore, AllocationHistoryIsBoundedAndRangeable) {
  std::vector<GpuAllocationRecord> points;
  for (int i = 0; i < 10; ++i) {
    points.push_back({"", At(kT0 + i * 1000000), i, 16});
    points.push_back({"node-a", At(kT0 + i * 1000000), i % 8, 8});
  }
  ASSERT_TRUE(store_->nodes().AddGpuAllocation(points, At(kT0)).ok());
  auto all = store_->nodes().ListGpuAllocation("", {});
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 10u);
  EXPECT_EQ((*all)[0].at, At(kT0));  // oldest first
  EXPECT_EQ((*all)[9].gpus_allocated, 9);
  EXPECT_EQ((*all)[9].gpus_allocatable, 16);
  // The newest `limit` points, in time order.
  auto last3 = store_->nodes().ListGpuAllocation("", {}, 3);
  ASSERT_EQ(last3->size(), 3u);
  EXPECT_EQ((*last3)[0].gpus_allocated, 7);
  // A range, half-open.
  auto range = store_->nodes().ListGpuAllocation(
      "node-a", {At(kT0 + 2000000), At(kT0 + 4000000)});
  ASSERT_EQ(range->size(), 2u);
  EXPECT_EQ((*range)[0].gpus_allocated, 2);
  // Writing with a later cutoff drops what is older: the history is bounded.
  const GpuAllocationRecord next[] = {{"", At(kT0 + 20000000), 3, 16}};
  ASSERT_TRUE(store_->nodes().AddGpuAllocation(next, At(kT0 + 8000000)).ok());
  EXPECT_EQ(store_->nodes().ListGpuAllocation("", {})->size(), 3u);
  EXPECT_EQ(store_->nodes().ListGpuAllocation("node-a", {})->size(), 2u);
  EXPECT_EQ(store_->nodes().ListGpuAllocation("", {}, 0).status().code(),
            StatusCode::kInvalidArgument);
  // The same point twice is one row.
  ASSERT_TRUE(store_->nodes().AddGpuAllocation(next, At(kT0)).ok());
  EXPECT_EQ(store_->nodes().ListGpuAllocation("", {})->size(), 3u);
}

TEST_P(ClusterViewStore, WorkloadStatusUpdateTouchesOnlyItsColumns) {
  WorkloadRecord w;
  w.uid = "w-1";
  w.kind = "PyTorchJob";
  w.name = "llama";
  w.namespace_name = "ml";
  w.status = "Running";
  w.gpu_request = 8;
  w.active_pods = 2;
  w.labels = {{"team", "llm"}};
  w.created_at = At(kT0);
  w.updated_at = At(kT0);
  WorkloadRecord open = w;
  open.uid = "w-2";
  ASSERT_TRUE(store_->pods().UpsertWorkloads(std::vector{w, open}).ok());
  WorkloadRecord update;
  update.uid = "w-1";
  update.status = "Succeeded";
  update.gpu_request = 8;
  update.active_pods = 0;
  update.ended_at = At(kT0 + 100);
  update.updated_at = At(kT0 + 200);
  ASSERT_TRUE(store_->pods().UpdateWorkloadStatus(std::span(&update, 1)).ok());
  auto got = store_->pods().GetWorkload("w-1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, "Succeeded");
  EXPECT_EQ(got->active_pods, 0);
  EXPECT_EQ(got->ended_at, At(kT0 + 100));
  EXPECT_EQ(got->name, "llama");
  EXPECT_EQ(got->labels.at("team"), "llm");
  EXPECT_EQ(got->created_at, At(kT0));
  // Open workloads only.
  WorkloadQuery q;
  q.ended = false;
  auto page = store_->pods().ListWorkloads(q);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].uid, "w-2");
  EXPECT_EQ(page->items[0].active_pods, 2);
  q.ended = true;
  EXPECT_EQ(store_->pods().ListWorkloads(q)->items[0].uid, "w-1");
  // An unknown uid in a batch: nothing of the batch is written.
  WorkloadRecord failed = update;
  failed.status = "Failed";
  WorkloadRecord ghost = update;
  ghost.uid = "nope";
  const WorkloadRecord both[] = {failed, ghost};
  EXPECT_EQ(store_->pods().UpdateWorkloadStatus(both).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store_->pods().GetWorkload("w-1")->status, "Succeeded");
}

TEST_P(ClusterViewStore, WholeReadsOfLivePodsContainersAndOpenWorkloads) {
  auto pod = [](std::string uid, bool deleted, bool ended) {
    PodRecord p;
    p.uid = uid;
    p.name = uid;
    p.namespace_name = "ml";
    p.node = "node-a";
    p.phase = ended ? "Succeeded" : "Running";
    p.deleted = deleted;
    if (ended) p.ended_at = At(kT0 + 5);
    p.created_at = At(kT0);
    p.updated_at = At(kT0);
    return p;
  };
  const PodRecord pods[] = {pod("p-2", false, false), pod("p-1", false, false),
                            pod("p-gone", true, false),
                            pod("p-done", false, true)};
  ASSERT_TRUE(store_->pods().UpsertPods(pods).ok());
  auto live = store_->pods().ListLivePods();
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_EQ(live->size(), 2u);
  EXPECT_EQ((*live)[0].uid, "p-1");
  EXPECT_EQ((*live)[1].uid, "p-2");

  WorkloadRecord w;
  w.uid = "w-open";
  w.name = "open";
  w.namespace_name = "ml";
  w.created_at = w.updated_at = At(kT0);
  WorkloadRecord ended = w;
  ended.uid = "w-ended";
  ended.ended_at = At(kT0 + 9);
  ASSERT_TRUE(store_->pods().UpsertWorkloads(std::vector{w, ended}).ok());
  const std::pair<std::string, std::string> links[] = {
      {"w-open", "p-1"}, {"w-open", "p-done"}, {"w-ended", "p-2"}};
  ASSERT_TRUE(store_->pods().LinkPods(links).ok());
  auto open = store_->pods().ListOpenWorkloadPods();
  ASSERT_TRUE(open.ok()) << open.status();
  ASSERT_EQ(open->size(), 2u);
  EXPECT_EQ((*open)[0].first, "w-open");
  EXPECT_EQ((*open)[0].second.uid, "p-1");
  EXPECT_EQ((*open)[1].second.uid, "p-done");
  EXPECT_EQ((*open)[1].second.ended_at, At(kT0 + 5));
  EXPECT_EQ((*open)[1].second.phase, "Succeeded");

  auto container = [](std::string id, ContainerState state, int devices) {
    ContainerRecord c;
    c.container_id = id;
    c.node = "node-a";
    c.pod_uid = "p-1";
    c.state = state;
    c.created_at = c.updated_at = At(kT0);
    for (int i = 0; i < devices; ++i) {
      c.devices.push_back({DeviceKind::kGpu, id + "-gpu" + std::to_string(i),
                           "", "pod-resources"});
    }
    return c;
  };
  const ContainerRecord cs[] = {container("c-b", ContainerState::kRunning, 2),
                                container("c-a", ContainerState::kCreated, 0),
                                container("c-c", ContainerState::kExited, 1),
                                container("c-d", ContainerState::kPaused, 1)};
  ASSERT_TRUE(store_->containers().UpsertContainers(cs).ok());
  auto with = store_->containers().ListLiveContainers(true);
  ASSERT_TRUE(with.ok()) << with.status();
  ASSERT_EQ(with->size(), 3u);
  EXPECT_EQ((*with)[0].container_id, "c-a");
  EXPECT_TRUE((*with)[0].devices.empty());
  EXPECT_EQ((*with)[1].container_id, "c-b");
  ASSERT_EQ((*with)[1].devices.size(), 2u);
  EXPECT_EQ((*with)[1].devices[1].device_key, "c-b-gpu1");
  EXPECT_EQ((*with)[2].container_id, "c-d");
  EXPECT_EQ((*with)[2].devices.size(), 1u);
  auto without = store_->containers().ListLiveContainers(false);
  ASSERT_EQ(without->size(), 3u);
  EXPECT_TRUE((*without)[1].devices.empty());

  // With a window: what ended within it too.
  auto recent = store_->pods().ListLivePods(At(kT0 + 5));
  ASSERT_TRUE(recent.ok()) << recent.status();
  EXPECT_EQ(recent->size(), 3u);  // and p-done, which ended at +5
  EXPECT_EQ(store_->pods().ListLivePods(At(kT0))->size(), 4u);  // p-gone too
  EXPECT_EQ(store_->pods().ListLivePods(At(kT0 + 6))->size(), 2u);
  ContainerRecord finished = cs[2];  // c-c, exited
  finished.finished_at = At(kT0 + 7);
  ASSERT_TRUE(
      store_->containers().UpsertContainers(std::span(&finished, 1)).ok());
  auto with_ended = store_->containers().ListLiveContainers(true, At(kT0 + 7));
  ASSERT_TRUE(with_ended.ok()) << with_ended.status();
  ASSERT_EQ(with_ended->size(), 4u);
  EXPECT_EQ((*with_ended)[2].container_id, "c-c");
  EXPECT_EQ((*with_ended)[2].devices.size(), 1u);
  EXPECT_EQ(store_->containers().ListLiveContainers(false, At(kT0 + 8))->size(),
            3u);
}

TEST_P(ClusterViewStore, SyncOfManyNodesIsOneTransactionWithItsChangeLog) {
  std::vector<NodeInventory> nodes;
  for (int n = 0; n < 3; ++n) {
    NodeRecord node;
    node.name = "node-" + std::to_string(n);
    node.updated_at = At(kT0);
    ASSERT_TRUE(store_->nodes().UpsertNode(node).ok());
    NodeInventory inv;
    inv.node = node.name;
    for (int g = 0; g < 2; ++g) {
      GpuDeviceRecord gpu;
      gpu.gpu_index = g;
      gpu.serial = node.name + "-s" + std::to_string(g);
      inv.gpus.push_back(gpu);
    }
    RdmaDeviceRecord hca;
    hca.name = "mlx5_0";
    hca.node_guid = node.name + "-guid";
    inv.rdma.push_back(hca);
    nodes.push_back(inv);
  }
  auto first = store_->nodes().SyncNodeDevices(nodes, At(kT0));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->created, 9);
  nodes[1].gpus[0].serial = "swapped";
  auto second = store_->nodes().SyncNodeDevices(nodes, At(kT0 + 1));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->replaced, 1);
  EXPECT_EQ(second->unchanged, 8);
  EXPECT_EQ(store_->nodes().GetGpuDevice("node-1", 0)->serial, "swapped");
  // A node not stored fails the whole batch: nothing of it is written.
  nodes[0].gpus[1].serial = "not-written";
  nodes.push_back({"node-unknown", {}, {}});
  EXPECT_EQ(store_->nodes().SyncNodeDevices(nodes, At(kT0 + 2)).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->nodes().GetGpuDevice("node-0", 1)->serial, "node-0-s1");
  auto all = store_->nodes().ListAllGpuDevices();
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 6u);
  EXPECT_EQ((*all)[0].node, "node-0");
  EXPECT_EQ((*all)[3].serial, "node-1-s1");
}

INSTANTIATE_TEST_SUITE_P(Backends, ClusterViewStore,
                         testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace lens::test
