// DecodeOwner, WorkloadStatusFromPods and DecodeNode on the API server's
// shapes (test/fixtures/kube): each kind's status convention, owner
// references, and a node's GPUs, readiness and versions.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "controller/kube_time.h"
#include "controller/node_model.h"
#include "controller/workload_model.h"

namespace lens::controller {
namespace {

// The objects of a fixture, by "Kind/name".
std::map<std::string, std::string> Objects(const std::string& file) {
  std::ifstream in(std::string(LENS_FIXTURES_DIR) + "/kube/" + file);
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(text.str().c_str());
  std::map<std::string, std::string> out;
  for (const auto& o : doc.GetArray()) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    o.Accept(w);
    out[std::string(o["kind"].GetString()) + "/" +
        o["metadata"]["name"].GetString()] = buffer.GetString();
  }
  return out;
}

Timestamp At(const char* text) { return *ParseKubeTime(text); }

TEST(DecodeOwnerTest, KubeflowConditionsGiveStatusAndEnd) {
  auto running =
      DecodeOwner(Objects("pytorchjob.json")["PyTorchJob/llama-pretrain"]);
  ASSERT_TRUE(running.ok()) << running.status();
  EXPECT_EQ(running->uid, "c9452740-8789-4bfa-9c31-65306786085f");
  EXPECT_EQ(running->kind, "PyTorchJob");
  EXPECT_EQ(running->api_version, "kubeflow.org/v1");
  EXPECT_EQ(running->namespace_name, "ml");
  EXPECT_EQ(running->status, "Running");
  EXPECT_FALSE(running->ended_at.has_value());
  EXPECT_FALSE(running->controller.has_value());

  auto done = DecodeOwner(
      Objects("pytorchjob-succeeded.json")["PyTorchJob/llama-pretrain"]);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->status, "Succeeded");
  ASSERT_TRUE(done->ended_at.has_value());
}

TEST(DecodeOwnerTest, AFailedJobEndsWhenItsConditionSays) {
  auto objects = Objects("cronjob.json");
  auto job = DecodeOwner(objects["Job/nightly-eval-29123456"]);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->status, "Failed");
  ASSERT_TRUE(job->ended_at.has_value());
  EXPECT_EQ(*job->ended_at, At("2025-05-16T15:12:39Z"));
  ASSERT_TRUE(job->controller.has_value());
  EXPECT_EQ(job->controller->kind, "CronJob");
  EXPECT_EQ(job->controller->name, "nightly-eval");
  // A CronJob has no status Lens reads: its pods decide.
  EXPECT_EQ(DecodeOwner(objects["CronJob/nightly-eval"])->status, "");
}

TEST(DecodeOwnerTest, RayJobsUseJobStatusAndUnknownStatusesAreEmpty) {
  auto objects = Objects("rayjob.json");
  EXPECT_EQ(DecodeOwner(objects["RayJob/rl-finetune"])->status, "Running");
  auto cluster =
      DecodeOwner(objects["RayCluster/rl-finetune-raycluster-76b5w"]);
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(cluster->status, "");
  EXPECT_EQ(cluster->controller->kind, "RayJob");
  // A JobSet whose only condition is Suspended=False says nothing.
  EXPECT_EQ(
      DecodeOwner(Objects("jobset.json")["JobSet/tpu-style-train"])->status,
      "");
  std::string ray = objects["RayJob/rl-finetune"];
  ray.replace(ray.find("\"RUNNING\""), 9, "\"SUCCEEDED\"");
  ray.replace(ray.find("\"startTime\""), 11, "\"endTime\"");
  auto ended = DecodeOwner(ray);
  EXPECT_EQ(ended->status, "Succeeded");
  EXPECT_TRUE(ended->ended_at.has_value());
}

TEST(DecodeOwnerTest, RefusesWhatIsNotAnObjectWithIdentity) {
  EXPECT_EQ(DecodeOwner("[]").status().code(), StatusCode::kInvalidArgument);
  auto no_uid =
      DecodeOwner(R"({"kind":"Job","metadata":{"name":"j","namespace":"ml"}})");
  EXPECT_EQ(no_uid.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_uid.status().message().find("Job ml/j"), std::string::npos)
      << no_uid.status();
}

