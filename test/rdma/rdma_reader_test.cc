// RdmaReader on the fixture host trees (test/fixtures/hosts, see
// README-rdma-node.md) and on private copies of them that change under it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "lens/rdma.h"
#include "temp_host_tree.h"

namespace lens {
namespace {

using testing_rdma::FixtureHost;
using testing_rdma::Overwrite;
using testing_rdma::Slurp;
using testing_rdma::TempHostTree;

std::vector<RdmaDevice> ScanHost(RdmaReader& reader) {
  auto devices = reader.Scan();
  EXPECT_TRUE(devices.ok()) << devices.status();
  return devices.ok() ? *devices : std::vector<RdmaDevice>{};
}

// A fixture file's value as the test reads it, without Lens's helpers.
std::string FileValue(const std::string& path) {
  std::string text = Slurp(path);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) {
    text.pop_back();
  }
  return text;
}

uint64_t FileUint(const std::string& path) {
  return std::stoull(FileValue(path));
}

const RdmaCounter* FindCounter(const RdmaPortCounters& port,
                               const std::string& name) {
  for (const RdmaCounter& c : port.counters) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string PortDir(const std::string& host, const std::string& device) {
  return FixtureHost(host) + "/sys/class/infiniband/" + device + "/ports/1";
}

TEST(RdmaReaderTest, Mi300xHostHasEightNdrHcasBesideTheGpus) {
  RdmaReader reader(HostRoots::Under(FixtureHost("mi300x-8x-mlx5")));
  std::vector<RdmaDevice> devices = ScanHost(reader);
  ASSERT_EQ(devices.size(), 8u);
  const std::vector<std::string> bdfs = {
      "0000:0d:00.0", "0000:23:00.0", "0000:39:00.0", "0000:5d:00.0",
      "0000:9e:00.0", "0000:b0:00.0", "0000:be:00.0", "0000:de:00.0"};
  const std::vector<std::string> netdevs = {"ibp13s0",  "ibp35s0",  "ibp57s0",
                                            "ibp93s0",  "ibp158s0", "ibp176s0",
                                            "ibp190s0", "ibp222s0"};
  const std::set<std::string> gpu_bdfs = {
      "0000:0c:00.0", "0000:22:00.0", "0000:38:00.0", "0000:5c:00.0",
      "0000:9f:00.0", "0000:af:00.0", "0000:bf:00.0", "0000:df:00.0"};
  std::set<std::string> guids;
  for (size_t i = 0; i < devices.size(); ++i) {
    const RdmaDevice& d = devices[i];
    SCOPED_TRACE(d.name);
    EXPECT_EQ(d.name, "mlx5_" + std::to_string(i));
    EXPECT_EQ(d.bdf, bdfs[i]);
    EXPECT_EQ(gpu_bdfs.count(d.bdf), 0u);
    EXPECT_EQ(d.numa_node, i < 4 ? 0 : 1);
    EXPECT_EQ(d.netdevs, std::vector<std::string>{netdevs[i]});
    EXPECT_EQ(d.fw_version, "28.39.1002");
    EXPECT_EQ(d.board_id, "MT_0000000838");
    EXPECT_EQ(d.hca_type, "MT4129");
    EXPECT_EQ(d.node_type, "CA");
    EXPECT_EQ(d.sys_image_guid, d.node_guid);
    guids.insert(d.node_guid);
    ASSERT_EQ(d.ports.size(), 1u);
    const RdmaPort& p = d.ports[0];
    EXPECT_EQ(p.port, 1);
    EXPECT_EQ(p.state, "ACTIVE");
    EXPECT_EQ(p.phys_state, "LinkUp");
    EXPECT_EQ(p.link_layer, "InfiniBand");
    EXPECT_EQ(p.rate, "400 Gb/sec (4X NDR)");
    EXPECT_EQ(p.rate_gbps, 400.0);
    EXPECT_EQ(p.lid, 0x12u + i);
  }
  EXPECT_EQ(devices[0].node_guid, "946d:ae03:004a:1b20");
  EXPECT_EQ(devices[7].node_guid, "946d:ae03:004a:1be4");
  EXPECT_EQ(guids.size(), 8u);
}

TEST(RdmaReaderTest, CpxHostHasTheSameHcaLayoutWithItsOwnGuids) {
  RdmaReader cpx(HostRoots::Under(FixtureHost("mi300x-cpx")));
  RdmaReader spx(HostRoots::Under(FixtureHost("mi300x-8x-mlx5")));
  std::vector<RdmaDevice> a = ScanHost(cpx);
  std::vector<RdmaDevice> b = ScanHost(spx);
  ASSERT_EQ(a.size(), 8u);
  ASSERT_EQ(b.size(), 8u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].bdf, b[i].bdf);
    EXPECT_EQ(a[i].ports, b[i].ports);
    EXPECT_NE(a[i].node_guid, b[i].node_guid);
  }
}

