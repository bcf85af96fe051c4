// Vendor-neutral GPU pieces: names and the one-shot probe over every source.
#include "lens/gpu.h"

#include <algorithm>
#include <tuple>

#include "core/kernel_file.h"
#include "gpu/pci_numa.h"

namespace lens {

std::string_view GpuVendorName(GpuVendor vendor) {
  switch (vendor) {
    case GpuVendor::kAmd:
      return "amd";
    case GpuVendor::kNvidia:
      return "nvidia";
  }
  return "unknown";
}

GpuSource::~GpuSource() = default;

namespace gpu {

void FillNumaNodes(const HostRoots& roots, std::vector<GpuInfo>* gpus) {
  for (GpuInfo& g : *gpus) {
    if (g.numa_node || g.bdf.empty()) continue;
    StatusOr<std::string> text = ReadKernelValue(
        roots.sysfs + "/bus/pci/devices/" + g.bdf + "/numa_node");
    if (!text.ok()) continue;
    StatusOr<int64_t> node = ParseKernelInt64(*text, "numa_node");
    if (node.ok() && *node >= 0) g.numa_node = static_cast<int>(*node);
  }
}

}  // namespace gpu

namespace {

// Scans and samples one source, appending its GPUs to `out`.
Status ProbeSource(const HostRoots& roots, GpuSource& source,
                   std::vector<Gpu>* out) {
  LENS_ASSIGN_OR_RETURN(std::vector<GpuInfo> infos, source.Scan());
  if (infos.empty()) return OkStatus();
  gpu::FillNumaNodes(roots, &infos);
  std::vector<GpuSample> samples;
  LENS_RETURN_IF_ERROR(source.Sample(&samples));
  for (size_t i = 0; i < infos.size(); ++i) {
    out->push_back(Gpu{std::move(infos[i]), i < samples.size()
                                                ? std::move(samples[i])
                                                : GpuSample{}});
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::vector<Gpu>> ProbeGpus(const HostRoots& roots,
                                     const GpuProbeOptions& options) {
  std::vector<Gpu> gpus;
  if (options.amd_sysfs) {
    std::unique_ptr<GpuSource> amd = NewAmdGpuSysfsSource(roots);
    LENS_RETURN_IF_ERROR(ProbeSource(roots, *amd, &gpus));
  }
  if (options.nvml) {
    StatusOr<std::unique_ptr<GpuSource>> nvml = NewNvmlGpuSource();
    if (nvml.ok()) {
      LENS_RETURN_IF_ERROR(ProbeSource(roots, **nvml, &gpus));
    } else if (nvml.status().code() != StatusCode::kUnavailable) {
      return nvml.status();
    }
  }
  std::stable_sort(gpus.begin(), gpus.end(), [](const Gpu& a, const Gpu& b) {
    return std::tie(a.info.vendor, a.info.bdf, a.info.partition_id) <
           std::tie(b.info.vendor, b.info.bdf, b.info.partition_id);
  });
  for (size_t i = 0; i < gpus.size(); ++i)
    gpus[i].info.index = static_cast<int>(i);
  return gpus;
}

}  // namespace lens
