// The amdgpu sysfs GpuSource: Scan (amdgpu_scan.cc, amdgpu_partitions.cc),
// Sample (amdgpu_sample.cc) and the device-set token.
#include "gpu/amdgpu_sysfs.h"

#include <chrono>
#include <utility>

namespace lens {
namespace {

// Room for a 4 KiB NUL-padded attribute plus the EOF probe, so that
// KernelFile::Read never grows the buffer during Sample.
constexpr size_t kScratchBytes = 16 * 1024;

bool IsNumberedNode(std::string_view name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) {
    return false;
  }
  for (char c : name.substr(prefix.size())) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

class AmdGpuSysfsSource final : public GpuSource {
 public:
  explicit AmdGpuSysfsSource(HostRoots roots) : roots_(std::move(roots)) {
    scratch_.reserve(kScratchBytes);
  }

  std::string_view name() const override { return "amdgpu-sysfs"; }

  StatusOr<std::vector<GpuInfo>> Scan() override {
    devices_.clear();
    states_.clear();
    LENS_ASSIGN_OR_RETURN(devices_, ScanAmdGpus(roots_));
    states_.resize(devices_.size());
    std::vector<GpuInfo> infos;
    infos.reserve(devices_.size());
    for (const AmdGpuDevice& device : devices_) infos.push_back(device.info);
    return infos;
  }

  Status Sample(std::vector<GpuSample>* samples) override {
    samples->resize(devices_.size());
    const auto now = std::chrono::system_clock::now();
    size_t reporting = 0;
    size_t answered = 0;
    // The physical GPU (partition 0) of the partitions that follow it: Scan
    // sorts by BDF, then partition.
    size_t physical = 0;
    for (size_t i = 0; i < devices_.size(); ++i) {
      const AmdGpuDevice& device = devices_[i];
      GpuSample& sample = (*samples)[i];
      ClearAmdGpuSample(&sample);
      sample.time = now;
      if (!device.reports_device_values) {
        if (devices_[physical].info.bdf == device.info.bdf) {
          ApplyAmdGpuMetrics(&states_[physical], device.info.partition_id,
                             &sample);
        }
        continue;
      }
      physical = i;
      ++reporting;
      sample.vram_total_bytes = device.info.vram_total_bytes;
      if (SampleAmdGpu(device, &scratch_, &states_[i], &sample) > 0) {
        ++answered;
      }
    }
    if (reporting > 0 && answered == 0) {
      return UnavailableError("amdgpu-sysfs: none of the " +
                              std::to_string(reporting) +
                              " GPUs answered (removed or reset?); rescan");
    }
    return OkStatus();
  }

  // The cardN and renderDN names in class/drm, and the KFD topology's
  // generation_id, which changes when a compute-partition switch replaces
  // the KFD nodes (the amdgpu_xcp DRM nodes stay as they are).
  StatusOr<std::string> DeviceSetToken() override {
    std::string token;
    StatusOr<std::vector<std::string>> names =
        ListKernelDir(roots_.sysfs + "/class/drm");
    if (!names.ok() && names.status().code() != StatusCode::kNotFound) {
      return UnavailableError("amdgpu-sysfs: " + names.status().message());
    }
    if (names.ok()) {
      for (const std::string& name : *names) {
        if (IsNumberedNode(name, "card") || IsNumberedNode(name, "renderD")) {
          token += name;
          token += ',';
        }
      }
    }
    token += "kfd=";
    StatusOr<std::string> generation =
        ReadKernelValue(roots_.sysfs + "/class/kfd/kfd/topology/generation_id");
    token += generation.ok() ? *generation : "-";
    return token;
  }

 private:
  HostRoots roots_;
  std::vector<AmdGpuDevice> devices_;
  // Per device, aligned with devices_; used for physical GPUs only.
  std::vector<AmdGpuMetricsState> states_;
  std::string scratch_;
};

}  // namespace

std::unique_ptr<GpuSource> NewAmdGpuSysfsSource(const HostRoots& roots) {
  return std::make_unique<AmdGpuSysfsSource>(roots);
}

}  // namespace lens
