// ParseAmdSmiJson: the document's outer shapes (flat array, {"gpu_data": []})
// and the `list` / `static` fields. Metric and process fields are in
// parse_metric.cc.
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <string>
#include <utility>

#include "gpu/amd_smi/internal.h"
#include "gpu/amd_smi/json_field.h"
#include "lens/amd_smi.h"

namespace lens::amd_smi {
namespace {

// Text fields; for one member the first path that is reported wins (newer
// names after older ones: vbios became ifwi, compute_partition became
// accelerator_partition).
struct TextField {
  MemberPath path;
  std::string AmdSmiGpu::*member;
};
constexpr TextField kTextFields[] = {
    {{"uuid"}, &AmdSmiGpu::uuid},
    {{"asic", "market_name"}, &AmdSmiGpu::market_name},
    {{"asic", "asic_serial"}, &AmdSmiGpu::asic_serial},
    {{"board", "product_name"}, &AmdSmiGpu::product_name},
    {{"board", "product_serial"}, &AmdSmiGpu::serial},
    {{"vbios", "part_number"}, &AmdSmiGpu::vbios_part_number},
    {{"ifwi", "part_number"}, &AmdSmiGpu::vbios_part_number},
    {{"vbios", "version"}, &AmdSmiGpu::vbios_version},
    {{"ifwi", "version"}, &AmdSmiGpu::vbios_version},
    {{"driver", "name"}, &AmdSmiGpu::driver_name},
    {{"driver", "version"}, &AmdSmiGpu::driver_version},
    {{"partition", "compute_partition"}, &AmdSmiGpu::compute_partition},
    {{"partition", "accelerator_partition"}, &AmdSmiGpu::compute_partition},
    {{"partition", "memory_partition"}, &AmdSmiGpu::memory_partition},
};

struct PciIdField {
  MemberPath path;
  std::optional<uint16_t> AmdSmiGpu::*member;
};
constexpr PciIdField kPciIdFields[] = {
    {{"asic", "vendor_id"}, &AmdSmiGpu::pci_vendor_id},
    {{"asic", "device_id"}, &AmdSmiGpu::pci_device_id},
    {{"asic", "subvendor_id"}, &AmdSmiGpu::pci_subsystem_vendor_id},
    {{"asic", "subsystem_id"}, &AmdSmiGpu::pci_subsystem_device_id},
};

struct IntField {
  MemberPath path;
  std::optional<int> AmdSmiGpu::*member;
};
constexpr IntField kIntFields[] = {
    {{"partition_id"}, &AmdSmiGpu::partition_id},
    {{"partition", "partition_id"}, &AmdSmiGpu::partition_id},
    {{"node_id"}, &AmdSmiGpu::kfd_node_id},
    {{"numa", "node"}, &AmdSmiGpu::numa_node},
    {{"bus", "max_pcie_width"}, &AmdSmiGpu::pcie_max_width},
};

struct QuantityField {
  MemberPath path;
  const Quantity* quantity;
  std::optional<double> AmdSmiGpu::*member;
};
// limit.socket_power is the power cap in force (amdsmi power_cap); max_power
// the largest settable one. amd-smi 26+ reports them per power type (ppt0).
constexpr QuantityField kQuantityFields[] = {
    {{"limit", "socket_power"}, &kWatts, &AmdSmiGpu::power_cap_watts},
    {{"limit", "ppt0", "socket_power_limit"},
     &kWatts,
     &AmdSmiGpu::power_cap_watts},
    {{"limit", "max_power"}, &kWatts, &AmdSmiGpu::power_cap_max_watts},
    {{"limit", "ppt0", "max_power_limit"},
     &kWatts,
     &AmdSmiGpu::power_cap_max_watts},
    {{"bus", "max_pcie_speed"},
     &kGigaTransfers,
     &AmdSmiGpu::pcie_max_speed_gtps},
};

template <typename T, typename Read>
Status FillFirst(const Field& object, const MemberPath& path, T* out,
                 Read read) {
  if (*out) return OkStatus();  // an earlier path of this member was reported
  LENS_ASSIGN_OR_RETURN(Field field, Walk(object, path));
  LENS_ASSIGN_OR_RETURN(*out, read(field));
  return OkStatus();
}

Status ParseTextFields(const Field& object, AmdSmiGpu* gpu) {
  for (const TextField& f : kTextFields) {
    std::string* out = &(gpu->*f.member);
    if (!out->empty()) continue;
    LENS_ASSIGN_OR_RETURN(Field field, Walk(object, f.path));
    LENS_ASSIGN_OR_RETURN(*out, ReadText(field));
  }
  return OkStatus();
}

Status ParseNumberFields(const Field& object, AmdSmiGpu* gpu) {
  for (const PciIdField& f : kPciIdFields) {
    LENS_RETURN_IF_ERROR(
        FillFirst(object, f.path, &(gpu->*f.member),
                  [](const Field& x) { return ReadPciId(x); }));
  }
  for (const IntField& f : kIntFields) {
    LENS_RETURN_IF_ERROR(FillFirst(object, f.path, &(gpu->*f.member),
                                   [](const Field& x) { return ReadInt(x); }));
  }
  for (const QuantityField& f : kQuantityFields) {
    LENS_RETURN_IF_ERROR(FillFirst(
        object, f.path, &(gpu->*f.member),
        [&f](const Field& x) { return ReadQuantity(x, *f.quantity); }));
  }
  // amdsmi reports a GPU without NUMA affinity as node -1.
  if (gpu->numa_node && *gpu->numa_node < 0) gpu->numa_node.reset();
  LENS_ASSIGN_OR_RETURN(gpu->kfd_id, ReadCount(object["kfd_id"]));
  LENS_ASSIGN_OR_RETURN(Field vram, Walk(object, {"vram", "size"}));
  LENS_ASSIGN_OR_RETURN(gpu->vram_total_bytes, ReadByteCount(vram, kBytesMiB));
  return OkStatus();
}

// Skips what amd-smi may print before its JSON on stdout (the "WARNING: User
// is missing the following required groups" line of amd-smi 25.x, run as a
// user outside the render/video groups): whole lines until one starts with
// '[' or '{'.
size_t JsonStart(std::string_view text) {
  size_t line = 0;
  while (line < text.size()) {
    size_t first = text.find_first_not_of(" \t\r", line);
    if (first == std::string_view::npos) return first;
    if (text[first] == '[' || text[first] == '{') return first;
    size_t next = text.find('\n', first);
    if (next == std::string_view::npos) return next;
    line = next + 1;
  }
  return std::string_view::npos;
}

// The array of GPU objects and the path prefix of its elements.
StatusOr<Field> GpuArray(const rapidjson::Document& doc) {
  Field root{&doc, ""};
  if (doc.IsArray()) return root;
  Field wrapped = root["gpu_data"];
  if (doc.IsObject() && !wrapped.absent()) {
    if (!wrapped.value->IsArray()) return TypeError(wrapped, "an array");
    return wrapped;
  }
  return InvalidArgumentError(
      "top level: expected an array of GPU objects or an object with "
      "\"gpu_data\", got " +
      std::string(doc.IsObject() ? "an object without \"gpu_data\""
                                 : "a scalar"));
}

StatusOr<AmdSmiGpu> ParseGpuObject(const Field& object) {
  if (!object.value->IsObject()) return TypeError(object, "a GPU object");
  AmdSmiGpu gpu;
  LENS_ASSIGN_OR_RETURN(std::optional<int> index, ReadInt(object["gpu"]));
  gpu.gpu = index.value_or(-1);
  LENS_ASSIGN_OR_RETURN(gpu.bdf, ReadBdf(object["bdf"]));
  if (gpu.bdf.empty()) {
    LENS_ASSIGN_OR_RETURN(Field bus_bdf, Walk(object, {"bus", "bdf"}));
    LENS_ASSIGN_OR_RETURN(gpu.bdf, ReadBdf(bus_bdf));
  }
  LENS_RETURN_IF_ERROR(ParseIdentity(object, &gpu));
  LENS_RETURN_IF_ERROR(ParseMetric(object, &gpu.sample));
  LENS_RETURN_IF_ERROR(ParseProcesses(object, &gpu.sample));
  return gpu;
}

}  // namespace

Status ParseIdentity(const Field& object, AmdSmiGpu* gpu) {
  LENS_RETURN_IF_ERROR(ParseTextFields(object, gpu));
  return ParseNumberFields(object, gpu);
}

}  // namespace lens::amd_smi

