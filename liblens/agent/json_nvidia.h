// JSON fields of what NVIDIA GPUs add to the node REST API (/gpus and
// /cardMetrics): the /dev/nvidiaN minor, MIG devices, lifetime ECC counts
// and the processes on the GPU (pid, comm name, memory; never a command line
// or environment). Fields a GPU does not report are left out.
#ifndef LENS_AGENT_JSON_NVIDIA_H_
#define LENS_AGENT_JSON_NVIDIA_H_

#include "agent/json_fields.h"
#include "lens/gpu.h"

namespace lens::agent {

// "nvidia_minor", "mig_enabled", "mig_devices": [{"index", "uuid",
// "profile", "gpu_instance_id", "compute_instance_id", "gpu_instance_slices",
// "compute_instance_slices", "multiprocessor_count", "memory_total_bytes"}].
inline void NvidiaGpuInfoFields(JsonWriter& w, const GpuInfo& g) {
  OptField(w, "nvidia_minor", g.nvidia_minor);
  if (g.mig_enabled) {
    w.Key("mig_enabled");
    w.Bool(*g.mig_enabled);
  }
  if (g.mig_devices.empty()) return;
  w.Key("mig_devices");
  w.StartArray();
  for (const MigDevice& m : g.mig_devices) {
    w.StartObject();
    w.Key("index");
    w.Int(m.index);
    StrField(w, "uuid", m.uuid);
    StrField(w, "profile", m.profile);
    w.Key("gpu_instance_id");
    w.Uint(m.gpu_instance_id);
    w.Key("compute_instance_id");
    w.Uint(m.compute_instance_id);
    OptField(w, "gpu_instance_slices", m.gpu_instance_slices);
    OptField(w, "compute_instance_slices", m.compute_instance_slices);
    OptField(w, "multiprocessor_count", m.multiprocessor_count);
    OptField(w, "memory_total_bytes", m.memory_total_bytes);
    w.EndObject();
  }
  w.EndArray();
}

// "ecc_correctable_errors_lifetime", "ecc_uncorrectable_errors_lifetime",
// "mig_memory_used_bytes": [bytes or null, in mig_devices order],
// "processes": [{"pid", "name", "used_memory_bytes", "gpu_instance_id",
// "compute_instance_id"}] when the source reports processes.
inline void NvidiaGpuSampleFields(JsonWriter& w, const GpuSample& s) {
  OptField(w, "ecc_correctable_errors_lifetime",
           s.ecc_correctable_errors_lifetime);
  OptField(w, "ecc_uncorrectable_errors_lifetime",
           s.ecc_uncorrectable_errors_lifetime);
  if (!s.mig_memory_used_bytes.empty()) {
    w.Key("mig_memory_used_bytes");
    w.StartArray();
    for (const std::optional<uint64_t>& used : s.mig_memory_used_bytes) {
      if (used) {
        w.Uint64(*used);
      } else {
        w.Null();
      }
    }
    w.EndArray();
  }
  if (!s.processes_known) return;
  w.Key("processes");
  w.StartArray();
  for (const GpuProcess& p : s.processes) {
    w.StartObject();
    w.Key("pid");
    w.Int64(p.pid);
    StrField(w, "name", p.name);
    OptField(w, "used_memory_bytes", p.used_memory_bytes);
    OptField(w, "gpu_instance_id", p.gpu_instance_id);
    OptField(w, "compute_instance_id", p.compute_instance_id);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace lens::agent

#endif  // LENS_AGENT_JSON_NVIDIA_H_
