// The placement audit's readers on fixture hosts (test/fixtures/hosts: PCI
// links, numa_node, devices/system/node, a cgroup v2 tree) and on this
// machine's own /sys and /proc; then the audit end to end on the 8x MI300X
// + 8x ConnectX-7 host.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lens/insights_placement.h"

namespace lens {
namespace {

namespace fs = std::filesystem;
using Strings = std::vector<std::string>;

std::string Fixture(const std::string& rel) {
  return std::string(LENS_FIXTURES_DIR) + "/" + rel;
}

HostRoots Host(const std::string& host) {
  return HostRoots::Under(Fixture("hosts/" + host));
}

// The MI300X host's sysfs with the flow fixtures' /proc/<pid>/cgroup files
// (4343: a cgroup v2 containerd container; 4242: a v1 hybrid host's).
HostRoots Mi300xWithCgroups() {
  HostRoots roots = Host("mi300x-8x-mlx5");
  roots.procfs = Fixture("flow/proc");
  return roots;
}

TEST(PlacementSysfsTest, ReadsRootComplexRootPortAndNuma) {
  auto p = ReadPciPlacement(Host("mi300x-8x-mlx5"), "0000:9F:00.0");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->bdf, "0000:9f:00.0");
  EXPECT_EQ(p->root_complex, "pci0000:80");
  EXPECT_EQ(p->bridges, Strings{"0000:80:03.1"});
  EXPECT_EQ(p->numa_node, 1);
}

TEST(PlacementSysfsTest, ReadsTheSwitchChainAndUnknownNuma) {
  // The W6600 sits behind its board's switch: root port 00:01.1, upstream
  // port 01:00.0, downstream port 02:00.0; numa_node is -1.
  auto p = ReadPciPlacement(Host("radeon-workstation"), "0000:03:00.0");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->root_complex, "pci0000:00");
  EXPECT_EQ(p->bridges,
            (Strings{"0000:00:01.1", "0000:01:00.0", "0000:02:00.0"}));
  EXPECT_FALSE(p->numa_node.has_value());
}

TEST(PlacementSysfsTest, RejectsBadAddressesAndReportsMissingOnes) {
  const HostRoots roots = Host("mi300x-8x-mlx5");
  for (const char* bad :
       {"../../../etc", "0000:0c:00", "0000:0c:00.0/..", ""}) {
    EXPECT_EQ(ReadPciPlacement(roots, bad).status().code(),
              StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(ReadPciPlacement(roots, "0000:ee:00.0").status().code(),
            StatusCode::kNotFound);
}

TEST(PlacementSysfsTest, ReadsNumaNodeCpus) {
  // 2x EPYC 9654 with SMT: node 0 = cores 0-95 + siblings 192-287.
  auto nodes = ReadNumaNodeCpus(Host("mi300x-8x-mlx5"));
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].node, 0);
  EXPECT_EQ((*nodes)[0].cpus.size(), 192u);
  EXPECT_EQ(FormatCpuList((*nodes)[0].cpus), "0-95,192-287");
  EXPECT_EQ(FormatCpuList((*nodes)[1].cpus), "96-191,288-383");
  // A host without devices/system/node: no nodes, not an error.
  auto none = ReadNumaNodeCpus(Host("empty"));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
}

TEST(PlacementSysfsTest, ReadsACgroupV2Cpuset) {
  auto cpus = ReadProcessCpuset(Mi300xWithCgroups(), 4343);
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_EQ(FormatCpuList(*cpus), "96-103,288-295");
}

TEST(PlacementSysfsTest, CpusetComesFromTheNearestAncestorWithOne) {
  // containerd.service has no cpuset.cpus.effective in the fixture (the
  // controller not enabled there): the root's applies.
  const fs::path tmp = fs::temp_directory_path() /
                       ("lens-placement-" + std::to_string(getpid()));
  fs::create_directories(tmp / "77");
  std::ofstream(tmp / "77/cgroup") << "0::/system.slice/containerd.service\n";
  HostRoots roots = Host("mi300x-8x-mlx5");
  roots.procfs = tmp.string();
  auto cpus = ReadProcessCpuset(roots, 77);
  fs::remove_all(tmp);
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_EQ(FormatCpuList(*cpus), "0-383");
}

