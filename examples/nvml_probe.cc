// Lists the NVIDIA GPUs of this machine through NVML and prints every field
// Lens reads for each: the inventory (Scan) and one sample (Sample). Written
// against the public API only (lens/gpu.h).
//
//   nvml_probe
//
// Exit status: 0 when NVML answered (also with no GPU), 2 when NVML is not
// available here (no NVIDIA driver, or nvmlInit failed: the message says
// which), 1 on any other error. A value the GPU does not report prints "-".
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lens/gpu.h"
#include "lens/status.h"

namespace {

std::string Show(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", *v);
  return buf;
}
template <typename Int>
std::string Show(const std::optional<Int>& v) {
  return v ? std::to_string(*v) : "-";
}
std::string Show(const std::string& v) { return v.empty() ? "-" : v; }

void PrintInfo(const lens::GpuInfo& g) {
  std::printf("gpu %d: %s\n", g.index, g.model.c_str());
  std::printf("  vendor: %s\n",
              std::string(lens::GpuVendorName(g.vendor)).c_str());
  std::printf("  bdf: %s\n", Show(g.bdf).c_str());
  std::printf("  serial: %s\n", Show(g.serial).c_str());
  std::printf("  unique_id: %s\n", Show(g.unique_id).c_str());
  std::printf("  vbios_version: %s\n", Show(g.vbios_version).c_str());
  std::printf("  pci: %04x:%04x subsystem %04x:%04x\n", g.pci_vendor_id,
              g.pci_device_id, g.pci_subsystem_vendor_id,
              g.pci_subsystem_device_id);
  std::printf("  numa_node: %s\n", Show(g.numa_node).c_str());
  std::printf("  vram_total_bytes: %s\n", Show(g.vram_total_bytes).c_str());
  std::printf("  drm: card %s render %s\n", Show(g.drm_card).c_str(),
              Show(g.drm_render).c_str());
  std::printf("  kfd_gpu_id: %s\n", Show(g.kfd_gpu_id).c_str());
  std::printf("  partitions: compute %s memory %s id %d\n",
              Show(g.compute_partition).c_str(),
              Show(g.memory_partition).c_str(), g.partition_id);
  std::printf("  driver: %s %s\n", Show(g.driver).c_str(),
              Show(g.driver_version).c_str());
  std::printf("  pcie_max: %s GT/s x%s\n", Show(g.pcie_max_speed_gtps).c_str(),
              Show(g.pcie_max_width).c_str());
  std::printf("  power_cap_watts: %s\n", Show(g.power_cap_watts).c_str());
}

void PrintSample(const lens::GpuSample& s) {
  std::printf("  utilization_ratio: %s\n", Show(s.utilization_ratio).c_str());
  std::printf("  memory_utilization_ratio: %s\n",
              Show(s.memory_utilization_ratio).c_str());
  std::printf("  vram_used_bytes: %s / %s\n", Show(s.vram_used_bytes).c_str(),
              Show(s.vram_total_bytes).c_str());
  std::printf("  power_watts: %s\n", Show(s.power_watts).c_str());
  std::printf("  energy_joules: %s\n", Show(s.energy_joules).c_str());
  std::printf("  temperature_celsius: edge %s junction %s memory %s\n",
              Show(s.temperature_edge_celsius).c_str(),
              Show(s.temperature_junction_celsius).c_str(),
              Show(s.temperature_memory_celsius).c_str());
  std::printf("  clock_hz: graphics %s memory %s soc %s\n",
              Show(s.clock_graphics_hz).c_str(),
              Show(s.clock_memory_hz).c_str(), Show(s.clock_soc_hz).c_str());
  std::printf("  fan_speed_ratio: %s\n", Show(s.fan_speed_ratio).c_str());
  std::printf("  pcie_link: %s GT/s x%s, replays %s\n",
              Show(s.pcie_link_speed_gtps).c_str(),
              Show(s.pcie_link_width).c_str(),
              Show(s.pcie_replay_count).c_str());
  std::printf("  ecc_errors: correctable %s uncorrectable %s\n",
              Show(s.ecc_correctable_errors).c_str(),
              Show(s.ecc_uncorrectable_errors).c_str());
  std::string reasons = s.throttle_known ? "" : "-";
  for (const std::string& r : s.throttle_reasons) {
    reasons += (reasons.empty() ? "" : ",") + r;
  }
  std::printf("  throttle_reasons: %s\n",
              reasons.empty() ? "none" : reasons.c_str());
  if (!s.processes_known) {
    std::printf("  processes: -\n");
    return;
  }
  std::printf("  processes: %zu\n", s.processes.size());
  for (const lens::GpuProcess& p : s.processes) {
    std::printf("    pid %" PRId64 " %s used_memory_bytes %s\n", p.pid,
                Show(p.name).c_str(), Show(p.used_memory_bytes).c_str());
  }
}

}  // namespace

int main() {
  lens::StatusOr<std::unique_ptr<lens::GpuSource>> source =
      lens::NewNvmlGpuSource();
  if (!source.ok()) {
    std::fprintf(stderr, "nvml_probe: %s\n",
                 source.status().ToString().c_str());
    return source.status().code() == lens::StatusCode::kUnavailable ? 2 : 1;
  }
  lens::StatusOr<std::vector<lens::GpuInfo>> gpus = (*source)->Scan();
  if (!gpus.ok()) {
    std::fprintf(stderr, "nvml_probe: scan: %s\n",
                 gpus.status().ToString().c_str());
    return 1;
  }
  std::vector<lens::GpuSample> samples;
  lens::Status sampled = (*source)->Sample(&samples);
  if (!sampled.ok()) {
    std::fprintf(stderr, "nvml_probe: sample: %s\n",
                 sampled.ToString().c_str());
    return 1;
  }
  lens::StatusOr<std::string> token = (*source)->DeviceSetToken();
  std::printf("%s: %zu GPU(s), device set %s\n",
              std::string((*source)->name()).c_str(), gpus->size(),
              token.ok() ? token->c_str() : token.status().ToString().c_str());
  for (size_t i = 0; i < gpus->size(); ++i) {
    PrintInfo((*gpus)[i]);
    PrintSample(samples[i]);
  }
  return 0;
}
