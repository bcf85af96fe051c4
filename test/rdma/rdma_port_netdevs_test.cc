// Netdevs per RDMA port: the GID table of RoCE ports (gid_attrs/ndevs), the
// device's netdevs by dev_port/dev_id otherwise. The mlx5 layouts are the
// fixture hosts (test/fixtures/hosts, README-rdma-node.md); the dual-port
// mlx4 layout (one PCI function, two ports, IPoIB and Ethernet netdevs) is
// built here from the same kernel attributes.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "lens/rdma.h"
#include "temp_host_tree.h"

namespace lens {
namespace {

namespace fs = std::filesystem;
using testing_rdma::FixtureHost;
using testing_rdma::Overwrite;
using testing_rdma::TempHostTree;
using Names = std::vector<std::string>;

// Writes a file, creating its directories.
void Write(const std::string& path, const std::string& content) {
  fs::create_directories(fs::path(path).parent_path());
  Overwrite(path, content);
}

std::vector<RdmaDevice> Scan(const HostRoots& roots) {
  RdmaReader reader(roots);
  auto devices = reader.Scan();
  EXPECT_TRUE(devices.ok()) << devices.status();
  return devices.ok() ? *devices : std::vector<RdmaDevice>{};
}

TEST(RdmaPortNetdevsTest, InfinibandPortGetsItsIpoibNetdevByDevPort) {
  auto devices = Scan(HostRoots::Under(FixtureHost("mi300x-8x-mlx5")));
  ASSERT_EQ(devices.size(), 8u);
  for (const RdmaDevice& d : devices) {
    ASSERT_EQ(d.ports.size(), 1u) << d.name;
    EXPECT_EQ(d.ports[0].netdevs, d.netdevs) << d.name;
  }
  EXPECT_EQ(devices[0].ports[0].netdevs, Names{"ibp13s0"});
  EXPECT_EQ(devices[7].ports[0].netdevs, Names{"ibp222s0"});
}

TEST(RdmaPortNetdevsTest, RocePortListsTheGidTableNetdevsInIndexOrder) {
  auto devices = Scan(HostRoots::Under(FixtureHost("mi250-mi210")));
  ASSERT_EQ(devices.size(), 2u);
  // The VLAN is a virtual netdev: only the GID table knows it.
  EXPECT_EQ(devices[0].netdevs, Names{"ens1f0np0"});
  EXPECT_EQ(devices[0].ports[0].netdevs, (Names{"ens1f0np0", "ens1f0np0.100"}));
  EXPECT_EQ(devices[1].ports[0].netdevs, Names{"ens1f1np1"});
}

TEST(RdmaPortNetdevsTest, HcaWithoutNetdevHasNoneOnItsPort) {
  auto devices = Scan(HostRoots::Under(FixtureHost("quirks")));
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_TRUE(devices[0].ports[0].netdevs.empty());
}

TEST(RdmaPortNetdevsTest,
     UnreadableGidEntriesAreSkippedAndIndexesSortNumerically) {
  TempHostTree tree("mi250-mi210");
  const std::string ndevs =
      tree.sys("class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs");
  // Entry 10 sorts before 2 as text; an entry the kernel cannot print (no
  // netdev: EINVAL) stands here as one that cannot be read as a file.
  Overwrite(ndevs + "/10", "macvlan0\n");
  fs::create_directory(ndevs + "/6");
  auto devices = Scan(tree.roots());
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].ports[0].netdevs,
            (Names{"ens1f0np0", "ens1f0np0.100", "macvlan0"}));
}

TEST(RdmaPortNetdevsTest, RocePortWithoutGidAttrsFallsBackToDevPort) {
  TempHostTree tree("mi250-mi210");
  fs::remove_all(tree.sys("class/infiniband/mlx5_0/ports/1/gid_attrs"));
  auto devices = Scan(tree.roots());
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].ports[0].netdevs, Names{"ens1f0np0"});
}

// A ConnectX-3 (mlx4) function with two ports: port 1 InfiniBand (IPoIB
// ib0, dev_port 0), port 2 Ethernet (eth1). `roce_gids` false models a
// kernel before gid_attrs (4.5) with a driver that sets only dev_id.
void WriteMlx4(const std::string& sys, bool roce_gids) {
  const std::string func =
      sys + "/devices/pci0000:00/0000:00:02.0/0000:04:00.0";
  const std::string ib = func + "/infiniband/mlx4_0";
  Write(ib + "/node_guid", "0002:c903:00f1:1d60\n");
  Write(ib + "/fw_ver", "2.42.5000\n");
  Write(ib + "/hca_type", "MT4099\n");
  Write(ib + "/node_type", "1: CA\n");
  const struct {
    int num;
    const char* link_layer;
  } ports[] = {{1, "InfiniBand"}, {2, "Ethernet"}};
  for (const auto& p : ports) {
    const std::string dir = ib + "/ports/" + std::to_string(p.num);
    Write(dir + "/state", "4: ACTIVE\n");
    Write(dir + "/phys_state", "5: LinkUp\n");
    Write(dir + "/link_layer", std::string(p.link_layer) + "\n");
    Write(dir + "/rate", "40 Gb/sec (4X QDR)\n");
    Write(dir + "/counters/port_xmit_data", "0\n");
  }
  if (roce_gids) {
    const std::string attrs = ib + "/ports/2/gid_attrs";
    Write(attrs + "/ndevs/0", "eth1\n");
    Write(attrs + "/types/0", "IB/RoCE v1\n");
  }
  Write(func + "/net/ib0/dev_port", "0\n");
  Write(func + "/net/ib0/dev_id", "0x0\n");
  if (roce_gids) Write(func + "/net/eth1/dev_port", "1\n");
  Write(func + "/net/eth1/dev_id", "0x1\n");
  fs::create_directory_symlink("../../../0000:04:00.0", ib + "/device");
  fs::create_directories(sys + "/class/infiniband");
  fs::create_directory_symlink(
      "../../devices/pci0000:00/0000:00:02.0/0000:04:00.0/infiniband/mlx4_0",
      sys + "/class/infiniband/mlx4_0");
}

class Mlx4Test : public ::testing::TestWithParam<bool> {};

TEST_P(Mlx4Test, EachPortOfOneFunctionGetsItsOwnNetdev) {
  TempHostTree tree("empty");
  WriteMlx4(tree.root() + "/sys", GetParam());
  auto devices = Scan(tree.roots());
  ASSERT_EQ(devices.size(), 1u);
  const RdmaDevice& d = devices[0];
  EXPECT_EQ(d.bdf, "0000:04:00.0");
  EXPECT_EQ(d.netdevs, (Names{"eth1", "ib0"}));
  ASSERT_EQ(d.ports.size(), 2u);
  EXPECT_EQ(d.ports[0].netdevs, Names{"ib0"});
  EXPECT_EQ(d.ports[1].netdevs, Names{"eth1"});
}

INSTANTIATE_TEST_SUITE_P(GidTableOrDevId, Mlx4Test, ::testing::Bool());

}  // namespace
}  // namespace lens
