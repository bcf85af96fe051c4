// NvmlApi over the real NVML: libnvidia-ml.so.1 loaded with dlopen at run
// time, its entry points looked up by name (the versioned symbol first, then
// the older names), so Lens builds and runs on machines without NVIDIA.
#ifndef LENS_GPU_NVML_NVML_LIBRARY_H_
#define LENS_GPU_NVML_NVML_LIBRARY_H_

#include <memory>
#include <string>

#include "gpu/nvml/nvml_api.h"
#include "lens/status.h"

namespace lens::nvml {

// The soname the NVIDIA driver installs (the unversioned libnvidia-ml.so
// comes only with development packages).
inline constexpr char kNvmlLibraryName[] = "libnvidia-ml.so.1";

// Loads `library` (a soname searched the usual way, or a path) with
// dlopen(RTLD_NOW | RTLD_LOCAL) and resolves its entry points; does not call
// nvmlInit (NvmlApi::Init does). Errors: Unavailable "<library> not found: no
// NVIDIA driver on this machine (<dlerror>)" when it cannot be loaded, or
// naming the required entry point it lacks. Entry points missing in an old
// driver make only their calls fail, with NotFound ("not reported").
// The object unloads the library when destroyed, after an nvmlShutdown for
// every Init not yet balanced. One thread at a time.
StatusOr<std::unique_ptr<NvmlApi>> OpenNvmlLibrary(
    const std::string& library = kNvmlLibraryName);

}  // namespace lens::nvml

#endif  // LENS_GPU_NVML_NVML_LIBRARY_H_
