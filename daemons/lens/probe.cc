// `lens probe [--sysfs-root DIR] [--procfs-root DIR] [--dev-root DIR]
// [--json]`: this machine's GPUs, RDMA devices and node facts.
#include "lens/probe.h"

#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"

namespace lens::cli {

Command AddProbe(CLI::App& app) {
  struct Options {
    HostRoots roots;
    bool json = false;
    bool no_nvml = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "probe", "Print this machine's GPUs, RDMA devices and node facts");
  // A root that does not exist is a usage error, not a host without GPUs.
  cmd->add_option("--sysfs-root", o->roots.sysfs, "host /sys")
      ->capture_default_str()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--procfs-root", o->roots.procfs, "host /proc")
      ->capture_default_str()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--dev-root", o->roots.dev, "host /dev")
      ->capture_default_str();
  cmd->add_flag("--json", o->json,
                R"(print {"gpus":[...],"rdma":[...],"node":{...}})");
  cmd->add_flag("--no-nvml", o->no_nvml, "do not load NVML");
  return [o]() {
    GpuProbeOptions gpu;
    gpu.nvml = !o->no_nvml;
    StatusOr<ProbeReport> report = ProbeHost(o->roots, gpu);
    if (!report.ok()) {
      std::fprintf(stderr, "lens probe: %s\n",
                   report.status().message().c_str());
      return 1;
    }
    const std::string out =
        o->json ? ProbeReportJson(*report) + "\n" : ProbeReportText(*report);
    std::fputs(out.c_str(), stdout);
    return 0;
  };
}

}  // namespace lens::cli
