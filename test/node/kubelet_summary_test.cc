// ParseKubeletStatsSummary on kubelet /stats/summary documents
// (test/fixtures/node/README.md) and on broken ones.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "lens/kubelet.h"

namespace lens {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(LENS_FIXTURES_DIR) + "/node/" + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

std::string ErrorOf(std::string_view json) {
  auto parsed = ParseKubeletStatsSummary(json);
  EXPECT_FALSE(parsed.ok()) << json;
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  return parsed.status().message();
}

TEST(KubeletSummaryTest, ReadsNodeAndPodEphemeralStorage) {
  auto summary =
      ParseKubeletStatsSummary(Fixture("stats_summary_gpu_node.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->node_name, "mi300x-gpu-node-017");
  EXPECT_EQ(summary->capacity_bytes, 3838499037184u);
  EXPECT_EQ(summary->available_bytes, 3201174728704u);
  EXPECT_EQ(summary->used_bytes, 442289704960u);
  ASSERT_EQ(summary->pods.size(), 6u);
  // Sorted by namespace, then name (the document lists them unsorted).
  const char* order[][2] = {{"kube-system", "amdgpu-device-plugin-x7m2c"},
                            {"kube-system", "kube-proxy-7xk2p"},
                            {"lens-system", "lens-node-agent-h8d9q"},
                            {"ml-training", "data-prep-28851180-zq9lt"},
                            {"ml-training", "llama3-70b-pretrain-worker-0"},
                            {"ml-training", "llama3-70b-pretrain-worker-3"}};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(summary->pods[i].namespace_name, order[i][0]);
    EXPECT_EQ(summary->pods[i].name, order[i][1]);
  }
  const PodEphemeralStorage& worker3 = summary->pods[5];
  EXPECT_EQ(worker3.uid, "5f1c9a7e-3b2d-4c8e-9a61-0d7e2f4b8c13");
  EXPECT_EQ(worker3.used_bytes, 57991702151u);
  EXPECT_EQ(worker3.capacity_bytes, summary->capacity_bytes);
  EXPECT_EQ(worker3.available_bytes, summary->available_bytes);
  EXPECT_EQ(summary->pods[1].used_bytes, 12709888u);
}

TEST(KubeletSummaryTest, PodsWithoutEphemeralStorageHaveNoValues) {
  auto summary =
      ParseKubeletStatsSummary(Fixture("stats_summary_gpu_node.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  for (size_t i : {0, 3}) {  // just admitted; finished job
    const PodEphemeralStorage& pod = summary->pods[i];
    SCOPED_TRACE(pod.name);
    EXPECT_FALSE(pod.uid.empty());
    EXPECT_EQ(pod.used_bytes, std::nullopt);
    EXPECT_EQ(pod.capacity_bytes, std::nullopt);
    EXPECT_EQ(pod.available_bytes, std::nullopt);
  }
}

TEST(KubeletSummaryTest, OldKubeletWithoutEphemeralStorageParses) {
  auto summary =
      ParseKubeletStatsSummary(Fixture("stats_summary_kubelet1.7.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->node_name, "gpu-worker-2");
  EXPECT_EQ(summary->used_bytes, 39407833088u);
  EXPECT_EQ(summary->capacity_bytes, 211243687936u);
  ASSERT_EQ(summary->pods.size(), 2u);
  EXPECT_EQ(summary->pods[0].name, "tf-resnet50-2");
  for (const PodEphemeralStorage& pod : summary->pods) {
    EXPECT_EQ(pod.used_bytes, std::nullopt) << pod.name;
  }
}

TEST(KubeletSummaryTest, AbsentAndNullFieldsAreNotReported) {
  auto bare = ParseKubeletStatsSummary(R"({"node":{}})");
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(bare->node_name, "");
  EXPECT_EQ(bare->capacity_bytes, std::nullopt);
  EXPECT_TRUE(bare->pods.empty());
  auto nulls = ParseKubeletStatsSummary(
      R"({"node":{"nodeName":"n1","fs":{"usedBytes":null,"capacityBytes":10}},)"
      R"("pods":[{"podRef":{"name":"p","namespace":"ns"},)"
      R"("ephemeral-storage":null}]})");
  ASSERT_TRUE(nulls.ok()) << nulls.status();
  EXPECT_EQ(nulls->used_bytes, std::nullopt);
  EXPECT_EQ(nulls->capacity_bytes, 10u);
  ASSERT_EQ(nulls->pods.size(), 1u);
  EXPECT_EQ(nulls->pods[0].uid, "");
  EXPECT_EQ(nulls->pods[0].used_bytes, std::nullopt);
}

TEST(KubeletSummaryTest, MissingRequiredFieldsNameTheirPath) {
  EXPECT_NE(ErrorOf(R"({"pods":[]})").find("node: missing"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"node":{},"pods":[{"startTime":null}]})")
                .find("pods[0].podRef: missing"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(R"({"node":{},"pods":[{"podRef":{"name":"a","namespace":"b"}},)"
              R"({"podRef":{"name":"c"}}]})")
          .find("pods[1].podRef.namespace: missing"),
      std::string::npos);
}

struct WrongType {
  const char* json;
  const char* error;
};

constexpr WrongType kWrongTypes[] = {
    {R"({"node":{},"pods":[{"podRef":{"name":"a","namespace":"b"}},)"
     R"({"podRef":{"name":"c","namespace":"d"},"ephemeral-storage":)"
     R"({"usedBytes":"12"}}]})",
     "pods[1].ephemeral-storage.usedBytes: expected a number"},
    {R"({"node":{},"pods":[{"podRef":{"name":"a","namespace":"b"},)"
     R"("ephemeral-storage":{"availableBytes":-5}}]})",
     "pods[0].ephemeral-storage.availableBytes: expected a non-negative "
     "integer"},
    {R"({"node":{},"pods":[{"podRef":{"name":"a","namespace":"b"},)"
     R"("ephemeral-storage":5}]})",
     "pods[0].ephemeral-storage: expected an object"},
    {R"({"node":{"fs":{"capacityBytes":true}}})",
     "node.fs.capacityBytes: expected a number"},
    {R"({"node":{"fs":{"usedBytes":1.5}}})",
     "node.fs.usedBytes: expected a non-negative integer"},
    {R"({"node":{"nodeName":7}})", "node.nodeName: expected a string"},
    {R"({"node":[]})", "node: expected an object"},
    {R"({"node":{},"pods":{}})", "pods: expected an array"},
    {R"({"node":{},"pods":["x"]})", "pods[0]: expected an object"},
    {R"({"node":{},"pods":[{"podRef":{"name":1,"namespace":"b"}}]})",
     "pods[0].podRef.name: expected a string"},
    {R"({"node":{},"pods":[{"podRef":"a/b"}]})",
     "pods[0].podRef: expected an object"},
    {R"([{"node":{}}])", "expected an object"},
};

TEST(KubeletSummaryTest, WrongTypesNameTheJsonPath) {
  for (const WrongType& c : kWrongTypes) {
    std::string error = ErrorOf(c.json);
    EXPECT_NE(error.find(c.error), std::string::npos)
        << "got: " << error << "\nwant: " << c.error;
  }
}

TEST(KubeletSummaryTest, IntegralDoublesAreAccepted) {
  auto summary =
      ParseKubeletStatsSummary(R"({"node":{"fs":{"usedBytes":4.096e3}}})");
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->used_bytes, 4096u);
}

TEST(KubeletSummaryTest, TextThatIsNotJsonGivesTheOffset) {
  EXPECT_NE(ErrorOf("").find("invalid JSON at offset 0"), std::string::npos);
  EXPECT_NE(ErrorOf("404 page not found\n").find("invalid JSON at offset"),
            std::string::npos);
  const std::string whole = Fixture("stats_summary_gpu_node.json");
  const std::string cut = whole.substr(0, whole.size() / 2);
  std::string error = ErrorOf(cut);
  EXPECT_NE(error.find("invalid JSON at offset " + std::to_string(cut.size())),
            std::string::npos)
      << error;
  EXPECT_NE(ErrorOf(R"({"node":{}} trailing)").find("invalid JSON"),
            std::string::npos);
}

}  // namespace
}  // namespace lens
