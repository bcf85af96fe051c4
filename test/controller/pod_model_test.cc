// DecodePod and MayRequestGpus on pods shaped as the API server returns them:
// the fixtures in test/fixtures/kube (PyTorchJob, MPIJob, Deployment with
// MIG, CronJob, JobSet, RayJob, TrainJob, plain pods) and synthetic ones for
// times, snapshots and errors. The resource rules and quantities are in
// pod_requests_test.cc.
#include "controller/pod_model.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace lens::controller {
namespace {

using namespace std::chrono;

const GpuResourceMatcher kDefaults;

Timestamp At(int y, unsigned mo, unsigned d, int h, int mi, int s) {
  return Timestamp(sys_days(year(y) / month(mo) / day(d)) + hours(h) +
                   minutes(mi) + seconds(s));
}

std::string PodJson(const std::string& spec,
                    const std::string& status = R"({"phase":"Running"})",
                    const std::string& meta_extra = "") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"trainer-0",)"
         R"("namespace":"ml","uid":"0b7c-uid","resourceVersion":"7",)"
         R"("creationTimestamp":"2026-11-20T08:00:00Z")" +
         meta_extra + R"(},"spec":)" + spec + R"(,"status":)" + status + "}";
}

// A container with `resources` (a JSON object) and, optionally, a restart
// policy (sidecars).
std::string C(const std::string& name, const std::string& resources,
              const std::string& restart_policy = "") {
  std::string c = R"({"name":")" + name + R"(","image":"busybox",)";
  if (!restart_policy.empty()) {
    c += R"("restartPolicy":")" + restart_policy + R"(",)";
  }
  return c + R"("resources":)" + resources + "}";
}

std::string Req(const std::string& list) {
  return R"({"requests":)" + list + "}";
}

// ---- fixtures ---------------------------------------------------------------

// Every Pod in test/fixtures/kube/<file>, as compact JSON, by name.
std::map<std::string, std::string> FixturePods(const std::string& file) {
  std::ifstream in(std::string(LENS_FIXTURES_DIR) + "/kube/" + file);
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(text.str().c_str());
  EXPECT_TRUE(doc.IsArray()) << file;
  std::map<std::string, std::string> pods;
  if (!doc.IsArray()) return pods;
  for (const auto& o : doc.GetArray()) {
    if (std::string_view(o["kind"].GetString()) != "Pod") continue;
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    o.Accept(writer);
    pods[o["metadata"]["name"].GetString()] = buffer.GetString();
  }
  return pods;
}

PodView Decode(const std::string& json,
               const GpuResourceMatcher& gpus = kDefaults) {
  StatusOr<PodView> pod = DecodePod(json, gpus);
  EXPECT_TRUE(pod.ok()) << pod.status();
  return pod.ok() ? *pod : PodView();
}

const char* const kFixtureFiles[] = {
    "pytorchjob.json", "pytorchjob-succeeded.json",
    "mpijob.json",     "deployment.json",
    "cronjob.json",    "plain-pods.json",
    "jobset.json",     "rayjob.json",
    "trainjob.json"};

TEST(PodFixturesTest, DecodesARunningRocmMasterWithAGpuInitContainer) {
  const PodView p =
      Decode(FixturePods("pytorchjob.json").at("llama-pretrain-master-0"));
  EXPECT_EQ(p.namespace_name, "ml");
  EXPECT_FALSE(p.uid.empty());
  EXPECT_EQ(p.node, "mi300x-node-01");
  EXPECT_EQ(p.phase, "Running");
  EXPECT_EQ(p.requests.gpus, 8);  // max(8, init 8), not 16
  EXPECT_EQ(p.requests.gpu_resource, "amd.com/gpu");
  EXPECT_EQ(p.requests.gpu_vendor, "amd");
  EXPECT_EQ(p.requests.rdma, 1);
  EXPECT_EQ(p.requests.cpu_millis, 96000);
  EXPECT_EQ(p.requests.memory_bytes, int64_t{1} << 40);
  ASSERT_TRUE(p.controller.has_value());
  EXPECT_EQ(p.controller->kind, "PyTorchJob");
  EXPECT_EQ(p.controller->name, "llama-pretrain");
  EXPECT_EQ(p.owners.size(), 1u);
  EXPECT_EQ(p.created_at, At(2026, 11, 20, 6, 2, 12));
  EXPECT_EQ(p.scheduled_at, At(2026, 11, 20, 6, 2, 12));
  EXPECT_EQ(p.started_at, At(2026, 11, 20, 6, 2, 59));  // the app container
  EXPECT_FALSE(p.ended_at.has_value());
  EXPECT_TRUE(p.ready);
  EXPECT_EQ(p.restarts, 0);
  EXPECT_FALSE(p.labels.empty());
}