TEST(RdmaReaderTest, RoceHostReportsEthernetPortsAndTheDisabledOne) {
  RdmaReader reader(HostRoots::Under(FixtureHost("mi250-mi210")));
  std::vector<RdmaDevice> devices = ScanHost(reader);
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].bdf, "0000:c1:00.0");
  EXPECT_EQ(devices[1].bdf, "0000:c1:00.1");
  EXPECT_EQ(devices[0].netdevs, std::vector<std::string>{"ens1f0np0"});
  EXPECT_EQ(devices[1].netdevs, std::vector<std::string>{"ens1f1np1"});
  for (const RdmaDevice& d : devices) {
    EXPECT_EQ(d.hca_type, "MT4125");
    EXPECT_EQ(d.numa_node, 1);
    ASSERT_EQ(d.ports.size(), 1u);
    EXPECT_EQ(d.ports[0].link_layer, "Ethernet");
    EXPECT_EQ(d.ports[0].lid, 0u);  // RoCE ports have no LID
  }
  const RdmaPort& up = devices[0].ports[0];
  EXPECT_EQ(up.state, "ACTIVE");
  EXPECT_EQ(up.rate, "100 Gb/sec (4X EDR)");
  EXPECT_EQ(up.rate_gbps, 100.0);
  const RdmaPort& down = devices[1].ports[0];
  EXPECT_EQ(down.state, "DOWN");
  EXPECT_EQ(down.phys_state, "Disabled");
  EXPECT_EQ(down.rate_gbps, 40.0);  // mlx5's default for a port with no link
}

TEST(RdmaReaderTest, HostsWithoutInfinibandHaveNothingToReport) {
  for (const char* host : {"radeon-workstation", "empty"}) {
    SCOPED_TRACE(host);
    RdmaReader reader(HostRoots::Under(FixtureHost(host)));
    auto devices = reader.Scan();
    ASSERT_TRUE(devices.ok()) << devices.status();
    EXPECT_TRUE(devices->empty());
    std::vector<RdmaPortCounters> out(3);
    ASSERT_TRUE(reader.Sample(&out).ok());
    EXPECT_TRUE(out.empty());
    auto token = reader.DeviceSetToken();
    ASSERT_TRUE(token.ok());
    EXPECT_EQ(*token, "");
  }
}

TEST(RdmaReaderTest, SampleReportsDataCountersInBytes) {
  const std::string host = "mi300x-8x-mlx5";
  RdmaReader reader(HostRoots::Under(FixtureHost(host)));
  std::vector<RdmaDevice> devices = ScanHost(reader);
  std::vector<RdmaPortCounters> out;
  ASSERT_TRUE(reader.Sample(&out).ok());
  ASSERT_EQ(out.size(), 8u);
  for (size_t i = 0; i < out.size(); ++i) {
    const RdmaPortCounters& p = out[i];
    const std::string dir = PortDir(host, devices[i].name) + "/counters/";
    EXPECT_EQ(p.device, devices[i].name);
    EXPECT_EQ(p.port, 1);
    ASSERT_TRUE(p.tx_bytes && p.rx_bytes && p.tx_packets && p.rx_packets);
    EXPECT_EQ(*p.tx_bytes, 4 * FileUint(dir + "port_xmit_data"));
    EXPECT_EQ(*p.rx_bytes, 4 * FileUint(dir + "port_rcv_data"));
    EXPECT_GT(*p.tx_bytes, uint64_t{1} << 40);  // the fixture's large values
    EXPECT_EQ(*p.tx_packets, FileUint(dir + "port_xmit_packets"));
    EXPECT_EQ(*p.rx_packets, FileUint(dir + "port_rcv_packets"));
    // The raw counter keeps the kernel's 4-octet unit.
    ASSERT_NE(FindCounter(p, "port_xmit_data"), nullptr);
    EXPECT_EQ(FindCounter(p, "port_xmit_data")->value * 4, *p.tx_bytes);
    EXPECT_EQ(p.state, "ACTIVE");
    EXPECT_EQ(p.phys_state, "LinkUp");
    EXPECT_NE(p.time.time_since_epoch().count(), 0);
  }
}

