// Who holds a device: the containers (and their pods) that have a GPU or an
// RDMA device now, as the node agents' container tracking stored it.
//   device_holders <store-url> <node> <gpu-index>
#include <cstdio>
#include <cstdlib>

#include "lens/store.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: device_holders STORE_URL NODE GPU_INDEX\n");
    return 2;
  }
  auto store = lens::Store::Open(argv[1]);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  // Devices are keyed by what survives a reboot: the GPU's serial (its PCI
  // address when it has none), so look the slot up in the inventory first.
  auto gpu = (*store)->nodes().GetGpuDevice(argv[2], std::atoi(argv[3]));
  if (!gpu.ok()) {
    std::fprintf(stderr, "%s\n", gpu.status().ToString().c_str());
    return 1;
  }
  const std::string key = gpu->serial.empty() ? gpu->bdf : gpu->serial;
  auto holders =
      (*store)->containers().FindDeviceHolders(lens::DeviceKind::kGpu, key);
  if (!holders.ok()) {
    std::fprintf(stderr, "%s\n", holders.status().ToString().c_str());
    return 1;
  }
  std::printf("%s gpu %s (%s, %s): %zu holder(s)\n", argv[2], argv[3],
              gpu->model.c_str(), key.c_str(), holders->size());
  for (const lens::ContainerRecord& c : *holders) {
    std::printf("  container %s (%s) of pod %s/%s\n", c.container_id.c_str(),
                c.container_name.c_str(), c.pod_namespace.c_str(),
                c.pod_name.c_str());
  }
  return 0;
}
