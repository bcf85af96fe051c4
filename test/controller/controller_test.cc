// The controller against the in-process API server and a real store (SQLite
// and PostgreSQL): real-shaped workloads from test/fixtures/kube, checked row
// by row through their lives, owner chains, owners read again or forgotten
// or not readable, a missed renewal, and the requests it makes. The fault
// scenarios are in controller_faults_test.cc.
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

TEST_P(ControllerTest, APyTorchJobsWholeLifeRowByRow) {
  CreateAll(server_, "nodes.json");
  CreateAll(server_, "pytorchjob.json");
  CreateAll(server_, "plain-pods.json");
  Running controller(client_.get(), store_.get(), Fast());
  ASSERT_TRUE(WaitUntil([&] { return controller->Ready(); }));
  // The pods and the nodes come from two informers: either may be written
  // first (a pod written first gets its GPU model when its node is).
  ASSERT_TRUE(WaitUntil([&] {
    return Stored(kPyTorchJobUid, 4) &&
           store_->nodes().GetNode("mi300x-node-01").ok() &&
           PodHas("ml", "llama-pretrain-master-0", [&](const PodRecord& p) {
             auto r = store_->pods().GetPodResources(p.uid);
             return r.ok() && !r->gpu_model.empty();
           });
  }));

  // Pods: only the GPU ones, with the API's facts.
  PodQuery all;
  auto pods = store_->pods().ListPods(all);
  ASSERT_TRUE(pods.ok());
  EXPECT_EQ(pods->total, 4) << "pods without GPUs are not stored";
  auto master = Pod("ml", "llama-pretrain-master-0");
  ASSERT_TRUE(master.ok()) << master.status();
  EXPECT_EQ(master->node, "mi300x-node-01");
  EXPECT_EQ(master->phase, "Running");
  EXPECT_TRUE(master->running);
  EXPECT_FALSE(master->deleted);
  EXPECT_EQ(master->gpu_allocated, 8);
  EXPECT_EQ(master->owner_uid, kPyTorchJobUid);
  EXPECT_EQ(master->ip, "10.244.1.37");
  EXPECT_EQ(master->created_at.time_since_epoch().count() > 0, true);
  ASSERT_TRUE(master->started_at.has_value());
  EXPECT_FALSE(master->ended_at.has_value());
  EXPECT_EQ(master->labels.at("training.kubeflow.org/replica-type"), "master");

  auto resources = store_->pods().GetPodResources(master->uid);
  ASSERT_TRUE(resources.ok()) << resources.status();
  EXPECT_EQ(resources->gpu_vendor, "amd");
  EXPECT_EQ(resources->gpu_allocated, 8);
  EXPECT_EQ(resources->rdma_allocated, 1);
  EXPECT_EQ(resources->cpu_millis, 96000);
  EXPECT_EQ(resources->memory_bytes, int64_t{1} << 40);
  EXPECT_FALSE(resources->gpu_model.empty()) << "from the node's labels";

  // Events with the API's own timestamps.
  auto events = store_->pods().ListPodEvents(master->uid);
  ASSERT_TRUE(events.ok());
  std::set<std::string> types;
  for (const auto& e : *events) types.insert(e.event_type);
  EXPECT_EQ(types, (std::set<std::string>{"Created", "Scheduled", "Running"}));
  for (const auto& e : *events) {
    if (e.event_type == "Scheduled") {
      EXPECT_EQ(e.at, At("2026-11-20T06:02:12Z"));
    }
  }

  // The workload.
  auto job = store_->pods().GetWorkload(kPyTorchJobUid);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->kind, "PyTorchJob");
  EXPECT_EQ(job->api_version, "kubeflow.org/v1");
  EXPECT_EQ(job->name, "llama-pretrain");
  EXPECT_EQ(job->namespace_name, "ml");
  EXPECT_EQ(job->parent_uid, "");
  EXPECT_EQ(job->status, "Running");
  EXPECT_EQ(job->gpu_request, 32);
  EXPECT_FALSE(job->ended_at.has_value());

  // Nodes.
  auto node = store_->nodes().GetNode("mi300x-node-01");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->status, "Ready");
  EXPECT_EQ(node->gpu_vendor, "amd");
  EXPECT_EQ(node->gpu_count, 8);
  EXPECT_EQ(node->gpu_allocatable, 8);
  EXPECT_EQ(node->kubelet_version, "v1.30.4");
  EXPECT_EQ(node->container_runtime, "containerd://1.7.20");
  EXPECT_EQ(store_->nodes().GetNode("cpu-node-01")->status, "NotReady");
  EXPECT_EQ(store_->nodes().GetNode("h100-node-01")->gpu_vendor, "nvidia");

  // An update that changes no watched field writes no snapshot and no event.
  const auto snapshots = store_->pods().ListPodSnapshots(master->uid)->size();
  const size_t events_before = EventCount(master->uid);
  std::string same = server_.Get("v1", "Pod", "ml", "llama-pretrain-master-0");
  same.replace(same.find("\"labels\":{"), 10,
               "\"labels\":{\"touched\":\"yes\",");
  ASSERT_NE(server_.Update(same), "");
  ASSERT_TRUE(WaitUntil([&] {
    return PodHas("ml", "llama-pretrain-master-0",
                  [](const PodRecord& p) { return p.labels.count("touched"); });
  }));
  EXPECT_EQ(store_->pods().ListPodSnapshots(master->uid)->size(), snapshots);
  EXPECT_EQ(EventCount(master->uid), events_before);

  // The job succeeds: pods and job end with the API's times.
  UpdateAll(server_, "pytorchjob-succeeded.json");
  // The row written with the last pod's end (its status is the owner's, so
  // it says Succeeded before every pod ended).
  ASSERT_TRUE(WaitUntil([&] {
    auto w = store_->pods().GetWorkload(kPyTorchJobUid);
    return w.ok() && w->status == "Succeeded" && w->active_pods == 0;
  }));
  ASSERT_TRUE(WaitUntil([&] {
    return PodHas("ml", "llama-pretrain-worker-2",
                  [](const PodRecord& p) { return p.phase == "Succeeded"; });
  }));
  master = Pod("ml", "llama-pretrain-master-0");
  EXPECT_EQ(master->phase, "Succeeded");
  EXPECT_FALSE(master->running);
  ASSERT_TRUE(master->ended_at.has_value());
  EXPECT_NE(EventTypes(master->uid).back(), "");
  types.clear();
  for (const auto& t : EventTypes(master->uid)) types.insert(t);
  EXPECT_TRUE(types.count("Succeeded"));
  EXPECT_GT(store_->pods().ListPodSnapshots(master->uid)->size(), snapshots);
  job = store_->pods().GetWorkload(kPyTorchJobUid);
  ASSERT_TRUE(job->ended_at.has_value());
  EXPECT_EQ(job->gpu_request, 32) << "kept from when its pods ran";

  // The pods are deleted: closed with a Deleted event, kept as rows.
  for (const char* name :
       {"llama-pretrain-master-0", "llama-pretrain-worker-0",
        "llama-pretrain-worker-1", "llama-pretrain-worker-2"}) {
    ASSERT_TRUE(server_.Delete("v1", "Pod", "ml", name));
  }
  ASSERT_TRUE(WaitUntil([&] {
    return PodHas("ml", "llama-pretrain-worker-2",
                  [](const PodRecord& p) { return p.deleted; });
  }));
  ASSERT_TRUE(WaitUntil([&] {
    return PodHas("ml", "llama-pretrain-master-0",
                  [](const PodRecord& p) { return p.deleted; });
  }));
  types.clear();
  for (const auto& t : EventTypes(master->uid)) types.insert(t);
  EXPECT_TRUE(types.count("Deleted"));
  controller.Stop();
  EXPECT_TRUE(controller.status().ok()) << controller.status();
}

