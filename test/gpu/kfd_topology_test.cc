// The KFD topology reader and the matching of KFD nodes (partitions) to PCI
// GPUs, on the host fixture trees (test/fixtures/hosts, see its README).
#include "gpu/kfd_topology.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gpu/amdgpu_sysfs.h"

namespace lens {
namespace {

std::string HostSys(const std::string& host) {
  return std::string(LENS_FIXTURES_DIR) + "/hosts/" + host + "/sys";
}

TEST(ParseKfdPropertiesTest, ReadsKeyValueLines) {
  auto props = ParseKfdProperties(
      "cpu_cores_count 0\nsimd_count 152\nlocation_id 1281\n"
      "unique_id 16404946649897475633\n\n",
      "props");
  ASSERT_TRUE(props.ok()) << props.status();
  EXPECT_EQ(props->size(), 4u);
  EXPECT_EQ(props->at("simd_count"), 152u);
  EXPECT_EQ(props->at("location_id"), 1281u);
  // A full 64-bit value, as KFD prints unique_id and hive_id.
  EXPECT_EQ(props->at("unique_id"), 16404946649897475633ull);
}

TEST(ParseKfdPropertiesTest, NamesTheFileAndLineOfAMalformedEntry) {
  auto missing_value = ParseKfdProperties("simd_count 4\nnum_xcc\n", "F");
  ASSERT_FALSE(missing_value.ok());
  EXPECT_EQ(missing_value.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing_value.status().message().find("F line 2"),
            std::string::npos)
      << missing_value.status();
  auto bad_number = ParseKfdProperties("domain -1\n", "F");
  ASSERT_FALSE(bad_number.ok());
  EXPECT_NE(bad_number.status().message().find("F line 1"), std::string::npos);
}

TEST(ReadKfdTopologyTest, ReadsCpuAndGpuNodesOfAnEightGpuHost) {
  auto topology = ReadKfdTopology(HostSys("mi300x-8x-mlx5"));
  ASSERT_TRUE(topology.ok()) << topology.status();
  EXPECT_EQ(topology->generation_id, 21u);
  ASSERT_EQ(topology->nodes.size(), 10u);
  std::set<uint32_t> gpu_ids;
  for (size_t i = 0; i < topology->nodes.size(); ++i) {
    const KfdNode& node = topology->nodes[i];
    EXPECT_EQ(node.node, static_cast<int>(i));
    if (i < 2) {
      EXPECT_FALSE(node.is_gpu());
      EXPECT_EQ(node.name, "");
      EXPECT_EQ(node.Property("cpu_cores_count"), 96u);
      continue;
    }
    EXPECT_TRUE(node.is_gpu());
    gpu_ids.insert(node.gpu_id);
    EXPECT_EQ(node.name, "ip discovery");
    EXPECT_EQ(node.Property("device_id"), 0x74a1u);
    EXPECT_EQ(node.Property("num_xcc"), 8u);
    EXPECT_EQ(node.Property("drm_render_minor"), 128u + 8 * (i - 2));
    EXPECT_FALSE(node.Property("no_such_property"));
  }
  EXPECT_EQ(gpu_ids.size(), 8u);
}

TEST(ReadKfdTopologyTest, NodesSortNumericallyNotByName) {
  // 18 nodes: "10" must come after "9".
  auto topology = ReadKfdTopology(HostSys("mi300x-cpx"));
  ASSERT_TRUE(topology.ok()) << topology.status();
  ASSERT_EQ(topology->nodes.size(), 18u);
  for (size_t i = 0; i < topology->nodes.size(); ++i) {
    EXPECT_EQ(topology->nodes[i].node, static_cast<int>(i));
  }
}

TEST(ReadKfdTopologyTest, IsNotFoundWithoutKfd) {
  auto topology = ReadKfdTopology(HostSys("empty"));
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(topology.status().code(), StatusCode::kNotFound);
}

// A GPU node as KFD describes it.
KfdNode GpuNode(int number, uint32_t gpu_id, uint64_t location,
                std::optional<uint64_t> render, uint64_t unique_id = 0,
                uint64_t domain = 0) {
  KfdNode node;
  node.node = number;
  node.gpu_id = gpu_id;
  node.properties = {{"location_id", location}, {"domain", domain}};
  if (render) node.properties["drm_render_minor"] = *render;
  if (unique_id != 0) node.properties["unique_id"] = unique_id;
  return node;
}

std::vector<uint32_t> GpuIds(const std::vector<const KfdNode*>& nodes) {
  std::vector<uint32_t> ids;
  for (const KfdNode* node : nodes) ids.push_back(node->gpu_id);
  return ids;
}

TEST(MatchKfdNodesTest, GroupsPartitionsWithTheNodeIdInTheFunctionBits) {
  // kfd_topology.c: location_id = pci_dev_id | node_id; the partitions'
  // render nodes belong to amdgpu_xcp platform devices (129.., 137..).
  std::vector<AmdKfdKey> gpus = {{0, 0x0c00, 128}, {0, 0x2200, 136}};
  std::vector<KfdNode> nodes;
  nodes.push_back(GpuNode(0, 0, 0, 0));  // CPU
  for (int g = 0; g < 2; ++g) {
    for (int p = 3; p >= 0; --p) {  // listed out of partition order
      nodes.push_back(GpuNode(static_cast<int>(nodes.size()), 100 * (g + 1) + p,
                              (g ? 0x2200 : 0x0c00) | p, 128 + 8 * g + p,
                              7000 + g));
    }
  }
  auto matched = MatchKfdNodes(gpus, nodes);
  ASSERT_EQ(matched.size(), 2u);
  EXPECT_EQ(GpuIds(matched[0]), (std::vector<uint32_t>{100, 101, 102, 103}));
  EXPECT_EQ(GpuIds(matched[1]), (std::vector<uint32_t>{200, 201, 202, 203}));
}

TEST(MatchKfdNodesTest, GroupsPartitionsWithTheNodeIdInBits28To31) {
  // The encoding some driver releases use (rocm_smi_lib decodes
  // location_id >> 28 as the partition id).
  std::vector<AmdKfdKey> gpus = {{1, 0x0b00, 160}};
  std::vector<KfdNode> nodes = {
      GpuNode(2, 52, 0x0b00 | 2u << 28, 162, 0, 1),
      GpuNode(3, 50, 0x0b00, 160, 0, 1),
      GpuNode(4, 51, 0x0b00 | 1u << 28, 161, 0, 1),
      GpuNode(5, 99, 0x0b00 | 1u << 28, 170, 0, 0),  // other domain
  };
  auto matched = MatchKfdNodes(gpus, nodes);
  EXPECT_EQ(GpuIds(matched[0]), (std::vector<uint32_t>{50, 51, 52}));
}

TEST(MatchKfdNodesTest, UsesTheExactAddressWhenRenderMinorsAreUnknown) {
  std::vector<AmdKfdKey> gpus = {{0, 0x6300, std::nullopt},
                                 {0, 0x2900, std::nullopt}};
  std::vector<KfdNode> nodes = {GpuNode(1, 11, 0x2900, std::nullopt),
                                GpuNode(2, 22, 0x6300, std::nullopt)};
  auto matched = MatchKfdNodes(gpus, nodes);
  EXPECT_EQ(GpuIds(matched[0]), (std::vector<uint32_t>{22}));
  EXPECT_EQ(GpuIds(matched[1]), (std::vector<uint32_t>{11}));
}

TEST(MatchKfdNodesTest, SeparatesGpusOnOneSlotByUniqueId) {
  // Two physical functions of one device slot (0x0c00 and 0x0c01): the
  // partition node 0x0c02 fits both by address; unique_id decides.
  std::vector<AmdKfdKey> gpus = {{0, 0x0c00, 128}, {0, 0x0c01, 136}};
  std::vector<KfdNode> nodes = {GpuNode(1, 1, 0x0c00, 128, 555),
                                GpuNode(2, 2, 0x0c01, 136, 777),
                                GpuNode(3, 3, 0x0c02, 137, 777),
                                GpuNode(4, 4, 0x0c03, 190)};  // no unique_id
  auto matched = MatchKfdNodes(gpus, nodes);
  EXPECT_EQ(GpuIds(matched[0]), (std::vector<uint32_t>{1}));
  // Node 4 fits both GPUs and has no unique_id: ambiguous, left out.
  EXPECT_EQ(GpuIds(matched[1]), (std::vector<uint32_t>{2, 3}));
}

TEST(MatchKfdNodesTest, LeavesGpusWithoutKfdNodesEmpty) {
  std::vector<AmdKfdKey> gpus = {{0, 0x0300, 128}};
  std::vector<KfdNode> nodes = {GpuNode(1, 5, 0x0400, 129)};
  auto matched = MatchKfdNodes(gpus, nodes);
  ASSERT_EQ(matched.size(), 1u);
  EXPECT_TRUE(matched[0].empty());
}

TEST(MatchKfdNodesTest, MatchesTheCpxFixtureEightPartitionsPerGpu) {
  auto topology = ReadKfdTopology(HostSys("mi300x-cpx"));
  ASSERT_TRUE(topology.ok()) << topology.status();
  std::vector<AmdKfdKey> gpus = {{0, 0x0c00, 128}, {0, 0x2200, 136}};
  auto matched = MatchKfdNodes(gpus, topology->nodes);
  for (size_t g = 0; g < 2; ++g) {
    ASSERT_EQ(matched[g].size(), 8u);
    for (size_t p = 0; p < 8; ++p) {
      EXPECT_EQ(matched[g][p]->Property("drm_render_minor"),
                gpus[g].render_minor.value() + p);
      EXPECT_EQ(matched[g][p]->Property("location_id"), gpus[g].pci_devid | p);
    }
  }
}

}  // namespace
}  // namespace lens
