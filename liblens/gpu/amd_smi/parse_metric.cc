// `amd-smi metric` and `amd-smi process` fields of one GPU object.
#include <string>
#include <utility>

#include "gpu/amd_smi/internal.h"
#include "gpu/amd_smi/json_field.h"

namespace lens::amd_smi {
namespace {

// For one member the first reported path wins; older names come after the
// newer ones where they coexisted. ROCm 6.1 named clocks "gfx"/"MEM"; from
// 6.2 they are per engine ("gfx_0".."gfx_7", "mem_0"), and the first
// graphics engine is the one reported. Power: socket_power; older readers
// also saw average_socket_power / current_socket_power. Hotspot is what
// rocm-smi called junction.
struct MetricQuantityField {
  MemberPath path;
  const Quantity* quantity;
  std::optional<double> GpuSample::*member;
};
constexpr MetricQuantityField kMetricQuantityFields[] = {
    {{"usage", "gfx_activity"}, &kPercent, &GpuSample::utilization_ratio},
    {{"usage", "umc_activity"},
     &kPercent,
     &GpuSample::memory_utilization_ratio},
    {{"power", "socket_power"}, &kWatts, &GpuSample::power_watts},
    {{"power", "average_socket_power"}, &kWatts, &GpuSample::power_watts},
    {{"power", "current_socket_power"}, &kWatts, &GpuSample::power_watts},
    {{"energy", "total_energy_consumption"},
     &kJoules,
     &GpuSample::energy_joules},
    {{"temperature", "edge"}, &kCelsius, &GpuSample::temperature_edge_celsius},
    {{"temperature", "hotspot"},
     &kCelsius,
     &GpuSample::temperature_junction_celsius},
    {{"temperature", "junction"},
     &kCelsius,
     &GpuSample::temperature_junction_celsius},
    {{"temperature", "mem"}, &kCelsius, &GpuSample::temperature_memory_celsius},
    {{"temperature", "vram"},
     &kCelsius,
     &GpuSample::temperature_memory_celsius},
    {{"clock", "gfx_0", "clk"}, &kHertz, &GpuSample::clock_graphics_hz},
    {{"clock", "gfx", "clk"}, &kHertz, &GpuSample::clock_graphics_hz},
    {{"clock", "mem_0", "clk"}, &kHertz, &GpuSample::clock_memory_hz},
    {{"clock", "MEM", "clk"}, &kHertz, &GpuSample::clock_memory_hz},
    {{"clock", "socclk_0", "clk"}, &kHertz, &GpuSample::clock_soc_hz},
    {{"clock", "SOC", "clk"}, &kHertz, &GpuSample::clock_soc_hz},
    {{"fan", "usage"}, &kPercent, &GpuSample::fan_speed_ratio},
    {{"pcie", "speed"}, &kGigaTransfers, &GpuSample::pcie_link_speed_gtps},
};

struct ByteField {
  MemberPath path;
  std::optional<uint64_t> GpuSample::*member;
};
constexpr ByteField kByteFields[] = {
    {{"mem_usage", "total_vram"}, &GpuSample::vram_total_bytes},
    {{"mem_usage", "used_vram"}, &GpuSample::vram_used_bytes},
};

struct CountField {
  MemberPath path;
  std::optional<uint64_t> GpuSample::*member;
};
constexpr CountField kCountFields[] = {
    {{"ecc", "total_correctable_count"}, &GpuSample::ecc_correctable_errors},
    {{"ecc", "total_uncorrectable_count"},
     &GpuSample::ecc_uncorrectable_errors},
    {{"pcie", "replay_count"}, &GpuSample::pcie_replay_count},
};

// One process_info object. Memory: the VRAM share (what NVML reports as the
// process's GPU memory), else the total mem_usage.
StatusOr<GpuProcess> ParseProcess(const Field& info) {
  GpuProcess process;
  LENS_ASSIGN_OR_RETURN(std::optional<int> pid, ReadInt(info["pid"]));
  if (!pid) return TypeError(info["pid"], "a process id");
  process.pid = *pid;
  LENS_ASSIGN_OR_RETURN(process.name, ReadText(info["name"]));
  LENS_ASSIGN_OR_RETURN(Field vram, Walk(info, {"memory_usage", "vram_mem"}));
  LENS_ASSIGN_OR_RETURN(process.used_memory_bytes, ReadByteCount(vram, kBytes));
  if (!process.used_memory_bytes) {
    LENS_ASSIGN_OR_RETURN(process.used_memory_bytes,
                          ReadByteCount(info["mem_usage"], kBytes));
  }
  return process;
}

// {"process_info": {...}} or {"process_info": "No running processes
// detected"} (6.2+; ROCm 6.1 printed "Not Found" or "N/A").
Status AppendProcessInfo(const Field& info, GpuSample* sample) {
  if (info.absent()) return TypeError(info, "a process_info member");
  if (info.value->IsString()) return OkStatus();  // no process
  if (!info.value->IsObject()) return TypeError(info, "an object or a string");
  LENS_ASSIGN_OR_RETURN(GpuProcess process, ParseProcess(info));
  sample->processes.push_back(std::move(process));
  return OkStatus();
}

Status AppendProcessList(const Field& list, GpuSample* sample) {
  if (!list.value->IsArray()) return TypeError(list, "an array");
  for (rapidjson::SizeType i = 0; i < list.value->Size(); ++i) {
    Field entry{&(*list.value)[i], list.path + "[" + std::to_string(i) + "]"};
    if (!entry.value->IsObject()) return TypeError(entry, "an object");
    LENS_RETURN_IF_ERROR(AppendProcessInfo(entry["process_info"], sample));
  }
  return OkStatus();
}

}  // namespace

Status ParseMetric(const Field& object, GpuSample* sample) {
  for (const MetricQuantityField& f : kMetricQuantityFields) {
    std::optional<double>* out = &(sample->*f.member);
    if (*out) continue;
    LENS_ASSIGN_OR_RETURN(Field field, Walk(object, f.path));
    LENS_ASSIGN_OR_RETURN(*out, ReadQuantity(field, *f.quantity));
  }
  for (const ByteField& f : kByteFields) {
    LENS_ASSIGN_OR_RETURN(Field field, Walk(object, f.path));
    LENS_ASSIGN_OR_RETURN(sample->*f.member, ReadByteCount(field, kBytesMiB));
  }
  for (const CountField& f : kCountFields) {
    LENS_ASSIGN_OR_RETURN(Field field, Walk(object, f.path));
    LENS_ASSIGN_OR_RETURN(sample->*f.member, ReadCount(field));
  }
  LENS_ASSIGN_OR_RETURN(Field width, Walk(object, {"pcie", "width"}));
  LENS_ASSIGN_OR_RETURN(sample->pcie_link_width, ReadInt(width));
  return OkStatus();
}

Status ParseProcesses(const Field& object, GpuSample* sample) {
  Field list = object["process_list"];
  if (!list.absent()) {
    sample->processes_known = true;
    return AppendProcessList(list, sample);
  }
  // ROCm 6.1: one process merged into the GPU object as "process_info",
  // several as a "values" list of {"process_info": ...}.
  Field single = object["process_info"];
  if (!single.absent()) {
    sample->processes_known = true;
    return AppendProcessInfo(single, sample);
  }
  Field values = object["values"];
  if (!values.absent() && values.value->IsArray()) {
    sample->processes_known = true;
    return AppendProcessList(values, sample);
  }
  return OkStatus();
}

void FillEmptySample(const GpuSample& from, GpuSample* into) {
  static constexpr std::optional<double> GpuSample::*kDoubles[] = {
      &GpuSample::utilization_ratio,
      &GpuSample::memory_utilization_ratio,
      &GpuSample::power_watts,
      &GpuSample::energy_joules,
      &GpuSample::temperature_edge_celsius,
      &GpuSample::temperature_junction_celsius,
      &GpuSample::temperature_memory_celsius,
      &GpuSample::clock_graphics_hz,
      &GpuSample::clock_memory_hz,
      &GpuSample::clock_soc_hz,
      &GpuSample::fan_speed_ratio,
      &GpuSample::pcie_link_speed_gtps};
  static constexpr std::optional<uint64_t> GpuSample::*kCounts[] = {
      &GpuSample::vram_used_bytes, &GpuSample::vram_total_bytes,
      &GpuSample::pcie_replay_count, &GpuSample::ecc_correctable_errors,
      &GpuSample::ecc_uncorrectable_errors};
  for (auto member : kDoubles) {
    if (!(into->*member)) into->*member = from.*member;
  }
  for (auto member : kCounts) {
    if (!(into->*member)) into->*member = from.*member;
  }
  if (!into->pcie_link_width) into->pcie_link_width = from.pcie_link_width;
  if (!into->throttle_known && from.throttle_known) {
    into->throttle_reasons = from.throttle_reasons;
    into->throttle_known = true;
  }
  if (!into->processes_known && from.processes_known) {
    into->processes = from.processes;
    into->processes_known = true;
  }
}

}  // namespace lens::amd_smi