// A job whose pods end one flush apart keeps the request of all of them,
// not the part still running at the last flush before the end.
TEST_P(ControllerTest, AJobEndingPodByPodKeepsItsWholeRequest) {
  CreateAll(server_, "nodes.json");
  CreateAll(server_, "pytorchjob.json");
  Running controller(client_.get(), store_.get(), Fast());
  auto active_is = [&](int32_t n) {
    return WaitUntil([&] {
      auto w = store_->pods().GetWorkload(kPyTorchJobUid);
      return w.ok() && w->active_pods == n;
    });
  };
  ASSERT_TRUE(active_is(4));
  const std::vector<std::string> ended = Objects("pytorchjob-succeeded.json");
  ASSERT_GE(ended.size(), 5u);              // the job, then its four pods
  ASSERT_NE(server_.Update(ended[1]), "");  // one pod ends first...
  ASSERT_TRUE(active_is(3));                // ...and is written alone
  for (size_t i = 2; i < ended.size(); ++i)
    ASSERT_NE(server_.Update(ended[i]), "");
  ASSERT_NE(server_.Update(ended[0]), "");
  ASSERT_TRUE(active_is(0));
  EXPECT_EQ(store_->pods().GetWorkload(kPyTorchJobUid)->gpu_request, 32);
}

