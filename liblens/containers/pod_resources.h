// Adapter for the kubelet pod-resources API (v1, gRPC on a unix socket): which
// device-plugin devices the kubelet allocated to which container. gRPC types
// stay in pod_resources.cc.
#ifndef LENS_CONTAINERS_POD_RESOURCES_H_
#define LENS_CONTAINERS_POD_RESOURCES_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "lens/status.h"

namespace lens::containers {

// One resource of one container: "amd.com/gpu" with the device plugin's ids
// (AMD: PCI BDFs or KFD ids; NVIDIA: "GPU-<uuid>"; SR-IOV: VF BDFs).
struct PodResourceDevices {
  std::string resource_name;
  std::vector<std::string> device_ids;
  bool operator==(const PodResourceDevices&) const = default;
};

// A container that holds at least one device-plugin device.
struct PodResourcesContainer {
  std::string pod_namespace;
  std::string pod_name;
  std::string container_name;
  std::vector<PodResourceDevices> devices;
  bool operator==(const PodResourcesContainer&) const = default;
};

// Thread-compatible (one caller at a time); cheap to keep. Dials lazily on
// the first List() and keeps the connection between calls.
class PodResourcesClient {
 public:
  // `socket_path`: the kubelet's pod-resources socket
  // (/var/lib/kubelet/pod-resources/kubelet.sock). `timeout`: the deadline
  // of each call, connecting included.
  PodResourcesClient(std::string socket_path,
                     std::chrono::milliseconds timeout);
  ~PodResourcesClient();
  PodResourcesClient(const PodResourcesClient&) = delete;
  PodResourcesClient& operator=(const PodResourcesClient&) = delete;

  // Lists every container that holds at least one device-plugin device
  // (CPU and memory assignments are not devices), in the kubelet's order.
  // Errors: NotFound when the socket does not exist (checked before every
  // call, so a socket that appears later is picked up); FailedPrecondition
  // when the path is not a socket; Unavailable (with the socket path and the
  // gRPC message) when the kubelet cannot be reached or does not answer
  // within the timeout; Unimplemented when it does not serve v1; other gRPC
  // errors keep their code. After a failure the next call dials afresh.
  StatusOr<std::vector<PodResourcesContainer>> List();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens::containers

#endif  // LENS_CONTAINERS_POD_RESOURCES_H_