namespace lens {

StatusOr<std::vector<AmdSmiGpu>> ParseAmdSmiJson(
    std::string_view json, const AmdSmiParseOptions& options) {
  if (json.size() > options.max_input_bytes) {
    return ResourceExhaustedError("amd-smi output of " +
                                  std::to_string(json.size()) +
                                  " bytes is larger than the limit of " +
                                  std::to_string(options.max_input_bytes));
  }
  size_t start = amd_smi::JsonStart(json);
  if (start == std::string_view::npos) {
    return InvalidArgumentError(
        "no JSON array or object in the amd-smi output" +
        std::string(json.empty() ? " (empty)" : ""));
  }
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseTrailingCommasFlag |
            rapidjson::kParseIterativeFlag>(json.data() + start,
                                            json.size() - start);
  if (doc.HasParseError()) {
    return InvalidArgumentError(
        "offset " + std::to_string(start + doc.GetErrorOffset()) + ": " +
        rapidjson::GetParseError_En(doc.GetParseError()));
  }
  LENS_ASSIGN_OR_RETURN(amd_smi::Field array, amd_smi::GpuArray(doc));
  std::vector<AmdSmiGpu> gpus;
  for (rapidjson::SizeType i = 0; i < array.value->Size(); ++i) {
    amd_smi::Field element{&(*array.value)[i],
                           array.path + "[" + std::to_string(i) + "]"};
    LENS_ASSIGN_OR_RETURN(AmdSmiGpu gpu, amd_smi::ParseGpuObject(element));
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

}  // namespace lens
