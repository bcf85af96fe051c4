#include "gpu/nvml/nvml_mig.h"

#include <utility>

namespace lens::nvml {
namespace {

// Keeps the first failure that is not "not reported".
void Note(const Status& status, Status* first_error) {
  if (!status.ok() && status.code() != StatusCode::kNotFound &&
      first_error->ok()) {
    *first_error = status;
  }
}

template <typename T>
std::optional<T> Value(StatusOr<T> value, Status* first_error) {
  if (value.ok()) return *std::move(value);
  Note(value.status(), first_error);
  return std::nullopt;
}

MigDevice ReadOne(NvmlApi& api, NvmlDevice mig, unsigned index,
                  uint64_t parent_total, Status* first_error) {
  MigDevice d;
  d.index = static_cast<int>(index);
  if (auto uuid = Value(api.Uuid(mig), first_error)) d.uuid = *uuid;
  if (auto gi = Value(api.GpuInstanceId(mig), first_error)) {
    d.gpu_instance_id = *gi;
  }
  if (auto ci = Value(api.ComputeInstanceId(mig), first_error)) {
    d.compute_instance_id = *ci;
  }
  if (auto a = Value(api.Attributes(mig), first_error)) {
    d.profile = MigProfileName(*a, parent_total);
    d.gpu_instance_slices = static_cast<int>(a->gpu_instance_slice_count);
    d.compute_instance_slices =
        static_cast<int>(a->compute_instance_slice_count);
    d.multiprocessor_count = static_cast<int>(a->multiprocessor_count);
    d.memory_total_bytes = a->memory_size_mib << 20;
  }
  // The device's own view of its memory is the exact size.
  if (auto m = Value(api.Memory(mig), first_error)) {
    d.memory_total_bytes = m->total_bytes;
  }
  return d;
}

}  // namespace

MigScan ReadMigDevices(NvmlApi& api, NvmlDevice gpu,
                       uint64_t parent_memory_total_bytes) {
  MigScan scan;
  StatusOr<bool> enabled = api.MigEnabled(gpu);
  if (!enabled.ok()) {
    Note(enabled.status(), &scan.first_error);
    return scan;
  }
  scan.enabled = *enabled;
  if (!*enabled) return scan;
  StatusOr<unsigned> max = api.MaxMigDeviceCount(gpu);
  if (!max.ok()) {
    Note(max.status(), &scan.first_error);
    return scan;
  }
  for (unsigned i = 0; i < *max; ++i) {
    StatusOr<NvmlDevice> mig = api.MigDeviceByIndex(gpu, i);
    if (!mig.ok()) {
      Note(mig.status(), &scan.first_error);  // NotFound: an empty slot
      continue;
    }
    scan.devices.push_back(
        ReadOne(api, *mig, i, parent_memory_total_bytes, &scan.first_error));
    scan.handles.push_back(*mig);
  }
  return scan;
}

std::string MigLayoutToken(NvmlApi& api, NvmlDevice gpu) {
  StatusOr<bool> enabled = api.MigEnabled(gpu);
  if (!enabled.ok() || !*enabled) return "";
  StatusOr<unsigned> max = api.MaxMigDeviceCount(gpu);
  if (!max.ok()) return "[?]";
  std::string token = "[";
  for (unsigned i = 0; i < *max; ++i) {
    StatusOr<NvmlDevice> mig = api.MigDeviceByIndex(gpu, i);
    if (!mig.ok() && mig.status().code() == StatusCode::kNotFound) continue;
    StatusOr<std::string> uuid = mig.ok() ? api.Uuid(*mig) : mig.status();
    if (token.size() > 1) token += ',';
    token += uuid.ok() ? *uuid : "?";
  }
  return token + "]";
}

}  // namespace lens::nvml
