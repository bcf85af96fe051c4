// The Docker Engine API's JSON (real output of Debian's docker.io 20.10,
// API 1.41: test/fixtures/containers/docker/) decoded, turned into the
// tracker's containers, and resolved to devices with the same rules as
// containerd's OCI specs. Environment variables never get through.
#include "containers/docker/docker_json.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "containers/container_record.h"
#include "containers/device_resolver.h"
#include "containers/docker/docker_devices.h"
#include "containers/oci_spec.h"
#include "gpu/nvml/nvml_replay.h"
#include "gpu/nvml/nvml_source.h"
#include "lens/containers.h"
#include "lens/gpu.h"

namespace lens::containers::docker {
namespace {

const std::string kFixtures = LENS_FIXTURES_DIR;

std::string Fixture(const std::string& name) {
  std::ifstream in(kFixtures + "/containers/docker/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_FALSE(s.str().empty()) << name;
  return s.str();
}

DockerContainer Inspect(const std::string& name) {
  auto c = ParseInspect(Fixture(name));
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : DockerContainer{};
}

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
  if (gpus.ok()) inventory.gpus = *gpus;
  return inventory;
}

// The devices the tracker would record for `c` (no pod-resources).
std::vector<ContainerDeviceRecord> Devices(const DockerContainer& c,
                                           const DeviceInventory& inventory,
                                           const HostRoots& roots,
                                           bool* privileged = nullptr) {
  const RuntimeContainer rc =
      ToRuntimeContainer(c, roots, ReadNvidiaProcGpus(roots.procfs));
  auto spec = ParseOciSpec(rc.spec_json);
  EXPECT_TRUE(spec.ok()) << spec.status() << "\n" << rc.spec_json;
  if (!spec.ok()) return {};
  if (privileged) *privileged = spec->privileged;
  return DevicesFromOciSpec(*spec, inventory, roots);
}

TEST(DockerJsonTest, DecodesARunningContainer) {
  const DockerContainer c = Inspect("inspect_running.json");
  EXPECT_EQ(c.id,
            "52c950c24f868e657c7b49d522904d6eff43e8a5f25adea37b97b34ce6cbdce1");
  EXPECT_EQ(c.image, "lens.test/busybox:1") << "the name, not the sha256";
  EXPECT_EQ(c.status, "running");
  EXPECT_EQ(c.pid, 2244);
  ASSERT_TRUE(c.started_at.has_value());
  EXPECT_FALSE(c.finished_at.has_value()) << "Go's zero time is 'never'";
  // 2026-11-26T05:00:06.352762752Z, truncated to microseconds.
  EXPECT_EQ(c.created_at.time_since_epoch().count(), 1795669206352762);
  EXPECT_EQ(c.labels.at("io.kubernetes.pod.name"), "llama-0");
  EXPECT_EQ(c.labels.size(), 4u);
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0].path_in_container, "/dev/dri/renderD128");
  EXPECT_EQ(c.devices[0].permissions, "rwm");
  EXPECT_EQ(c.device_cgroup_rules, std::vector<std::string>{"c 231:* rwm"});
  EXPECT_FALSE(c.privileged);
}

TEST(DockerJsonTest, NeverCarriesEnvironmentVariables) {
  const std::string raw = Fixture("inspect_running.json");
  ASSERT_NE(raw.find("SECRET_TOKEN=hunter2"), std::string::npos)
      << "the fixture must hold a secret for this test to mean anything";
  const DockerContainer c = Inspect("inspect_running.json");
  ContainerTrackerOptions options;
  options.node = "n";
  DeviceInventory inventory;
  PodAllocations allocations;
  const RuntimeContainer rc = ToRuntimeContainer(c, HostRoots{}, {});
  auto spec = ParseOciSpec(rc.spec_json);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const ContainerRecord record =
      BuildRecord(rc, *spec, {&options, &inventory, &allocations}, Timestamp{});
  std::string everything = rc.spec_json + rc.image + ContainerJson(record);
  for (const auto& [k, v] : rc.labels) everything += k + v;
  EXPECT_EQ(everything.find("hunter2"), std::string::npos) << everything;
  EXPECT_EQ(everything.find("SECRET_TOKEN"), std::string::npos);
}