TEST(RdmaReaderTest, CountersComeFirstThenHwCountersEachSortedAndFlagged) {
  const std::string host = "mi300x-8x-mlx5";
  RdmaReader reader(HostRoots::Under(FixtureHost(host)));
  ScanHost(reader);
  std::vector<RdmaPortCounters> out;
  ASSERT_TRUE(reader.Sample(&out).ok());
  ASSERT_FALSE(out.empty());
  const std::string dir = PortDir(host, "mlx5_3");
  const RdmaPortCounters& p = out[3];
  std::vector<std::string> want_pma, want_hw;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/counters")) {
    want_pma.push_back(e.path().filename());
  }
  for (const auto& e :
       std::filesystem::directory_iterator(dir + "/hw_counters")) {
    if (e.path().filename() != "lifespan") {
      want_hw.push_back(e.path().filename());
    }
  }
  std::sort(want_pma.begin(), want_pma.end());
  std::sort(want_hw.begin(), want_hw.end());
  ASSERT_EQ(p.counters.size(), want_pma.size() + want_hw.size());
  for (size_t i = 0; i < p.counters.size(); ++i) {
    const RdmaCounter& c = p.counters[i];
    const bool hw = i >= want_pma.size();
    EXPECT_EQ(c.hardware, hw) << c.name;
    EXPECT_EQ(c.name, hw ? want_hw[i - want_pma.size()] : want_pma[i]);
    EXPECT_EQ(c.value,
              FileUint(dir + (hw ? "/hw_counters/" : "/counters/") + c.name));
  }
  EXPECT_EQ(want_pma.size(), 21u);  // pma_attrs_ext
  EXPECT_NE(FindCounter(p, "out_of_buffer"), nullptr);
  EXPECT_TRUE(FindCounter(p, "out_of_buffer")->hardware);
}

TEST(RdmaReaderTest, LifespanIsASettingNotACounter) {
  const std::string host = "mi250-mi210";
  ASSERT_EQ(FileValue(PortDir(host, "mlx5_0") + "/hw_counters/lifespan"),
            "10");  // numeric, so only its name can keep it out
  RdmaReader reader(HostRoots::Under(FixtureHost(host)));
  ScanHost(reader);
  std::vector<RdmaPortCounters> out;
  ASSERT_TRUE(reader.Sample(&out).ok());
  for (const RdmaPortCounters& p : out) {
    EXPECT_EQ(FindCounter(p, "lifespan"), nullptr) << p.device;
  }
}

// A garbage numa_node on one HCA costs only that field: all eight are still
// listed, the others with their NUMA nodes.
TEST(RdmaReaderTest, AGarbageNumaNodeCostsOnlyThatField) {
  TempHostTree tree("mi300x-8x-mlx5");
  testing_rdma::Overwrite(tree.sys("class/infiniband/mlx5_2/device/numa_node"),
                          "garbage\n");
  RdmaReader reader(tree.roots());
  std::vector<RdmaDevice> devices = ScanHost(reader);
  ASSERT_EQ(devices.size(), 8u);
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].name == "mlx5_2") {
      EXPECT_EQ(devices[i].numa_node, std::nullopt);
    } else {
      EXPECT_EQ(devices[i].numa_node, i < 4 ? 0 : 1) << devices[i].name;
    }
  }
}

