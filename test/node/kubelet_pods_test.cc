#include <gtest/gtest.h>

#include "lens/kubelet.h"

namespace lens {
namespace {

std::string Pod(std::string_view phase, std::string_view containers,
                std::string_view init = "[]") {
  return R"({"metadata":{"name":"p"},"spec":{"containers":)" +
         std::string(containers) + R"(,"initContainers":)" + std::string(init) +
         R"(},"status":{"phase":")" + std::string(phase) + R"("}})";
}

TEST(GpuAllocationTest, SumsGpuLimitsOfLivePodsCountingEachPodOnce) {
  const std::string list =
      R"({"kind":"PodList","items":[)" +
      Pod("Running",
          R"([{"name":"a","resources":{"limits":{"amd.com/gpu":"4","cpu":"8"}}},
              {"name":"b","resources":{"limits":{"amd.com/gpu":"2"}}}])") +
      "," +
      Pod("Pending",
          R"([{"name":"c","resources":{"requests":{"nvidia.com/gpu":1}}}])") +
      "," +
      Pod("Succeeded",
          R"([{"name":"d","resources":{"limits":{"amd.com/gpu":"8"}}}])") +
      "," + Pod("Running", R"([{"name":"e","resources":{}}])") + "]}";
  auto a = ParseKubeletPodsGpuAllocation(list);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->allocated, 7);
  EXPECT_EQ(a->pods, 2);
}

TEST(GpuAllocationTest, InitContainersCountAsTheirMaximumNotTheirSum) {
  const std::string list =
      R"({"items":[)" +
      Pod("Running",
          R"([{"name":"main","resources":{"limits":{"amd.com/gpu":"1"}}}])",
          R"([{"name":"i1","resources":{"limits":{"amd.com/gpu":"4"}}},
              {"name":"i2","resources":{"limits":{"amd.com/gpu":"2"}}}])") +
      "]}";
  auto a = ParseKubeletPodsGpuAllocation(list);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->allocated, 4);
}

TEST(GpuAllocationTest, EmptyListIsZero) {
  auto a = ParseKubeletPodsGpuAllocation(R"({"kind":"PodList","items":[]})");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->allocated, 0);
  EXPECT_EQ(a->pods, 0);
}

TEST(GpuAllocationTest, BadInputNamesWhereItIsWrong) {
  auto not_json = ParseKubeletPodsGpuAllocation("{");
  EXPECT_EQ(not_json.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(not_json.status().message().find("offset"), std::string::npos);
  auto bad = ParseKubeletPodsGpuAllocation(
      R"({"items":[)" +
      Pod("Running",
          R"([{"name":"a","resources":{"limits":{"amd.com/gpu":"1.5"}}}])") +
      "]}");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(
                "items[0].spec.containers[0].resources.limits.amd.com/gpu"),
            std::string::npos)
      << bad.status();
  EXPECT_FALSE(ParseKubeletPodsGpuAllocation(R"({"items":{}})").ok());
}

}  // namespace
}  // namespace lens
