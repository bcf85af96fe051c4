// The placement audit at cluster scale: 1,000 nodes, each 8 GPUs + 8 NICs
// on 4 host bridges per socket of a 2-socket, 384-CPU machine (each GPU and
// its NIC on two root ports of one bridge, as on the 8x MI300X host of
// test/fixtures/hosts), topology read beforehand (AuditPlacement is the
// pure half).
//   BM_AuditPlacement  one pass over the cluster: every 4th node runs one
//                      8-GPU pod with all CPUs, the others eight 1-GPU pods
//                      with a NIC and a 24-CPU cpuset each, some of them
//                      badly placed (budget: < 1 s per pass)
//   BM_ReadNodeTopology the sysfs half on the fixture host (16 PCI
//                      functions, 2 NUMA nodes): what a node agent pays
//                      per refresh
// A run over its budget is reported as an error ("over budget").
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "lens/insights_placement.h"

namespace {

constexpr int kNodes = 1000;
constexpr int kDevicesPerNode = 8;

std::string Bdf(int bus) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0000:%02x:00.0", bus);
  return buf;
}

std::string RootBus(int bus) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "pci0000:%02x", bus);
  return buf;
}

std::vector<int> Range(int first, int last) {
  std::vector<int> out;
  for (int c = first; c <= last; ++c) out.push_back(c);
  return out;
}

// GPU i on bus 0x20*i+0x0c (root port :03.1), its NIC on the next bus
// (root port :01.1), under host bridge 0x20*i; sockets of 4 bridges.
lens::NodeTopology NodeTopo() {
  lens::NodeTopology t;
  for (int i = 0; i < kDevicesPerNode; ++i) {
    const int root = 0x20 * i;
    const int numa = i / 4;
    const std::string rp = "0000:" + RootBus(root).substr(8) + ":";
    t.devices.push_back({Bdf(root + 0x0c), numa, RootBus(root), {rp + "03.1"}});
    t.devices.push_back({Bdf(root + 0x0d), numa, RootBus(root), {rp + "01.1"}});
  }
  std::vector<int> n0 = Range(0, 95), n1 = Range(96, 191);
  for (int c = 192; c <= 287; ++c) n0.push_back(c);
  for (int c = 288; c <= 383; ++c) n1.push_back(c);
  t.numa_nodes = {{0, n0}, {1, n1}};
  return t;
}

lens::ContainerDeviceRecord Dev(lens::DeviceKind kind, std::string key,
                                std::string bdf) {
  return {kind, std::move(key), std::move(bdf), "pod-resources"};
}

std::vector<lens::PlacementPod> NodePods(int node) {
  std::vector<lens::PlacementPod> pods;
  if (node % 4 == 0) {
    lens::PlacementPod pod{"uid-" + std::to_string(node), "ml", "whole", {}};
    lens::PlacementContainer c{"c", "trainer", {}, Range(0, 383)};
    for (int i = 0; i < kDevicesPerNode; ++i) {
      c.devices.push_back(Dev(lens::DeviceKind::kGpu, "gpu" + std::to_string(i),
                              Bdf(0x20 * i + 0x0c)));
      c.devices.push_back(Dev(lens::DeviceKind::kRdma,
                              "mlx5_" + std::to_string(i),
                              Bdf(0x20 * i + 0x0d)));
    }
    pod.containers.push_back(std::move(c));
    pods.push_back(std::move(pod));
    return pods;
  }
  for (int i = 0; i < kDevicesPerNode; ++i) {
    // Every third pod gets the NIC of the other socket and CPUs that
    // straddle both sockets.
    const bool bad = (node + i) % 3 == 0;
    const int nic = bad ? (i + 4) % kDevicesPerNode : i;
    const int first_cpu = bad ? 84 : (i / 4) * 96 + (i % 4) * 24;
    lens::PlacementPod pod{
        "uid-" + std::to_string(node * 8 + i), "ml", "worker", {}};
    pod.containers.push_back(
        {"c" + std::to_string(i),
         "worker",
         {Dev(lens::DeviceKind::kGpu, "gpu" + std::to_string(i),
              Bdf(0x20 * i + 0x0c)),
          Dev(lens::DeviceKind::kRdma, "mlx5_" + std::to_string(nic),
              Bdf(0x20 * nic + 0x0d))},
         Range(first_cpu, first_cpu + 23)});
    pods.push_back(std::move(pod));
  }
  return pods;
}

void BM_AuditPlacement(benchmark::State& state) {
  std::vector<lens::NodeTopology> topos(kNodes, NodeTopo());
  std::vector<std::vector<lens::PlacementPod>> pods;
  for (int n = 0; n < kNodes; ++n) pods.push_back(NodePods(n));
  size_t flags = 0;
  double worst_s = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    flags = 0;
    for (int n = 0; n < kNodes; ++n) {
      auto out = lens::AuditPlacement(topos[n], pods[n]);
      for (const auto& p : out) flags += p.flags.size();
      benchmark::DoNotOptimize(out);
    }
    worst_s = std::max(worst_s, std::chrono::duration<double>(
                                    std::chrono::steady_clock::now() - t0)
                                    .count());
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
  state.counters["flags"] = static_cast<double>(flags);
  state.counters["worst_pass_s"] = worst_s;
  if (worst_s >= 1.0) {
    static std::string msg;
    msg = "over budget: " + std::to_string(worst_s) + " s per pass >= 1 s";
    state.SkipWithError(msg.c_str());
  }
}
BENCHMARK(BM_AuditPlacement)->Unit(benchmark::kMillisecond);

void BM_ReadNodeTopology(benchmark::State& state) {
  const lens::HostRoots roots = lens::HostRoots::Under(
      std::string(LENS_FIXTURES_DIR) + "/hosts/mi300x-8x-mlx5");
  const std::vector<std::string> bdfs = {
      "0000:0c:00.0", "0000:0d:00.0", "0000:22:00.0", "0000:23:00.0",
      "0000:38:00.0", "0000:39:00.0", "0000:5c:00.0", "0000:5d:00.0",
      "0000:9e:00.0", "0000:9f:00.0", "0000:af:00.0", "0000:b0:00.0",
      "0000:be:00.0", "0000:bf:00.0", "0000:de:00.0", "0000:df:00.0"};
  for (auto _ : state) {
    auto topo = lens::ReadNodeTopology(roots, bdfs);
    if (!topo.ok() || topo->devices.size() != bdfs.size()) {
      return state.SkipWithError("fixture host not readable");
    }
    benchmark::DoNotOptimize(topo);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ReadNodeTopology)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
