// Scan for the amdgpu sysfs source: finds the PCI functions behind
// class/drm/card*, reads their static facts and opens what Sample reads.
// Layout: Documentation/gpu/amdgpu/driver-misc.rst and thermal.rst (device
// attributes, hwmon), the PCI core's sysfs files (vendor, device, numa_node,
// *_link_*), amdgpu_ras.c (ras/) and the KFD topology (kfd_topology.h).
#include <algorithm>
#include <charconv>
#include <map>

#include "gpu/amdgpu_sysfs.h"
#include "lens/log.h"

namespace lens {
namespace {

// A PCI function driven by amdgpu, as found through class/drm/cardN.
struct PciGpu {
  std::string card;  // "card1"
  std::string dir;   // <sysfs>/class/drm/card1/device
  std::string bdf;   // "0000:0c:00.0"
  AmdKfdKey key;
  std::string render;  // "renderD128"; empty when it has none
};

bool HasDigitsAfter(std::string_view name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) {
    return false;
  }
  name.remove_prefix(prefix.size());
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<uint64_t> ParseHex(std::string_view text) {
  uint64_t value = 0;
  auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

// "0000:0c:00.0" -> domain and devid; false for anything else (a platform
// device such as amdgpu_xcp_3, a connector).
bool ParseBdf(std::string_view bdf, AmdKfdKey* key) {
  size_t colon = bdf.find(':');
  if (colon == std::string_view::npos || colon < 4) return false;
  std::string_view rest = bdf.substr(colon + 1);
  if (rest.size() != 7 || rest[2] != ':' || rest[5] != '.') return false;
  std::optional<uint64_t> domain = ParseHex(bdf.substr(0, colon));
  std::optional<uint64_t> bus = ParseHex(rest.substr(0, 2));
  std::optional<uint64_t> device = ParseHex(rest.substr(3, 2));
  std::optional<uint64_t> function = ParseHex(rest.substr(6, 1));
  if (!domain || !bus || !device || !function || *device > 31 ||
      *function > 7) {
    return false;
  }
  key->pci_domain = *domain;
  key->pci_devid = static_cast<uint32_t>(*bus << 8 | *device << 3 | *function);
  return true;
}

std::optional<std::string> ReadText(const std::string& path) {
  StatusOr<std::string> value = ReadKernelValue(path);
  if (!value.ok()) return std::nullopt;
  return std::move(*value);
}

// A numeric attribute; nullopt when missing, unreadable or not a number.
std::optional<uint64_t> ReadUint(const std::string& path) {
  std::optional<std::string> text = ReadText(path);
  if (!text) return std::nullopt;
  StatusOr<uint64_t> value = ParseKernelUint64(*text, path);
  if (!value.ok()) return std::nullopt;
  return *value;
}

// A PCI id: 0 when missing, InvalidArgument when malformed.
Status ReadPciId(const std::string& path, uint16_t* out) {
  std::optional<std::string> text = ReadText(path);
  if (!text) return OkStatus();
  LENS_ASSIGN_OR_RETURN(uint64_t value, ParseKernelUint64(*text, path));
  if (value > 0xffff) {
    return InvalidArgumentError(path + ": " + *text + " is not a PCI id");
  }
  *out = static_cast<uint16_t>(value);
  return OkStatus();
}

KernelFile OpenIfPresent(const std::string& path) {
  StatusOr<KernelFile> file = KernelFile::Open(path);
  if (!file.ok()) return KernelFile();
  return std::move(*file);
}

// The first entry of `dir` named <prefix><digits>, or "".
std::string FirstNumbered(const std::string& dir, std::string_view prefix) {
  StatusOr<std::vector<std::string>> names = ListKernelDir(dir);
  if (!names.ok()) return "";
  for (const std::string& name : *names) {
    if (HasDigitsAfter(name, prefix)) return name;
  }
  return "";
}

// The card's PCI function when amdgpu drives it; nullopt otherwise.
std::optional<PciGpu> ProbeCard(const HostRoots& roots,
                                const std::string& card) {
  PciGpu gpu;
  gpu.card = card;
  gpu.dir = roots.sysfs + "/class/drm/" + card + "/device";
  StatusOr<std::string> bdf = ReadKernelLinkName(gpu.dir);
  if (!bdf.ok() || !ParseBdf(*bdf, &gpu.key)) return std::nullopt;
  gpu.bdf = *bdf;
  StatusOr<std::string> driver = ReadKernelLinkName(gpu.dir + "/driver");
  if (driver.ok()) {
    if (*driver != "amdgpu") return std::nullopt;
  } else if (ReadUint(gpu.dir + "/vendor") != 0x1002) {
    return std::nullopt;
  }
  gpu.render = FirstNumbered(gpu.dir + "/drm", "renderD");
  if (!gpu.render.empty()) {
    uint64_t minor = 0;
    std::from_chars(gpu.render.data() + 7,
                    gpu.render.data() + gpu.render.size(), minor);
    gpu.key.render_minor = minor;
  }
  return gpu;
}

// The amdgpu hwmon directory of the device ("" when it has none).
std::string FindHwmon(const std::string& device_dir) {
  const std::string base = device_dir + "/hwmon";
  StatusOr<std::vector<std::string>> names = ListKernelDir(base);
  if (!names.ok()) return "";
  for (const std::string& name : *names) {
    if (!HasDigitsAfter(name, "hwmon")) continue;
    std::optional<std::string> chip = ReadText(base + "/" + name + "/name");
    if (!chip || *chip == "amdgpu") return base + "/" + name;
  }
  return "";
}

// A PCI id that cannot be read costs only that field (0), never the GPU or
// the others: the warning names the file.
void ReadPciIdOrWarn(const std::string& path, uint16_t* out) {
  if (Status st = ReadPciId(path, out); !st.ok()) {
    *out = 0;
    LENS_LOG(WARN).Field("file", path).Field("error", st)
        << "unreadable PCI id left unset";
  }
}

Status ReadIdentity(const PciGpu& gpu, GpuInfo* info) {
  info->vendor = GpuVendor::kAmd;
  info->bdf = gpu.bdf;
  info->drm_card = gpu.card;
  info->drm_render = gpu.render;
  ReadPciIdOrWarn(gpu.dir + "/vendor", &info->pci_vendor_id);
  ReadPciIdOrWarn(gpu.dir + "/device", &info->pci_device_id);
  ReadPciIdOrWarn(gpu.dir + "/subsystem_vendor",
                  &info->pci_subsystem_vendor_id);
  ReadPciIdOrWarn(gpu.dir + "/subsystem_device",
                  &info->pci_subsystem_device_id);
  uint16_t revision = 0;
  ReadPciIdOrWarn(gpu.dir + "/revision", &revision);
  info->unique_id = ReadText(gpu.dir + "/unique_id").value_or("");
  info->serial = ReadText(gpu.dir + "/serial_number").value_or("");
  if (info->serial.empty()) info->serial = info->unique_id;
  info->vbios_version = ReadText(gpu.dir + "/vbios_version").value_or("");
  info->model =
      AmdGpuModel(ReadText(gpu.dir + "/product_name").value_or(""),
                  info->pci_device_id, static_cast<uint8_t>(revision & 0xff));
  return OkStatus();
}

void ReadPlacement(const PciGpu& gpu, GpuInfo* info) {
  std::optional<std::string> numa = ReadText(gpu.dir + "/numa_node");
  int64_t node = -1;
  if (numa) {
    StatusOr<int64_t> parsed = ParseKernelInt64(*numa, gpu.dir);
    if (parsed.ok()) node = *parsed;
  }
  if (node >= 0) info->numa_node = static_cast<int>(node);
  info->vram_total_bytes = ReadUint(gpu.dir + "/mem_info_vram_total");
  if (std::optional<std::string> speed =
          ReadText(gpu.dir + "/max_link_speed")) {
    info->pcie_max_speed_gtps = ParseLinkSpeedGtps(*speed);
  }
  if (std::optional<uint64_t> width = ReadUint(gpu.dir + "/max_link_width")) {
    info->pcie_max_width = static_cast<int>(*width);
  }
  info->compute_partition =
      ReadText(gpu.dir + "/current_compute_partition").value_or("");
  info->memory_partition =
      ReadText(gpu.dir + "/current_memory_partition").value_or("");
}

// hwmon temperature channels. amdgpu labels them (temp1 "edge", temp2
// "junction", temp3 "mem"); kernels before the labels used the same fixed
// channels (amdgpu_pm.c: temp1_input is PP_TEMP_EDGE, ...).
void OpenTemperatures(const std::string& hwmon, AmdGpuFiles* files) {
  static constexpr std::string_view kFixedLabels[] = {"edge", "junction",
                                                      "mem"};
  for (int channel = 1; channel <= 3; ++channel) {
    const std::string base = hwmon + "/temp" + std::to_string(channel);
    std::string label = ReadText(base + "_label")
                            .value_or(std::string(kFixedLabels[channel - 1]));
    KernelFile* slot = label == "edge"       ? &files->temp_edge
                       : label == "junction" ? &files->temp_junction
                       : label == "mem"      ? &files->temp_mem
                                             : nullptr;
    if (slot != nullptr && !slot->is_open()) {
      *slot = OpenIfPresent(base + "_input");
    }
  }
}

// ras/<block>_err_count, or ras/aca_<block> on kernels with the ACA
// interface; the first is preferred when both exist (as rocm_smi_lib does).
void OpenRas(const std::string& device_dir, AmdGpuFiles* files) {
  const std::string dir = device_dir + "/ras";
  StatusOr<std::vector<std::string>> names = ListKernelDir(dir);
  if (!names.ok()) return;
  std::map<std::string, std::string> block_files;
  for (const std::string& name : *names) {
    std::string_view n = name;
    constexpr std::string_view kSuffix = "_err_count";
    if (n.size() > kSuffix.size() &&
        n.substr(n.size() - kSuffix.size()) == kSuffix) {
      block_files[std::string(n.substr(0, n.size() - kSuffix.size()))] = name;
    }
  }
  for (const std::string& name : *names) {
    if (name.size() > 4 && name.compare(0, 4, "aca_") == 0) {
      block_files.try_emplace(name.substr(4), name);
    }
  }
  for (const auto& [block, name] : block_files) {
    KernelFile file = OpenIfPresent(dir + "/" + name);
    if (file.is_open()) files->ras.push_back({block, std::move(file)});
  }
}

// Opens gpu_metrics and reads it once: a table that cannot be read or whose
// format is unknown is closed here, logged once, instead of failing on
// every sample.
void OpenGpuMetrics(const std::string& path, AmdGpuMetricsFile* file) {
  *file = AmdGpuMetricsFile::OpenIfPresent(path);
  if (!file->is_open()) return;
  AmdGpuMetrics metrics;
  Status st = file->Read(&metrics);
  if (st.ok()) return;
  LENS_LOG(WARN).Field("file", path).Field("error", st)
      << "amdgpu-sysfs: not using gpu_metrics";
  file->Close();
}

void OpenSampleFiles(const PciGpu& gpu, const std::string& hwmon,
                     AmdGpuDevice* device) {
  AmdGpuFiles& f = device->files;
  f.gpu_busy_percent = OpenIfPresent(gpu.dir + "/gpu_busy_percent");
  f.mem_busy_percent = OpenIfPresent(gpu.dir + "/mem_busy_percent");
  f.vram_used = OpenIfPresent(gpu.dir + "/mem_info_vram_used");
  f.sclk = OpenIfPresent(gpu.dir + "/pp_dpm_sclk");
  f.mclk = OpenIfPresent(gpu.dir + "/pp_dpm_mclk");
  f.socclk = OpenIfPresent(gpu.dir + "/pp_dpm_socclk");
  f.link_speed = OpenIfPresent(gpu.dir + "/current_link_speed");
  f.link_width = OpenIfPresent(gpu.dir + "/current_link_width");
  f.replay_count = OpenIfPresent(gpu.dir + "/pcie_replay_count");
  OpenGpuMetrics(gpu.dir + "/gpu_metrics", &f.gpu_metrics);
  OpenRas(gpu.dir, &f);
  if (hwmon.empty()) return;
  // Linux 6.6 added power1_input; most GPUs have one of the two.
  f.power = OpenIfPresent(hwmon + "/power1_average");
  if (!f.power.is_open()) f.power = OpenIfPresent(hwmon + "/power1_input");
  f.energy = OpenIfPresent(hwmon + "/energy1_input");
  OpenTemperatures(hwmon, &f);
  f.fan_input = OpenIfPresent(hwmon + "/fan1_input");
  f.pwm = OpenIfPresent(hwmon + "/pwm1");
  device->fan_max_rpm = ReadUint(hwmon + "/fan1_max");
  device->pwm_max = ReadUint(hwmon + "/pwm1_max");
  if (std::optional<uint64_t> cap = ReadUint(hwmon + "/power1_cap")) {
    device->info.power_cap_watts = static_cast<double>(*cap) / 1e6;
  }
}

// Everything Scan learns of one PCI GPU.
StatusOr<AmdPhysicalGpu> ScanOne(const PciGpu& gpu,
                                 const std::string& driver_version) {
  AmdPhysicalGpu out;
  out.key = gpu.key;
  GpuInfo& info = out.device.info;
  LENS_RETURN_IF_ERROR(ReadIdentity(gpu, &info));
  ReadPlacement(gpu, &info);
  info.driver = "amdgpu";
  info.driver_version = driver_version;
  OpenSampleFiles(gpu, FindHwmon(gpu.dir), &out.device);
  // See AmdGpuDevice::zero_power_is_unreported.
  out.device.zero_power_is_unreported =
      info.pci_device_id == 0x740c || info.pci_device_id == 0x7408;
  return out;
}

}  // namespace

StatusOr<std::vector<AmdPhysicalGpu>> ScanPhysicalAmdGpus(
    const HostRoots& roots) {
  const std::string drm = roots.sysfs + "/class/drm";
  StatusOr<std::vector<std::string>> cards = ListKernelDir(drm);
  if (!cards.ok()) {
    if (cards.status().code() == StatusCode::kNotFound) {
      return std::vector<AmdPhysicalGpu>();  // no DRM driver at all
    }
    return UnavailableError("amdgpu-sysfs: " + cards.status().message());
  }
  // The in-tree driver has no version file; amdgpu-dkms (ROCm) has one.
  const std::string driver_version =
      ReadText(roots.sysfs + "/module/amdgpu/version").value_or("");
  std::vector<AmdPhysicalGpu> out;
  for (const std::string& card : *cards) {
    // cardN only: cardN-DP-1 and the like are connectors of cardN.
    if (!HasDigitsAfter(card, "card")) continue;
    std::optional<PciGpu> gpu = ProbeCard(roots, card);
    if (!gpu) continue;
    LENS_ASSIGN_OR_RETURN(AmdPhysicalGpu one, ScanOne(*gpu, driver_version));
    out.push_back(std::move(one));
  }
  return out;
}

}  // namespace lens