// Pods written before their node (the pod informer delivered first) get the
// node's GPU model once the node is written, without a change to the pod.
TEST_P(ControllerTest, PodsWrittenBeforeTheirNodeGetItsGpuModel) {
  CreateAll(server_, "pytorchjob.json");
  Running controller(client_.get(), store_.get(), Fast());
  ASSERT_TRUE(WaitUntil([&] { return Stored(kPyTorchJobUid, 4); }));
  auto master = Pod("ml", "llama-pretrain-master-0");
  ASSERT_TRUE(master.ok()) << master.status();
  auto before = store_->pods().GetPodResources(master->uid);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->gpu_model, "") << "no node yet";

  CreateAll(server_, "nodes.json");
  ASSERT_TRUE(WaitUntil([&] {
    auto r = store_->pods().GetPodResources(master->uid);
    return r.ok() && !r->gpu_model.empty();
  }));
  auto node = store_->nodes().GetNode(master->node);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(store_->pods().GetPodResources(master->uid)->gpu_model,
            node->gpu_model);
  EXPECT_EQ(store_->pods().GetPodResources(master->uid)->gpu_allocated, 8)
      << "the rest of the row kept";
}

// A controller that first sees a job after its pods ended (one that lags a
// busy cluster, or starts late) still counts what they requested.
TEST_P(ControllerTest, AJobSeenOnlyAfterItEndedKeepsItsRequest) {
  CreateAll(server_, "nodes.json");
  CreateAll(server_, "pytorchjob.json");
  UpdateAll(server_, "pytorchjob-succeeded.json");
  Running controller(client_.get(), store_.get(), Fast());
  ASSERT_TRUE(WaitUntil([&] {
    auto w = store_->pods().GetWorkload(kPyTorchJobUid);
    return Stored(kPyTorchJobUid, 4) && w.ok() && w->active_pods == 0 &&
           w->status == "Succeeded";
  }));
  EXPECT_EQ(store_->pods().GetWorkload(kPyTorchJobUid)->gpu_request, 32);
}

TEST_P(ControllerTest, OwnerChainsUpToTheTopWithParents) {
  CreateAll(server_, "nodes.json");
  CreateAll(server_, "deployment.json");
  CreateAll(server_, "trainjob.json");
  CreateAll(server_, "rayjob.json");
  CreateAll(server_, "mpijob.json");
  CreateAll(server_, "cronjob.json");
  Running controller(client_.get(), store_.get(), Fast());
  ASSERT_TRUE(WaitUntil([&] {
    return Stored(kTrainJobUid, 2) && Stored(kDeploymentUid, 2) &&
           Stored(kRayJobUid, 2) && Stored(kMpiJobUid, 2) &&
           Stored(kCronJobUid, 1);
  }));
  // Deployment <- ReplicaSet <- pods.
  auto pod = Pod("serve", "vllm-serve-7d9f8c6b5d-hvhbv");
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(pod->owner_uid, kDeploymentUid);
  WorkloadQuery top;
  top.parent_uid = "";
  auto tops = store_->pods().ListWorkloads(top);
  ASSERT_TRUE(tops.ok());
  std::set<std::string> kinds;
  for (const auto& w : tops->items) kinds.insert(w.kind);
  EXPECT_EQ(kinds, (std::set<std::string>{"Deployment", "TrainJob", "RayJob",
                                          "MPIJob", "CronJob"}));
  // RayCluster under the RayJob; the failed CronJob run ends its Job.
  WorkloadQuery ray;
  ray.parent_uid = kRayJobUid;
  auto raycluster = store_->pods().ListWorkloads(ray);
  ASSERT_TRUE(raycluster.ok());
  ASSERT_EQ(raycluster->items.size(), 1u);
  EXPECT_EQ(raycluster->items[0].kind, "RayCluster");
  EXPECT_EQ(store_->pods().GetWorkload(kRayJobUid)->status, "Running");
  WorkloadQuery cron;
  cron.parent_uid = kCronJobUid;
  auto runs = store_->pods().ListWorkloads(cron);
  ASSERT_EQ(runs->items.size(), 1u);
  EXPECT_EQ(runs->items[0].status, "Failed");
  EXPECT_TRUE(runs->items[0].ended_at.has_value());
  auto failed = Pod("eval", "nightly-eval-29123456-chtnc");
  ASSERT_TRUE(failed.ok()) << failed.status();
  EXPECT_EQ(failed->phase, "Failed");
  EXPECT_EQ(failed->owner_uid, kCronJobUid);
  const auto failed_events = EventTypes(failed->uid);
  EXPECT_EQ(std::count(failed_events.begin(), failed_events.end(), "Failed"),
            1);
  // The MPI launcher asks for no GPU: not stored, its workers are.
  EXPECT_FALSE(Pod("bench", "nccl-allreduce-launcher-d8ltl").ok());
  EXPECT_EQ(store_->pods().GetWorkload(kMpiJobUid)->gpu_request, 16);
  WorkloadQuery under;
  under.parent_uid = kDeploymentUid;
  auto rs = store_->pods().ListWorkloads(under);
  ASSERT_TRUE(rs.ok());
  ASSERT_EQ(rs->items.size(), 1u);
  EXPECT_EQ(rs->items[0].kind, "ReplicaSet");
  // TrainJob <- JobSet <- Job <- pods: three levels.
  under.parent_uid = kTrainJobUid;
  auto jobset = store_->pods().ListWorkloads(under);
  ASSERT_EQ(jobset->items.size(), 1u);
  EXPECT_EQ(jobset->items[0].kind, "JobSet");
  under.parent_uid = jobset->items[0].uid;
  auto job = store_->pods().ListWorkloads(under);
  ASSERT_EQ(job->items.size(), 1u);
  EXPECT_EQ(job->items[0].kind, "Job");
  EXPECT_EQ(Pod("ml", "qwen-sft-node-0-0-skwv5")->owner_uid, kTrainJobUid);
  // A MIG pod without an owner is stored, with no workload.
  auto mig = Pod("serve", "vllm-mig-probe");
  ASSERT_TRUE(mig.ok()) << mig.status();
  EXPECT_EQ(mig->owner_uid, "");
  EXPECT_EQ(store_->pods().GetPodResources(mig->uid)->gpu_vendor, "nvidia");
}

