// ContainerJson / ContainersJson / ContainersText on records like the tracker
// builds from containerd: 64-hex container ids, the CRI labels containerd
// keeps on Kubernetes containers, device keys from the GPU and RDMA probes.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "lens/containers.h"

namespace lens {
namespace {

using std::chrono::microseconds;

Timestamp At(int64_t us) { return Timestamp(microseconds(us)); }

const Labels kLabels = {
    {"io.cri-containerd.kind", "container"},
    {"io.kubernetes.container.name", "pytorch"},
    {"io.kubernetes.pod.name", "llama3-70b-pretrain-worker-0"},
    {"io.kubernetes.pod.namespace", "ml-training"},
    {"io.kubernetes.pod.uid", "0f5d7c2e-9b1a-4c3e-8d6f-2a7b9c1e4f60"}};

ContainerRecord Running() {
  ContainerRecord c;
  c.container_id =
      "3f2a9c1b7e6d5f4a8b0c2d1e9f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a";
  c.node = "gpu-node-7";
  c.runtime_namespace = "k8s.io";
  c.pod_uid = "0f5d7c2e-9b1a-4c3e-8d6f-2a7b9c1e4f60";
  c.pod_name = "llama3-70b-pretrain-worker-0";
  c.pod_namespace = "ml-training";
  c.container_name = "pytorch";
  c.image = "docker.io/rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_2.3.0";
  c.state = ContainerState::kRunning;
  c.pid = 41873;
  c.labels = kLabels;
  c.created_at = At(1718900000123456);
  c.started_at = At(1718900001500000);
  c.updated_at = At(1718900001500000);
  c.devices = {
      {DeviceKind::kGpu, "692251001124", "0000:11:00.0", "pod-resources"},
      {DeviceKind::kGpu, "692251001187", "0000:2f:00.0", "pod-resources"},
      {DeviceKind::kRdma, "mlx5_0", "0000:0c:00.0", "pod-resources"},
  };
  return c;
}

rapidjson::Document Parse(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag |
            rapidjson::kParseFullPrecisionFlag>(text.c_str(), text.size());
  EXPECT_FALSE(doc.HasParseError())
      << rapidjson::GetParseError_En(doc.GetParseError()) << " at "
      << doc.GetErrorOffset() << " in " << text;
  return doc;
}

std::string Get(const rapidjson::Value& v, const char* key) {
  EXPECT_TRUE(v.HasMember(key) && v[key].IsString()) << key;
  return v.HasMember(key) && v[key].IsString() ? v[key].GetString() : "";
}

TEST(ContainerJsonTest, WritesIdentityStateTimesAndDevices) {
  const std::string text = ContainerJson(Running());
  const rapidjson::Document doc = Parse(text);
  ASSERT_TRUE(doc.IsObject());
  EXPECT_EQ(Get(doc, "containerId"), Running().container_id);
  EXPECT_EQ(Get(doc, "runtimeNamespace"), "k8s.io");
  EXPECT_EQ(Get(doc, "podUid"), "0f5d7c2e-9b1a-4c3e-8d6f-2a7b9c1e4f60");
  EXPECT_EQ(Get(doc, "podName"), "llama3-70b-pretrain-worker-0");
  EXPECT_EQ(Get(doc, "podNamespace"), "ml-training");
  EXPECT_EQ(Get(doc, "name"), "pytorch");
  EXPECT_EQ(Get(doc, "image"), Running().image);
  EXPECT_EQ(Get(doc, "state"), "running");
  EXPECT_FALSE(doc["privileged"].GetBool());
  EXPECT_EQ(doc["pid"].GetInt64(), 41873);
  EXPECT_TRUE(doc["exitCode"].IsNull());
  EXPECT_DOUBLE_EQ(doc["createdAt"].GetDouble(), 1718900000.123456);
  EXPECT_DOUBLE_EQ(doc["startedAt"].GetDouble(), 1718900001.5);
  EXPECT_TRUE(doc["finishedAt"].IsNull());
  EXPECT_DOUBLE_EQ(doc["updatedAt"].GetDouble(), 1718900001.5);
  EXPECT_EQ(Get(doc["labels"], "io.kubernetes.pod.namespace"), "ml-training");
  EXPECT_EQ(doc["labels"].MemberCount(), 5u);

  const rapidjson::Value& devices = doc["devices"];
  ASSERT_TRUE(devices.IsArray());
  ASSERT_EQ(devices.Size(), 3u);
  EXPECT_EQ(Get(devices[0], "kind"), "gpu");
  EXPECT_EQ(Get(devices[0], "deviceKey"), "692251001124");
  EXPECT_EQ(Get(devices[0], "bdf"), "0000:11:00.0");
  EXPECT_EQ(Get(devices[0], "source"), "pod-resources");
  EXPECT_EQ(Get(devices[2], "kind"), "rdma");
  EXPECT_EQ(Get(devices[2], "deviceKey"), "mlx5_0");

  // Nothing beyond the documented fields (no env, mounts or spec): the one
  // container shape (core/record_json.h), with what the node knows first
  // hand at the end.
  std::vector<std::string> keys;
  for (const auto& m : doc.GetObject()) keys.push_back(m.name.GetString());
  EXPECT_EQ(keys,
            (std::vector<std::string>{
                "containerId", "node", "podUid", "podName", "podNamespace",
                "name", "image", "state", "privileged", "exitCode", "createdAt",
                "startedAt", "finishedAt", "devices", "runtimeNamespace", "pid",
                "updatedAt", "labels"}));
}

TEST(ContainerJsonTest, TimesKeepEveryMicrosecond) {
  ContainerRecord c = Running();
  c.created_at = At(1718900000000001);
  c.started_at = At(0);    // the epoch: not known
  c.finished_at = At(-1);  // before the epoch: sign on the whole value
  const std::string text = ContainerJson(c);
  EXPECT_NE(text.find(R"("createdAt":1718900000.000001)"), std::string::npos)
      << text;
  EXPECT_NE(text.find(R"("startedAt":null)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("finishedAt":-0.000001)"), std::string::npos) << text;
  Parse(text);
}

TEST(ContainerJsonTest, ExitedContainerHasExitCodeAndFinishTime) {
  ContainerRecord c = Running();
  c.state = ContainerState::kExited;
  c.pid = 0;
  c.exit_code = 137;
  c.finished_at = At(1718903600250000);
  const rapidjson::Document doc = Parse(ContainerJson(c));
  EXPECT_EQ(doc["exitCode"].GetInt(), 137);
  EXPECT_DOUBLE_EQ(doc["finishedAt"].GetDouble(), 1718903600.25);
  EXPECT_EQ(Get(doc, "state"), "exited");
}

TEST(ContainerJsonTest, CreatedContainerHasNullsWhereNothingHappenedYet) {
  ContainerRecord c;
  c.container_id = "b1";
  c.state = ContainerState::kCreated;
  const rapidjson::Document doc = Parse(ContainerJson(c));
  EXPECT_TRUE(doc["exitCode"].IsNull());
  EXPECT_TRUE(doc["startedAt"].IsNull());
  EXPECT_TRUE(doc["finishedAt"].IsNull());
  EXPECT_TRUE(doc["labels"].IsObject());
  EXPECT_EQ(doc["labels"].MemberCount(), 0u);
  EXPECT_TRUE(doc["devices"].IsArray());
  EXPECT_EQ(Get(doc, "podUid"), "");
}

TEST(ContainerJsonTest, PrivilegedContainerIsMarkedAndOwnsNoDevices) {
  ContainerRecord c = Running();
  c.container_name = "amdgpu-device-plugin";
  c.privileged = true;
  c.devices.clear();
  const rapidjson::Document doc = Parse(ContainerJson(c));
  EXPECT_TRUE(doc["privileged"].GetBool());
  EXPECT_EQ(doc["devices"].Size(), 0u);
}

TEST(ContainerJsonTest, EscapesQuotesControlCharactersAndKeepsUnicode) {
  ContainerRecord c = Running();
  c.image = "registry.example/\"quoted\"\\path:1";
  c.container_name = "line1\nline2\ttab\x01\x1f";
  c.labels = {{"team", "Forschung \xC3\xA4\xC3\xB6\xC3\xBC"},
              {"owner", "山田"},
              {"quote", "a\"b\\c"},
              {"ctl", "x\x01y"}};
  const std::string text = ContainerJson(c);
  EXPECT_EQ(text.find('\n'), std::string::npos) << "raw newline in " << text;
  EXPECT_NE(text.find(R"(line1\nline2\ttab\u0001\u001f)"), std::string::npos)
      << text;
  const rapidjson::Document doc = Parse(text);
  EXPECT_EQ(Get(doc, "image"), c.image);
  EXPECT_EQ(Get(doc, "name"), c.container_name);
  EXPECT_EQ(Get(doc["labels"], "team"), "Forschung \xC3\xA4\xC3\xB6\xC3\xBC");
  EXPECT_EQ(Get(doc["labels"], "owner"), "山田");
  EXPECT_EQ(Get(doc["labels"], "quote"), "a\"b\\c");
  EXPECT_EQ(Get(doc["labels"], "ctl"), "x\x01y");
}

TEST(ContainerJsonTest, InvalidUtf8BecomesReplacementCharacter) {
  ContainerRecord c = Running();
  c.pod_name = "worker-\xff\xfe";
  c.labels = {{"k\xc3", "v\xe6\x97"}};
  const rapidjson::Document doc = Parse(ContainerJson(c));  // validates UTF-8
  EXPECT_EQ(Get(doc, "podName"), "worker-\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(Get(doc["labels"], "k\xEF\xBF\xBD"), "v\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(ContainerJsonTest, ContainersJsonWrapsTheList) {
  EXPECT_EQ(ContainersJson({}), R"({"containers":[]})");
  const rapidjson::Document doc = Parse(ContainersJson({Running(), Running()}));
  ASSERT_TRUE(doc["containers"].IsArray());
  EXPECT_EQ(doc["containers"].Size(), 2u);
  EXPECT_EQ(Get(doc["containers"][1], "name"), "pytorch");
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ContainersTextTest, EmptyListSaysSo) {
  EXPECT_EQ(ContainersText({}), "no containers\n");
}

TEST(ContainersTextTest, AlignedTableWithDevicesBySource) {
  ContainerRecord plugin;
  plugin.container_id = "9e8d7c6b5a4f3e2d1c0b";
  plugin.pod_namespace = "kube-system";
  plugin.pod_name = "amdgpu-device-plugin-daemonset-x7k2p";
  plugin.container_name = "amdgpu-dp-cntr";
  plugin.state = ContainerState::kRunning;
  plugin.privileged = true;
  ContainerRecord mixed = Running();
  mixed.container_id = "c0ffee";
  mixed.devices.back().source = "oci-spec";
  ContainerRecord bare;  // a container outside Kubernetes
  bare.container_id = "abc";

  const std::vector<std::string> lines =
      Lines(ContainersText({Running(), plugin, mixed, bare}));
  ASSERT_EQ(lines.size(), 5u);
  const std::vector<std::string> headers = {
      "CONTAINER", "POD", "CONTAINER NAME", "STATE", "PRIV", "DEVICES"};
  std::vector<size_t> at;
  for (const std::string& h : headers) at.push_back(lines[0].find(h));
  for (size_t i = 1; i < at.size(); ++i) ASSERT_GT(at[i], at[i - 1]);

  const auto cell = [&](size_t row, size_t col) {
    const std::string& line = lines[row];
    const size_t end = col + 1 < at.size() ? at[col + 1] : line.size();
    std::string s = line.substr(at[col], end - at[col]);
    return s.substr(0, s.find_last_not_of(' ') + 1);
  };
  EXPECT_EQ(cell(1, 0), "3f2a9c1b7e6d");
  EXPECT_EQ(cell(1, 1), "ml-training/llama3-70b-pretrain-worker-0");
  EXPECT_EQ(cell(1, 2), "pytorch");
  EXPECT_EQ(cell(1, 3), "running");
  EXPECT_EQ(cell(1, 4), "no");
  EXPECT_EQ(cell(1, 5),
            "gpu:692251001124,692251001187 rdma:mlx5_0 (pod-resources)");
  EXPECT_EQ(cell(2, 1), "kube-system/amdgpu-device-plugin-daemonset-x7k2p");
  EXPECT_EQ(cell(2, 4), "yes");
  EXPECT_EQ(cell(2, 5), "-");
  EXPECT_EQ(cell(3, 0), "c0ffee");
  EXPECT_EQ(cell(3, 5),
            "gpu:692251001124,692251001187 (pod-resources) rdma:mlx5_0 "
            "(oci-spec)");
  EXPECT_EQ(cell(4, 1), "-");
  EXPECT_EQ(cell(4, 3), "-");
}

TEST(ContainersTextTest, NamesCannotBreakTheTerminal) {
  ContainerRecord c = Running();
  c.container_name = "evil\x1b[2J\nname";
  c.pod_name = "pod-\xff";
  const std::string text = ContainersText({c});
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  const std::vector<std::string> lines = Lines(text);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("evil?[2J?name"), std::string::npos) << text;
  EXPECT_NE(lines[1].find("pod-\xEF\xBF\xBD"), std::string::npos) << text;
}

TEST(ContainersTextTest, AlignsNonAsciiByCharacters) {
  ContainerRecord a = Running();
  a.container_name = "träger";  // 6 characters, 7 bytes
  ContainerRecord b = Running();
  b.container_name = "tragen";
  const std::vector<std::string> lines = Lines(ContainersText({a, b}));
  ASSERT_EQ(lines.size(), 3u);
  const size_t state_a = lines[1].find("running");
  const size_t state_b = lines[2].find("running");
  EXPECT_EQ(state_a, state_b + 1);  // one more byte, the same column
}

}  // namespace
}  // namespace lens
