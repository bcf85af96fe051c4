// The replayed calls that return structs or handles (nvml_replay_impl.h).
#include <utility>
#include <vector>

#include "gpu/nvml/nvml_replay_impl.h"

namespace lens::nvml::replay {

StatusOr<NvmlDevice> NvmlReplayImpl::DeviceByIndex(unsigned index) {
  const auto reading = Reading();
  static constexpr char kCall[] = "nvmlDeviceGetHandleByIndex_v2";
  if (init_count_ == 0) return Uninitialized(kCall);
  if (index >= devices().Size()) {
    return NvmlStatus(kNvmlErrorInvalidArgument, kCall);
  }
  if (const Value* v = Find(devices()[index], kCall)) {
    const std::string where = "devices[" + std::to_string(index) + "]." + kCall;
    Status failure = Failure(*v, where, kCall);
    if (!failure.ok()) return failure;
    return Invalid(where,
                   "only a failure ({\"nvmlReturn\": ...}) may be given");
  }
  return NvmlDevice{nullptr, index};
}

StatusOr<NvmlDevice> NvmlReplayImpl::MigDeviceByIndex(NvmlDevice parent,
                                                      unsigned index) {
  const auto reading = Reading();
  static constexpr char kCall[] = "nvmlDeviceGetMigDeviceHandleByIndex";
  const Located migs = Call(parent, "migDevices");
  LENS_RETURN_IF_ERROR(migs.status);
  if (!migs.value->IsArray()) return Invalid(migs.where, "expected an array");
  // Indexes past the list, and entries that say so, hold no MIG device.
  const NvmlDevice mig{nullptr, parent.index, static_cast<int>(index)};
  if (index >= migs.value->Size()) return NvmlStatus(kNvmlErrorNotFound, kCall);
  if (const Value* v = Find((*migs.value)[index], kCall)) {
    const std::string where = DeviceWhere(mig) + "." + kCall;
    LENS_RETURN_IF_ERROR(Failure(*v, where, kCall));
    return Invalid(where,
                   "only a failure ({\"nvmlReturn\": ...}) may be given");
  }
  return mig;
}

StatusOr<NvmlDeviceAttributes> NvmlReplayImpl::Attributes(NvmlDevice d) {
  const auto reading = Reading();
  const Located call = Call(d, "nvmlDeviceGetAttributes_v2");
  NvmlDeviceAttributes a;
  for (auto [key, field] :
       {std::pair{"multiprocessorCount", &a.multiprocessor_count},
        std::pair{"gpuInstanceSliceCount", &a.gpu_instance_slice_count},
        std::pair{"computeInstanceSliceCount",
                  &a.compute_instance_slice_count}}) {
    LENS_ASSIGN_OR_RETURN(*field, Uint32(Field(call, key)));
  }
  LENS_ASSIGN_OR_RETURN(a.memory_size_mib, Uint64(Field(call, "memorySizeMB")));
  return a;
}

StatusOr<NvmlPciInfo> NvmlReplayImpl::PciInfo(NvmlDevice d) {
  const auto reading = Reading();
  const Located call = Call(d, "nvmlDeviceGetPciInfo_v3");
  LENS_ASSIGN_OR_RETURN(std::string bus_id, String(Field(call, "busId")));
  NvmlPciInfo pci;
  LENS_ASSIGN_OR_RETURN(pci.bdf, NormalizeNvmlBusId(bus_id));
  LENS_ASSIGN_OR_RETURN(pci.pci_device_id, Uint32(Field(call, "pciDeviceId")));
  LENS_ASSIGN_OR_RETURN(pci.pci_subsystem_id,
                        Uint32(Field(call, "pciSubSystemId")));
  return pci;
}

StatusOr<NvmlMemory> NvmlReplayImpl::Memory(NvmlDevice d) {
  const auto reading = Reading();
  // Like the library: the v2 call when the file has it, else v1 (drivers
  // before R510).
  const char* key =
      Either(d, "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetMemoryInfo");
  const bool v2 = std::string_view(key) == "nvmlDeviceGetMemoryInfo_v2";
  const Located call = Call(d, key);
  NvmlMemory memory;
  LENS_ASSIGN_OR_RETURN(memory.total_bytes, Uint64(Field(call, "total")));
  LENS_ASSIGN_OR_RETURN(memory.used_bytes, Uint64(Field(call, "used")));
  if (v2) {
    LENS_ASSIGN_OR_RETURN(memory.reserved_bytes,
                          Uint64(Field(call, "reserved")));
  }
  return memory;
}

StatusOr<std::vector<NvmlProcess>> NvmlReplayImpl::ComputeProcesses(
    NvmlDevice d) {
  const auto reading = Reading();
  const Located call = Call(d, "nvmlDeviceGetComputeRunningProcesses_v3");
  LENS_RETURN_IF_ERROR(call.status);
  if (!call.value->IsArray()) return Invalid(call.where, "expected an array");
  std::vector<NvmlProcess> processes;
  for (rapidjson::SizeType i = 0; i < call.value->Size(); ++i) {
    const Located entry{OkStatus(), &(*call.value)[i],
                        call.where + "[" + std::to_string(i) + "]", call.call};
    NvmlProcess p;
    LENS_ASSIGN_OR_RETURN(p.pid, Uint32(Field(entry, "pid")));
    LENS_ASSIGN_OR_RETURN(uint64_t used, Uint64(Field(entry, "usedGpuMemory")));
    // NVML_VALUE_NOT_AVAILABLE, as the library writes it.
    if (used != ~uint64_t{0}) p.used_memory_bytes = used;
    // MIG mode only; absent (or 0xFFFFFFFF) otherwise.
    if (Find(*entry.value, "gpuInstanceId") != nullptr) {
      LENS_ASSIGN_OR_RETURN(unsigned gi, Uint32(Field(entry, "gpuInstanceId")));
      LENS_ASSIGN_OR_RETURN(unsigned ci,
                            Uint32(Field(entry, "computeInstanceId")));
      if (gi != 0xFFFFFFFFu) p.gpu_instance_id = gi;
      if (ci != 0xFFFFFFFFu) p.compute_instance_id = ci;
    }
    processes.push_back(p);
  }
  return processes;
}

}  // namespace lens::nvml::replay
