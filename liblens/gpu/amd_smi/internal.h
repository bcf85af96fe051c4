// Pieces of the amd-smi reader shared between its source files.
#ifndef LENS_GPU_AMD_SMI_INTERNAL_H_
#define LENS_GPU_AMD_SMI_INTERNAL_H_

#include "gpu/amd_smi/json_field.h"
#include "lens/amd_smi.h"
#include "lens/gpu.h"
#include "lens/status.h"

namespace lens::amd_smi {

// `list` and `static` fields of one GPU object into *gpu.
Status ParseIdentity(const Field& object, AmdSmiGpu* gpu);
// `metric` fields of one GPU object into *sample.
Status ParseMetric(const Field& object, GpuSample* sample);
// `process` fields (process_list; ROCm 6.1's process_info / values) of one
// GPU object into sample->processes; sets processes_known when present.
Status ParseProcesses(const Field& object, GpuSample* sample);

// Copies every field of `from` that is set into *into where *into's is
// still empty (nullopt, empty vector / not known). Never overwrites.
void FillEmptySample(const GpuSample& from, GpuSample* into);

}  // namespace lens::amd_smi

#endif  // LENS_GPU_AMD_SMI_INTERNAL_H_