TEST(PodFixturesTest, EndsSucceededPodsAtTheLastFinish) {
  const PodView p = Decode(
      FixturePods("pytorchjob-succeeded.json").at("llama-pretrain-master-0"));
  EXPECT_EQ(p.phase, "Succeeded");
  EXPECT_EQ(p.ended_at, At(2026, 11, 20, 19, 47, 31));
  EXPECT_EQ(p.started_at, At(2026, 11, 20, 6, 2, 12));  // status.startTime
  EXPECT_FALSE(p.ready);
}

TEST(PodFixturesTest, EndsAFailedCronJobPodAtItsTermination) {
  const auto pods = FixturePods("cronjob.json");
  ASSERT_EQ(pods.size(), 1u);
  const PodView p = Decode(pods.begin()->second);
  EXPECT_EQ(p.phase, "Failed");
  EXPECT_EQ(p.ended_at, At(2025, 5, 16, 15, 12, 37));
  EXPECT_EQ(p.controller->kind, "Job");
  EXPECT_EQ(p.requests.gpus, 1);
  EXPECT_NE(p.snapshot_json.find(
                R"("state":{"terminated":{"exitCode":1,"reason":"Error"}})"),
            std::string::npos)
      << p.snapshot_json;
}

TEST(PodFixturesTest, CountsRestartsAndTheLastOne) {
  const auto pods = FixturePods("deployment.json");
  const PodView restarted = Decode(pods.at("vllm-serve-7d9f8c6b5d-xjkg2"));
  EXPECT_EQ(restarted.restarts, 1);
  EXPECT_EQ(restarted.last_restart_at, At(2026, 11, 15, 21, 43, 8));
  // Its container restarted: the pod's own start time, not the restart's.
  EXPECT_EQ(restarted.started_at, At(2026, 11, 12, 10, 0, 1));
  const PodView fresh = Decode(pods.at("vllm-serve-7d9f8c6b5d-hvhbv"));
  EXPECT_EQ(fresh.restarts, 0);
  EXPECT_FALSE(fresh.last_restart_at.has_value());
  EXPECT_EQ(fresh.started_at, At(2026, 11, 12, 10, 0, 8));
  const PodView proxy =
      Decode(FixturePods("plain-pods.json").at("kube-proxy-cqnc5"));
  EXPECT_EQ(proxy.restarts, 2);
  EXPECT_EQ(proxy.last_restart_at, At(2026, 10, 2, 4, 2, 40));
}

TEST(PodFixturesTest, DecodesAPendingMigPodWithoutOwners) {
  const PodView p = Decode(FixturePods("deployment.json").at("vllm-mig-probe"));
  EXPECT_EQ(p.phase, "Pending");
  EXPECT_EQ(p.node, "");
  EXPECT_EQ(p.requests.gpus, 1);
  EXPECT_EQ(p.requests.gpu_resource, "nvidia.com/mig-1g.10gb");
  EXPECT_FALSE(p.scheduled_at.has_value());  // PodScheduled=False
  EXPECT_FALSE(p.started_at.has_value());
  EXPECT_TRUE(p.owners.empty());
  EXPECT_FALSE(p.controller.has_value());
}

TEST(PodFixturesTest, DecodesMpiWorkersAndPlainPods) {
  const auto mpi = FixturePods("mpijob.json");
  const PodView worker = Decode(mpi.at("nccl-allreduce-worker-0"));
  EXPECT_EQ(worker.requests.gpus, 8);
  EXPECT_EQ(worker.requests.gpu_vendor, "nvidia");
  EXPECT_EQ(worker.controller->kind, "MPIJob");
  EXPECT_EQ(Decode(mpi.at("nccl-allreduce-launcher-d8ltl")).requests.gpus, 0);
  for (const auto& [name, json] : FixturePods("plain-pods.json")) {
    EXPECT_EQ(Decode(json).requests.gpus, 0) << name;
    EXPECT_FALSE(MayRequestGpus(json, kDefaults)) << name;
  }
  const PodView dns =
      Decode(FixturePods("plain-pods.json").at("coredns-7db6d8ff4d-nx29g"));
  EXPECT_EQ(dns.requests.cpu_millis, 100);
  EXPECT_EQ(dns.requests.memory_bytes, 70 << 20);  // the request, not limit
}

