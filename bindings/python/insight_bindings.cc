// lens.goodput, lens.idle_gpus, lens.stragglers, lens.device_health,
// lens.node_placement and lens.gpu_peaks: the insights of
// lens/insights*.h as plain dicts (times in Unix seconds), read through a
// Store (and its sample history) like lens.containers().
#include <pybind11/stl.h>

#include <chrono>
#include <optional>
#include <string>

#include "errors.h"
#include "lens/insights.h"
#include "lens/insights_health.h"
#include "lens/insights_placement.h"
#include "lens/insights_stragglers.h"
#include "lens/timeseries.h"
#include "store_bindings.h"

namespace py = pybind11;
using namespace pybind11::literals;  // NOLINT: "key"_a

namespace lens::python {
namespace {

double UnixSeconds(Timestamp t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

Timestamp FromUnixSeconds(double s) {
  return Timestamp(std::chrono::microseconds(static_cast<int64_t>(s * 1e6)));
}

py::object Opt(const std::optional<double>& v) {
  return v ? py::object(py::float_(*v)) : py::none();
}

py::dict BreakdownDict(const GoodputBreakdown& b) {
  return py::dict(
      "wall_s"_a = b.wall_s, "scheduling_s"_a = b.scheduling_s,
      "startup_s"_a = b.startup_s, "productive_s"_a = b.productive_s,
      "checkpoint_s"_a = b.checkpoint_s, "restart_s"_a = b.restart_s,
      "idle_s"_a = b.idle_s, "goodput"_a = b.goodput,
      "iterations_redone"_a = b.iterations_redone);
}

py::dict PeakDict(const GpuPeak& p) {
  return py::dict("model"_a = std::string(p.model),
                  "dense_bf16_tflops"_a = p.dense_bf16_tflops,
                  "source"_a = std::string(p.source));
}

}  // namespace

void BindInsights(py::module_& m) {
  m.def(
      "goodput",
      [](Store& store, const std::string& uid, std::optional<double> now) {
        const Timestamp at =
            now ? FromUnixSeconds(*now)
                : std::chrono::time_point_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now());
        std::optional<StatusOr<GoodputReport>> result;
        std::string model;
        {
          py::gil_scoped_release release;
          StatusOr<GoodputInput> in = ReadGoodputInput(store, uid, at);
          if (!in.ok()) {
            result.emplace(in.status());
          } else {
            model = in->gpu_model;
            result.emplace(ComputeGoodput(*in));
          }
        }
        ThrowIfError(result->status());
        const GoodputReport& r = **result;
        py::list runs;
        for (const RunGoodput& run : r.runs) {
          runs.append(py::dict(
              "run"_a = run.run, "first_iteration"_a = run.first_iteration,
              "last_iteration"_a = run.last_iteration,
              "first_iteration_at"_a = UnixSeconds(run.first_iteration_at),
              "last_iteration_at"_a = UnixSeconds(run.last_iteration_at),
              "tflops_per_gpu"_a = Opt(run.tflops_per_gpu),
              "mfu"_a = Opt(run.mfu),
              "breakdown"_a = BreakdownDict(run.breakdown)));
        }
        return py::dict(
            "total"_a = BreakdownDict(r.total), "runs"_a = runs,
            "tflops_per_gpu"_a = Opt(r.tflops_per_gpu), "mfu"_a = Opt(r.mfu),
            "gpu_model"_a = model,
            "peak"_a = r.peak ? py::object(PeakDict(*r.peak)) : py::none(),
            "restarts"_a = r.restarts, "iterations_used"_a = r.iterations_used,
            "iterations_without_time"_a = r.iterations_without_time);
      },
      py::arg("store"), py::arg("workload_uid"), py::kw_only(),
      py::arg("now") = py::none(),
      "A workload's wall time (creation to end, or `now`, Unix seconds; "
      "default: the current time) split into scheduling, start-up, "
      "productive, checkpoint, restart and idle seconds (the parts add up "
      "to wall_s), goodput (productive share), per run, with the "
      "time-weighted TFLOP/s per GPU and MFU against the GPU model's peak "
      "(docs/insights.md). Raises NotFoundError for an unknown workload.");
  m.def(
      "idle_gpus",
      [](Store& store, double from_s, double to_s, double threshold,
         double window_s) {
        IdleGpuOptions o;
        o.threshold = threshold;
        o.window = std::chrono::seconds(static_cast<int64_t>(window_s));
        o.now = FromUnixSeconds(to_s);
        std::optional<StatusOr<std::vector<IdleGpuEpisode>>> result;
        {
          py::gil_scoped_release release;
          std::unique_ptr<TimeSeriesSource> source =
              NewSampleHistorySource(&store);
          result.emplace([&]() -> StatusOr<std::vector<IdleGpuEpisode>> {
            LENS_RETURN_IF_ERROR(o.Validate());
            const Timestamp from = FromUnixSeconds(from_s);
            LENS_ASSIGN_OR_RETURN(std::vector<GpuHolding> holdings,
                                  ReadGpuHoldings(store, from, o.now));
            LENS_ASSIGN_OR_RETURN(std::vector<GpuUtilizationSeries> series,
                                  ReadGpuUtilization(*source, from, o.now,
                                                     std::chrono::seconds(30)));
            return FindIdleAllocatedGpus(holdings, series, o);
          }());
        }
        ThrowIfError(result->status());
        py::list episodes;
        for (const IdleGpuEpisode& e : **result) {
          episodes.append(py::dict(
              "node"_a = e.node, "gpu"_a = e.gpu, "serial"_a = e.serial,
              "container_id"_a = e.container_id, "pod_uid"_a = e.pod_uid,
              "pod_name"_a = e.pod_name, "namespace"_a = e.namespace_name,
              "workload_uid"_a = e.workload_uid,
              "workload_name"_a = e.workload_name,
              "since"_a = UnixSeconds(e.since),
              "until"_a = UnixSeconds(e.until), "ongoing"_a = e.ongoing,
              "mean_utilization"_a = e.mean_utilization,
              "gpu_hours"_a = e.gpu_hours));
        }
        py::list workloads;
        for (const IdleGpuWorkload& w : IdleGpusByWorkload(**result)) {
          workloads.append(py::dict("workload_uid"_a = w.workload_uid,
                                    "workload_name"_a = w.workload_name,
                                    "namespace"_a = w.namespace_name,
                                    "idle_gpus_now"_a = w.idle_gpus_now,
                                    "gpu_hours"_a = w.gpu_hours,
                                    "episodes"_a = w.episodes));
        }
        return py::dict("episodes"_a = episodes, "workloads"_a = workloads);
      },
      py::arg("store"), py::kw_only(), py::arg("from_s"), py::arg("to_s"),
      py::arg("threshold") = 0.05, py::arg("window_s") = 1800.0,
      "GPUs held by a container whose utilisation stayed under `threshold` "
      "for `window_s` or longer within [from_s, to_s] (Unix seconds), from "
      "the store's containers and its sample history: 'episodes' (holder, "
      "since, until, ongoing, GPU-hours) and 'workloads' (GPUs idle now, "
      "GPU-hours). Raises InvalidArgumentError for bad options.");
  m.def(
      "stragglers",
      [](Store& store, const std::string& uid, double from_s, double to_s) {
        std::optional<StatusOr<WorkloadStragglers>> result;
        {
          py::gil_scoped_release release;
          std::unique_ptr<TimeSeriesSource> source =
              NewSampleHistorySource(&store);
          result.emplace(FindWorkloadStragglers(
              store, *source, uid, FromUnixSeconds(from_s),
              FromUnixSeconds(to_s), std::chrono::seconds(30)));
        }
        ThrowIfError(result->status());
        const StragglerReport& r = (*result)->report;
        py::list suspects;
        for (const StragglerSuspect& sus : r.suspects) {
          py::list evidence;
          for (const StragglerEvidence& e : sus.evidence) {
            evidence.append(py::dict(
                "kind"_a = std::string(StragglerEvidenceKindName(e.kind)),
                "gpu"_a = e.gpu, "device"_a = e.device, "name"_a = e.name,
                "amount"_a = e.amount, "peer_median"_a = Opt(e.peer_median)));
          }
          py::list findings;
          for (const StragglerFinding& f : sus.findings) {
            findings.append(py::dict(
                "measure"_a = std::string(StragglerMeasureName(f.measure)),
                "value"_a = f.value, "job_median"_a = f.job_median,
                "score"_a = f.score, "deviation_ratio"_a = f.deviation_ratio));
          }
          suspects.append(py::dict(
              "scope"_a = sus.scope == StragglerScope::kNode ? "node" : "gpu",
              "node"_a = sus.node, "gpu"_a = sus.gpu,
              "rank"_a =
                  sus.rank ? py::object(py::int_(*sus.rank)) : py::none(),
              "score"_a = sus.score, "findings"_a = findings,
              "evidence"_a = evidence));
        }
        py::object util = py::none();
        if (r.utilization) {
          util = py::dict("median"_a = r.utilization->median,
                          "mad"_a = r.utilization->mad,
                          "entities"_a = r.utilization->entities);
        }
        return py::dict("gpus"_a = (*result)->gpus, "utilization"_a = util,
                        "suspects"_a = suspects);
      },
      py::arg("store"), py::arg("workload_uid"), py::kw_only(),
      py::arg("from_s"), py::arg("to_s"),
      "A workload's GPUs (its pods' containers' holdings) whose utilisation "
      "over [from_s, to_s] is out of line with the job's (modified z-score "
      "over the median and MAD), ranked, each with the throttling, ECC, RDMA "
      "and TCP evidence of the store's sample history (docs/insights.md). "
      "Raises NotFoundError for an unknown workload.");
  m.def(
      "device_health",
      [](Store& store, double from_s, double to_s) {
        std::optional<StatusOr<DeviceHealthHistory>> result;
        {
          py::gil_scoped_release release;
          std::unique_ptr<TimeSeriesSource> source =
              NewSampleHistorySource(&store);
          result.emplace(ReadDeviceHealthHistory(
              *source, FromUnixSeconds(from_s), FromUnixSeconds(to_s),
              std::chrono::seconds(60)));
        }
        ThrowIfError(result->status());
        py::list devices;
        for (const DeviceHealthSeen& d : (*result)->devices) {
          devices.append(py::dict(
              "kind"_a = std::string(HealthDeviceKindName(d.kind)),
              "node"_a = d.node, "device"_a = d.device, "port"_a = d.port,
              "id"_a = d.id, "state"_a = std::string(DeviceHealthName(d.state)),
              "since"_a = UnixSeconds(d.since),
              "last_seen"_a = UnixSeconds(d.last_seen),
              "changes"_a = d.changes));
        }
        py::list changes;
        for (const DeviceHealthChange& c : (*result)->changes) {
          changes.append(py::dict(
              "kind"_a = std::string(HealthDeviceKindName(c.kind)),
              "node"_a = c.node, "device"_a = c.device, "port"_a = c.port,
              "id"_a = c.id, "at"_a = UnixSeconds(c.at),
              "from"_a = std::string(DeviceHealthName(c.from)),
              "to"_a = std::string(DeviceHealthName(c.to))));
        }
        return py::dict("devices"_a = devices, "changes"_a = changes);
      },
      py::arg("store"), py::kw_only(), py::arg("from_s"), py::arg("to_s"),
      "Every GPU and RDMA port in the store's sample history's "
      "lens_gpu_health and lens_rdma_port_health series over [from_s, "
      "to_s]: its state at the end, since when, and every state change.");
  m.def(
      "node_placement",
      [](Store& store, const std::string& node, const std::string& sysfs_root,
         const std::string& procfs_root) {
        HostRoots roots;
        roots.sysfs = sysfs_root;
        roots.procfs = procfs_root;
        std::optional<StatusOr<std::string>> result;
        {
          py::gil_scoped_release release;
          result.emplace([&]() -> StatusOr<std::string> {
            LENS_ASSIGN_OR_RETURN(std::vector<ContainerRecord> all,
                                  store.containers().ListLiveContainers(true));
            std::vector<ContainerRecord> mine;
            for (ContainerRecord& c : all) {
              if (c.node == node) mine.push_back(std::move(c));
            }
            LENS_ASSIGN_OR_RETURN(std::vector<PodPlacement> audit,
                                  AuditNodePlacement(roots, mine));
            return PlacementJson(audit);
          }());
        }
        ThrowIfError(result->status());
        // The item of a named object: an accessor on the temporary would
        // outlive it.
        py::object doc = py::module_::import("json").attr("loads")(**result);
        return py::object(doc["pods"]);
      },
      py::arg("store"), py::arg("node"), py::kw_only(),
      py::arg("sysfs_root") = "/sys", py::arg("procfs_root") = "/proc",
      "The placement audit of `node`'s running pods with GPUs, from the "
      "store's containers and this host's sysfs and procfs (run it on that "
      "node): per pod its GPUs and NICs with NUMA node and root complex, "
      "cpusets and flags, as the node agent's GET /placement.");
  m.def(
      "gpu_peaks",
      [] {
        py::list out;
        for (const GpuPeak& p : GpuPeaks()) out.append(PeakDict(p));
        return out;
      },
      "The peak dense BF16/FP16 TFLOP/s per GPU model MFU is computed "
      "against, each with the data sheet it comes from.");
  m.def(
      "gpu_peak",
      [](const std::string& model) -> py::object {
        const GpuPeak* p = FindGpuPeak(model);
        return p ? py::object(PeakDict(*p)) : py::none();
      },
      py::arg("model"),
      "The peak for a model name as drivers print it ('AMD Instinct "
      "MI300X', 'NVIDIA H100 80GB HBM3'), or None when not in the table.");
}

}  // namespace lens::python
