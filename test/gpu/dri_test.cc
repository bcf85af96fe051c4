// ReadDriMapping on the host fixture trees' dev/dri/by-path (see
// test/fixtures/hosts/README.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "lens/gpu.h"

namespace lens {
namespace {

namespace fs = std::filesystem;

HostRoots Host(const std::string& name) {
  return HostRoots::Under(std::string(LENS_FIXTURES_DIR) + "/hosts/" + name);
}

TEST(ReadDriMappingTest, MapsEachPciGpuToItsCardAndRenderNode) {
  auto mapping = ReadDriMapping(Host("mi300x-8x-mlx5"));
  ASSERT_TRUE(mapping.ok()) << mapping.status();
  const char* kBdfs[] = {"0000:0c:00.0", "0000:22:00.0", "0000:38:00.0",
                         "0000:5c:00.0", "0000:9f:00.0", "0000:af:00.0",
                         "0000:bf:00.0", "0000:df:00.0"};
  // The partitions' platform-amdgpu_xcp_N entries carry no PCI address.
  ASSERT_EQ(mapping->size(), 8u);
  for (size_t i = 0; i < mapping->size(); ++i) {
    EXPECT_EQ((*mapping)[i].bdf, kBdfs[i]);
    EXPECT_EQ((*mapping)[i].card, "card" + std::to_string(8 * i));
    EXPECT_EQ((*mapping)[i].render, "renderD" + std::to_string(128 + 8 * i));
  }
}

TEST(ReadDriMappingTest, MapsEachComputePartitionsNodesToItsGpu) {
  // CPX: partitions 1..7 of GPU g use amdgpu_xcp nodes card(8g+k) and
  // renderD(128+8g+k); KFD names each partition's render minor.
  auto mapping = ReadDriMapping(Host("mi300x-cpx"));
  ASSERT_TRUE(mapping.ok()) << mapping.status();
  ASSERT_EQ(mapping->size(), 16u);
  const char* kBdfs[] = {"0000:0c:00.0", "0000:22:00.0"};
  for (int g = 0; g < 2; ++g) {
    for (int k = 0; k < 8; ++k) {
      const DriMapping& m = (*mapping)[8 * g + k];
      SCOPED_TRACE(m.card);
      EXPECT_EQ(m.bdf, kBdfs[g]);
      EXPECT_EQ(m.partition_id, k);
      EXPECT_EQ(m.card, "card" + std::to_string(8 * g + k));
      EXPECT_EQ(m.render, "renderD" + std::to_string(128 + 8 * g + k));
    }
  }
}

TEST(ReadDriMappingTest, LeavesPartitionNodesOutWithoutKfd) {
  const fs::path root = fs::path(testing::TempDir()) /
                        ("lens_dri_cpx_" + std::to_string(::getpid()));
  fs::create_directories(root);
  fs::copy(std::string(LENS_FIXTURES_DIR) + "/hosts/mi300x-cpx/dev",
           root / "dev",
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  auto mapping = ReadDriMapping(HostRoots::Under(root.string()));
  fs::remove_all(root);
  ASSERT_TRUE(mapping.ok()) << mapping.status();
  ASSERT_EQ(mapping->size(), 2u);
  EXPECT_EQ((*mapping)[1], (DriMapping{"0000:22:00.0", "card8", "renderD136"}));
}

TEST(ReadDriMappingTest, SortsByAddressAcrossPciDomains) {
  auto mapping = ReadDriMapping(Host("mi250-mi210"));
  ASSERT_TRUE(mapping.ok()) << mapping.status();
  ASSERT_EQ(mapping->size(), 4u);
  EXPECT_EQ((*mapping)[0].bdf, "0000:29:00.0");
  EXPECT_EQ((*mapping)[2].bdf, "0000:63:00.0");
  EXPECT_EQ((*mapping)[3].bdf, "0001:c3:00.0");
  EXPECT_EQ((*mapping)[3].card, "card3");
  EXPECT_EQ((*mapping)[3].render, "renderD131");
}

TEST(ReadDriMappingTest, LeavesRenderEmptyForADisplayOnlyDevice) {
  auto mapping = ReadDriMapping(Host("radeon-workstation"));
  ASSERT_TRUE(mapping.ok()) << mapping.status();
  ASSERT_EQ(mapping->size(), 2u);
  EXPECT_EQ((*mapping)[0], (DriMapping{"0000:03:00.0", "card0", "renderD128"}));
  // The ASPEED BMC (ast) has a primary node only.
  EXPECT_EQ((*mapping)[1], (DriMapping{"0000:0f:00.0", "card1", ""}));
}

TEST(ReadDriMappingTest, IsNotFoundWithoutDevDri) {
  auto mapping = ReadDriMapping(Host("empty"));
  ASSERT_FALSE(mapping.ok());
  EXPECT_EQ(mapping.status().code(), StatusCode::kNotFound);
}

TEST(ReadDriMappingTest, IgnoresEntriesThatAreNotDrmNodesOfPciDevices) {
  const fs::path root = fs::path(testing::TempDir()) /
                        ("lens_dri_test_" + std::to_string(::getpid()));
  fs::create_directories(root / "dev/dri/by-path");
  const fs::path by_path = root / "dev/dri/by-path";
  fs::create_symlink("../card2", by_path / "pci-0000:41:00.0-card");
  fs::create_symlink("../renderD130", by_path / "pci-0000:41:00.0-render");
  fs::create_symlink("../card3", by_path / "platform-amdgpu_xcp_4-card");
  fs::create_symlink("../card4", by_path / "pci-0000:41:00.0-other");
  fs::create_symlink("../card5", by_path / "pci-garbage-card");
  auto mapping = ReadDriMapping(HostRoots::Under(root.string()));
  fs::remove_all(root);
  ASSERT_TRUE(mapping.ok()) << mapping.status();
  ASSERT_EQ(mapping->size(), 1u);
  EXPECT_EQ((*mapping)[0], (DriMapping{"0000:41:00.0", "card2", "renderD130"}));
}

}  // namespace
}  // namespace lens