// The invariant the controller's cache relies on, and the snapshot's promise
// to carry no secrets, on every fixture pod and two matchers.
TEST(PodFixturesTest, EveryPodDecodesAndMayRequestGpusNeverMissesOne) {
  const GpuResourceMatcher mig_only({"nvidia.com/mig-*"});
  int pods = 0, with_gpus = 0;
  for (const char* file : kFixtureFiles) {
    for (const auto& [name, json] : FixturePods(file)) {
      ++pods;
      for (const GpuResourceMatcher* m : {&kDefaults, &mig_only}) {
        StatusOr<PodView> p = DecodePod(json, *m);
        ASSERT_TRUE(p.ok()) << file << " " << name << ": " << p.status();
        if (p->requests.gpus > 0) {
          ++with_gpus;
          EXPECT_TRUE(MayRequestGpus(json, *m)) << file << " " << name;
        }
        for (const char* secret :
             {"env", "command", "args", "image", "annotations", "Secret",
              "containerID", "volumes"}) {
          EXPECT_EQ(p->snapshot_json.find(secret), std::string::npos)
              << file << " " << name << ": " << secret;
        }
      }
    }
  }
  EXPECT_GE(pods, 20);
  EXPECT_GE(with_gpus, 15);
}

// ---- timestamps, phases, snapshot -----------------------------------------

std::string Status1(const std::string& phase, int restarts,
                    const std::string& conditions_order = "sr") {
  const std::string scheduled =
      R"({"type":"PodScheduled","status":"True",)"
      R"("lastTransitionTime":"2026-11-20T08:00:01Z"})";
  const std::string ready =
      R"({"type":"Ready","status":"False",)"
      R"("lastTransitionTime":"2026-11-20T10:00:00.5+02:00"})";
  const std::string conditions = conditions_order == "sr"
                                     ? scheduled + "," + ready
                                     : ready + "," + scheduled;
  return R"({"phase":")" + phase +
         R"(","podIP":"10.0.0.7",)"
         R"("startTime":"2026-11-20T08:00:02Z","conditions":[)" +
         conditions +
         R"(],"containerStatuses":[{"name":"b","restartCount":0,)"
         R"("state":{"waiting":{"reason":"ContainerCreating"}}},)"
         R"({"name":"a","restartCount":)" +
         std::to_string(restarts) +
         R"(,"state":{"running":{"startedAt":"2026-11-20T08:00:09Z"}}}]})";
}

const std::string kSpec =
    R"({"nodeName":"node-1","containers":[{"name":"a","image":"r/x:1",)"
    R"("command":["train"],"args":["--lr=3e-4"],"env":[{"name":"TOKEN",)"
    R"("value":"s3cr3t"}],"resources":{"requests":{"nvidia.com/gpu":"8"}}}]})";

TEST(PodDecodeTest, ReadsTimesConditionsAndPhases) {
  const PodView p = Decode(PodJson(kSpec, Status1("Running", 0)));
  EXPECT_EQ(p.ip, "10.0.0.7");
  EXPECT_EQ(p.resource_version, "7");
  EXPECT_EQ(p.created_at, At(2026, 11, 20, 8, 0, 0));
  EXPECT_EQ(p.scheduled_at, At(2026, 11, 20, 8, 0, 1));
  EXPECT_EQ(p.started_at, At(2026, 11, 20, 8, 0, 9));
  EXPECT_FALSE(p.ended_at.has_value());  // Running
  EXPECT_FALSE(p.ready);
  // Succeeded without terminated states: the Ready transition, in UTC.
  const PodView done = Decode(PodJson(kSpec, Status1("Succeeded", 0)));
  EXPECT_EQ(done.ended_at, At(2026, 11, 20, 8, 0, 0) + milliseconds(500));
  // No status yet: Pending, nothing started.
  const PodView fresh = Decode(PodJson(kSpec, "{}"));
  EXPECT_EQ(fresh.phase, "Pending");
  EXPECT_FALSE(fresh.started_at.has_value());
  EXPECT_FALSE(fresh.scheduled_at.has_value());
}

