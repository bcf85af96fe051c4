// lens.Store: the read queries of include/lens/store.h returning dicts, and
// store_training_log() to parse and store a log in one call.
#include "store_bindings.h"

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "errors.h"
#include "lens/training.h"
#include "training_types.h"

namespace py = pybind11;
using namespace pybind11::literals;  // NOLINT: "key"_a

namespace lens::python {
namespace {

using Opt = std::optional<std::string>;
using OptTime = std::optional<double>;

// Runs `fn` without the GIL and raises on error.
template <typename T>
T Call(const std::function<StatusOr<T>()>& fn) {
  std::optional<StatusOr<T>> result;
  {
    py::gil_scoped_release release;
    result.emplace(fn());
  }
  ThrowIfError(result->status());
  return std::move(**result);
}

std::optional<Timestamp> FromSeconds(OptTime s) {
  if (!s) return std::nullopt;
  return Timestamp(std::chrono::microseconds(std::llround(*s * 1e6)));
}
TimeRange Range(OptTime since, OptTime until) {
  return {FromSeconds(since), FromSeconds(until)};
}

template <typename T>
py::list List(const std::vector<T>& items) {
  py::list out;
  for (const T& item : items) out.append(ToDict(item));
  return out;
}
py::list List(const std::vector<IterationRecord>& items) {
  py::list out;
  for (const auto& item : items) out.append(ToDict(item));
  return out;
}
py::list List(const std::vector<TrainingEvent>& items) {
  py::list out;
  for (const auto& item : items) out.append(ToDict(item));
  return out;
}
template <typename T>
py::dict PageDict(const Page<T>& page) {
  return py::dict("items"_a = List(page.items), "total"_a = page.total,
                  "page_num"_a = page.page_num, "page_size"_a = page.page_size);
}

constexpr const char* kPageDoc =
    " Returns {'items': [...], 'total': N, 'page_num': n, 'page_size': s}; "
    "page_size is 1..1000; an unknown sort key raises InvalidArgumentError "
    "naming the allowed ones.";

void BindNodeQueries(py::class_<Store, std::unique_ptr<Store>>& cls) {
  cls.def(
         "nodes",
         [](Store& s, Opt gpu_vendor, Opt status, Opt name_prefix, Opt sort,
            bool descending, int32_t page_num, int32_t page_size) {
           NodeQuery q{gpu_vendor.value_or(""),
                       status.value_or(""),
                       name_prefix.value_or(""),
                       {sort.value_or(""), descending},
                       {page_num, page_size}};
           return PageDict(
               Call<Page<NodeRecord>>([&] { return s.nodes().ListNodes(q); }));
         },
         py::kw_only(), py::arg("gpu_vendor") = py::none(),
         py::arg("status") = py::none(), py::arg("name_prefix") = py::none(),
         py::arg("sort") = py::none(), py::arg("descending") = false,
         py::arg("page_num") = 1, py::arg("page_size") = 100,
         (std::string("Nodes; sort keys: name, updated_at, gpu_count.") +
          kPageDoc)
             .c_str())
      .def(
          "node",
          [](Store& s, const std::string& name) {
            return ToDict(
                Call<NodeRecord>([&] { return s.nodes().GetNode(name); }));
          },
          py::arg("name"), "One node; NotFoundError if absent.")
      .def(
          "gpu_devices",
          [](Store& s, const std::string& node) {
            return List(Call<std::vector<GpuDeviceRecord>>(
                [&] { return s.nodes().ListGpuDevices(node); }));
          },
          py::arg("node"), "The node's GPUs by index.")
      .def(
          "rdma_devices",
          [](Store& s, const std::string& node) {
            return List(Call<std::vector<RdmaDeviceRecord>>(
                [&] { return s.nodes().ListRdmaDevices(node); }));
          },
          py::arg("node"), "The node's RDMA devices by name.")
      .def(
          "device_changes",
          [](Store& s, const std::string& node, OptTime since, OptTime until,
             int32_t page_num, int32_t page_size) {
            return PageDict(Call<Page<DeviceChangeRecord>>([&] {
              return s.nodes().ListDeviceChanges(node, Range(since, until),
                                                 {page_num, page_size});
            }));
          },
          py::arg("node") = "", py::kw_only(), py::arg("since") = py::none(),
          py::arg("until") = py::none(), py::arg("page_num") = 1,
          py::arg("page_size") = 100,
          "Device change log (CREATE/DELETE/REPLACE), newest first; since and "
          "until are Unix seconds.");
}

void BindPodQueries(py::class_<Store, std::unique_ptr<Store>>& cls) {
  cls.def(
         "pods",
         [](Store& s, Opt ns, Opt node, Opt owner_uid,
            std::optional<bool> running, std::optional<bool> deleted,
            OptTime since, OptTime until, Opt sort, bool descending,
            int32_t page_num, int32_t page_size) {
           PodQuery q{ns.value_or(""),
                      node.value_or(""),
                      owner_uid.value_or(""),
                      running,
                      deleted,
                      Range(since, until),
                      {sort.value_or(""), descending},
                      {page_num, page_size}};
           return PageDict(
               Call<Page<PodRecord>>([&] { return s.pods().ListPods(q); }));
         },
         py::kw_only(), py::arg("namespace") = py::none(),
         py::arg("node") = py::none(), py::arg("owner_uid") = py::none(),
         py::arg("running") = py::none(), py::arg("deleted") = py::none(),
         py::arg("created_since") = py::none(),
         py::arg("created_until") = py::none(), py::arg("sort") = py::none(),
         py::arg("descending") = false, py::arg("page_num") = 1,
         py::arg("page_size") = 100,
         (std::string("GPU pods; sort keys: created_at (default, newest "
                      "first), name, namespace, node.") +
          kPageDoc)
             .c_str())
      .def(
          "pod",
          [](Store& s, const std::string& uid) {
            return ToDict(
                Call<PodRecord>([&] { return s.pods().GetPod(uid); }));
          },
          py::arg("uid"))
      .def(
          "pod_events",
          [](Store& s, const std::string& uid) {
            return List(Call<std::vector<PodEventRecord>>(
                [&] { return s.pods().ListPodEvents(uid); }));
          },
          py::arg("uid"))
      .def(
          "pod_snapshots",
          [](Store& s, const std::string& uid) {
            return List(Call<std::vector<PodSnapshotRecord>>(
                [&] { return s.pods().ListPodSnapshots(uid); }));
          },
          py::arg("uid"),
          "The pod's watched fields (JSON text), one entry per change.")
      .def(
          "pod_resources",
          [](Store& s, const std::string& uid) {
            return ToDict(Call<PodResourcesRecord>(
                [&] { return s.pods().GetPodResources(uid); }));
          },
          py::arg("uid"),
          "What the pod requests: GPUs, RDMA, CPU millicores, memory bytes.")
      .def(
          "workloads",
          [](Store& s, Opt ns, Opt kind, Opt status, Opt parent_uid,
             OptTime since, OptTime until, Opt sort, bool descending,
             int32_t page_num, int32_t page_size) {
            WorkloadQuery q{.namespace_name = ns.value_or(""),
                            .kind = kind.value_or(""),
                            .status = status.value_or(""),
                            .parent_uid = parent_uid,
                            .created = Range(since, until),
                            .sort = {sort.value_or(""), descending},
                            .page = {page_num, page_size}};
            return PageDict(Call<Page<WorkloadRecord>>(
                [&] { return s.pods().ListWorkloads(q); }));
          },
          py::kw_only(), py::arg("namespace") = py::none(),
          py::arg("kind") = py::none(), py::arg("status") = py::none(),
          py::arg("parent_uid") = py::none(),
          py::arg("created_since") = py::none(),
          py::arg("created_until") = py::none(), py::arg("sort") = py::none(),
          py::arg("descending") = false, py::arg("page_num") = 1,
          py::arg("page_size") = 100,
          (std::string("Workloads; parent_uid='' selects top-level ones; sort "
                       "keys: created_at, name, kind, gpu_request.") +
           kPageDoc)
              .c_str())
      .def(
          "workload",
          [](Store& s, const std::string& uid) {
            return ToDict(Call<WorkloadRecord>(
                [&] { return s.pods().GetWorkload(uid); }));
          },
          py::arg("uid"))
      .def(
          "workload_pods",
          [](Store& s, const std::string& uid) {
            return List(Call<std::vector<PodRecord>>(
                [&] { return s.pods().ListWorkloadPods(uid); }));
          },
          py::arg("uid"));
}

void BindContainerQueries(py::class_<Store, std::unique_ptr<Store>>& cls) {
  cls.def(
         "containers",
         [](Store& s, Opt node, Opt pod_uid, Opt state, Opt sort,
            bool descending, int32_t page_num, int32_t page_size) {
           std::optional<ContainerState> wanted;
           if (state) {
             wanted = ParseContainerState(*state);
             if (*wanted == ContainerState::kUnknown && *state != "unknown") {
               throw py::value_error(
                   "unknown container state '" + *state +
                   "': one of created, running, paused, exited, deleted");
             }
           }
           ContainerQuery q{node.value_or(""),
                            pod_uid.value_or(""),
                            wanted,
                            {sort.value_or(""), descending},
                            {page_num, page_size}};
           return PageDict(Call<Page<ContainerRecord>>(
               [&] { return s.containers().ListContainers(q); }));
         },
         py::kw_only(), py::arg("node") = py::none(),
         py::arg("pod_uid") = py::none(), py::arg("state") = py::none(),
         py::arg("sort") = py::none(), py::arg("descending") = false,
         py::arg("page_num") = 1, py::arg("page_size") = 100,
         (std::string("Containers with their devices; sort keys: created_at, "
                      "container_id, pod_name.") +
          kPageDoc)
             .c_str())
      .def(
          "container",
          [](Store& s, const std::string& id) {
            return ToDict(Call<ContainerRecord>(
                [&] { return s.containers().GetContainer(id); }));
          },
          py::arg("container_id"))
      .def(
          "container_events",
          [](Store& s, const std::string& id, OptTime since, OptTime until,
             int32_t page_num, int32_t page_size) {
            return PageDict(Call<Page<ContainerEventRecord>>([&] {
              return s.containers().ListContainerEvents(id, Range(since, until),
                                                        {page_num, page_size});
            }));
          },
          py::arg("container_id") = "", py::kw_only(),
          py::arg("since") = py::none(), py::arg("until") = py::none(),
          py::arg("page_num") = 1, py::arg("page_size") = 100)
      .def(
          "device_holders",
          [](Store& s, const std::string& kind, const std::string& key) {
            const DeviceKind k = ParseDeviceKind(kind);
            if (ToString(k) != kind) {
              throw py::value_error("unknown device kind '" + kind +
                                    "': one of gpu, rdma, device");
            }
            return List(Call<std::vector<ContainerRecord>>(
                [&] { return s.containers().FindDeviceHolders(k, key); }));
          },
          py::arg("kind"), py::arg("device_key"),
          "Live containers holding a device ('gpu' + serial, 'rdma' + name).")
      .def("storage", [](Store& s) {
        return List(Call<std::vector<StorageRecord>>(
            [&] { return s.storage().ListStorage(); }));
      });
}

void BindTrainingQueries(py::class_<Store, std::unique_ptr<Store>>& cls) {
  cls.def(
         "training_runs",
         [](Store& s, const std::string& uid) {
           return List(Call<std::vector<TrainingRunRecord>>(
               [&] { return s.training().ListRuns(uid); }));
         },
         py::arg("workload_uid"))
      .def(
          "iterations",
          [](Store& s, const std::string& uid, std::optional<int32_t> run,
             std::optional<int64_t> min_iteration,
             std::optional<int64_t> max_iteration, OptTime since, OptTime until,
             Opt sort, bool descending, int32_t page_num, int32_t page_size) {
            IterationQuery q{uid,
                             run,
                             min_iteration,
                             max_iteration,
                             Range(since, until),
                             {sort.value_or(""), descending},
                             {page_num, page_size}};
            return PageDict(Call<Page<IterationRecord>>(
                [&] { return s.training().ListIterations(q); }));
          },
          py::arg("workload_uid"), py::kw_only(), py::arg("run") = py::none(),
          py::arg("min_iteration") = py::none(),
          py::arg("max_iteration") = py::none(), py::arg("since") = py::none(),
          py::arg("until") = py::none(), py::arg("sort") = py::none(),
          py::arg("descending") = false, py::arg("page_num") = 1,
          py::arg("page_size") = 100,
          (std::string("Iteration records as IterationRecord.to_dict() with "
                       "their stored run; sort keys: iteration, timestamp.") +
           kPageDoc)
              .c_str())
      .def(
          "latest_iteration",
          [](Store& s, const std::string& uid) {
            return ToDict(Call<IterationRecord>(
                [&] { return s.training().LatestIteration(uid); }));
          },
          py::arg("workload_uid"))
      .def(
          "training_events",
          [](Store& s, const std::string& uid) {
            return List(Call<std::vector<TrainingEvent>>(
                [&] { return s.training().ListEvents(uid); }));
          },
          py::arg("workload_uid"))
      .def(
          "training_validations",
          [](Store& s, const std::string& uid) {
            return List(Call<std::vector<ValidationRecord>>(
                [&] { return s.training().ListValidations(uid); }));
          },
          py::arg("workload_uid"),
          "Stored validation results of the workload as dicts, by run and "
          "line.")
      .def(
          "store_training_log",
          [](Store& s, const std::string& uid, const std::filesystem::path& p,
             Opt source) {
            std::string src = source.value_or(
                std::filesystem::absolute(p).lexically_normal().string());
            struct Counts {
              size_t records, events, validations, memory_reports;
            };
            const Counts n = Call<Counts>([&]() -> StatusOr<Counts> {
              LENS_ASSIGN_OR_RETURN(TrainingLog log,
                                    ParseTrainingLogFile(p.string()));
              LENS_ASSIGN_OR_RETURN(TrainingWriter w,
                                    s.training().OpenWriter(uid, src));
              LENS_RETURN_IF_ERROR(
                  w.Write(TrainingBatch{log.records, log.events,
                                        log.validations, log.memory_reports}));
              return Counts{log.records.size(), log.events.size(),
                            log.validations.size(), log.memory_reports.size()};
            });
            return py::dict("records"_a = n.records, "events"_a = n.events,
                            "validations"_a = n.validations,
                            "memory_reports"_a = n.memory_reports,
                            "source"_a = src);
          },
          py::arg("workload_uid"), py::arg("path"), py::kw_only(),
          py::arg("source") = py::none(),
          "Parses a log file and stores its runs, iterations, events, "
          "validations and memory reports for the workload (idempotent: "
          "storing it again changes nothing). Returns {'records': n, "
          "'events': m, 'validations': v, 'memory_reports': r, 'source': "
          "...}.");
}

}  // namespace

void BindStore(py::module_& m) {
  py::class_<Store, std::unique_ptr<Store>> cls(
      m, "Store",
      "A Lens store (SQLite or PostgreSQL). Thread-safe; queries release the "
      "GIL. Errors raise NotFoundError, InvalidArgumentError or LensError "
      "(code 'UNAVAILABLE' when the database stays unreachable).");
  cls.def_static(
         "open",
         [](const std::string& url, size_t max_connections, bool migrate) {
           StoreOptions o;
           o.max_connections = max_connections;
           o.migrate = migrate;
           return Call<std::unique_ptr<Store>>(
               [&] { return Store::Open(url, o); });
         },
         py::arg("url"), py::kw_only(), py::arg("max_connections") = 4,
         py::arg("migrate") = true,
         "Opens sqlite:///path/lens.db or postgresql://user:pw@host:port/db "
         "and applies pending migrations unless migrate=False.")
      .def_property_readonly(
          "backend", [](const Store& s) { return std::string(s.backend()); })
      .def_property_readonly("target", &Store::target,
                             "Backend and host or path; never a password.")
      .def("schema_status",
           [](Store& s) {
             return ToDict(
                 Call<SchemaStatus>([&] { return s.GetSchemaStatus(); }));
           })
      .def("migrate", [](Store& s) {
        return ToDict(Call<SchemaStatus>([&] { return s.Migrate(); }));
      });
  BindNodeQueries(cls);
  BindPodQueries(cls);
  BindContainerQueries(cls);
  BindTrainingQueries(cls);
}

}  // namespace lens::python