// An owner's status changes with none of its pods changing: the periodic
// re-read finds it.
TEST_P(ControllerTest, OwnersAreReadAgainWithoutPodChanges) {
  CreateAll(server_, "nodes.json");
  CreateAll(server_, "pytorchjob.json");
  ControllerOptions o = Fast();
  o.owner_refresh = std::chrono::seconds(60);
  o.workload_resync = std::chrono::seconds(1);
  Running controller(client_.get(), store_.get(), o);
  ASSERT_TRUE(WaitUntil([&] {
    auto w = store_->pods().GetWorkload(kPyTorchJobUid);
    return w.ok() && w->status == "Running";
  }));
  for (const std::string& object : Objects("pytorchjob-succeeded.json")) {
    rapidjson::Document doc;
    doc.Parse(object.c_str());
    if (std::string(doc["kind"].GetString()) == "PyTorchJob") {
      ASSERT_NE(server_.Update(object), "");
    }
  }
  ASSERT_TRUE(WaitUntil([&] {
    auto w = store_->pods().GetWorkload(kPyTorchJobUid);
    return w.ok() && w->status == "Succeeded" && w->ended_at.has_value();
  }));
  EXPECT_EQ(Pod("ml", "llama-pretrain-master-0")->phase, "Running")
      << "its pods did not change";
}

// An owner that ended leaves the cache; when its pods and itself are
// deleted later, its row keeps the end the owner reported.
TEST_P(ControllerTest, AnEndedOwnerIsForgottenAndItsRowStands) {
  CreateAll(server_, "nodes.json");
  CreateAll(server_, "pytorchjob.json");
  ControllerOptions o = Fast();
  o.forget_ended_after = std::chrono::seconds(0);
  Running controller(client_.get(), store_.get(), o);
  ASSERT_TRUE(WaitUntil([&] { return Stored(kPyTorchJobUid, 4); }));
  UpdateAll(server_, "pytorchjob-succeeded.json");
  ASSERT_TRUE(WaitUntil([&] {
    auto w = store_->pods().GetWorkload(kPyTorchJobUid);
    return w.ok() && w->status == "Succeeded" && w->ended_at.has_value() &&
           w->active_pods == 0;
  }));
  const WorkloadRecord ended = *store_->pods().GetWorkload(kPyTorchJobUid);
  EXPECT_EQ(ended.gpu_request, 32);
  ASSERT_TRUE(
      server_.Delete("kubeflow.org/v1", "PyTorchJob", "ml", "llama-pretrain"));
  for (const char* name :
       {"llama-pretrain-master-0", "llama-pretrain-worker-0",
        "llama-pretrain-worker-1", "llama-pretrain-worker-2"}) {
    ASSERT_TRUE(server_.Delete("v1", "Pod", "ml", name));
  }
  ASSERT_TRUE(WaitUntil([&] {
    auto pods = store_->pods().ListWorkloadPods(kPyTorchJobUid);
    if (!pods.ok() || pods->size() != 4) return false;
    for (const PodRecord& p : *pods) {
      if (!p.deleted) return false;
    }
    return true;
  }));
  // The workload's row written again with its pods' deletion.
  ASSERT_TRUE(WaitUntil([&] {
    auto w = store_->pods().GetWorkload(kPyTorchJobUid);
    return w.ok() && w->updated_at > ended.updated_at;
  }));
  const WorkloadRecord after = *store_->pods().GetWorkload(kPyTorchJobUid);
  EXPECT_EQ(after.status, "Succeeded");
  EXPECT_EQ(after.ended_at, ended.ended_at);
  EXPECT_EQ(after.gpu_request, 32);
  EXPECT_EQ(after.labels, ended.labels);
  EXPECT_EQ(after.created_at, ended.created_at);
  EXPECT_EQ(after.kind, "PyTorchJob");
}