TEST(PodDecodeTest, ReadsDeletionAndOwners) {
  const PodView p = Decode(PodJson(
      kSpec, Status1("Running", 0),
      R"(,"deletionTimestamp":"2026-11-20T09:00:00Z","ownerReferences":[)"
      R"({"apiVersion":"v1","kind":"Node","name":"n","uid":"n-1"},)"
      R"({"apiVersion":"batch/v1","kind":"Job","name":"j","uid":"j-1",)"
      R"("controller":true,"blockOwnerDeletion":true}])"));
  EXPECT_EQ(p.deletion_at, At(2026, 11, 20, 9, 0, 0));
  ASSERT_EQ(p.owners.size(), 2u);
  EXPECT_FALSE(p.owners[0].controller);
  ASSERT_TRUE(p.controller.has_value());
  EXPECT_EQ(p.controller->api_version, "batch/v1");
  EXPECT_EQ(p.controller->uid, "j-1");
  EXPECT_NE(p.snapshot_json.find("\"deletionTimestamp\":\"2026-11-20T09:00:00"),
            std::string::npos)
      << p.snapshot_json;
}

// The JSON again with every object's members in reverse order and spaces.
void WriteReversed(const rapidjson::Value& v,
                   rapidjson::Writer<rapidjson::StringBuffer>& w) {
  if (v.IsObject()) {
    w.StartObject();
    for (auto it = v.MemberEnd(); it != v.MemberBegin();) {
      --it;
      w.Key(it->name.GetString(), it->name.GetStringLength());
      WriteReversed(it->value, w);
    }
    w.EndObject();
  } else if (v.IsArray()) {
    w.StartArray();
    for (const auto& e : v.GetArray()) WriteReversed(e, w);
    w.EndArray();
  } else {
    v.Accept(w);
  }
}

std::string Reversed(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  WriteReversed(doc, writer);
  return buffer.GetString();
}

TEST(PodSnapshotTest, IsCanonical) {
  const std::string json = PodJson(kSpec, Status1("Running", 0));
  const std::string snapshot = Decode(json).snapshot_json;
  EXPECT_EQ(Decode(Reversed(json)).snapshot_json, snapshot);
  // Conditions listed in another order, a new resourceVersion: same text.
  std::string moved = PodJson(kSpec, Status1("Running", 0, "rs"));
  moved.replace(moved.find("\"resourceVersion\":\"7\""), 21,
                "\"resourceVersion\":\"8\"");
  EXPECT_EQ(Decode(moved).snapshot_json, snapshot);
  // A restart is a change.
  EXPECT_NE(Decode(PodJson(kSpec, Status1("Running", 1))).snapshot_json,
            snapshot);
  EXPECT_EQ(snapshot,
            R"({"phase":"Running","node":"node-1","ip":"10.0.0.7",)"
            R"("ready":false,"restarts":0,"deletionTimestamp":null,)"
            R"("conditions":[{"type":"PodScheduled","status":"True"},)"
            R"({"type":"Ready","status":"False"}],"initContainers":[],)"
            R"("containers":[{"name":"a","restartCount":0,)"
            R"("state":{"running":{}}},{"name":"b","restartCount":0,)"
            R"("state":{"waiting":{"reason":"ContainerCreating"}}}]})");
  for (const char* secret : {"s3cr3t", "TOKEN", "train", "env", "command"}) {
    EXPECT_EQ(snapshot.find(secret), std::string::npos) << secret;
  }
}

// ---- MayRequestGpus
// -----------------------------------------------------------

TEST(MayRequestGpusTest, LooksForResourceNamesAsKeys) {
  EXPECT_TRUE(MayRequestGpus(PodJson(kSpec), kDefaults));
  // A node selector on a GPU label is not a request.
  const std::string selector =
      R"({"nodeSelector":{"nvidia.com/gpu.product":"H100"},"containers":[]})";
  EXPECT_FALSE(MayRequestGpus(PodJson(selector), kDefaults));
  EXPECT_TRUE(MayRequestGpus(
      PodJson(R"({"containers":[)" +
              C("a", Req(R"({"nvidia.com/mig-2g.20gb":"1"})")) + "]}"),
      kDefaults));
  EXPECT_FALSE(MayRequestGpus(PodJson(kSpec),
                              GpuResourceMatcher(std::vector<std::string>{})));
  // A pattern without a domain is looked for as a key too.
  const GpuResourceMatcher bare({"gpu", "tpu-*"});
  for (const char* name : {"gpu", "tpu-v5"}) {
    const std::string json =
        PodJson(R"({"containers":[)" +
                C("a", Req(R"({")" + std::string(name) + R"(":"1"})")) + "]}");
    EXPECT_EQ(Decode(json, bare).requests.gpus, 1) << name;
    EXPECT_TRUE(MayRequestGpus(json, bare)) << name;
    EXPECT_FALSE(MayRequestGpus(json, kDefaults)) << name;
  }
  EXPECT_FALSE(
      MayRequestGpus(PodJson(R"({"containers":[{"name":"gpu-x"}]})"), bare));
}

