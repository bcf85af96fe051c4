#include "agent/metrics_render_nvidia.h"

#include <algorithm>
#include <string>

namespace lens::agent {
namespace {

// The labels every MIG series carries: its parent GPU and its GPU and
// compute instance (what dcgm-exporter's GPU_I_ID joins on).
struct MigLabels {
  MigLabels(const GpuInfo& g, const MigDevice& m)
      : gpu(std::to_string(g.index)),
        gi(std::to_string(m.gpu_instance_id)),
        ci(std::to_string(m.compute_instance_id)) {}
  std::string gpu, gi, ci;
};

void RenderLifetimeEcc(const NodeSnapshot& s, size_t n, MetricWriter& w) {
  w.Family("lens_gpu_ecc_lifetime_errors_total",
           "ECC errors over the device's life, kept across driver reloads "
           "(NVML aggregate counts).",
           "counter");
  for (size_t i = 0; i < n; ++i) {
    const GpuSample& m = s.gpu_samples[i];
    const std::string gpu = std::to_string(s.gpus[i].index);
    const std::pair<const char*, const std::optional<uint64_t>*> types[] = {
        {"correctable", &m.ecc_correctable_errors_lifetime},
        {"uncorrectable", &m.ecc_uncorrectable_errors_lifetime}};
    for (const auto& [type, value] : types) {
      if (!*value) continue;
      w.Sample({{"gpu", gpu}, {"bdf", s.gpus[i].bdf}, {"type", type}},
               static_cast<double>(**value));
    }
  }
}

void RenderMig(const NodeSnapshot& s, size_t n, MetricWriter& w) {
  w.Family("lens_gpu_mig_enabled", "1 while the GPU is in MIG mode.", "gauge");
  for (size_t i = 0; i < n; ++i) {
    const GpuInfo& g = s.gpus[i];
    if (!g.mig_enabled) continue;
    w.Sample({{"gpu", std::to_string(g.index)}, {"bdf", g.bdf}},
             *g.mig_enabled ? 1 : 0);
  }
  w.Family("lens_gpu_mig_device_info",
           "MIG device of a GPU in MIG mode; the value is always 1.", "gauge");
  for (size_t i = 0; i < n; ++i) {
    const GpuInfo& g = s.gpus[i];
    for (const MigDevice& m : g.mig_devices) {
      const MigLabels l(g, m);
      const std::string index = std::to_string(m.index);
      w.Sample({{"gpu", l.gpu},
                {"bdf", g.bdf},
                {"gpu_instance_id", l.gi},
                {"compute_instance_id", l.ci},
                {"mig_index", index},
                {"uuid", m.uuid},
                {"profile", m.profile}},
               1);
    }
  }
  w.Family("lens_gpu_mig_memory_total_bytes", "MIG device memory size.",
           "gauge");
  for (size_t i = 0; i < n; ++i) {
    const GpuInfo& g = s.gpus[i];
    for (const MigDevice& m : g.mig_devices) {
      if (!m.memory_total_bytes) continue;
      const MigLabels l(g, m);
      w.Sample({{"gpu", l.gpu},
                {"bdf", g.bdf},
                {"gpu_instance_id", l.gi},
                {"compute_instance_id", l.ci}},
               static_cast<double>(*m.memory_total_bytes));
    }
  }
  w.Family("lens_gpu_mig_memory_used_bytes",
           "MIG device memory in use (shared by the compute instances of "
           "one GPU instance).",
           "gauge");
  for (size_t i = 0; i < n; ++i) {
    const GpuInfo& g = s.gpus[i];
    const auto& used = s.gpu_samples[i].mig_memory_used_bytes;
    for (size_t k = 0; k < std::min(used.size(), g.mig_devices.size()); ++k) {
      if (!used[k]) continue;
      const MigLabels l(g, g.mig_devices[k]);
      w.Sample({{"gpu", l.gpu},
                {"bdf", g.bdf},
                {"gpu_instance_id", l.gi},
                {"compute_instance_id", l.ci}},
               static_cast<double>(*used[k]));
    }
  }
}

}  // namespace

void RenderNvidiaGpuMetrics(const NodeSnapshot& s, MetricWriter& w) {
  const size_t n = std::min(s.gpus.size(), s.gpu_samples.size());
  RenderLifetimeEcc(s, n, w);
  RenderMig(s, n, w);
}

}  // namespace lens::agent