TEST(RdmaReaderTest, QuirkHcaTrimsPaddingAndSkipsMissingAndGarbageCounters) {
  const std::string host = "quirks";
  RdmaReader reader(HostRoots::Under(FixtureHost(host)));
  std::vector<RdmaDevice> devices = ScanHost(reader);
  ASSERT_EQ(devices.size(), 1u);
  const RdmaDevice& d = devices[0];
  ASSERT_NE(Slurp(FixtureHost(host) + "/sys/class/infiniband/mlx5_0/fw_ver")
                .find('\0'),
            std::string::npos);
  EXPECT_EQ(d.fw_version, "20.38.1002");
  EXPECT_EQ(d.numa_node, std::nullopt);  // numa_node is -1
  EXPECT_TRUE(d.netdevs.empty());
  EXPECT_EQ(d.ports.at(0).rate_gbps, 200.0);

  std::vector<RdmaPortCounters> out;
  ASSERT_TRUE(reader.Sample(&out).ok());
  ASSERT_EQ(out.size(), 1u);
  const RdmaPortCounters& p = out[0];
  EXPECT_EQ(p.tx_bytes, std::nullopt);  // counters/port_xmit_data is missing
  ASSERT_TRUE(p.rx_bytes.has_value());
  EXPECT_EQ(*p.rx_bytes,
            4 * FileUint(PortDir(host, "mlx5_0") + "/counters/port_rcv_data"));
  // symbol_error holds "N/A (no PMA)": left out, not reported as 0.
  EXPECT_EQ(FindCounter(p, "symbol_error"), nullptr);
  EXPECT_NE(FindCounter(p, "link_downed"), nullptr);
  EXPECT_EQ(p.counters.size(), 19u + 29u);
}

TEST(RdmaReaderTest, SampleSeesCountersMoveThroughKeptOpenFiles) {
  TempHostTree tree("mi250-mi210");
  RdmaReader reader(tree.roots());
  ScanHost(reader);
  const std::string data =
      tree.sys("class/infiniband/mlx5_0/ports/1/counters/port_xmit_data");
  Overwrite(data, "1000\n");
  std::vector<RdmaPortCounters> out;
  ASSERT_TRUE(reader.Sample(&out).ok());
  EXPECT_EQ(out[0].tx_bytes, 4000u);
  Overwrite(data, "123456789012345\n");
  ASSERT_TRUE(reader.Sample(&out).ok());
  EXPECT_EQ(out[0].tx_bytes, 4 * uint64_t{123456789012345});
  // Garbage mid-run: skipped this time, never turned into 0.
  Overwrite(data, "N/A (no PMA)\n");
  ASSERT_TRUE(reader.Sample(&out).ok());
  EXPECT_EQ(out[0].tx_bytes, std::nullopt);
  EXPECT_EQ(FindCounter(out[0], "port_xmit_data"), nullptr);
  Overwrite(data, "7\n");
  ASSERT_TRUE(reader.Sample(&out).ok());
  EXPECT_EQ(out[0].tx_bytes, 28u);
  // The port state is re-read too.
  Overwrite(tree.sys("class/infiniband/mlx5_0/ports/1/state"), "1: DOWN\n");
  ASSERT_TRUE(reader.Sample(&out).ok());
  EXPECT_EQ(out[0].state, "DOWN");
}

// Adds mlx5_1 as a second PCI function beside the quirk host's mlx5_0.
void AddSecondHca(const TempHostTree& tree) {
  namespace fs = std::filesystem;
  const std::string parent = tree.sys("devices/pci0000:3a/0000:3a:00.0");
  fs::copy(parent + "/0000:3b:00.0", parent + "/0000:3b:00.1",
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  const std::string ib = parent + "/0000:3b:00.1/infiniband";
  fs::rename(ib + "/mlx5_0", ib + "/mlx5_1");
  fs::remove(ib + "/mlx5_1/device");
  fs::create_directory_symlink("../../../0000:3b:00.1", ib + "/mlx5_1/device");
  fs::create_directory_symlink(
      "../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.1/infiniband/mlx5_1",
      tree.sys("class/infiniband/mlx5_1"));
}

TEST(RdmaReaderTest, DeviceSetTokenChangesWhenADeviceAppears) {
  TempHostTree tree("quirks");
  RdmaReader reader(tree.roots());
  ASSERT_EQ(ScanHost(reader).size(), 1u);
  auto before = reader.DeviceSetToken();
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(*before, "mlx5_0");
  AddSecondHca(tree);
  auto after = reader.DeviceSetToken();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, "mlx5_0,mlx5_1");
  std::vector<RdmaDevice> devices = ScanHost(reader);
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[1].bdf, "0000:3b:00.1");
  std::vector<RdmaPortCounters> out;
  ASSERT_TRUE(reader.Sample(&out).ok());
  EXPECT_EQ(out.size(), 2u);
}