// An owner the controller may not read (RBAC): stored from the pod's
// reference, counted, not read again and again, and forgotten in time.
TEST_P(ControllerTest, AnOwnerItMayNotReadIsKeptFromTheReference) {
  CreateAll(server_, "nodes.json");
  CreateAll(server_, "deployment.json");
  server_.FailNext("/deployments/vllm-serve", 403, 1000);
  ControllerOptions o = Fast();
  o.owner_refresh = std::chrono::seconds(60);
  o.workload_resync = std::chrono::seconds(0);
  Running controller(client_.get(), store_.get(), o);
  ASSERT_TRUE(WaitUntil([&] { return Stored(kDeploymentUid, 2); }));
  const WorkloadRecord top = *store_->pods().GetWorkload(kDeploymentUid);
  EXPECT_EQ(top.kind, "Deployment");
  EXPECT_EQ(top.name, "vllm-serve");
  EXPECT_EQ(top.namespace_name, "serve");
  EXPECT_GE(controller->Stats().owner_errors, 1u);
  // Not read again while nothing of it changes, resync or not: over ten
  // flushes (each resyncs its workloads).
  const uint64_t flushes = controller->Stats().flushes;
  ASSERT_TRUE(
      WaitUntil([&] { return controller->Stats().flushes >= flushes + 10; }));
  int reads = 0;
  for (const KubeRequest& r : server_.Requests()) {
    if (r.resource == "deployments") ++reads;
  }
  EXPECT_EQ(reads, 1);
}

// A replica that misses a renewal keeps the deletions it watched meanwhile
// and writes them, with their own times, when it leads again.
TEST_P(ControllerTest, AMissedRenewalLosesNoDeletion) {
  CreateAll(server_, "nodes.json");
  CreateAll(server_, "pytorchjob.json");
  std::atomic<bool> leads{true};
  Running controller(client_.get(), store_.get(), Fast(),
                     [&] { return leads.load(); });
  ASSERT_TRUE(WaitUntil([&] { return Stored(kPyTorchJobUid, 4); }));
  leads = false;
  ASSERT_TRUE(WaitUntil([&] { return !controller->Stats().leader; }));
  const uint64_t events = controller->Stats().pods.events;
  ASSERT_TRUE(server_.Delete("v1", "Pod", "ml", "llama-pretrain-worker-2"));
  // The informer applied the deletion, then the writer took two turns with
  // it queued (the first may have begun before): a follower wrote nothing.
  ASSERT_TRUE(
      WaitUntil([&] { return controller->Stats().pods.events > events; }));
  const uint64_t turns = controller->Stats().turns;
  ASSERT_TRUE(
      WaitUntil([&] { return controller->Stats().turns >= turns + 2; }));
  EXPECT_FALSE(Pod("ml", "llama-pretrain-worker-2")->deleted)
      << "a follower writes nothing";
  leads = true;
  ASSERT_TRUE(WaitUntil([&] {
    return PodHas("ml", "llama-pretrain-worker-2",
                  [](const PodRecord& p) { return p.deleted; });
  }));
  EXPECT_EQ(controller->Stats().pods_seen_gone, 0u)
      << "written from the watched deletion, not closed as seen gone";
}

INSTANTIATE_TEST_SUITE_P(Backends, ControllerTest,
                         ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace lens::controller::controller_testing
