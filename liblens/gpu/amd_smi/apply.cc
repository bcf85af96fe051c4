// ApplyAmdSmi: amd-smi records fill what sysfs left empty, never more.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "gpu/amd_smi/internal.h"
#include "lens/amd_smi.h"

namespace lens {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
}

// The physical GPU's BDF and the partition of a record. Older KFD put the
// partition in the PCI function bits (amd_smi_lib CHANGELOG, ROCm 6.3.0:
// "bits [2:0] = Function (partition id maybe in bits [2:0])"), so partition
// 3 of 0000:0c:00.0 appeared as 0000:0c:00.3.
std::pair<std::string, std::optional<int>> PhysicalKey(const AmdSmiGpu& g) {
  std::string bdf = Lower(g.bdf);
  if (g.partition_id && *g.partition_id > 0 && *g.partition_id < 8 &&
      !bdf.empty() && bdf.back() == static_cast<char>('0' + *g.partition_id)) {
    bdf.back() = '0';
  }
  return {bdf, g.partition_id};
}

const AmdSmiGpu* FindRecord(const std::vector<AmdSmiGpu>& smi,
                            const std::vector<GpuInfo>& infos,
                            const GpuInfo& info) {
  std::string bdf = Lower(info.bdf);
  if (bdf.empty()) return nullptr;
  const AmdSmiGpu* loose = nullptr;
  int loose_count = 0;
  for (const AmdSmiGpu& g : smi) {
    auto [physical, partition] = PhysicalKey(g);
    if (physical != bdf) continue;
    if (partition) {
      if (*partition == info.partition_id) return &g;
      continue;
    }
    loose = &g;
    ++loose_count;
  }
  // Without a partition id a record is only safe for an unpartitioned GPU:
  // one record and one GpuInfo with this BDF.
  auto same_bdf = std::count_if(infos.begin(), infos.end(), [&](const auto& i) {
    return Lower(i.bdf) == bdf;
  });
  if (loose_count == 1 && same_bdf == 1) return loose;
  return nullptr;
}

// amdsmi's asic_serial ("0xAF54E92B0A5D57C8") as amdgpu's sysfs unique_id
// prints the same number ("%016llx"); empty when it is not hex.
std::string UniqueIdFromAsicSerial(std::string_view serial) {
  if (serial.size() > 2 && serial[0] == '0' &&
      (serial[1] == 'x' || serial[1] == 'X')) {
    serial.remove_prefix(2);
  }
  if (serial.empty() || serial.size() > 16) return "";
  for (char c : serial) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return "";
  }
  return std::string(16 - serial.size(), '0') + Lower(serial);
}

// GpuInfo.model's fallback when a source knows no marketing name ("AMD GPU
// 0x74a1", built from the PCI ids; see gpu.h), or no model at all: a real
// name may take its place.
bool IsPlaceholderModel(std::string_view model) {
  constexpr std::string_view kPrefix = "AMD GPU 0x";
  if (model.empty()) return true;
  if (model.size() != kPrefix.size() + 4 || !model.starts_with(kPrefix)) {
    return false;
  }
  return std::all_of(model.begin() + kPrefix.size(), model.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
  });
}

void FillText(std::string* field, std::string_view value) {
  if (field->empty()) *field = std::string(value);
}

template <typename T, typename U>
void FillOptional(std::optional<T>* field, const std::optional<U>& value) {
  if (!*field && value) *field = static_cast<T>(*value);
}

void FillIdentity(const AmdSmiGpu& g, GpuInfo* info) {
  std::string unique_id = UniqueIdFromAsicSerial(g.asic_serial);
  const std::string& name =
      g.market_name.empty() ? g.product_name : g.market_name;
  if (!name.empty() && IsPlaceholderModel(info->model)) info->model = name;
  FillText(&info->serial, g.serial.empty() ? unique_id : g.serial);
  FillText(&info->unique_id, unique_id);
  FillText(&info->vbios_version,
           g.vbios_part_number.empty() ? g.vbios_version : g.vbios_part_number);
  FillText(&info->compute_partition, g.compute_partition);
  FillText(&info->memory_partition, g.memory_partition);
  FillText(&info->driver, g.driver_name);
  FillText(&info->driver_version, g.driver_version);
  if (info->pci_vendor_id == 0)
    info->pci_vendor_id = g.pci_vendor_id.value_or(0);
  if (info->pci_device_id == 0)
    info->pci_device_id = g.pci_device_id.value_or(0);
  if (info->pci_subsystem_vendor_id == 0) {
    info->pci_subsystem_vendor_id = g.pci_subsystem_vendor_id.value_or(0);
  }
  if (info->pci_subsystem_device_id == 0) {
    info->pci_subsystem_device_id = g.pci_subsystem_device_id.value_or(0);
  }
}

void FillInfo(const AmdSmiGpu& g, GpuInfo* info) {
  FillIdentity(g, info);
  FillOptional(&info->numa_node, g.numa_node);
  FillOptional(&info->vram_total_bytes, g.vram_total_bytes);
  FillOptional(&info->vram_total_bytes, g.sample.vram_total_bytes);
  if (!info->kfd_gpu_id && g.kfd_id &&
      *g.kfd_id <= std::numeric_limits<uint32_t>::max()) {
    info->kfd_gpu_id = static_cast<uint32_t>(*g.kfd_id);
  }
  FillOptional(&info->pcie_max_speed_gtps, g.pcie_max_speed_gtps);
  FillOptional(&info->pcie_max_width, g.pcie_max_width);
  FillOptional(&info->power_cap_watts, g.power_cap_watts);
}

}  // namespace

StatusOr<size_t> ApplyAmdSmi(const std::vector<AmdSmiGpu>& smi,
                             std::vector<GpuInfo>* infos,
                             std::vector<GpuSample>* samples) {
  if (infos == nullptr) return InvalidArgumentError("infos is null");
  if (samples != nullptr && samples->size() != infos->size()) {
    return InvalidArgumentError(
        "samples has " + std::to_string(samples->size()) + " entries for " +
        std::to_string(infos->size()) + " GPUs");
  }
  size_t matched = 0;
  for (size_t i = 0; i < infos->size(); ++i) {
    GpuInfo& info = (*infos)[i];
    if (info.vendor != GpuVendor::kAmd) continue;
    const AmdSmiGpu* record = FindRecord(smi, *infos, info);
    if (record == nullptr) continue;
    ++matched;
    FillInfo(*record, &info);
    if (samples != nullptr) {
      amd_smi::FillEmptySample(record->sample, &(*samples)[i]);
    }
  }
  return matched;
}

}  // namespace lens
