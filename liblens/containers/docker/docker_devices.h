// From a Docker container's inspect output to the tracker's RuntimeContainer:
// state, times, labels, and an OCI-shaped spec of its devices, so the
// ownership rules (lens/containers.h, device_resolver.h) apply unchanged.
#ifndef LENS_CONTAINERS_DOCKER_DOCKER_DEVICES_H_
#define LENS_CONTAINERS_DOCKER_DOCKER_DEVICES_H_

#include <string>
#include <vector>

#include "containers/containerd/containerd_client.h"
#include "containers/docker/docker_json.h"
#include "lens/host.h"

namespace lens::containers::docker {

// An NVIDIA GPU as procfs driver/nvidia/gpus/<bdf>/information names it.
struct NvidiaProcGpu {
  std::string bdf;
  std::string uuid;  // "GPU-..."
  int minor = -1;    // /dev/nvidia<minor>
};

// Every GPU under <procfs>/driver/nvidia/gpus, in PCI order (NVML's index
// order, which `--gpus device=<index>` uses). Empty without the driver.
std::vector<NvidiaProcGpu> ReadNvidiaProcGpus(const std::string& procfs);

// The OCI runtime spec fragment (linux.devices, linux.resources.devices)
// that describes `c`'s devices, for ParseOciSpec():
//  - HostConfig.Devices: each node by its host path, with its type, major
//    and minor when the host path can be stat()ed (under roots.dev for
//    /dev/..., else as given); a directory (`--device /dev/dri`) stands for
//    the character devices below it, as Docker expands it.
//  - GPU DeviceRequests (driver "nvidia", or a "gpu" capability): the
//    /dev/nvidia<minor> nodes of the requested GPUs, by index or UUID;
//    count -1 is every GPU, count n the first n.
//  - Privileged: the single allow-all device rule Docker writes; otherwise
//    a deny-all rule followed by DeviceCgroupRules ("c 226:* rwm").
// Reads files under `roots`; thread-safe.
std::string DeviceSpecJson(const DockerContainer& c, const HostRoots& roots,
                           const std::vector<NvidiaProcGpu>& nvidia);

// The container as the tracker sees it: State.Status "created" has no
// task; running/paused as they are; restarting, removing, exited and dead
// are a stopped task (exit code and FinishedAt kept).
RuntimeContainer ToRuntimeContainer(DockerContainer c, const HostRoots& roots,
                                    const std::vector<NvidiaProcGpu>& nvidia);

}  // namespace lens::containers::docker

#endif  // LENS_CONTAINERS_DOCKER_DOCKER_DEVICES_H_
