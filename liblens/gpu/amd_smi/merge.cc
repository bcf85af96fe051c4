// Merging the records of several amd-smi outputs into one per GPU.
#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "gpu/amd_smi/internal.h"
#include "lens/amd_smi.h"

namespace lens {
namespace {

// Every field of AmdSmiGpu except gpu, bdf, partition_id (the keys) and
// sample; a member added to the struct must be added here.
constexpr std::string AmdSmiGpu::*kTexts[] = {&AmdSmiGpu::uuid,
                                              &AmdSmiGpu::market_name,
                                              &AmdSmiGpu::product_name,
                                              &AmdSmiGpu::serial,
                                              &AmdSmiGpu::asic_serial,
                                              &AmdSmiGpu::vbios_part_number,
                                              &AmdSmiGpu::vbios_version,
                                              &AmdSmiGpu::driver_name,
                                              &AmdSmiGpu::driver_version,
                                              &AmdSmiGpu::compute_partition,
                                              &AmdSmiGpu::memory_partition};
constexpr std::optional<uint16_t> AmdSmiGpu::*kPciIds[] = {
    &AmdSmiGpu::pci_vendor_id, &AmdSmiGpu::pci_device_id,
    &AmdSmiGpu::pci_subsystem_vendor_id, &AmdSmiGpu::pci_subsystem_device_id};
constexpr std::optional<int> AmdSmiGpu::*kInts[] = {
    &AmdSmiGpu::kfd_node_id, &AmdSmiGpu::numa_node, &AmdSmiGpu::pcie_max_width};
constexpr std::optional<double> AmdSmiGpu::*kDoubles[] = {
    &AmdSmiGpu::power_cap_watts, &AmdSmiGpu::power_cap_max_watts,
    &AmdSmiGpu::pcie_max_speed_gtps};
constexpr std::optional<uint64_t> AmdSmiGpu::*kCounts[] = {
    &AmdSmiGpu::kfd_id, &AmdSmiGpu::vram_total_bytes};

template <typename T, size_t N>
void FillMembers(T AmdSmiGpu::*const (&members)[N], const AmdSmiGpu& from,
                 AmdSmiGpu* into) {
  for (auto member : members) {
    if (!(into->*member)) into->*member = from.*member;
  }
}

void FillEmpty(const AmdSmiGpu& from, AmdSmiGpu* into) {
  for (auto member : kTexts) {
    if ((into->*member).empty()) into->*member = from.*member;
  }
  if (into->bdf.empty()) into->bdf = from.bdf;
  if (!into->partition_id) into->partition_id = from.partition_id;
  FillMembers(kPciIds, from, into);
  FillMembers(kInts, from, into);
  FillMembers(kDoubles, from, into);
  FillMembers(kCounts, from, into);
  amd_smi::FillEmptySample(from.sample, &into->sample);
}

Status Disagreement(const AmdSmiGpu& a, const AmdSmiGpu& b) {
  std::string where = "amd-smi gpu " + std::to_string(a.gpu) + ": ";
  if (!a.bdf.empty() && !b.bdf.empty() && a.bdf != b.bdf) {
    return InvalidArgumentError(where + "BDF " + a.bdf + " in one output, " +
                                b.bdf + " in another");
  }
  if (a.partition_id && b.partition_id && *a.partition_id != *b.partition_id) {
    return InvalidArgumentError(
        where + "partition " + std::to_string(*a.partition_id) +
        " in one output, " + std::to_string(*b.partition_id) + " in another");
  }
  return OkStatus();
}

bool BdfOrder(const AmdSmiGpu& a, const AmdSmiGpu& b) {
  return std::make_tuple(a.bdf.empty(), a.bdf, a.partition_id.value_or(-1),
                         a.gpu) < std::make_tuple(b.bdf.empty(), b.bdf,
                                                  b.partition_id.value_or(-1),
                                                  b.gpu);
}

}  // namespace

Status MergeAmdSmiGpus(std::vector<AmdSmiGpu> more,
                       std::vector<AmdSmiGpu>* gpus) {
  if (gpus == nullptr) return InvalidArgumentError("gpus is null");
  for (AmdSmiGpu& record : more) {
    auto same = std::find_if(gpus->begin(), gpus->end(), [&](const auto& g) {
      return record.gpu >= 0 && g.gpu == record.gpu;
    });
    if (same == gpus->end()) {
      gpus->push_back(std::move(record));
      continue;
    }
    LENS_RETURN_IF_ERROR(Disagreement(*same, record));
    FillEmpty(record, &*same);
  }
  std::stable_sort(gpus->begin(), gpus->end(), BdfOrder);
  return OkStatus();
}

StatusOr<std::vector<AmdSmiGpu>> ParseAmdSmiOutputs(
    const std::vector<std::string_view>& outputs,
    const AmdSmiParseOptions& options) {
  std::vector<AmdSmiGpu> gpus;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string context = "output " + std::to_string(i + 1);
    auto parsed = ParseAmdSmiJson(outputs[i], options);
    if (!parsed.ok()) return parsed.status().WithContext(context);
    Status merged = MergeAmdSmiGpus(*std::move(parsed), &gpus);
    if (!merged.ok()) return merged.WithContext(context);
  }
  return gpus;
}

}  // namespace lens
