// ParseOciSpec and AllowsEveryDevice on the config.json shapes containerd
// writes (test/fixtures/containers; README.md there says where each shape
// comes from).
#include "containers/oci_spec.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace lens::containers {
namespace {

std::string ReadFixture(const std::string& name) {
  const std::string path =
      std::string(LENS_FIXTURES_DIR) + "/containers/" + name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

OciDeviceRule Rule(bool allow, std::string type = "",
                   std::optional<int64_t> major = std::nullopt,
                   std::optional<int64_t> minor = std::nullopt) {
  return OciDeviceRule{allow, std::move(type), major, minor, "rwm"};
}

TEST(OciSpecTest, ReadsTheDeviceFactsOfACriContainer) {
  auto facts = ParseOciSpec(ReadFixture("cri-amd-1gpu.json"));
  ASSERT_TRUE(facts.ok()) << facts.status();
  ASSERT_EQ(facts->devices.size(), 3u);
  EXPECT_EQ(facts->devices[0],
            (OciDeviceNode{"/dev/kfd", "c", int64_t{236}, int64_t{0}}));
  EXPECT_EQ(facts->devices[1],
            (OciDeviceNode{"/dev/dri/card0", "c", int64_t{226}, int64_t{0}}));
  EXPECT_EQ(facts->devices[2], (OciDeviceNode{"/dev/dri/renderD128", "c",
                                              int64_t{226}, int64_t{128}}));
  // The deny-all first, then one allow per device-plugin device.
  ASSERT_EQ(facts->rules.size(), 4u);
  EXPECT_EQ(facts->rules[0],
            (OciDeviceRule{false, "", std::nullopt, std::nullopt, "rwm"}));
  EXPECT_EQ(facts->rules[3],
            (OciDeviceRule{true, "c", int64_t{226}, int64_t{128}, "rw"}));
  EXPECT_FALSE(facts->privileged);
  EXPECT_EQ(facts->cgroups_path,
            "kubepods-pod3f2b8c1d_6a4e_4b7f_9c2d_1e5a7b9c0d3e.slice:"
            "cri-containerd:"
            "8c1f5e2a7d3b4c6e9f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a");
}

TEST(OciSpecTest, MarksAPrivilegedContainer) {
  auto facts = ParseOciSpec(ReadFixture("cri-privileged.json"));
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_TRUE(facts->privileged);
  ASSERT_EQ(facts->rules.size(), 1u);
  // Every host node, block devices included, without a cgroup rule each.
  EXPECT_EQ(facts->devices.size(), 78u);
  EXPECT_EQ(facts->devices[62],
            (OciDeviceNode{"/dev/nvme0n1", "b", int64_t{259}, int64_t{0}}));
}

TEST(OciSpecTest, ReadsTheOtherFixturesAsNotPrivileged) {
  for (const char* name :
       {"cri-amd-2gpu-rdma.json", "cri-rdma.json", "cri-nvidia-cdi.json",
        "cri-amd-cpx-partition.json"}) {
    SCOPED_TRACE(name);
    auto facts = ParseOciSpec(ReadFixture(name));
    ASSERT_TRUE(facts.ok()) << facts.status();
    EXPECT_FALSE(facts->privileged);
    EXPECT_FALSE(facts->devices.empty());
    EXPECT_EQ(facts->rules.size(), facts->devices.size() + 1);
    EXPECT_NE(facts->cgroups_path.find(":cri-containerd:"), std::string::npos);
  }
}

TEST(OciSpecTest, SpecWithoutLinuxSectionHasNoDeviceFacts) {
  for (const std::string& json :
       {ReadFixture("windows-no-linux.json"), std::string(R"({"linux":null})"),
        std::string("{}")}) {
    auto facts = ParseOciSpec(json);
    ASSERT_TRUE(facts.ok()) << facts.status();
    EXPECT_TRUE(facts->devices.empty());
    EXPECT_TRUE(facts->rules.empty());
    EXPECT_FALSE(facts->privileged);
    EXPECT_EQ(facts->cgroups_path, "");
  }
}

TEST(OciSpecTest, NamesTheOffsetOfMalformedJson) {
  const std::string truncated = ReadFixture("bad-truncated.json");
  auto facts = ParseOciSpec(truncated);
  ASSERT_FALSE(facts.ok());
  EXPECT_EQ(facts.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(facts.status().message(),
            "OCI runtime spec: invalid JSON at offset " +
                std::to_string(truncated.size()) +
                ": Missing a closing quotation mark in string.");

  facts = ParseOciSpec(R"({"linux": {"devices": [}})");
  ASSERT_FALSE(facts.ok());
  EXPECT_EQ(facts.status().message(),
            "OCI runtime spec: invalid JSON at offset 23: Invalid value.");
  facts = ParseOciSpec("");
  ASSERT_FALSE(facts.ok());
  EXPECT_EQ(facts.status().message(),
            "OCI runtime spec: invalid JSON at offset 0: The document is "
            "empty.");
}

TEST(OciSpecTest, NamesTheFieldWithTheWrongType) {
  auto facts = ParseOciSpec(ReadFixture("bad-major-string.json"));
  ASSERT_FALSE(facts.ok());
  EXPECT_EQ(facts.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(facts.status().message(),
            "OCI runtime spec: linux.devices[2].major: expected integer");

  const struct {
    const char* json;
    const char* error;
  } kCases[] = {
      {"[]", "(document): expected object"},
      {R"({"linux": []})", "linux: expected object"},
      {R"({"linux": {"devices": {}}})", "linux.devices: expected array"},
      {R"({"linux": {"devices": [7]}})", "linux.devices[0]: expected object"},
      {R"({"linux": {"devices": [{"path": 5}]}})",
       "linux.devices[0].path: expected string"},
      {R"({"linux": {"devices": [{}, {"minor": 1.5}]}})",
       "linux.devices[1].minor: expected integer"},
      {R"({"linux": {"resources": []}})", "linux.resources: expected object"},
      {R"({"linux": {"resources": {"devices": 1}}})",
       "linux.resources.devices: expected array"},
      {R"({"linux": {"resources": {"devices": [{"allow": "true"}]}}})",
       "linux.resources.devices[0].allow: expected boolean"},
      {R"({"linux": {"resources": {"devices": [{"access": 7}]}}})",
       "linux.resources.devices[0].access: expected string"},
      // Beyond int64: no device number is that large.
      {R"({"linux": {"resources": {"devices": [{"major": 18446744073709551615}]}}})",
       "linux.resources.devices[0].major: expected integer"},
      {R"({"linux": {"cgroupsPath": 7}})",
       "linux.cgroupsPath: expected string"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.json);
    auto bad = ParseOciSpec(c.json);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().message(),
              std::string("OCI runtime spec: ") + c.error);
  }
}

TEST(OciSpecTest, SurvivesDeepNesting) {
  const std::string deep(200000, '[');
  auto facts = ParseOciSpec(deep);
  ASSERT_FALSE(facts.ok());
  EXPECT_EQ(facts.status().code(), StatusCode::kInvalidArgument);
  // Closed properly, in a field Lens does not read: still parsed.
  const std::string nested = R"({"annotations": {"x": )" +
                             std::string(100000, '[') +
                             std::string(100000, ']') +
                             R"(}, "linux": {"cgroupsPath": "/k8s.io/abc"}})";
  facts = ParseOciSpec(nested);
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->cgroups_path, "/k8s.io/abc");
}

TEST(OciSpecTest, AllowsEveryDeviceOnlyWhenTheLastWordIsAllowAll) {
  EXPECT_FALSE(AllowsEveryDevice({}));
  EXPECT_TRUE(AllowsEveryDevice({Rule(true)}));
  EXPECT_TRUE(AllowsEveryDevice({Rule(true, "a")}));
  EXPECT_FALSE(AllowsEveryDevice({Rule(false)}));
  // A normal container: deny all, then its devices.
  EXPECT_FALSE(AllowsEveryDevice(
      {Rule(false), Rule(true, "c", 226, 128), Rule(true, "c", 226, 0)}));
  // Allowed, then narrowed by an exception, which a later rule lifts.
  EXPECT_FALSE(AllowsEveryDevice({Rule(true), Rule(false, "c", 10, 229)}));
  EXPECT_TRUE(AllowsEveryDevice(
      {Rule(true), Rule(false, "c", 10, 229), Rule(true, "c", 10, 229)}));
  // The last rule for every device decides; earlier exceptions are gone.
  EXPECT_TRUE(AllowsEveryDevice({Rule(false), Rule(true, "c", 1, 3),
                                 Rule(false, "c", 10, 229), Rule(true)}));
  EXPECT_FALSE(AllowsEveryDevice({Rule(true), Rule(false)}));
  // Every character device is not every device.
  EXPECT_FALSE(AllowsEveryDevice({Rule(false), Rule(true, "c")}));
  // A major wildcard ("c 136:* rwm", the pts rule) is narrower too.
  EXPECT_FALSE(AllowsEveryDevice({Rule(true, "", 136)}));
}

}  // namespace
}  // namespace lens::containers
