// This node's GPUs and RDMA ports: what they are, whether they are healthy,
// and where they sit (NUMA node, PCIe root complex), as a scheduler sees them.
//   node_gpus [host-root]   (default "/": the live machine; a fixture tree or
//                            a host mounted at /host works the same)
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "lens/host.h"
#include "lens/insights_health.h"
#include "lens/insights_placement.h"
#include "lens/probe.h"

int main(int argc, char** argv) {
  const std::string root = argc > 1 ? argv[1] : "";
  const lens::HostRoots roots =
      root.empty() ? lens::HostRoots{} : lens::HostRoots::Under(root);

  // One probe: GPUs (amdgpu sysfs, NVML when present), RDMA devices, facts.
  lens::StatusOr<lens::ProbeReport> report = lens::ProbeHost(roots);
  if (!report.ok()) {
    std::fprintf(stderr, "probe: %s\n", report.status().ToString().c_str());
    return 1;
  }

  // Health: the same evidence rules the node agent applies, over one
  // observation (a long-lived program feeds one every cycle).
  std::vector<lens::GpuInfo> infos;
  std::vector<lens::GpuSample> samples;
  for (const lens::Gpu& gpu : report->gpus) {
    infos.push_back(gpu.info);
    samples.push_back(gpu.sample);
  }
  std::vector<lens::RdmaDevice> nics;
  std::vector<lens::RdmaPortCounters> ports;
  for (const lens::RdmaProbe& nic : report->rdma) {
    nics.push_back(nic.device);
    ports.insert(ports.end(), nic.ports.begin(), nic.ports.end());
  }
  auto tracker = lens::DeviceHealthTracker::Create({});
  if (!tracker.ok()) return 1;
  const auto now = std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
  lens::Status observed = (*tracker)->Observe(lens::HealthSampleFromAgent(
      "this-node", now, infos, samples, nics, ports));
  if (!observed.ok()) {
    std::fprintf(stderr, "health: %s\n", observed.ToString().c_str());
    return 1;
  }

  // Each device's state, by GPU index or "mlx5_0/1".
  std::map<std::string, std::string> health;
  for (const lens::DeviceHealthStatus& d : (*tracker)->States()) {
    const std::string key =
        d.device.device + (d.device.kind == lens::HealthDeviceKind::kRdmaPort
                               ? "/" + std::to_string(d.device.port)
                               : "");
    health[key] = lens::DeviceHealthName(d.state);
  }

  std::printf("%zu GPUs, %zu RDMA devices\n", infos.size(), nics.size());
  for (const lens::GpuInfo& gpu : infos) {
    auto where = lens::ReadPciPlacement(roots, gpu.bdf);
    std::printf("gpu %d  %s  %s  numa %d  root %s  %s\n", gpu.index,
                gpu.model.c_str(), gpu.bdf.c_str(),
                where.ok() ? where->numa_node.value_or(-1) : -1,
                where.ok() ? where->root_complex.c_str() : "?",
                health[std::to_string(gpu.index)].c_str());
  }
  for (const lens::RdmaDevice& nic : nics) {
    auto where = lens::ReadPciPlacement(roots, nic.bdf);
    for (const lens::RdmaPort& port : nic.ports) {
      const std::string key = nic.name + "/" + std::to_string(port.port);
      std::printf("rdma %s  %s  %s  numa %d  root %s  %s\n", key.c_str(),
                  port.state.c_str(), port.link_layer.c_str(),
                  where.ok() ? where->numa_node.value_or(-1) : -1,
                  where.ok() ? where->root_complex.c_str() : "?",
                  health[key].c_str());
    }
  }
  return 0;
}