TEST(MayRequestGpusTest, IsNotFooledByEscapes) {
  for (const char* name : {R"(nvidia.com\/gpu)", R"(\u0061md.com/gpu)",
                           R"(nvidia.com\u002fmig-1g)"}) {
    const std::string json =
        PodJson(R"({"containers":[{"name":"a","resources":{"limits":{")" +
                std::string(name) + R"(":"2"}}}]})");
    StatusOr<PodView> p = DecodePod(json, kDefaults);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->requests.gpus, 2) << name;
    EXPECT_TRUE(MayRequestGpus(json, kDefaults)) << name;
  }
  // Escapes Go writes (<, >, &) spell no resource name.
  EXPECT_FALSE(MayRequestGpus(
      PodJson(
          R"({"containers":[{"name":"a","command":["a \u0026\u0026 b"]}]})"),
      kDefaults));
}

// ---- errors
// -------------------------------------------------------------------

void ExpectError(const std::string& json, const std::string& want) {
  StatusOr<PodView> p = DecodePod(json, kDefaults);
  ASSERT_FALSE(p.ok()) << want;
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find(want), std::string::npos) << p.status();
}

TEST(PodDecodeErrorsTest, NameThePodAndTheField) {
  ExpectError("{\"metadata\":", "not a pod: invalid JSON");
  ExpectError("[1]", "not a pod");
  ExpectError(R"({"kind":"Deployment","metadata":{"name":"x","uid":"u"}})",
              "not a pod: kind \"Deployment\"");
  ExpectError(R"({"kind":"Pod","spec":{}})", "not a pod: no metadata");
  ExpectError(R"({"metadata":{"namespace":"ml","uid":"u"}})",
              "pod in namespace \"ml\": metadata.name: missing");
  ExpectError(R"({"metadata":{"namespace":"ml","name":"trainer-0"}})",
              "pod ml/trainer-0: metadata.uid: missing");
  std::string bad_time = PodJson(kSpec);
  bad_time.replace(bad_time.find("2026-11-20T08:00:00Z"), 20, "yesterday");
  ExpectError(bad_time,
              "pod ml/trainer-0: metadata.creationTimestamp: invalid RFC 3339 "
              "time \"yesterday\"");
  ExpectError(PodJson(R"({"containers":[{},)" +
                      C("a", Req(R"({"nvidia.com/gpu":"eight"})")) + "]}"),
              "pod ml/trainer-0: spec.containers[1].resources.requests"
              "[\"nvidia.com/gpu\"]: invalid quantity \"eight\"");
  ExpectError(PodJson(R"({"overhead":{"cpu":"1x"}})"),
              "pod ml/trainer-0: spec.overhead[\"cpu\"]: invalid quantity");
  ExpectError(PodJson(R"({"containers":{}})"),
              "pod ml/trainer-0: spec.containers: expected an array");
  ExpectError(PodJson(kSpec, R"({"containerStatuses":[{"restartCount":"2"}]})"),
              "pod ml/trainer-0: status.containerStatuses[0].restartCount: "
              "expected a 32-bit integer");
  ExpectError(PodJson(kSpec, R"({"conditions":[{"type":"Ready",)"
                             R"("lastTransitionTime":"2026-11-20"}]})"),
              "pod ml/trainer-0: status.conditions[0].lastTransitionTime:");
  ExpectError(PodJson(R"({"containers":[)" +
                      C("a", Req(R"({"nvidia.com/gpu":"3000000000"})")) + "]}"),
              "pod ml/trainer-0: spec: the request for GPUs is out of range");
}

}  // namespace
}  // namespace lens::controller