// What removing a device does to files a reader keeps open: kernfs makes
// their reads fail. A regular file stays readable after unlink, so the
// fixture copy empties each file first (a read then returns nothing, which
// is just as unusable), then removes the device.
void RemoveHca(const TempHostTree& tree, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path link = tree.sys("class/infiniband/" + name);
  const fs::path function = fs::canonical(link / "device");
  for (const auto& e : fs::recursive_directory_iterator(function)) {
    if (e.is_regular_file() && !e.is_symlink()) fs::resize_file(e.path(), 0);
  }
  fs::remove_all(function);
  fs::remove(link);
}

TEST(RdmaReaderTest, SampleAfterADeviceDisappearsFailsCleanly) {
  TempHostTree tree("mi250-mi210");
  RdmaReader reader(tree.roots());
  ASSERT_EQ(ScanHost(reader).size(), 2u);
  auto token = reader.DeviceSetToken();
  ASSERT_TRUE(token.ok());
  std::vector<RdmaPortCounters> out;
  ASSERT_TRUE(reader.Sample(&out).ok());

  RemoveHca(tree, "mlx5_1");
  auto changed = reader.DeviceSetToken();
  ASSERT_TRUE(changed.ok());
  EXPECT_NE(*changed, *token);
  // mlx5_0 still answers; mlx5_1's entry is there but empty, not stale.
  ASSERT_TRUE(reader.Sample(&out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].counters.empty());
  EXPECT_EQ(out[1].device, "mlx5_1");
  EXPECT_TRUE(out[1].counters.empty());
  EXPECT_EQ(out[1].tx_bytes, std::nullopt);
  EXPECT_EQ(out[1].state, "");

  RemoveHca(tree, "mlx5_0");
  Status st = reader.Sample(&out);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st;
  EXPECT_NE(st.message().find("/ports/1/"), std::string::npos) << st;
  auto rescan = reader.Scan();
  ASSERT_TRUE(rescan.ok()) << rescan.status();
  EXPECT_TRUE(rescan->empty());
}

TEST(RdmaReaderTest, SampleBeforeScanIsAPreconditionError) {
  RdmaReader reader(HostRoots::Under(FixtureHost("mi250-mi210")));
  std::vector<RdmaPortCounters> out;
  EXPECT_EQ(reader.Sample(&out).code(), StatusCode::kFailedPrecondition);
}

TEST(RdmaReaderTest, ScanErrorsNameTheFileThatDoesNotParse) {
  TempHostTree tree("quirks");
  Overwrite(tree.sys("class/infiniband/mlx5_0/ports/1/lid"), "lid?\n");
  RdmaReader reader(tree.roots());
  auto devices = reader.Scan();
  ASSERT_FALSE(devices.ok());
  EXPECT_EQ(devices.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(devices.status().message().find("mlx5_0/ports/1/lid"),
            std::string::npos)
      << devices.status();
  std::vector<RdmaPortCounters> out;
  EXPECT_EQ(reader.Sample(&out).code(), StatusCode::kFailedPrecondition);

  Overwrite(tree.sys("class/infiniband/mlx5_0/ports/1/lid"), "0x7\n");
  std::filesystem::create_directory(
      tree.sys("class/infiniband/mlx5_0/ports/uplink"));
  devices = reader.Scan();
  ASSERT_FALSE(devices.ok());
  EXPECT_NE(devices.status().message().find("ports/uplink"), std::string::npos)
      << devices.status();
}

TEST(ProbeRdmaTest, GroupsEachDevicesPortsWithIt) {
  auto probes = ProbeRdma(HostRoots::Under(FixtureHost("mi250-mi210")));
  ASSERT_TRUE(probes.ok()) << probes.status();
  ASSERT_EQ(probes->size(), 2u);
  for (const RdmaProbe& probe : *probes) {
    ASSERT_EQ(probe.ports.size(), probe.device.ports.size());
    EXPECT_EQ(probe.ports[0].device, probe.device.name);
    EXPECT_EQ(probe.ports[0].state, probe.device.ports[0].state);
  }
  EXPECT_EQ((*probes)[1].ports[0].state, "DOWN");
  // The down port's traffic counters are all zero in the fixture, but read.
  EXPECT_EQ((*probes)[1].ports[0].tx_bytes, 0u);
}

}  // namespace
}  // namespace lens
