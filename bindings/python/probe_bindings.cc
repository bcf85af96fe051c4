// lens.probe_gpus / probe_rdma / probe_node / probe: the same dicts as
// `lens probe --json` (built from lens::ProbeReportJson, so keys and units
// match the CLI exactly).
#include "probe_bindings.h"

#include <pybind11/pybind11.h>

#include <string>

#include "errors.h"
#include "lens/probe.h"

namespace py = pybind11;
using namespace pybind11::literals;  // NOLINT: "key"_a

namespace lens::python {
namespace {

HostRoots Roots(const std::string& sysfs, const std::string& procfs,
                const std::string& dev) {
  return HostRoots{sysfs, procfs, dev};
}

py::object Loads(const std::string& json) {
  return py::module_::import("json").attr("loads")(json);
}

// Runs `probe` without the GIL, then returns report JSON as Python objects.
template <typename F>
py::object Probe(F probe) {
  ProbeReport report;
  Status status;
  {
    py::gil_scoped_release release;
    status = probe(&report);
  }
  ThrowIfError(status);
  return Loads(ProbeReportJson(report));
}

}  // namespace

void BindProbes(py::module_& m) {
  m.def(
      "probe_gpus",
      [](const std::string& sysfs, const std::string& procfs,
         const std::string& dev, bool nvml) {
        return Probe([&](ProbeReport* r) {
                 StatusOr<std::vector<Gpu>> gpus = ProbeGpus(
                     Roots(sysfs, procfs, dev), GpuProbeOptions{true, nvml});
                 if (!gpus.ok()) return gpus.status();
                 r->gpus = std::move(*gpus);
                 return OkStatus();
               })
            .attr("__getitem__")("gpus");
      },
      "sysfs_root"_a = "/sys", "procfs_root"_a = "/proc", "dev_root"_a = "/dev",
      "nvml"_a = true,
      "The machine's GPUs (AMD through sysfs, NVIDIA through NVML when it "
      "loads) as a list of "
      "dicts: vendor, index, bdf, model, serial and every reported value in "
      "base units "
      "(utilization_ratio 0..1, vram_used_bytes, power_watts, "
      "temperature_*_celsius, ...). "
      "Values a device does not report are absent, never 0.");
  m.def(
      "probe_rdma",
      [](const std::string& sysfs, const std::string& procfs,
         const std::string& dev) {
        return Probe([&](ProbeReport* r) {
                 StatusOr<std::vector<RdmaProbe>> rdma =
                     ProbeRdma(Roots(sysfs, procfs, dev));
                 if (!rdma.ok()) return rdma.status();
                 r->rdma = std::move(*rdma);
                 return OkStatus();
               })
            .attr("__getitem__")("rdma");
      },
      "sysfs_root"_a = "/sys", "procfs_root"_a = "/proc", "dev_root"_a = "/dev",
      "RDMA devices from class/infiniband as a list of dicts (name, "
      "fw_version, board_id, "
      "node_guid, ports with state, link_layer, rate_gbps, tx_bytes, rx_bytes, "
      "counters).");
  m.def(
      "probe_node",
      [](const std::string& sysfs, const std::string& procfs,
         const std::string& dev) {
        return Probe([&](ProbeReport* r) {
                 StatusOr<NodeFacts> facts =
                     ReadNodeFacts(Roots(sysfs, procfs, dev));
                 if (!facts.ok()) return facts.status();
                 r->node = std::move(*facts);
                 return OkStatus();
               })
            .attr("__getitem__")("node");
      },
      "sysfs_root"_a = "/sys", "procfs_root"_a = "/proc", "dev_root"_a = "/dev",
      "Node facts as a dict: hostname, kernel_release, os_name, cpu_model, "
      "cpu_count, "
      "memory_total_bytes, GPU driver versions, ...");
  m.def(
      "probe",
      [](const std::string& sysfs, const std::string& procfs,
         const std::string& dev, bool nvml) {
        return Probe([&](ProbeReport* r) {
          StatusOr<ProbeReport> report =
              ProbeHost(Roots(sysfs, procfs, dev), GpuProbeOptions{true, nvml});
          if (!report.ok()) return report.status();
          *r = std::move(*report);
          return OkStatus();
        });
      },
      "sysfs_root"_a = "/sys", "procfs_root"_a = "/proc", "dev_root"_a = "/dev",
      "nvml"_a = true,
      "Everything `lens probe --json` prints: {'gpus': [...], 'rdma': [...], "
      "'node': {...}, "
      "'warnings': [...]}.");
}

}  // namespace lens::python
