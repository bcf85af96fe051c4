// Resolving container devices against inventories built by the real readers
// from the host fixture trees (test/fixtures/hosts), with the container
// specs and extra host files of test/fixtures/containers (README.md there).
#include "containers/device_resolver.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "gpu/nvml/nvml_replay.h"
#include "gpu/nvml/nvml_source.h"
#include "lens/rdma.h"

namespace lens {

// Lets EXPECT_EQ compare and print records.
bool operator==(const ContainerDeviceRecord& a,
                const ContainerDeviceRecord& b) {
  return a.kind == b.kind && a.device_key == b.device_key && a.bdf == b.bdf &&
         a.source == b.source;
}
void PrintTo(const ContainerDeviceRecord& r, std::ostream* os) {
  *os << "{" << ToString(r.kind) << ", " << r.device_key << ", " << r.bdf
      << ", " << r.source << "}";
}

namespace containers {
namespace {

using Records = std::vector<ContainerDeviceRecord>;

const std::string kFixtures = LENS_FIXTURES_DIR;

HostRoots Host(const std::string& name) {
  return HostRoots::Under(kFixtures + "/hosts/" + name);
}

// mi300x-8x-mlx5 with the uverbs devices of containers/host-mi300x-verbs.
HostRoots Mi300xWithVerbs() {
  HostRoots roots = Host("mi300x-8x-mlx5");
  roots.sysfs = kFixtures + "/containers/host-mi300x-verbs/sys";
  return roots;
}

OciSpecFacts Spec(const std::string& name) {
  std::ifstream in(kFixtures + "/containers/" + name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  auto facts = ParseOciSpec(text.str());
  EXPECT_TRUE(facts.ok()) << name << ": " << facts.status();
  return facts.ok() ? *facts : OciSpecFacts{};
}

OciSpecFacts Nodes(std::vector<OciDeviceNode> nodes) {
  OciSpecFacts facts;
  facts.devices = std::move(nodes);
  return facts;
}

// What the node agent's probes report for an AMD host tree.
DeviceInventory AmdInventory(const HostRoots& roots) {
  DeviceInventory inventory;
  auto gpus = NewAmdGpuSysfsSource(roots)->Scan();
  EXPECT_TRUE(gpus.ok()) << gpus.status();
  if (gpus.ok()) inventory.gpus = *gpus;
  RdmaReader reader(roots);
  auto rdma = reader.Scan();
  EXPECT_TRUE(rdma.ok()) << rdma.status();
  if (rdma.ok()) inventory.rdma = *rdma;
  return inventory;
}

// The HGX H100 node of test/fixtures/nvml, through the NVML source.
DeviceInventory H100Inventory() {
  DeviceInventory inventory;
  auto replay =
      nvml::NvmlReplay::Open(kFixtures + "/nvml/h100_8x_550.90.07.json");
  EXPECT_TRUE(replay.ok()) << replay.status();
  if (!replay.ok()) return inventory;
  auto source = nvml::NewNvmlGpuSourceFromApi(*replay);
  EXPECT_TRUE(source.ok()) << source.status();
  if (!source.ok()) return inventory;
  auto gpus = (*source)->Scan();
  EXPECT_TRUE(gpus.ok()) << gpus.status();
  if (gpus.ok()) inventory.gpus = *gpus;
  return inventory;
}

// The same GPUs as a source without the /dev/nvidiaN minor would report
// them: the resolver then reads the host's procfs.
DeviceInventory WithoutNvidiaMinors(DeviceInventory inventory) {
  for (GpuInfo& g : inventory.gpus) g.nvidia_minor.reset();
  return inventory;
}

ContainerDeviceRecord Gpu(std::string key, std::string bdf,
                          std::string_view source = kDeviceSourceOciSpec) {
  return {DeviceKind::kGpu, std::move(key), std::move(bdf),
          std::string(source)};
}
ContainerDeviceRecord Rdma(std::string key, std::string bdf,
                           std::string_view source = kDeviceSourceOciSpec) {
  return {DeviceKind::kRdma, std::move(key), std::move(bdf),
          std::string(source)};
}

// In the resolver's order: by (kind as text, key).
Records Sorted(Records records) {
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
    return std::tuple(ToString(a.kind), a.device_key) <
           std::tuple(ToString(b.kind), b.device_key);
  });
  return records;
}

// A scratch host tree; removed on destruction.
class TempTree {
 public:
  TempTree() {
    std::string pattern = ::testing::TempDir() + "lens_devres_XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) root_ = pattern;
  }
  ~TempTree() {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  void Write(const std::string& rel, const std::string& text) {
    std::filesystem::create_directories(
        std::filesystem::path(root_ + "/" + rel).parent_path());
    std::ofstream(root_ + "/" + rel) << text;
  }
  HostRoots roots() const { return HostRoots::Under(root_); }

 private:
  std::string root_;
};

TEST(DevicesFromOciSpecTest, OwnsTheOneGpuOfANormalContainerOnce) {
  const DeviceInventory inventory = AmdInventory(Host("mi300x-8x-mlx5"));
  ASSERT_EQ(inventory.gpus.size(), 8u);
  ASSERT_EQ(inventory.gpus[0].serial, "692351001124");
  // card0 and renderD128 are one GPU; /dev/kfd proves nothing.
  EXPECT_EQ(DevicesFromOciSpec(Spec("cri-amd-1gpu.json"), inventory,
                               Host("mi300x-8x-mlx5")),
            Records{Gpu("692351001124", "0000:0c:00.0")});
}

TEST(DevicesFromOciSpecTest, FindsTwoGpusAndTheirHcas) {
  const DeviceInventory inventory = AmdInventory(Host("mi300x-8x-mlx5"));
  ASSERT_EQ(inventory.gpus.size(), 8u);
  Records expected =
      Sorted({Gpu(inventory.gpus[2].serial, "0000:38:00.0"),
              Gpu(inventory.gpus[3].serial, "0000:5c:00.0"),
              Rdma("mlx5_2", "0000:39:00.0"), Rdma("mlx5_3", "0000:5d:00.0")});
  const OciSpecFacts spec = Spec("cri-amd-2gpu-rdma.json");
  EXPECT_EQ(DevicesFromOciSpec(spec, inventory, Mi300xWithVerbs()), expected);
  // The generated host tree has no class/infiniband_verbs: the HCAs cannot
  // be told apart there and are left out, the GPUs stay.
  expected.resize(2);
  EXPECT_EQ(DevicesFromOciSpec(spec, inventory, Host("mi300x-8x-mlx5")),
            expected);
}

TEST(DevicesFromOciSpecTest, FindsTheHcaOfAnRdmaOnlyContainer) {
  const DeviceInventory inventory = AmdInventory(Host("mi300x-8x-mlx5"));
  EXPECT_EQ(
      DevicesFromOciSpec(Spec("cri-rdma.json"), inventory, Mi300xWithVerbs()),
      Records{Rdma("mlx5_0", "0000:0d:00.0")});
}

TEST(DevicesFromOciSpecTest, PrivilegedContainerOwnsNothing) {
  const DeviceInventory inventory = AmdInventory(Host("mi300x-8x-mlx5"));
  OciSpecFacts spec = Spec("cri-privileged.json");
  ASSERT_TRUE(spec.privileged);
  EXPECT_TRUE(DevicesFromOciSpec(spec, inventory, Mi300xWithVerbs()).empty());
  // The same node list without the allow-all rule would name every device.
  spec.privileged = false;
  EXPECT_EQ(DevicesFromOciSpec(spec, inventory, Mi300xWithVerbs()).size(), 16u);
}

TEST(DevicesFromOciSpecTest, FindsTheNvidiaGpuThroughProcfsAndDrm) {
  const DeviceInventory inventory = WithoutNvidiaMinors(H100Inventory());
  ASSERT_EQ(inventory.gpus.size(), 8u);
  const Records expected = {Gpu("1655022005479", "0000:5d:00.0")};
  const HostRoots h100 = HostRoots::Under(kFixtures + "/containers/host-h100");
  const OciSpecFacts spec = Spec("cri-nvidia-cdi.json");
  // nvidia3 and card4/renderD131 are one GPU; nvidiactl, nvidia-modeset
  // and nvidia-uvm prove nothing.
  EXPECT_EQ(DevicesFromOciSpec(spec, inventory, h100), expected);
  HostRoots procfs_only = h100;
  procfs_only.dev = kFixtures + "/hosts/empty/dev";
  EXPECT_EQ(DevicesFromOciSpec(spec, inventory, procfs_only), expected);
  HostRoots drm_only = h100;
  drm_only.procfs = kFixtures + "/hosts/empty/proc";
  EXPECT_EQ(DevicesFromOciSpec(spec, inventory, drm_only), expected);
  HostRoots neither = procfs_only;
  neither.procfs = drm_only.procfs;
  EXPECT_TRUE(DevicesFromOciSpec(spec, inventory, neither).empty());
}

TEST(DevicesFromOciSpecTest, TakesTheNvidiaMinorFromProcfsNotTheIndex) {
  TempTree tree;
  tree.Write("proc/driver/nvidia/gpus/0000:3b:00.0/information",
             "Model: \t\t NVIDIA H100 80GB HBM3\nBus Location: \t "
             "0000:3b:00.0\nDevice Minor: \t 6\nGPU Excluded:\t No\n");
  const DeviceInventory inventory = WithoutNvidiaMinors(H100Inventory());
  EXPECT_EQ(DevicesFromOciSpec(Nodes({{"/dev/nvidia6", "c", 195, 6}}),
                               inventory, tree.roots()),
            Records{Gpu("1655022005473", "0000:3b:00.0")});
  EXPECT_TRUE(DevicesFromOciSpec(Nodes({{"/dev/nvidia1", "c", 195, 1}}),
                                 inventory, tree.roots())
                  .empty());
}

TEST(DevicesFromOciSpecTest, KeysEachCpxPartitionApart) {
  const HostRoots cpx = Host("mi300x-cpx");
  const DeviceInventory inventory = AmdInventory(cpx);
  ASSERT_EQ(inventory.gpus.size(), 16u);
  const std::string serial0 = inventory.gpus[0].serial;
  const std::string serial1 = inventory.gpus[8].serial;
  ASSERT_FALSE(serial1.empty());
  // amdgpu_xcp_9 (card11, renderD139): partition 3 of the second GPU.
  EXPECT_EQ(
      DevicesFromOciSpec(Spec("cri-amd-cpx-partition.json"), inventory, cpx),
      Records{Gpu(serial1 + "/p3", "0000:22:00.0")});
  EXPECT_EQ(DevicesFromOciSpec(Nodes({{"/dev/dri/renderD128", "c", 226, 128},
                                      {"/dev/dri/renderD129", "c", 226, 129}}),
                               inventory, cpx),
            (Records{Gpu(serial0 + "/p0", "0000:0c:00.0"),
                     Gpu(serial0 + "/p1", "0000:0c:00.0")}));
}

TEST(DevicesFromOciSpecTest, IgnoresNodesOfDevicesOutsideTheInventory) {
  const HostRoots host = Host("radeon-workstation");
  const DeviceInventory inventory = AmdInventory(host);
  ASSERT_EQ(inventory.gpus.size(), 1u);
  // card1 is the BMC's AST display at 0000:0f:00.0. The W6600 has no
  // serial: its BDF is the key.
  EXPECT_EQ(DevicesFromOciSpec(Nodes({{"/dev/dri/card1", "c", 226, 1},
                                      {"/dev/dri/card0", "c", 226, 0}}),
                               inventory, host),
            Records{Gpu("0000:03:00.0", "0000:03:00.0")});
}

TEST(DevicesFromOciSpecTest, SharedAndUnknownNodesYieldNothing) {
  const DeviceInventory inventory = AmdInventory(Host("mi300x-8x-mlx5"));
  EXPECT_TRUE(DevicesFromOciSpec(
                  Nodes({{"/dev/kfd", "c", 236, 0},
                         {"/dev/nvidiactl", "c", 195, 255},
                         {"/dev/nvidia-modeset", "c", 195, 254},
                         {"/dev/nvidia-uvm", "c", 508, 0},
                         {"/dev/infiniband/rdma_cm", "c", 10, 122},
                         {"/dev/infiniband/umad0", "c", 231, 0},
                         {"/dev/null", "c", 1, 3},
                         {"/dev/dri/renderD128", "b", 226, 128},
                         {"/dev/nvidia-uvm", "c", std::nullopt, std::nullopt},
                         {"/renderD128", "c", std::nullopt, std::nullopt}}),
                  inventory, Mi300xWithVerbs())
                  .empty());
}

TEST(DevicesFromOciSpecTest, UsesThePathOnlyWithoutNumbers) {
  const DeviceInventory inventory = AmdInventory(Host("mi300x-8x-mlx5"));
  const std::string serial1 = inventory.gpus[1].serial;
  EXPECT_EQ(
      DevicesFromOciSpec(
          Nodes({{"/dev/dri/renderD136", "c", std::nullopt, std::nullopt},
                 {"/dev/infiniband/uverbs1", "c", std::nullopt, std::nullopt}}),
          inventory, Mi300xWithVerbs()),
      (Records{Gpu(serial1, "0000:22:00.0"), Rdma("mlx5_1", "0000:23:00.0")}));
  // The numbers name the host device; the path inside may differ.
  EXPECT_EQ(DevicesFromOciSpec(Nodes({{"/dev/dri/renderD128", "c", 226, 136}}),
                               inventory, Mi300xWithVerbs()),
            Records{Gpu(serial1, "0000:22:00.0")});
}

TEST(DevicesFromOciSpecTest, ReadsTheKernelNameOfADynamicMajor) {
  // uverbs32 and later live on a dynamic major (uverbs_main.c).
  TempTree tree;
  tree.Write("sys/dev/char/238:0/uevent",
             "MAJOR=238\nMINOR=0\nDEVNAME=infiniband/uverbs32\n");
  tree.Write("sys/class/infiniband_verbs/uverbs32/ibdev", "mlx5_32\n");
  DeviceInventory inventory;
  inventory.rdma.emplace_back();
  inventory.rdma[0].name = "mlx5_32";
  inventory.rdma[0].bdf = "0000:e1:00.2";
  EXPECT_EQ(
      DevicesFromOciSpec(Nodes({{"/dev/infiniband/uverbs32", "c", 238, 0}}),
                         inventory, tree.roots()),
      Records{Rdma("mlx5_32", "0000:e1:00.2")});
}

TEST(GpuDeviceKeyTest, QualifiesASerialSharedByTwoDies) {
  const DeviceInventory inventory = AmdInventory(Host("mi250-mi210"));
  ASSERT_EQ(inventory.gpus.size(), 4u);
  EXPECT_EQ(GpuDeviceKey(inventory.gpus[0], inventory),
            "PCB046982-0071@0000:29:00.0");
  EXPECT_EQ(GpuDeviceKey(inventory.gpus[1], inventory),
            "PCB046982-0071@0000:2c:00.0");
  EXPECT_EQ(GpuDeviceKey(inventory.gpus[2], inventory),
            inventory.gpus[2].serial);
}

TEST(DevicesFromPodResourcesTest, MatchesAmdBdfsAndKfdIds) {
  const DeviceInventory inventory = AmdInventory(Host("mi300x-8x-mlx5"));
  const GpuInfo& g5 = inventory.gpus[5];
  ASSERT_TRUE(g5.kfd_gpu_id);
  const std::vector<PodResourceDevices> allocations = {
      {"amd.com/gpu", {"0000:38:00.0", "5C:00.0", ""}},
      {"amd.com/gpu", {std::to_string(*g5.kfd_gpu_id)}}};
  EXPECT_EQ(
      DevicesFromPodResources(allocations, inventory),
      Sorted({Gpu(inventory.gpus[2].serial, "0000:38:00.0",
                  kDeviceSourcePodResources),
              Gpu(inventory.gpus[3].serial, "0000:5c:00.0",
                  kDeviceSourcePodResources),
              Gpu(g5.serial, "0000:af:00.0", kDeviceSourcePodResources)}));
}

TEST(DevicesFromPodResourcesTest, MatchesNvidiaUuidsAndKeepsUnknownIds) {
  const DeviceInventory inventory = H100Inventory();
  const std::string gpu3 = "GPU-083a791c-1f40-bb49-d1f3-5098f151feeb";
  const std::string src(kDeviceSourcePodResources);
  const std::vector<PodResourceDevices> allocations = {
      // Time-sliced replicas of one GPU.
      {"nvidia.com/gpu.shared", {gpu3 + "::0", gpu3 + "::2"}},
      {"nvidia.com/gpu", {"GPU-00000000-1111-2222-3333-444444444444"}},
      {"nvidia.com/mig-1g.10gb",
       {"MIG-GPU-b66ea1a7-1f45-5cad-ffaf-d115903e98bf/1/0",
        "MIG-0e2e4b9c-6a1d-5f3e-8b7c-9d0a1b2c3d4e"}},
      {"example.com/fpga", {"fpga-0"}}};
  EXPECT_EQ(DevicesFromPodResources(allocations, inventory),
            (Records{{DeviceKind::kOther, "fpga-0", "", src},
                     Gpu("1655022005479", "0000:5d:00.0", src),
                     Gpu("GPU-00000000-1111-2222-3333-444444444444", "", src),
                     Gpu("MIG-0e2e4b9c-6a1d-5f3e-8b7c-9d0a1b2c3d4e", "", src),
                     Gpu("MIG-GPU-b66ea1a7-1f45-5cad-ffaf-d115903e98bf/1/0",
                         "0000:19:00.0", src)}));
}

TEST(DevicesFromPodResourcesTest, ResolvesPartitionIdsWithTheHostTree) {
  const HostRoots cpx = Host("mi300x-cpx");
  const DeviceInventory inventory = AmdInventory(cpx);
  ASSERT_EQ(inventory.gpus.size(), 16u);
  const std::string serial1 = inventory.gpus[8].serial;
  const std::string src(kDeviceSourcePodResources);
  // The plugin names partition 0 by the PCI address, the others by their
  // platform device.
  const std::vector<PodResourceDevices> allocations = {
      {"amd.com/cpx_nps1", {"0000:22:00.0", "amdgpu_xcp_9"}}};
  EXPECT_EQ(DevicesFromPodResources(allocations, inventory, cpx),
            (Records{Gpu(serial1 + "/p0", "0000:22:00.0", src),
                     Gpu(serial1 + "/p3", "0000:22:00.0", src)}));
  EXPECT_EQ(DevicesFromPodResources(allocations, inventory),
            Sorted({Gpu("amdgpu_xcp_9", "", src),
                    Gpu(serial1 + "/p0", "0000:22:00.0", src)}));
}

TEST(DevicesFromPodResourcesTest, MatchesRdmaNamesAndBdfs) {
  const DeviceInventory inventory = AmdInventory(Host("mi300x-8x-mlx5"));
  const std::string src(kDeviceSourcePodResources);
  const std::vector<PodResourceDevices> allocations = {
      {"rdma/hca_shared_devices_a", {"mlx5_0", "rdma-shared-7"}},
      {"nvidia.com/sriov_rdma_vf", {"0000:23:00.0"}},
      {"openshift.io/mlnxnics", {"0000:9E:00.0"}}};
  EXPECT_EQ(DevicesFromPodResources(allocations, inventory),
            (Records{Rdma("mlx5_0", "0000:0d:00.0", src),
                     Rdma("mlx5_1", "0000:23:00.0", src),
                     Rdma("mlx5_4", "0000:9e:00.0", src),
                     Rdma("rdma-shared-7", "", src)}));
}

TEST(DevicesFromPodResourcesTest, LeavesAnAmbiguousSerialUnresolved) {
  const DeviceInventory inventory = AmdInventory(Host("mi250-mi210"));
  const std::string src(kDeviceSourcePodResources);
  EXPECT_EQ(DevicesFromPodResources(
                std::vector<PodResourceDevices>{
                    {"amd.com/gpu", {"PCB046982-0071", "0000:2c:00.0"}}},
                inventory),
            (Records{Gpu("PCB046982-0071", "", src),
                     Gpu("PCB046982-0071@0000:2c:00.0", "0000:2c:00.0", src)}));
}

TEST(MergeDevicesTest, PodResourcesWinForGpusAndTheSpecFillsRdma) {
  const DeviceInventory inventory = AmdInventory(Host("mi300x-8x-mlx5"));
  const std::string src(kDeviceSourcePodResources);
  const Records from_spec = DevicesFromOciSpec(Spec("cri-amd-2gpu-rdma.json"),
                                               inventory, Mi300xWithVerbs());
  ASSERT_EQ(from_spec.size(), 4u);
  // The kubelet says 0000:9f:00.0 (twice); the spec's GPUs are not used.
  const Records from_pods = DevicesFromPodResources(
      std::vector<PodResourceDevices>{
          {"amd.com/gpu", {"0000:9f:00.0", "0000:9f:00.0"}}},
      inventory);
  EXPECT_EQ(MergeDevices(from_pods, from_spec),
            (Records{Gpu(inventory.gpus[4].serial, "0000:9f:00.0", src),
                     Rdma("mlx5_2", "0000:39:00.0"),
                     Rdma("mlx5_3", "0000:5d:00.0")}));
  // Nothing from the kubelet: the spec stands.
  EXPECT_EQ(MergeDevices({}, from_spec), from_spec);
  // The kubelet's RDMA allocation replaces the spec's as well.
  const Records rdma_pods = {Rdma("mlx5_7", "0000:de:00.0", src)};
  EXPECT_EQ(MergeDevices(rdma_pods, from_spec),
            (Records{from_spec[0], from_spec[1], rdma_pods[0]}));
}

}  // namespace
}  // namespace containers
}  // namespace lens
