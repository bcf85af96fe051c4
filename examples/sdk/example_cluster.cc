// Writes a small cluster into a store, the rows lens-controller, lens-jobs
// and the node agents write in a deployment: one node with the GPUs a probe
// of <host-root> finds, a PyTorchJob whose pod holds them all, and the GPU
// health series the agents export (one GPU degraded for ten minutes). The
// other tour programs then read it back like they would read a live store.
//   example_cluster <store-url> <host-root>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "lens/host.h"
#include "lens/probe.h"
#include "lens/store.h"

namespace {

lens::Timestamp At(int hour, int minute) {  // 2025-09-22, the example log
  using namespace std::chrono;
  return sys_days{2025y / September / 22} + hours(hour) + minutes(minute);
}

int Fail(const lens::Status& status) {
  std::fprintf(stderr, "%s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: example_cluster STORE_URL HOST_ROOT\n");
    return 2;
  }
  auto store = lens::Store::Open(argv[1]);
  if (!store.ok()) return Fail(store.status());
  auto probe = lens::ProbeHost(lens::HostRoots::Under(argv[2]));
  if (!probe.ok()) return Fail(probe.status());

  const std::string node = "gpu-node-1";
  lens::NodeInventory inventory{.node = node};
  lens::ContainerRecord trainer{.container_id = "3f2a9c1e",
                                .node = node,
                                .pod_uid = "pod-0",
                                .pod_name = "pretrain-8b-worker-0",
                                .pod_namespace = "research",
                                .container_name = "pytorch",
                                .state = lens::ContainerState::kRunning,
                                .created_at = At(13, 1),
                                .updated_at = At(13, 1)};
  std::vector<lens::MetricSample> health;
  for (const lens::Gpu& gpu : probe->gpus) {
    const std::string key =
        gpu.info.serial.empty() ? gpu.info.bdf : gpu.info.serial;
    inventory.gpus.push_back(
        {.node = node,
         .gpu_index = gpu.info.index,
         .vendor = std::string(GpuVendorName(gpu.info.vendor)),
         .model = gpu.info.model,
         .serial = gpu.info.serial,
         .bdf = gpu.info.bdf,
         .numa_node = gpu.info.numa_node.value_or(-1)});
    trainer.devices.push_back({.kind = lens::DeviceKind::kGpu,
                               .device_key = key,
                               .bdf = gpu.info.bdf,
                               .source = "pod-resources"});
    // lens_gpu_health: 0 healthy, 1 degraded, 2 unhealthy; GPU 3 degraded
    // from 13:40 to 13:50.
    for (int minute = 0; minute <= 80; minute += 5) {
      const bool degraded = gpu.info.index == 3 && minute >= 40 && minute < 50;
      health.push_back(
          {.metric = "lens_gpu_health",
           .labels = {{"node", node},
                      {"gpu", std::to_string(gpu.info.index)},
                      {"id", key}},
           .timestamp_ms =
               std::chrono::duration_cast<std::chrono::milliseconds>(
                   At(13, minute).time_since_epoch())
                   .count(),
           .value = degraded ? 1.0 : 0.0});
    }
  }

  const int32_t gpus = static_cast<int32_t>(probe->gpus.size());
  lens::Status s = (*store)->nodes().UpsertNode({.name = node,
                                                 .status = "Ready",
                                                 .gpu_count = gpus,
                                                 .gpu_allocatable = gpus,
                                                 .gpu_allocated = gpus,
                                                 .agent_state = "ok",
                                                 .updated_at = At(13, 0)});
  if (s.ok())
    s = (*store)->nodes().SyncNodeDevices({&inventory, 1}, At(13, 0)).status();
  lens::WorkloadRecord job{.uid = "pretrain-8b",
                           .api_version = "kubeflow.org/v1",
                           .kind = "PyTorchJob",
                           .name = "pretrain-8b",
                           .namespace_name = "research",
                           .status = "Succeeded",
                           .gpu_request = gpus,
                           .created_at = At(13, 0),
                           .ended_at = At(14, 20),
                           .updated_at = At(14, 20)};
  lens::PodRecord pod{.uid = "pod-0",
                      .name = trainer.pod_name,
                      .namespace_name = "research",
                      .node = node,
                      .phase = "Succeeded",
                      .owner_uid = job.uid,
                      .gpu_allocated = gpus,
                      .started_at = At(13, 1),
                      .ended_at = At(14, 20),
                      .created_at = At(13, 0),
                      .updated_at = At(14, 20)};
  const std::pair<std::string, std::string> link{job.uid, pod.uid};
  if (s.ok()) s = (*store)->pods().UpsertWorkloads({&job, 1});
  if (s.ok()) s = (*store)->pods().UpsertPods({&pod, 1});
  if (s.ok()) s = (*store)->pods().LinkPods({&link, 1});
  if (s.ok()) s = (*store)->containers().UpsertContainers({&trainer, 1});
  if (s.ok()) s = (*store)->samples().AppendSamples(health);
  if (!s.ok()) return Fail(s);
  std::printf("stored node %s with %d GPUs, workload %s, pod %s\n",
              node.c_str(), gpus, job.uid.c_str(), pod.name.c_str());
  return 0;
}
