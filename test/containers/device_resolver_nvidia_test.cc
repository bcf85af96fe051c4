// NVIDIA devices in the device resolver: /dev/nvidiaN by NVML's minor
// number, and MIG devices from pod-resources, over inventories built by the
// NVML source from the replays of test/fixtures/nvml and from the stand-in
// libnvidia-ml of test/gpu/nvml/fake_nvml_mig.cc (loaded with dlopen).
#include <gtest/gtest.h>

#include "containers/device_resolver.h"
#include "gpu/nvml/nvml_library.h"
#include "gpu/nvml/nvml_replay.h"
#include "gpu/nvml/nvml_source.h"

namespace lens {

// Defined with the other resolver tests (device_resolver_test.cc).
bool operator==(const ContainerDeviceRecord& a, const ContainerDeviceRecord& b);
void PrintTo(const ContainerDeviceRecord& r, std::ostream* os);

namespace containers {
namespace {

using Records = std::vector<ContainerDeviceRecord>;

const std::string kFixtures = LENS_FIXTURES_DIR;
const std::string kPods(kDeviceSourcePodResources);
const std::string kSpec(kDeviceSourceOciSpec);

DeviceInventory Inventory(std::shared_ptr<nvml::NvmlApi> api) {
  DeviceInventory inventory;
  auto source = nvml::NewNvmlGpuSourceFromApi(std::move(api));
  EXPECT_TRUE(source.ok()) << source.status();
  if (!source.ok()) return inventory;
  auto gpus = (*source)->Scan();
  EXPECT_TRUE(gpus.ok()) << gpus.status();
  if (gpus.ok()) inventory.gpus = *gpus;
  return inventory;
}

DeviceInventory Replayed(const std::string& name) {
  auto replay = nvml::NvmlReplay::Open(kFixtures + "/nvml/" + name);
  EXPECT_TRUE(replay.ok()) << replay.status();
  return replay.ok() ? Inventory(*replay) : DeviceInventory{};
}

OciSpecFacts Nodes(std::vector<OciDeviceNode> nodes) {
  OciSpecFacts facts;
  facts.devices = std::move(nodes);
  return facts;
}

ContainerDeviceRecord Gpu(std::string key, std::string bdf,
                          const std::string& source) {
  return {DeviceKind::kGpu, std::move(key), std::move(bdf), source};
}

// A host with no files at all: nothing but the inventory to go by.
const HostRoots kNoHost = HostRoots::Under("/nonexistent");

TEST(NvidiaMinorTest, NvmlsMinorNamesTheGpuWithoutAnyHostFile) {
  const DeviceInventory h100 = Replayed("h100_8x_550.90.07.json");
  ASSERT_EQ(h100.gpus.size(), 8u);
  const Records cb = {Gpu("1655022005488", "0000:cb:00.0", kSpec)};
  // By numbers (major 195), and by path when the spec has none.
  EXPECT_EQ(
      DevicesFromOciSpec(Nodes({{"/dev/nvidia6", "c", 195, 6}}), h100, kNoHost),
      cb);
  EXPECT_EQ(DevicesFromOciSpec(
                Nodes({{"/dev/nvidia6", "c", std::nullopt, std::nullopt}}),
                h100, kNoHost),
            cb);
  // nvidiactl (195:255) and a minor no GPU has name nothing.
  EXPECT_TRUE(DevicesFromOciSpec(Nodes({{"/dev/nvidiactl", "c", 195, 255},
                                        {"/dev/nvidia8", "c", 195, 8}}),
                                 h100, kNoHost)
                  .empty());
}

TEST(NvidiaMinorTest, TheLoadedLibrarysMinorsResolveEndToEnd) {
  auto library = nvml::OpenNvmlLibrary(LENS_FAKE_NVML_MIG_PATH);
  ASSERT_TRUE(library.ok()) << library.status();
  const DeviceInventory inventory =
      Inventory(std::shared_ptr<nvml::NvmlApi>(*std::move(library)));
  ASSERT_EQ(inventory.gpus.size(), 2u);
  // The stand-in's GPUs have minors 2 and 5, not their indexes 0 and 1.
  EXPECT_EQ(DevicesFromOciSpec(Nodes({{"/dev/nvidia5", "c", 195, 5}}),
                               inventory, kNoHost),
            Records{Gpu("1655022005472", "0000:5d:00.0", kSpec)});
  EXPECT_TRUE(DevicesFromOciSpec(Nodes({{"/dev/nvidia1", "c", 195, 1}}),
                                 inventory, kNoHost)
                  .empty());
  // Its 3g.40gb MIG device, allocated by the device plugin.
  const std::vector<PodResourceDevices> pods = {
      {"nvidia.com/mig-3g.40gb", {"MIG-1c0e2a94-7d35-5b8f-a6e1-3f9d20c4b703"}}};
  EXPECT_EQ(DevicesFromPodResources(pods, inventory),
            Records{Gpu("MIG-1c0e2a94-7d35-5b8f-a6e1-3f9d20c4b703",
                        "0000:4c:00.0", kPods)});
}

class MigPodResourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    inventory_ = Replayed("h200_mig_590.48.01.json");
    ASSERT_EQ(inventory_.gpus.size(), 1u);
    ASSERT_EQ(inventory_.gpus[0].mig_devices.size(), 5u);
  }
  const std::string& Mig(size_t i) const {
    return inventory_.gpus[0].mig_devices[i].uuid;
  }
  DeviceInventory inventory_;
  const std::string bdf_ = "0000:83:00.0";
};

TEST_F(MigPodResourcesTest, MixedStrategyResourcesNameMigDevicesOfTheParent) {
  const std::vector<PodResourceDevices> pods = {
      {"nvidia.com/mig-1g.18gb", {"MIG-7a3e9c13-5c1e-5d0a-9b7e-41f0c2a8d363"}},
      {"nvidia.com/mig-2g.35gb", {"MIG-7A3E9C12-5C1E-5D0A-9B7E-41F0C2A8D362"}}};
  EXPECT_EQ(DevicesFromPodResources(pods, inventory_),
            (Records{Gpu(Mig(2), bdf_, kPods), Gpu(Mig(3), bdf_, kPods)}));
}

TEST_F(MigPodResourcesTest, SingleStrategyAndOldStyleIdsToo) {
  // Single strategy: MIG devices under nvidia.com/gpu. Old drivers' ids
  // name the parent and the GPU/compute instance ids (GI 2, CI 1: device 1).
  const std::vector<PodResourceDevices> pods = {
      {"nvidia.com/gpu", {Mig(0)}},
      {"nvidia.com/mig-2c.3g.71gb",
       {"MIG-GPU-5e2b7c41-93d0-4f6a-b1c8-0d7e6a2f9b35/2/1"}}};
  EXPECT_EQ(DevicesFromPodResources(pods, inventory_),
            (Records{Gpu(Mig(0), bdf_, kPods), Gpu(Mig(1), bdf_, kPods)}));
}

TEST_F(MigPodResourcesTest, UnknownMigIdsStayAllocations) {
  const std::string gone = "MIG-GPU-5e2b7c41-93d0-4f6a-b1c8-0d7e6a2f9b35/7/0";
  const std::string other = "MIG-00000000-1111-2222-3333-444444444444";
  const std::vector<PodResourceDevices> pods = {
      {"nvidia.com/mig-1g.18gb", {gone, other}}};
  // An instance destroyed since the scan still has its parent; a MIG device
  // of another node has nothing.
  EXPECT_EQ(DevicesFromPodResources(pods, inventory_),
            (Records{Gpu(other, "", kPods), Gpu(gone, bdf_, kPods)}));
}

TEST_F(MigPodResourcesTest, TheSpecOfAMigContainerNamesTheParentGpu) {
  // What the NVIDIA runtime gives a MIG container: the parent's nvidia0 and
  // the instance's nvidia-caps nodes (a dynamic major), which prove nothing.
  const OciSpecFacts spec = Nodes(
      {{"/dev/nvidia0", "c", 195, 0},
       {"/dev/nvidiactl", "c", 195, 255},
       {"/dev/nvidia-caps/nvidia-cap21", "c", std::nullopt, std::nullopt}});
  const Records from_spec = DevicesFromOciSpec(spec, inventory_, kNoHost);
  EXPECT_EQ(from_spec, Records{Gpu("1654124008312", bdf_, kSpec)});
  // pod-resources, naming the MIG device, is the authority for GPUs.
  const Records merged = MergeDevices(
      DevicesFromPodResources(
          std::vector<PodResourceDevices>{{"nvidia.com/mig-1g.18gb", {Mig(4)}}},
          inventory_),
      from_spec);
  EXPECT_EQ(merged, Records{Gpu(Mig(4), bdf_, kPods)});
}

}  // namespace
}  // namespace containers
}  // namespace lens