TEST(DockerJsonTest, MapsStatesToTheTrackersTaskModel) {
  const DockerContainer exited = Inspect("inspect_exited.json");
  EXPECT_EQ(exited.status, "exited");
  EXPECT_EQ(exited.exit_code, 137);
  ASSERT_TRUE(exited.finished_at.has_value());
  RuntimeContainer rc = ToRuntimeContainer(exited, HostRoots{}, {});
  EXPECT_EQ(StateOf(rc), ContainerState::kExited);
  EXPECT_EQ(rc.exit_status, 137);
  EXPECT_EQ(rc.exited_at, exited.finished_at);
  EXPECT_EQ(rc.pid, 0);

  const DockerContainer running = Inspect("inspect_running.json");
  rc = ToRuntimeContainer(running, HostRoots{}, {});
  EXPECT_EQ(StateOf(rc), ContainerState::kRunning);
  EXPECT_EQ(rc.pid, 2244);
  EXPECT_FALSE(rc.exit_status.has_value());

  rc = ToRuntimeContainer(Inspect("inspect_created_amd1.json"), {}, {});
  EXPECT_EQ(StateOf(rc), ContainerState::kCreated);
  DockerContainer paused = running;
  paused.status = "paused";
  EXPECT_EQ(StateOf(ToRuntimeContainer(paused, {}, {})),
            ContainerState::kPaused);
}

TEST(DockerJsonTest, ResolvesAmdDevicesByHostPath) {
  // A CPX host: renderD129 and card1 are the second partition of GPU 0.
  const HostRoots roots = HostRoots::Under(kFixtures + "/hosts/mi300x-cpx");
  DeviceInventory inventory;
  auto gpus = NewAmdGpuSysfsSource(roots)->Scan();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  inventory.gpus = *gpus;
  ASSERT_EQ(inventory.gpus.size(), 16u);
  // --device /dev/kfd --device /dev/dri/renderD129:/dev/dri/renderD128
  // --device /dev/dri/card1: the host's renderD129 is what the container
  // holds, whatever its name inside; /dev/kfd proves nothing.
  const DockerContainer c = Inspect("inspect_created_amd1.json");
  ASSERT_EQ(c.devices.size(), 3u);
  const auto devices = Devices(c, inventory, roots);
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].kind, DeviceKind::kGpu);
  EXPECT_EQ(devices[0].bdf, "0000:0c:00.0");
  EXPECT_EQ(devices[0].device_key, inventory.gpus[0].serial + "/p1");
  EXPECT_EQ(devices[0].source, kDeviceSourceOciSpec);
  // A node the inventory does not know (the BMC's display) is no GPU.
  DockerContainer other = c;
  other.devices = {{"/dev/dri/card99", "/dev/dri/card99", "rwm"}};
  EXPECT_TRUE(Devices(other, inventory, roots).empty());
}

TEST(DockerJsonTest, ResolvesNvidiaDeviceRequestsByIndexAndUuid) {
  const HostRoots roots = HostRoots::Under(kFixtures + "/containers/host-h100");
  const DeviceInventory inventory = H100Inventory();
  ASSERT_EQ(inventory.gpus.size(), 8u);
  const auto nvidia = ReadNvidiaProcGpus(roots.procfs);
  ASSERT_EQ(nvidia.size(), 8u);
  EXPECT_EQ(nvidia[0].bdf, "0000:19:00.0");
  EXPECT_EQ(nvidia[1].bdf, "0000:3b:00.0");

  // --gpus '"device=1,GPU-b8f7..."': index 1 is the second GPU in PCI
  // order; the UUID is no GPU of this host.
  DockerContainer c = Inspect("inspect_created_nv1.json");
  ASSERT_EQ(c.device_requests.size(), 1u);
  auto devices = Devices(c, inventory, roots);
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].bdf, "0000:3b:00.0");

  c.device_requests[0].device_ids = {nvidia[7].uuid};
  devices = Devices(c, inventory, roots);
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].bdf, nvidia[7].bdf);

  // --gpus all (Count -1), and --gpus 2: the first two.
  EXPECT_EQ(
      Devices(Inspect("inspect_created_nvall.json"), inventory, roots).size(),
      8u);
  c.device_requests[0].device_ids.clear();
  c.device_requests[0].count = 2;
  devices = Devices(c, inventory, roots);
  ASSERT_EQ(devices.size(), 2u);
  // A request for another kind of device is no GPU.
  c.device_requests[0].capabilities = {{"tpu"}};
  EXPECT_TRUE(Devices(c, inventory, roots).empty());
}

