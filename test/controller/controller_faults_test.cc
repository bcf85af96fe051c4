// The controller through faults (SQLite and PostgreSQL): a compaction while
// pods were deleted, a controller restart, an ended watch and an API server
// restart, a store restart, and two replicas of which one writes.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "controller_testing.h"

namespace lens::controller::controller_testing {
namespace {

// etcd compacted while the controller could not watch, and a pod was
// deleted meanwhile: the relist closes it as seen gone, once.
TEST_P(ControllerTest, ACompactionWhilePodsWereDeletedClosesThem) {
  CreateAll(server_, "nodes.json");
  CreateAll(server_, "pytorchjob.json");
  Running controller(client_.get(), store_.get(), Fast());
  ASSERT_TRUE(WaitUntil([&] { return Stored(kPyTorchJobUid, 4); }));
  server_.Stop();
  ASSERT_TRUE(server_.Delete("v1", "Pod", "ml", "llama-pretrain-worker-1"));
  server_.Compact();
  ASSERT_TRUE(server_.Start());
  ASSERT_TRUE(WaitUntil([&] {
    return PodHas("ml", "llama-pretrain-worker-1",
                  [](const PodRecord& p) { return p.deleted; });
  }));
  EXPECT_GE(controller->Stats().pods.relists, 1u);
  auto gone = Pod("ml", "llama-pretrain-worker-1");
  EXPECT_TRUE(gone->ended_at.has_value());
  const auto types = EventTypes(gone->uid);
  EXPECT_EQ(std::count(types.begin(), types.end(), "Deleted"), 1);
  EXPECT_FALSE(Pod("ml", "llama-pretrain-worker-0")->deleted);
}

// The controller stops (as if killed), pods change and vanish meanwhile,
// another starts on the same store: nothing lost, nothing doubled.
TEST_P(ControllerTest, ARestartedControllerNeitherLosesNorDoubles) {
  CreateAll(server_, "nodes.json");
  CreateAll(server_, "pytorchjob.json");
  std::string master_uid;
  size_t events_before = 0;
  {
    Running first(client_.get(), store_.get(), Fast());
    ASSERT_TRUE(WaitUntil([&] { return Stored(kPyTorchJobUid, 4); }));
    master_uid = Pod("ml", "llama-pretrain-master-0")->uid;
    ASSERT_TRUE(WaitUntil([&] { return EventCount(master_uid) == 3; }));
    events_before = EventCount(master_uid);
  }
  ASSERT_TRUE(server_.Delete("v1", "Pod", "ml", "llama-pretrain-worker-2"));
  OpenStore();  // a new process opens the store again
  Running second(client_.get(), store_.get(), Fast());
  ASSERT_TRUE(WaitUntil([&] { return second->Ready(); }));
  ASSERT_TRUE(WaitUntil([&] {
    return PodHas("ml", "llama-pretrain-worker-2",
                  [](const PodRecord& p) { return p.deleted; });
  }));
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(EventCount(master_uid), events_before) << "no event written twice";
  EXPECT_EQ(store_->pods().ListPodSnapshots(master_uid)->size(), 1u);
  EXPECT_EQ(second->Stats().pods_seen_gone, 1u);
}

// A watch the server ends mid-run (timeoutSeconds) and an API server
// restart: the controller resumes from where it was, relisting nothing.
TEST_P(ControllerTest, AnEndedWatchAndAnApiServerRestartLoseNothing) {
  CreateAll(server_, "nodes.json");
  CreateAll(server_, "pytorchjob.json");
  Running controller(client_.get(), store_.get(), Fast());
  ASSERT_TRUE(WaitUntil([&] { return Stored(kPyTorchJobUid, 4); }));
  server_.CloseWatches();
  ASSERT_TRUE(server_.Delete("v1", "Pod", "ml", "llama-pretrain-worker-0"));
  ASSERT_TRUE(WaitUntil([&] {
    return PodHas("ml", "llama-pretrain-worker-0",
                  [](const PodRecord& p) { return p.deleted; });
  }));
  ASSERT_TRUE(server_.Restart());
  ASSERT_TRUE(server_.Delete("v1", "Pod", "ml", "llama-pretrain-worker-1"));
  ASSERT_TRUE(WaitUntil([&] {
    return PodHas("ml", "llama-pretrain-worker-1",
                  [](const PodRecord& p) { return p.deleted; });
  }));
  const ControllerStats stats = controller->Stats();
  EXPECT_EQ(stats.pods.relists, 0u);
  EXPECT_GE(stats.pods.watch_restarts + stats.pods.errors, 2u);
  EXPECT_EQ(stats.pods_seen_gone, 0u) << "both deletions were watched";
  for (const char* name :
       {"llama-pretrain-worker-0", "llama-pretrain-worker-1"}) {
    const auto types = EventTypes(Pod("ml", name)->uid);
    EXPECT_EQ(std::count(types.begin(), types.end(), "Deleted"), 1) << name;
  }
}

// The store goes away (PostgreSQL restarted) while pods change: the writes
// wait and are retried, and nothing is lost.
TEST_P(ControllerTest, AStoreRestartLosesNothing) {
  if (GetParam() != "postgres") {
    GTEST_SKIP()
        << "a store server to restart: PostgreSQL only (SQLite is a file)";
  }
  CreateAll(server_, "nodes.json");
  CreateAll(server_, "pytorchjob.json");
  Running controller(client_.get(), store_.get(), Fast());
  ASSERT_TRUE(WaitUntil([&] { return Stored(kPyTorchJobUid, 4); }));
  ASSERT_TRUE(
      PostgresServer::Shared().Stop(PostgresServer::StopMode::kImmediate).ok());
  UpdateAll(server_, "pytorchjob-succeeded.json");
  // The writer is now retrying against the stopped server (the store's
  // own retries, then the controller's).
  std::this_thread::sleep_for(milliseconds(1500));
  ASSERT_TRUE(PostgresServer::Shared().StartAgain().ok());
  ASSERT_TRUE(WaitUntil([&] {
    auto w = store_->pods().GetWorkload(kPyTorchJobUid);
    return w.ok() && w->status == "Succeeded";
  }));
  for (const char* name :
       {"llama-pretrain-master-0", "llama-pretrain-worker-0",
        "llama-pretrain-worker-1", "llama-pretrain-worker-2"}) {
    ASSERT_TRUE(WaitUntil([&] {
      return PodHas("ml", name,
                    [](const PodRecord& p) { return p.phase == "Succeeded"; });
    })) << name;
    const auto types = EventTypes(Pod("ml", name)->uid);
    EXPECT_EQ(std::count(types.begin(), types.end(), "Succeeded"), 1) << name;
  }
}

// Two replicas: only the leader writes; when leadership moves, the new
// leader writes what the old one could not.
TEST_P(ControllerTest, OnlyTheLeaderWrites) {
  CreateAll(server_, "nodes.json");
  std::atomic<bool> a_leads{false}, b_leads{false};
  auto client_b = KubeClient::Create(KubeConnection{.server = server_.url()});
  ASSERT_TRUE(client_b.ok());
  Running a(client_.get(), store_.get(), Fast(),
            [&] { return a_leads.load(); });
  Running b(client_b->get(), store_.get(), Fast(),
            [&] { return b_leads.load(); });
  a_leads = true;
  CreateAll(server_, "pytorchjob.json");
  ASSERT_TRUE(WaitUntil([&] { return Stored(kPyTorchJobUid, 4); }));
  // Counted after the batch's last write: wait for it.
  EXPECT_TRUE(WaitUntil([&] { return a->Stats().pods_written > 0; }));
  EXPECT_EQ(b->Stats().pods_written, 0u);
  EXPECT_EQ(b->Stats().nodes_written, 0u);
  a_leads = false;
  b_leads = true;
  ASSERT_TRUE(server_.Delete("v1", "Pod", "ml", "llama-pretrain-worker-0"));
  ASSERT_TRUE(WaitUntil([&] {
    return PodHas("ml", "llama-pretrain-worker-0",
                  [](const PodRecord& p) { return p.deleted; });
  }));
  EXPECT_TRUE(WaitUntil([&] { return b->Stats().pods_written > 0; }));
  EXPECT_TRUE(b->Stats().leader);
  EXPECT_TRUE(WaitUntil([&] { return !a->Stats().leader; }));
}

// The controller reads and never writes: get, list and watch on pods,
// nodes and owner kinds, and discovery.
TEST_P(ControllerTest, RequestsStayInsideTheDocumentedRbac) {
  CreateAll(server_, "nodes.json");
  CreateAll(server_, "pytorchjob.json");
  CreateAll(server_, "deployment.json");
  server_.ClearRequests();
  {
    Running controller(client_.get(), store_.get(), Fast());
    ASSERT_TRUE(WaitUntil([&] { return Stored(kDeploymentUid, 2); }));
  }
  const std::set<std::string> read{"get", "list", "watch", "discovery"};
  // docs/controller.md's ClusterRole: (group, resource) -> verbs.
  const std::set<std::pair<std::string, std::string>> allowed{
      {"", "pods"},
      {"", "nodes"},
      {"apps", "replicasets"},
      {"apps", "deployments"},
      {"apps", "statefulsets"},
      {"batch", "jobs"},
      {"batch", "cronjobs"},
      {"kubeflow.org", "pytorchjobs"},
      {"kubeflow.org", "mpijobs"},
      {"jobset.x-k8s.io", "jobsets"},
      {"ray.io", "rayjobs"},
      {"ray.io", "rayclusters"},
      {"trainer.kubeflow.org", "trainjobs"}};
  ASSERT_FALSE(server_.Requests().empty());
  for (const KubeRequest& r : server_.Requests()) {
    EXPECT_TRUE(read.count(r.verb)) << r.method << " " << r.path;
    if (r.verb == "discovery") continue;
    EXPECT_TRUE(allowed.count({r.group, r.resource}))
        << r.verb << " " << r.group << "/" << r.resource;
    if (r.resource != "pods" && r.resource != "nodes") {
      EXPECT_EQ(r.verb, "get") << r.path << ": owners are read one by one";
    }
  }
}

}  // namespace
}  // namespace lens::controller::controller_testing