TEST(PlacementSysfsTest, FindsACgroupSeenFromAnotherCgroupNamespace) {
  // An agent in a cgroup namespace of its own (an unprivileged pod on a v2
  // host) reads another pod's path relative to its namespace root:
  // "/../../<pod slice>/<container scope>" from
  // kubepods.slice/kubepods-burstable.slice/<its own pod>/<its scope>. The
  // rest is found below the mount: the same cpuset as the host's view.
  const fs::path tmp = fs::temp_directory_path() /
                       ("lens-placement-ns-" + std::to_string(getpid()));
  fs::create_directories(tmp / "88");
  std::ofstream(tmp / "88/cgroup")
      << "0::/../../kubepods-burstable-pod1b2c3d4e_5f60_7182_93a4_"
         "b5c6d7e8f901.slice/cri-containerd-9e8d7c6b5a493827160f1e2d3c4b5a6978"
         "8796a5b4c3d2e1f00f1e2d3c4b5a69.scope\n";
  fs::create_directories(tmp / "89");
  std::ofstream(tmp / "89/cgroup") << "0::/../../no-such-pod.slice/x.scope\n";
  HostRoots roots = Host("mi300x-8x-mlx5");
  roots.procfs = tmp.string();
  auto cpus = ReadProcessCpuset(roots, 88);
  auto missing = ReadProcessCpuset(roots, 89);
  fs::remove_all(tmp);
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_EQ(FormatCpuList(*cpus), "96-103,288-295");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("no-such-pod.slice/x.scope"),
            std::string::npos);
}

TEST(PlacementSysfsTest, ReadsACgroupV1Cpuset) {
  // A hybrid host: no cgroup.controllers at fs/cgroup, the cpuset
  // hierarchy mounted at fs/cgroup/cpuset (cgroups(7) line "3:cpuset:...").
  const fs::path tmp = fs::temp_directory_path() /
                       ("lens-placement-v1-" + std::to_string(getpid()));
  const fs::path cg = tmp / "sys/fs/cgroup/cpuset/k8s.io/3f2a";
  fs::create_directories(cg);
  fs::create_directories(tmp / "proc/5");
  std::ofstream(tmp / "proc/5/cgroup")
      << "4:memory:/k8s.io/3f2a\n3:cpuset,cpu:/k8s.io/3f2a\n0::/k8s.io/3f2a\n";
  std::ofstream(cg / "cpuset.effective_cpus") << "8-15\n";
  std::ofstream(tmp / "sys/fs/cgroup/cpuset/cpuset.effective_cpus") << "0-31\n";
  auto cpus = ReadProcessCpuset(HostRoots::Under(tmp.string()), 5);
  fs::remove_all(tmp);
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_EQ(FormatCpuList(*cpus), "8-15");
}

TEST(PlacementSysfsTest, CpusetNotFoundWithoutAHierarchyOrProcess) {
  // radeon-workstation has no fs/cgroup at all; 4242's file has no cpuset
  // line either.
  HostRoots none = Host("radeon-workstation");
  none.procfs = Fixture("flow/proc");
  EXPECT_EQ(ReadProcessCpuset(none, 4242).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(ReadProcessCpuset(Mi300xWithCgroups(), 999999).status().code(),
            StatusCode::kNotFound);
}

TEST(PlacementSysfsTest, ReadsThisMachinesPciDevices) {
  const std::string dir = "/sys/bus/pci/devices";
  if (!fs::is_directory(dir) || fs::is_empty(dir)) {
    GTEST_SKIP() << "this machine exposes no PCI devices in " << dir;
  }
  int read = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string bdf = e.path().filename().string();
    auto p = ReadPciPlacement(HostRoots{}, bdf);
    ASSERT_TRUE(p.ok()) << bdf << ": " << p.status();
    const std::string target = fs::read_symlink(e.path()).string();
    EXPECT_NE(target.find("/" + p->root_complex + "/"), std::string::npos)
        << bdf << " -> " << target;
    // Every bridge on the way is itself a PCI function.
    for (const std::string& b : p->bridges) {
      EXPECT_TRUE(fs::exists(dir + "/" + b)) << bdf << " via " << b;
    }
    ++read;
  }
  EXPECT_GT(read, 0);
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> mine;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) mine.push_back(c);
  }
  return mine;
}

TEST(PlacementSysfsTest, ThisMachinesNumaNodesListItsCpus) {
  auto nodes = ReadNumaNodeCpus(HostRoots{});
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  if (nodes->empty()) GTEST_SKIP() << "kernel without NUMA nodes in sysfs";
  for (int c : AllowedCpus()) {
    bool listed = false;
    for (const NumaNodeCpus& n : *nodes) {
      listed |= std::binary_search(n.cpus.begin(), n.cpus.end(), c);
    }
    EXPECT_TRUE(listed) << "CPU " << c << " on no NUMA node";
  }
}

TEST(PlacementSysfsTest, ThisProcesssCpusetHoldsTheCpusItMayUse) {
  auto cpuset = ReadProcessCpuset(HostRoots{}, getpid());
  if (!cpuset.ok() && cpuset.status().code() == StatusCode::kNotFound) {
    GTEST_SKIP() << "no cpuset hierarchy here: " << cpuset.status();
  }
  ASSERT_TRUE(cpuset.ok()) << cpuset.status();
  for (int c : AllowedCpus()) {
    EXPECT_TRUE(std::binary_search(cpuset->begin(), cpuset->end(), c))
        << "CPU " << c << " allowed but not in the cpuset";
  }
}

