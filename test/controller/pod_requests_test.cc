// ParseQuantity* and the effective request DecodePod computes (init and
// sidecar containers, overhead, limits standing in for requests, pod-level
// resources, MIG, custom GPU patterns), on pods built here rule by rule.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "controller/pod_model.h"

namespace lens::controller {
namespace {

const GpuResourceMatcher kDefaults;

std::string PodJson(const std::string& spec) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"trainer-0",)"
         R"("namespace":"ml","uid":"0b7c-uid"},"spec":)" +
         spec + R"(,"status":{"phase":"Running"}})";
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

PodRequests RequestsOf(const std::string& spec,
                       const GpuResourceMatcher& gpus = kDefaults) {
  StatusOr<PodView> pod = DecodePod(PodJson(spec), gpus);
  EXPECT_TRUE(pod.ok()) << pod.status();
  EXPECT_TRUE(!pod.ok() || pod->requests.gpus == 0 ||
              MayRequestGpus(PodJson(spec), gpus));
  return pod.ok() ? pod->requests : PodRequests();
}

// ---- quantities ------------------------------------------------------------

TEST(QuantityTest, ParsesKubernetesForms) {
  struct Case {
    const char* text;
    int64_t millis;
    int64_t whole;
  };
  const Case cases[] = {
      {"0", 0, 0},
      {"500m", 500, 1},
      {"1", 1000, 1},
      {"96", 96000, 96},
      {"1.5", 1500, 2},
      {"+5", 5000, 5},
      {"-0", 0, 0},
      {".5", 500, 1},
      {"5.", 5000, 5},
      {"00001.5000", 1500, 2},
      {"1.0001", 1001, 2},  // 1000.1 millis, rounded up
      {"1n", 1, 1},
      {"100u", 1, 1},
      {"2500u", 3, 1},
      {"1k", 1000000, 1000},
      {"1M", 1000000000, 1000000},
      {"1G", 1000000000000, 1000000000},
      {"2T", 2000000000000000, 2000000000000},
      {"1P", 1000000000000000000, 1000000000000000},
      {"1Ki", 1024000, 1024},
      {"512Mi", 536870912000, 536870912},
      {"0.5Gi", 536870912000, 536870912},
      {"1.5Ki", 1536000, 1536},
      {"0.1Ki", 102400, 103},  // 102.4 bytes, rounded up
      {"1Ti", 1099511627776000, 1099511627776},
      {"1e3", 1000000, 1000},
      {"1E3", 1000000, 1000},
      {"1e+2", 100000, 100},
      {"1e-3", 1, 1},
      {"1.5e1", 15000, 15},
      {"0e999", 0, 0},
      {"1e-100000000", 1, 1},
  };
  for (const Case& c : cases) {
    auto millis = ParseQuantityMillis(c.text);
    ASSERT_TRUE(millis.ok()) << c.text << ": " << millis.status();
    EXPECT_EQ(*millis, c.millis) << c.text;
    auto whole = ParseQuantity(c.text);
    ASSERT_TRUE(whole.ok()) << c.text << ": " << whole.status();
    EXPECT_EQ(*whole, c.whole) << c.text;
  }
}

TEST(QuantityTest, ExaAloneIsASuffixNotAnExponent) {
  EXPECT_EQ(*ParseQuantity("1E"), 1000000000000000000);
  EXPECT_EQ(*ParseQuantity("8E"), 8000000000000000000);
  EXPECT_EQ(*ParseQuantity("7Ei"), int64_t{7} << 60);
  EXPECT_EQ(*ParseQuantity("9223372036854775807"), INT64_MAX);
}

TEST(QuantityTest, RefusesValuesThatDoNotFit) {
  for (const char* big : {"12E", "8Ei", "9223372036854775808", "1e19",
                          "100000000000000000000000m", "1e100000"}) {
    auto q = ParseQuantity(big);
    ASSERT_FALSE(q.ok()) << big;
    EXPECT_NE(q.status().message().find("too large"), std::string::npos);
  }
  EXPECT_FALSE(ParseQuantityMillis("1E").ok());  // 10^21 millis
  EXPECT_TRUE(ParseQuantityMillis("9P").ok());
}

TEST(QuantityTest, RefusesMalformedTextNamingIt) {
  for (const char* bad :
       {"",      "abc", "1x",    "1Kb", "1ki",  "1KiB",  "K",    "Mi",
        "1.2.3", "-1",  "-500m", "1e",  "1e+",  "1e3.5", "1 ",   " 1",
        ".",     "+",   "--1",   "1m5", "0x10", "1,5",   "1_000"}) {
    auto q = ParseQuantityMillis(bad);
    ASSERT_FALSE(q.ok()) << bad;
    EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(q.status().message().find("\"" + std::string(bad) + "\""),
              std::string::npos)
        << q.status();
  }
}

// ---- the effective request --------------------------------------------------

TEST(PodRequestsTest, SumsAppContainers) {
  const PodRequests r = RequestsOf(
      R"({"containers":[)" +
      C("a", Req(R"({"cpu":"500m","memory":"1Gi","amd.com/gpu":"4"})")) + "," +
      C("b", Req(R"({"cpu":"1.5","memory":"512Mi","amd.com/gpu":"4",)"
                 R"("rdma/hca_shared_devices_a":"1","rdma/roce":"2"})")) +
      "]}");
  EXPECT_EQ(r.cpu_millis, 2000);
  EXPECT_EQ(r.memory_bytes, (int64_t{3} << 29));
  EXPECT_EQ(r.gpus, 8);
  EXPECT_EQ(r.gpu_resource, "amd.com/gpu");
  EXPECT_EQ(r.gpu_vendor, "amd");
  EXPECT_EQ(r.rdma, 3);
}

TEST(PodRequestsTest, InitContainerBiggerThanAppSumWins) {
  const std::string app =
      Req(R"({"cpu":"4","memory":"16Gi","amd.com/gpu":"2"})");
  const PodRequests r = RequestsOf(
      R"({"initContainers":[)" +
      C("preflight", Req(R"({"cpu":"8","memory":"64Gi","amd.com/gpu":"8"})")) +
      "," + C("small", Req(R"({"cpu":"1"})")) + R"(],"containers":[)" +
      C("a", app) + "," + C("b", app) + "]}");
  EXPECT_EQ(r.gpus, 8);           // max(2+2, 8)
  EXPECT_EQ(r.cpu_millis, 8000);  // max(4+4, 8, 1)
  EXPECT_EQ(r.memory_bytes, int64_t{64} << 30);
}

TEST(PodRequestsTest, SidecarsAddAndCountForLaterInitContainers) {
  // side-a (1), init-b (4), side-c (2), init-d (3), app (1):
  // running: 1 + 2 + 1 = 4; init-b needs 4 + 1 = 5; init-d 3 + 1 + 2 = 6.
  const PodRequests r = RequestsOf(
      R"({"initContainers":[)" +
      C("side-a", Req(R"({"cpu":"1","nvidia.com/gpu":"1"})"), "Always") + "," +
      C("init-b", Req(R"({"cpu":"4"})")) + "," +
      C("side-c", Req(R"({"cpu":"2"})"), "Always") + "," +
      C("init-d", Req(R"({"cpu":"3","nvidia.com/gpu":"1"})")) +
      R"(],"containers":[)" +
      C("app", Req(R"({"cpu":"1","nvidia.com/gpu":"4"})")) + "]}");
  EXPECT_EQ(r.cpu_millis, 6000);
  EXPECT_EQ(r.gpus, 5);  // max(1 + 4, 1 + 1)
}

TEST(PodRequestsTest, AnInitContainerWithOtherRestartPolicyIsNoSidecar) {
  const PodRequests r = RequestsOf(
      R"({"initContainers":[)" + C("init", Req(R"({"cpu":"2"})"), "OnFailure") +
      R"(],"containers":[)" + C("app", Req(R"({"cpu":"1"})")) + "]}");
  EXPECT_EQ(r.cpu_millis, 2000);
}

TEST(PodRequestsTest, AddsOverhead) {
  const PodRequests r = RequestsOf(
      R"({"overhead":{"cpu":"250m","memory":"120Mi"},"initContainers":[)" +
      C("init", Req(R"({"cpu":"2"})")) + R"(],"containers":[)" +
      C("app", Req(R"({"cpu":"1","memory":"1Gi"})")) + "]}");
  EXPECT_EQ(r.cpu_millis, 2250);  // max(1, 2) + 0.25
  EXPECT_EQ(r.memory_bytes, (int64_t{1} << 30) + 120 * (int64_t{1} << 20));
}

TEST(PodRequestsTest, LimitsStandInForMissingRequests) {
  const PodRequests r = RequestsOf(
      R"({"containers":[)" +
      C("limits-only", R"({"limits":{"nvidia.com/gpu":"4","cpu":"2"}})") + "," +
      C("both", R"({"requests":{"cpu":"1"},"limits":{"cpu":"3",)"
                R"("memory":"2Gi"}})") +
      "]}");
  EXPECT_EQ(r.gpus, 4);
  EXPECT_EQ(r.gpu_vendor, "nvidia");
  EXPECT_EQ(r.cpu_millis, 3000);  // 2 (limit) + 1 (request, not its limit)
  EXPECT_EQ(r.memory_bytes, int64_t{2} << 30);
}

TEST(PodRequestsTest, PodLevelResourcesReplaceCpuAndMemory) {
  const PodRequests r = RequestsOf(
      R"({"resources":{"requests":{"cpu":"16","nvidia.com/gpu":"99"},)"
      R"("limits":{"memory":"8Gi"}},"containers":[)" +
      C("app", Req(R"({"cpu":"1","memory":"1Gi","nvidia.com/gpu":"2"})")) +
      "]}");
  EXPECT_EQ(r.cpu_millis, 16000);
  EXPECT_EQ(r.memory_bytes, int64_t{8} << 30);
  EXPECT_EQ(r.gpus, 2);  // not a pod-level resource
}

TEST(PodRequestsTest, CountsMigSlicesAndNamesTheLargest) {
  const PodRequests r = RequestsOf(
      R"({"containers":[)" +
      C("a",
        Req(R"({"nvidia.com/mig-3g.40gb":"1","nvidia.com/mig-1g.10gb":"2"})")) +
      "]}");
  EXPECT_EQ(r.gpus, 3);
  EXPECT_EQ(r.gpu_resource, "nvidia.com/mig-1g.10gb");
  EXPECT_EQ(r.gpu_vendor, "nvidia");
}

TEST(PodRequestsTest, BreaksTiesByName) {
  const PodRequests r = RequestsOf(
      R"({"containers":[)" +
      C("a", Req(R"({"nvidia.com/gpu":"2","amd.com/gpu":"2"})")) + "]}");
  EXPECT_EQ(r.gpus, 4);
  EXPECT_EQ(r.gpu_resource, "amd.com/gpu");
}

TEST(PodRequestsTest, ZeroGpusNameNoResource) {
  const PodRequests r = RequestsOf(
      R"({"containers":[)" + C("a", Req(R"({"nvidia.com/gpu":"0"})")) + "]}");
  EXPECT_EQ(r.gpus, 0);
  EXPECT_EQ(r.gpu_resource, "");
  EXPECT_EQ(r.gpu_vendor, "");
}

TEST(PodRequestsTest, CustomPatternsChooseWhatCounts) {
  const std::string spec =
      R"({"containers":[)" +
      C("a", Req(R"({"habana.ai/gaudi":"8","gpu.intel.com/i915":"1",)"
                 R"("nvidia.com/gpu":"2"})")) +
      "]}";
  const GpuResourceMatcher custom({"habana.ai/*", "gpu.intel.com/i915"});
  EXPECT_TRUE(custom.Matches("habana.ai/gaudi2"));
  EXPECT_FALSE(custom.Matches("habana.ai"));
  EXPECT_FALSE(custom.Matches("gpu.intel.com/i915x"));
  const PodRequests r = RequestsOf(spec, custom);
  EXPECT_EQ(r.gpus, 9);
  EXPECT_EQ(r.gpu_resource, "habana.ai/gaudi");
  EXPECT_EQ(r.gpu_vendor, "habana.ai");
  EXPECT_EQ(RequestsOf(spec).gpus, 2);  // the defaults see nvidia.com/gpu only
  EXPECT_TRUE(kDefaults.Matches("nvidia.com/mig-2g.20gb"));
  EXPECT_FALSE(kDefaults.Matches("nvidia.com/gpu.shared"));
}

}  // namespace
}  // namespace lens::controller