TEST(WorkloadStatusFromPodsTest, AllEndedOneFailedOrRunning) {
  std::string status;
  std::optional<Timestamp> end;
  const Timestamp t1 = At("2026-11-20T08:00:00Z");
  const Timestamp t2 = At("2026-11-20T09:00:00Z");
  WorkloadStatusFromPods({{"Succeeded", t1, false}, {"Succeeded", t2, false}},
                         &status, &end);
  EXPECT_EQ(status, "Succeeded");
  EXPECT_EQ(end, t2);
  WorkloadStatusFromPods({{"Succeeded", t1, false}, {"Failed", t2, false}},
                         &status, &end);
  EXPECT_EQ(status, "Failed");
  WorkloadStatusFromPods({{"Succeeded", t1, false}, {"Running", {}, false}},
                         &status, &end);
  EXPECT_EQ(status, "Running");
  EXPECT_FALSE(end.has_value());
  // A running pod that was deleted counts as ended, not failed.
  WorkloadStatusFromPods({{"Running", t2, true}, {"Succeeded", t1, false}},
                         &status, &end);
  EXPECT_EQ(status, "Succeeded");
  WorkloadStatusFromPods({{"Pending", {}, false}}, &status, &end);
  EXPECT_EQ(status, "Pending");
}

TEST(DecodeNodeTest, GpusReadinessAndVersionsFromRealNodes) {
  auto nodes = Objects("nodes.json");
  const GpuResourceMatcher gpus;
  auto amd = DecodeNode(nodes["Node/mi300x-node-01"], gpus);
  ASSERT_TRUE(amd.ok()) << amd.status();
  EXPECT_EQ(amd->name, "mi300x-node-01");
  EXPECT_EQ(amd->status, "Ready");
  EXPECT_EQ(amd->gpu_vendor, "amd");
  EXPECT_EQ(amd->gpu_count, 8);
  EXPECT_EQ(amd->gpu_allocatable, 8);
  EXPECT_FALSE(amd->gpu_model.empty());
  EXPECT_GT(amd->cpu_count, 0);
  EXPECT_GT(amd->memory_bytes, int64_t{1} << 30);
  EXPECT_EQ(amd->kubelet_version, "v1.30.4");
  EXPECT_EQ(amd->container_runtime, "containerd://1.7.20");
  EXPECT_FALSE(amd->kernel_version.empty());
  EXPECT_FALSE(amd->address.empty());
  EXPECT_EQ(amd->labels.at("kubernetes.io/hostname"), "mi300x-node-01");

  auto nvidia = DecodeNode(nodes["Node/h100-node-01"], gpus);
  ASSERT_TRUE(nvidia.ok());
  EXPECT_EQ(nvidia->gpu_vendor, "nvidia");
  EXPECT_EQ(nvidia->gpu_model, "NVIDIA-H100-80GB-HBM3");

  auto cpu = DecodeNode(nodes["Node/cpu-node-01"], gpus);
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->status, "NotReady");
  EXPECT_EQ(cpu->gpu_count, 0);
  EXPECT_EQ(cpu->gpu_vendor, "");

  // Only the resources the matcher names count.
  auto none = DecodeNode(nodes["Node/mi300x-node-01"],
                         GpuResourceMatcher({"nvidia.com/gpu"}));
  EXPECT_EQ(none->gpu_count, 0);
}

TEST(DecodeNodeTest, BadQuantitiesAreNamed) {
  auto bad = DecodeNode(
      R"({"kind":"Node","metadata":{"name":"n1"},"status":{"capacity":{"amd.com/gpu":"eight"}}})",
      GpuResourceMatcher());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("node n1"), std::string::npos);
  EXPECT_NE(bad.status().message().find("status.capacity.amd.com/gpu"),
            std::string::npos)
      << bad.status();
  EXPECT_FALSE(DecodeNode(R"({"metadata":{}})", GpuResourceMatcher()).ok());
}

}  // namespace
}  // namespace lens::controller
