// `lens containers [--containerd-socket PATH] [--namespace NS] [--json]`: the
// containers containerd runs on this machine, with their pod identity and the
// GPUs and RDMA devices each one holds.
#include "lens/containers.h"

#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "lens/probe.h"

namespace lens::cli {

Command AddContainers(CLI::App& app) {
  struct Options {
    ContainerTrackerOptions tracker;
    bool json = false;
    bool no_nvml = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "containers",
      "List this machine's containers with their pods and devices");
  cmd->add_option("--containerd-socket", o->tracker.containerd_socket,
                  "containerd's socket")
      ->capture_default_str();
  cmd->add_option("--namespace", o->tracker.containerd_namespace,
                  "containerd namespace")
      ->capture_default_str();
  cmd->add_option("--pod-resources-socket", o->tracker.pod_resources_socket,
                  "kubelet pod-resources socket (empty: not used)")
      ->capture_default_str();
  cmd->add_option("--sysfs-root", o->tracker.roots.sysfs, "host /sys")
      ->capture_default_str();
  cmd->add_option("--procfs-root", o->tracker.roots.procfs, "host /proc")
      ->capture_default_str();
  cmd->add_option("--dev-root", o->tracker.roots.dev, "host /dev")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, R"(print {"containers":[...]})");
  cmd->add_flag("--no-nvml", o->no_nvml, "do not load NVML");
  return [o]() {
    // The devices containers can hold: the same probes as `lens probe`.
    DeviceInventory inventory;
    GpuProbeOptions gpu;
    gpu.nvml = !o->no_nvml;
    StatusOr<ProbeReport> report = ProbeHost(o->tracker.roots, gpu);
    if (report.ok()) {
      for (const Gpu& g : report->gpus) inventory.gpus.push_back(g.info);
      for (const RdmaProbe& r : report->rdma) {
        inventory.rdma.push_back(r.device);
      }
    }
    auto list = ContainerTracker::ListOnce(o->tracker, inventory);
    if (!list.ok()) {
      std::fprintf(stderr, "lens containers: %s\n",
                   list.status().message().c_str());
      return 1;
    }
    const std::string out =
        o->json ? ContainersJson(*list) + "\n" : ContainersText(*list);
    std::fputs(out.c_str(), stdout);
    return 0;
  };
}

}  // namespace lens::cli