TEST(DockerJsonTest, PrivilegedContainersOwnNoDevice) {
  const HostRoots roots = HostRoots::Under(kFixtures + "/containers/host-h100");
  DockerContainer c = Inspect("inspect_created_priv1.json");
  ASSERT_TRUE(c.privileged);
  c.device_requests.push_back({"nvidia", -1, {}, {{"gpu"}}});
  bool privileged = false;
  EXPECT_TRUE(Devices(c, H100Inventory(), roots, &privileged).empty());
  EXPECT_TRUE(privileged);
  c.privileged = false;
  EXPECT_EQ(Devices(c, H100Inventory(), roots, &privileged).size(), 8u);
  EXPECT_FALSE(privileged);
}

TEST(DockerJsonTest, DecodesTheEventStream) {
  std::istringstream lines(Fixture("events.jsonl"));
  std::string line, actions;
  std::optional<int32_t> die_code;
  while (std::getline(lines, line)) {
    auto e = ParseEvent(line);
    ASSERT_TRUE(e.ok()) << e.status();
    if (!*e) {
      actions += "-,";  // kill: not followed
      continue;
    }
    EXPECT_EQ((*e)->id.size(), 64u);
    EXPECT_GT((*e)->time_nano, 1700000000LL * 1000000000);
    actions += std::to_string(static_cast<int>((*e)->action)) + ",";
    if ((*e)->action == DockerAction::kDie && !die_code)
      die_code = (*e)->exit_code;
  }
  // start pause unpause kill die | create start die destroy
  EXPECT_EQ(actions, "1,4,5,-,2,0,1,2,3,");
  EXPECT_EQ(die_code, 137);
  auto exec = ParseEvent(
      R"({"Type":"container","Action":"exec_start: sh -c true","Actor":{"ID":"a"},"timeNano":1})");
  ASSERT_TRUE(exec.ok());
  EXPECT_FALSE(exec->has_value());
  auto image = ParseEvent(R"({"Type":"image","Action":"pull","time":1})");
  ASSERT_TRUE(image.ok());
  EXPECT_FALSE(image->has_value());
  EXPECT_FALSE(ParseEvent("[1]").ok());
  EXPECT_FALSE(ParseEvent(R"({"Type":"container","Action":"start"})").ok())
      << "an event without a container id";
}

TEST(DockerJsonTest, ListsIds) {
  auto ids = ParseContainerIds(Fixture("containers_list.json"));
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(ids->size(), 5u);
  auto bad = ParseContainerIds(R"([{"Id":7}])");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("[0].Id: expected string"),
            std::string::npos)
      << bad.status();
}

TEST(DockerJsonTest, ParsesTimesAsDockerWritesThem) {
  auto t = ParseDockerTime("2026-11-26T05:00:10.339659712Z");
  ASSERT_TRUE(t.ok() && t->has_value());
  EXPECT_EQ((*t)->time_since_epoch().count(), 1795669210339659);
  auto offset = ParseDockerTime("2026-11-26T07:00:10.5+02:00");
  ASSERT_TRUE(offset.ok() && offset->has_value());
  EXPECT_EQ((*offset)->time_since_epoch().count(), 1795669210500000);
  auto zero = ParseDockerTime("0001-01-01T00:00:00Z");
  ASSERT_TRUE(zero.ok());
  EXPECT_FALSE(zero->has_value());
  for (const char* bad :
       {"", "2026-11-26", "2026-11-26T05:00:10", "2026-13-26T05:00:10Z",
        "2026-11-26T05:00:10.Z", "2026-11-26T05:00:10Zjunk"}) {
    EXPECT_FALSE(ParseDockerTime(bad).ok()) << bad;
  }
}

TEST(DockerJsonTest, ErrorsNameTheField) {
  auto broken = ParseInspect("{\"Id\":");
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("invalid JSON at offset"),
            std::string::npos);
  auto typed = ParseInspect(
      R"({"Id":"a","Created":"2026-11-26T05:00:10Z","HostConfig":{"Privileged":"yes"}})");
  ASSERT_FALSE(typed.ok());
  EXPECT_NE(
      typed.status().message().find("HostConfig.Privileged: expected boolean"),
      std::string::npos)
      << typed.status();
  auto no_created = ParseInspect(R"({"Id":"a"})");
  ASSERT_FALSE(no_created.ok());
  EXPECT_NE(no_created.status().message().find("Created"), std::string::npos);
  EXPECT_EQ(ErrorMessage(R"({"message":"No such container: nope"})"),
            "No such container: nope");
}

}  // namespace
}  // namespace lens::containers::docker
