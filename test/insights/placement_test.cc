// The placement audit as a pure function, on topologies written out by hand:
// a two-socket node with PCIe switches, each GPU sharing a switch with one
// NIC (the DGX-style layout), plus a GPU on a root complex of its own and a
// NIC on another root port. Expected answers are worked out in comments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lens/insights_placement.h"

namespace lens {
namespace {

using Cpus = std::vector<int>;
using Strings = std::vector<std::string>;

PciPlacement Pci(std::string bdf, std::optional<int> numa, std::string root,
                 Strings bridges) {
  return PciPlacement{std::move(bdf), numa, std::move(root),
                      std::move(bridges)};
}

Cpus Range(int first, int last) {
  Cpus out;
  for (int c = first; c <= last; ++c) out.push_back(c);
  return out;
}

Strings Join2(Strings a, std::string b) {
  a.push_back(std::move(b));
  return a;
}

Cpus Join(Cpus a, const Cpus& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Node 0: CPUs 0-7 and their SMT siblings 16-23; node 1: 8-15, 24-31.
//
// Root complex pci0000:15 (node 0): root port 15:01.0 -> switch upstream
// port 16:00.0 -> downstream ports 17:00.0 (GPU 18:00.0), 17:01.0 (NIC
// 19:00.0, mlx5_0), 17:02.0 (GPU 1a:00.0), 17:03.0 (NIC 1b:00.0, mlx5_2);
// root port 15:03.0 -> NIC 1c:00.0 (mlx5_3).
// Root complex pci0000:36 (node 0): root port 36:01.0 -> GPU 37:00.0.
// Root complex pci0000:97 (node 1): root port 97:01.0 -> switch 98:00.0 ->
// 99:00.0 (GPU 9a:00.0), 99:01.0 (NIC 9b:00.0, mlx5_1).
NodeTopology TwoSocketTopology() {
  NodeTopology t;
  const Strings sw15 = {"0000:15:01.0", "0000:16:00.0"};
  const Strings sw97 = {"0000:97:01.0", "0000:98:00.0"};
  t.devices = {
      Pci("0000:18:00.0", 0, "pci0000:15", Join2(sw15, "0000:17:00.0")),
      Pci("0000:19:00.0", 0, "pci0000:15", Join2(sw15, "0000:17:01.0")),
      Pci("0000:1a:00.0", 0, "pci0000:15", Join2(sw15, "0000:17:02.0")),
      Pci("0000:1b:00.0", 0, "pci0000:15", Join2(sw15, "0000:17:03.0")),
      Pci("0000:1c:00.0", 0, "pci0000:15", {"0000:15:03.0"}),
      Pci("0000:37:00.0", 0, "pci0000:36", {"0000:36:01.0"}),
      Pci("0000:9a:00.0", 1, "pci0000:97", Join2(sw97, "0000:99:00.0")),
      Pci("0000:9b:00.0", 1, "pci0000:97", Join2(sw97, "0000:99:01.0")),
  };
  t.numa_nodes = {{0, Join(Range(0, 7), Range(16, 23))},
                  {1, Join(Range(8, 15), Range(24, 31))}};
  return t;
}

ContainerDeviceRecord Gpu(std::string key, std::string bdf) {
  return {DeviceKind::kGpu, std::move(key), std::move(bdf), "pod-resources"};
}
ContainerDeviceRecord Nic(std::string key, std::string bdf) {
  return {DeviceKind::kRdma, std::move(key), std::move(bdf), "pod-resources"};
}

PlacementPod Pod(std::vector<ContainerDeviceRecord> devices,
                 std::optional<Cpus> cpus) {
  PlacementPod pod{"uid-1", "team-a", "trainer-0", {}};
  pod.containers.push_back(
      {"c1", "trainer", std::move(devices), std::move(cpus)});
  return pod;
}

PodPlacement AuditOne(const NodeTopology& t, const PlacementPod& pod) {
  auto out = AuditPlacement(t, std::span<const PlacementPod>(&pod, 1));
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? PodPlacement{} : out[0];
}

TEST(PlacementAuditTest, WellPlacedPodHasNoFlags) {
  // GPU 18 shares switch 16:00.0 with mlx5_0 (19) -> same-switch; mlx5_1
  // (9b) is on node 1 -> other-numa-node: mlx5_0 is picked although mlx5_1
  // comes first in the list. GPU 9a likewise picks mlx5_1. The cpuset 0-3
  // (node 0) + 8-11 (node 1) covers both GPU nodes: nothing off, no GPU
  // node without CPUs.
  PodPlacement p =
      AuditOne(TwoSocketTopology(),
               Pod({Nic("mlx5_1", "0000:9b:00.0"), Gpu("S-9a", "0000:9a:00.0"),
                    Gpu("S-18", "0000:18:00.0"), Nic("mlx5_0", "0000:19:00.0")},
                   Join(Range(0, 3), Range(8, 11))));
  EXPECT_TRUE(p.flags.empty()) << p.flags[0].message;
  EXPECT_TRUE(p.unknowns.empty());
  ASSERT_EQ(p.gpus.size(), 2u);
  EXPECT_EQ(p.gpus[0].bdf, "0000:18:00.0");  // BDF order
  EXPECT_EQ(p.gpus[0].nic_key, "mlx5_0");
  EXPECT_EQ(p.gpus[0].nic_distance, PcieDistance::kSameSwitch);
  EXPECT_EQ(p.gpus[0].numa_node, 0);
  EXPECT_EQ(p.gpus[0].root_complex, "pci0000:15");
  EXPECT_EQ(p.gpus[1].nic_key, "mlx5_1");
  EXPECT_EQ(p.gpus[1].nic_distance, PcieDistance::kSameSwitch);
  ASSERT_EQ(p.nics.size(), 2u);
  EXPECT_EQ(p.nics[0].device_key, "mlx5_0");
  ASSERT_EQ(p.cpusets.size(), 1u);
  EXPECT_EQ(p.cpusets[0].numa_nodes, (Cpus{0, 1}));
  EXPECT_EQ(p.cpusets[0].gpu_numa_nodes, (Cpus{0, 1}));
}

TEST(PlacementAuditTest, GpuWhoseOnlyNicIsOnTheOtherSocket) {
  // GPU 18 (node 0, pci0000:15) with only mlx5_1 (node 1, pci0000:97):
  // both NUMA nodes known and different -> one kNicOnOtherNumaNode flag
  // (the differing root complexes are not flagged again). CPUs 0-3 are on
  // node 0 with the GPU: no CPU flag.
  PodPlacement p =
      AuditOne(TwoSocketTopology(),
               Pod({Gpu("S-18", "0000:18:00.0"), Nic("mlx5_1", "0000:9b:00.0")},
                   Range(0, 3)));
  ASSERT_EQ(p.flags.size(), 1u);
  const PlacementFlag& f = p.flags[0];
  EXPECT_EQ(f.issue, PlacementIssue::kNicOnOtherNumaNode);
  EXPECT_EQ(f.gpu_bdfs, Strings{"0000:18:00.0"});
  EXPECT_EQ(f.gpu_numa_nodes, Cpus{0});
  EXPECT_EQ(f.nic_key, "mlx5_1");
  EXPECT_EQ(f.nic_bdf, "0000:9b:00.0");
  EXPECT_EQ(f.nic_numa_node, 1);
  EXPECT_EQ(f.gpu_root_complex, "pci0000:15");
  EXPECT_EQ(f.nic_root_complex, "pci0000:97");
  EXPECT_EQ(f.container_id, "c1");
  EXPECT_EQ(f.message,
            "GPU S-18 (0000:18:00.0) [NUMA node 0, pci0000:15] uses NIC mlx5_1 "
            "(0000:9b:00.0) [NUMA node 1, pci0000:97] for RDMA, on another "
            "NUMA node: its traffic crosses the inter-socket link");
  EXPECT_EQ(p.gpus[0].nic_distance, PcieDistance::kOtherNumaNode);
}

TEST(PlacementAuditTest, NicUnderAnotherRootComplexOfTheSameNode) {
  // GPU 37 (pci0000:36) and mlx5_0 (pci0000:15), both node 0: NODE
  // distance, flagged for the root complex only.
  PodPlacement p =
      AuditOne(TwoSocketTopology(),
               Pod({Gpu("S-37", "0000:37:00.0"), Nic("mlx5_0", "0000:19:00.0")},
                   Range(0, 3)));
  ASSERT_EQ(p.flags.size(), 1u);
  EXPECT_EQ(p.flags[0].issue, PlacementIssue::kNicUnderOtherRootComplex);
  EXPECT_EQ(p.flags[0].gpu_root_complex, "pci0000:36");
  EXPECT_EQ(p.flags[0].nic_root_complex, "pci0000:15");
  EXPECT_EQ(p.gpus[0].nic_distance, PcieDistance::kSameNumaNode);
}

TEST(PlacementAuditTest, ClosestNicWinsAndTiedGpusTakeTurns) {
  // GPUs 18 and 1a sit on one switch with mlx5_0 (19) and mlx5_2 (1b):
  // both same-switch for both GPUs, so they take turns in BDF order:
  // 18 -> mlx5_0, 1a -> mlx5_2 (naive code gives both mlx5_0). mlx5_3 (1c)
  // is only same-root-complex and loses. GPU 9a's best is mlx5_1.
  PodPlacement p = AuditOne(
      TwoSocketTopology(),
      Pod({Gpu("S-1a", "0000:1a:00.0"), Gpu("S-18", "0000:18:00.0"),
           Gpu("S-9a", "0000:9a:00.0"), Nic("mlx5_3", "0000:1c:00.0"),
           Nic("mlx5_2", "0000:1b:00.0"), Nic("mlx5_0", "0000:19:00.0"),
           Nic("mlx5_1", "0000:9b:00.0")},
          Range(0, 31)));
  ASSERT_EQ(p.gpus.size(), 3u);
  EXPECT_EQ(p.gpus[0].nic_key, "mlx5_0");
  EXPECT_EQ(p.gpus[1].nic_key, "mlx5_2");
  EXPECT_EQ(p.gpus[2].nic_key, "mlx5_1");
  EXPECT_TRUE(p.flags.empty());
  // Without the switch NICs, GPU 18's best is mlx5_3 behind another root
  // port of its root complex (PHB).
  p = AuditOne(TwoSocketTopology(),
               Pod({Gpu("S-18", "0000:18:00.0"), Nic("mlx5_1", "0000:9b:00.0"),
                    Nic("mlx5_3", "0000:1c:00.0")},
                   Range(0, 7)));
  EXPECT_EQ(p.gpus[0].nic_key, "mlx5_3");
  EXPECT_EQ(p.gpus[0].nic_distance, PcieDistance::kSameRootComplex);
  EXPECT_TRUE(p.flags.empty());
}

TEST(PlacementAuditTest, CpusetSplitAcrossNumaNodes) {
  // CPUs 4-11 with GPU 18 on node 0: 4-7 are on node 0, 8-11 on node 1 ->
  // 4 of 8 CPUs off the GPU's node, partial.
  PodPlacement p =
      AuditOne(TwoSocketTopology(),
               Pod({Gpu("S-18", "0000:18:00.0"), Nic("mlx5_0", "0000:19:00.0")},
                   Range(4, 11)));
  ASSERT_EQ(p.flags.size(), 1u);
  const PlacementFlag& f = p.flags[0];
  EXPECT_EQ(f.issue, PlacementIssue::kCpusOffGpuNumaNodes);
  EXPECT_TRUE(f.partial);
  EXPECT_EQ(f.cpus, Range(8, 11));
  EXPECT_EQ(f.cpu_numa_nodes, Cpus{1});
  EXPECT_EQ(f.gpu_numa_nodes, Cpus{0});
  EXPECT_EQ(f.gpu_bdfs, Strings{"0000:18:00.0"});
  EXPECT_EQ(f.message,
            "container trainer: 4 of the 8 CPUs of its cpuset 4-11, CPUs "
            "8-11, are on NUMA node 1, away from its GPUs on NUMA node 0");
  EXPECT_EQ(p.cpusets[0].numa_nodes, (Cpus{0, 1}));
}

TEST(PlacementAuditTest, CpusetWhollyOnTheOtherNode) {
  // CPUs 8-11 and 24-27 are all node 1; the GPU is on node 0: all 8 off,
  // not partial, and no second flag for the GPU's CPU-less node.
  PodPlacement p = AuditOne(
      TwoSocketTopology(),
      Pod({Gpu("S-18", "0000:18:00.0")}, Join(Range(8, 11), Range(24, 27))));
  ASSERT_EQ(p.flags.size(), 1u);
  EXPECT_FALSE(p.flags[0].partial);
  EXPECT_EQ(p.flags[0].cpus, Join(Range(8, 11), Range(24, 27)));
  EXPECT_EQ(p.flags[0].message,
            "container trainer: all 8 CPUs of its cpuset 8-11,24-27 are on "
            "NUMA node 1, away from its GPUs on NUMA node 0");
}

TEST(PlacementAuditTest, GpuNodeWithoutAnyOfTheContainersCpus) {
  // GPUs on nodes 0 and 1, cpuset 0-7 on node 0 only: no CPU is off the
  // GPUs' nodes, but GPU 9a's node 1 has none of them.
  PodPlacement p = AuditOne(
      TwoSocketTopology(),
      Pod({Gpu("S-18", "0000:18:00.0"), Gpu("S-9a", "0000:9a:00.0"),
           Nic("mlx5_0", "0000:19:00.0"), Nic("mlx5_1", "0000:9b:00.0")},
          Range(0, 7)));
  ASSERT_EQ(p.flags.size(), 1u);
  EXPECT_EQ(p.flags[0].issue, PlacementIssue::kGpusWithoutLocalCpus);
  EXPECT_EQ(p.flags[0].gpu_bdfs, Strings{"0000:9a:00.0"});
  EXPECT_EQ(p.flags[0].gpu_numa_nodes, Cpus{1});
  EXPECT_EQ(p.flags[0].cpu_numa_nodes, Cpus{0});
  EXPECT_EQ(p.flags[0].message,
            "container trainer: GPU S-9a (0000:9a:00.0) on NUMA node 1 has "
            "none of its CPUs (cpuset 0-7 is on NUMA node 0)");
}

// A VM: NUMA -1 everywhere, one NUMA node listed without the GPU's node.
NodeTopology UnknownNumaTopology() {
  NodeTopology t;
  t.devices = {
      Pci("0000:01:00.0", std::nullopt, "pci0000:00", {"0000:00:02.0"}),
      Pci("0000:02:00.0", std::nullopt, "pci0000:00", {"0000:00:02.1"}),
      Pci("0000:3b:00.0", std::nullopt, "pci0000:3a", {"0000:3a:00.0"})};
  t.numa_nodes = {{0, Range(0, 3)}};
  return t;
}

TEST(PlacementAuditTest, UnknownNumaIsReportedNotFlagged) {
  // GPU 01 and NIC 02 on root ports of one root complex: same-root-complex,
  // no flag; NUMA unknown for both devices and so for the cpuset check.
  PodPlacement p = AuditOne(
      UnknownNumaTopology(),
      Pod({Gpu("0000:01:00.0", "0000:01:00.0"), Nic("mlx5_0", "0000:02:00.0")},
          Range(0, 3)));
  EXPECT_TRUE(p.flags.empty());
  EXPECT_EQ(p.gpus[0].nic_distance, PcieDistance::kSameRootComplex);
  EXPECT_FALSE(p.gpus[0].numa_node.has_value());
  EXPECT_EQ(p.unknowns,
            (Strings{"GPU 0000:01:00.0: NUMA node unknown (sysfs numa_node is "
                     "-1)",
                     "NIC mlx5_0 (0000:02:00.0): NUMA node unknown (sysfs "
                     "numa_node is -1)",
                     "container trainer: the NUMA nodes of its GPUs are "
                     "unknown, so CPU placement is not checked"}));
  EXPECT_TRUE(p.cpusets[0].gpu_numa_nodes.empty());
}

TEST(PlacementAuditTest, UnknownNumaUnderAnotherRootComplex) {
  // NIC 3b is under pci0000:3a: the root complexes differ (flagged), the
  // NUMA nodes cannot be compared (distance unknown, no NUMA flag).
  PodPlacement p =
      AuditOne(UnknownNumaTopology(),
               Pod({Gpu("S1", "0000:01:00.0"), Nic("mlx5_0", "0000:3b:00.0")},
                   std::nullopt));
  ASSERT_EQ(p.flags.size(), 1u);
  EXPECT_EQ(p.flags[0].issue, PlacementIssue::kNicUnderOtherRootComplex);
  EXPECT_FALSE(p.flags[0].nic_numa_node.has_value());
  EXPECT_EQ(p.gpus[0].nic_distance, PcieDistance::kUnknown);
  ASSERT_EQ(p.unknowns.size(), 3u);
  EXPECT_EQ(p.unknowns[2],
            "container trainer: cpuset unknown, so CPU placement is not "
            "checked");
}

TEST(PlacementAuditTest, PodWithGpusButNoRdmaDevices) {
  // No NIC: nothing to pick, no NIC flag; the cpuset 0-3,8-11 covers both
  // GPU nodes.
  PodPlacement p =
      AuditOne(TwoSocketTopology(),
               Pod({Gpu("S-18", "0000:18:00.0"), Gpu("S-9a", "0000:9a:00.0")},
                   Join(Range(0, 3), Range(8, 11))));
  EXPECT_TRUE(p.flags.empty());
  EXPECT_TRUE(p.unknowns.empty());
  EXPECT_TRUE(p.nics.empty());
  ASSERT_EQ(p.gpus.size(), 2u);
  EXPECT_TRUE(p.gpus[0].nic_key.empty());
  EXPECT_TRUE(p.gpus[0].nic_bdf.empty());
  EXPECT_EQ(p.gpus[0].nic_distance, PcieDistance::kUnknown);
}

TEST(PlacementAuditTest, NicsOfAnotherContainerAreNotUsed) {
  // mlx5_0 shares GPU 18's switch but belongs to container c2; c1's GPU
  // can only use its own mlx5_1 on the other socket.
  PlacementPod pod =
      Pod({Gpu("S-18", "0000:18:00.0"), Nic("mlx5_1", "0000:9b:00.0")},
          Range(0, 3));
  pod.containers.push_back(
      {"c2", "sidecar", {Nic("mlx5_0", "0000:19:00.0")}, Range(0, 3)});
  PodPlacement p = AuditOne(TwoSocketTopology(), pod);
  EXPECT_EQ(p.gpus[0].nic_key, "mlx5_1");
  ASSERT_EQ(p.flags.size(), 1u);
  EXPECT_EQ(p.flags[0].issue, PlacementIssue::kNicOnOtherNumaNode);
  EXPECT_EQ(p.nics.size(), 1u);  // c2 has no GPU: left out
}

TEST(PlacementAuditTest, DevicesMissingFromTheTopologyAreUnknown) {
  PodPlacement p = AuditOne(TwoSocketTopology(),
                            Pod({Gpu("S-ff", "0000:ff:00.0"), Gpu("S-x", ""),
                                 Nic("mlx5_0", "0000:19:00.0")},
                                Range(0, 3)));
  EXPECT_TRUE(p.flags.empty());
  ASSERT_EQ(p.gpus.size(), 2u);
  EXPECT_FALSE(p.gpus[0].topology_known);
  EXPECT_EQ(p.gpus[0].nic_distance, PcieDistance::kUnknown);
  EXPECT_EQ(p.unknowns[0],
            "GPU S-x (no PCI address): no PCI address, so its "
            "placement is unknown");
  EXPECT_EQ(p.unknowns[1],
            "GPU S-ff (0000:ff:00.0): not in the node's PCI "
            "topology, so its placement is unknown");
}

TEST(PlacementAuditTest, PodsWithoutGpusAreLeftOut) {
  std::vector<PlacementPod> pods = {
      Pod({Nic("mlx5_0", "0000:19:00.0"),
           {DeviceKind::kOther, "kfd", "", "oci-spec"}},
          Range(0, 3)),
      Pod({Gpu("S-18", "0000:18:00.0")}, Range(0, 3))};
  pods[1].pod_uid = "uid-2";
  auto out = AuditPlacement(TwoSocketTopology(), pods);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].pod_uid, "uid-2");
}

TEST(PlacementAuditTest, CpuListsParseAndFormat) {
  auto cpus = ParseCpuList("0-3,8,64-65\n");
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_EQ(*cpus, (Cpus{0, 1, 2, 3, 8, 64, 65}));
  EXPECT_EQ(FormatCpuList(*cpus), "0-3,8,64-65");
  EXPECT_TRUE(ParseCpuList("\n")->empty());
  EXPECT_EQ(*ParseCpuList("5,1-2,2"), (Cpus{1, 2, 5}));
  for (const char* bad : {"3-1", "a", "1-", "1,,2", "70000", "-3", "0-7:2/4"}) {
    auto r = ParseCpuList(bad);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ToString(PlacementIssue::kCpusOffGpuNumaNodes),
            "cpus-off-gpu-numa-nodes");
  EXPECT_EQ(ToString(PcieDistance::kSameSwitch), "same-switch");
}

}  // namespace
}  // namespace lens