// The MI300X host: GPUs on root ports x:03.1/x:05.1, HCAs on x:01.1 of the
// same six host bridges, NUMA 0 for pci0000:00/20/40, 1 for 80/a0/c0.
const Strings kMiGpus = {"0000:0c:00.0", "0000:22:00.0", "0000:38:00.0",
                         "0000:5c:00.0", "0000:9f:00.0", "0000:af:00.0",
                         "0000:bf:00.0", "0000:df:00.0"};
const Strings kMiNics = {"0000:0d:00.0", "0000:23:00.0", "0000:39:00.0",
                         "0000:5d:00.0", "0000:9e:00.0", "0000:b0:00.0",
                         "0000:be:00.0", "0000:de:00.0"};

TEST(PlacementSysfsTest, AuditsTheMi300xHostEndToEnd) {
  Strings bdfs = kMiGpus;
  bdfs.insert(bdfs.end(), kMiNics.begin(), kMiNics.end());
  bdfs.push_back("0000:ee:00.0");  // gone: left out, reported unknown
  const HostRoots roots = Mi300xWithCgroups();
  auto topo = ReadNodeTopology(roots, bdfs);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->devices.size(), 16u);

  // Pod 1 holds the whole node and all CPUs. Every GPU shares its host
  // bridge with an HCA (PHB). pci0000:20 has GPUs 22, 38 and HCAs 23, 39,
  // all PHB: the GPUs take turns, 22 -> 23, 38 -> 39; pci0000:a0 likewise
  // af -> b0, bf -> be.
  PlacementPod whole{"uid-whole", "ml", "whole-node", {}};
  PlacementContainer c{"cw", "trainer", {}, std::nullopt};
  for (size_t i = 0; i < 8; ++i) {
    c.devices.push_back({DeviceKind::kGpu, "gpu" + std::to_string(i),
                         kMiGpus[i], "pod-resources"});
    c.devices.push_back({DeviceKind::kRdma, "mlx5_" + std::to_string(i),
                         kMiNics[i], "pod-resources"});
  }
  c.cpus = *ParseCpuList("0-383");
  whole.containers.push_back(c);

  // Pod 2: GPU 0c (node 0) with HCA 9e (node 1), in the container whose
  // cgroup gives CPUs 96-103,288-295 (node 1); plus a vanished GPU.
  PlacementPod bad{"uid-bad", "ml", "badly-placed", {}};
  auto cpus = ReadProcessCpuset(roots, 4343);
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  bad.containers.push_back(
      {"9e8d7c6b",
       "worker",
       {{DeviceKind::kGpu, "gpu0", "0000:0c:00.0", "pod-resources"},
        {DeviceKind::kGpu, "gpu9", "0000:ee:00.0", "pod-resources"},
        {DeviceKind::kRdma, "mlx5_4", "0000:9e:00.0", "pod-resources"}},
       *cpus});

  const std::vector<PlacementPod> pods = {whole, bad};
  auto out = AuditPlacement(*topo, pods);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].flags.empty()) << out[0].flags[0].message;
  EXPECT_TRUE(out[0].unknowns.empty());
  Strings picked;
  for (const PlacedDevice& g : out[0].gpus) {
    picked.push_back(g.nic_bdf);
    EXPECT_EQ(g.nic_distance, PcieDistance::kSameRootComplex) << g.bdf;
  }
  EXPECT_EQ(picked, kMiNics);

  const PodPlacement& p = out[1];
  ASSERT_EQ(p.flags.size(), 2u);
  EXPECT_EQ(p.flags[0].issue, PlacementIssue::kNicOnOtherNumaNode);
  EXPECT_EQ(p.flags[0].message,
            "GPU gpu0 (0000:0c:00.0) [NUMA node 0, pci0000:00] uses NIC mlx5_4 "
            "(0000:9e:00.0) [NUMA node 1, pci0000:80] for RDMA, on another "
            "NUMA node: its traffic crosses the inter-socket link");
  EXPECT_EQ(p.flags[1].issue, PlacementIssue::kCpusOffGpuNumaNodes);
  EXPECT_FALSE(p.flags[1].partial);
  EXPECT_EQ(p.flags[1].cpus.size(), 16u);  // 96-103 and 288-295
  EXPECT_EQ(p.flags[1].cpu_numa_nodes, std::vector<int>{1});
  EXPECT_EQ(p.flags[1].gpu_numa_nodes, std::vector<int>{0});
  ASSERT_EQ(p.unknowns.size(), 1u);
  EXPECT_EQ(p.unknowns[0],
            "GPU gpu9 (0000:ee:00.0): not in the node's PCI "
            "topology, so its placement is unknown");
}

}  // namespace
}  // namespace lens
