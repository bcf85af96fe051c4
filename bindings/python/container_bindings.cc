// lens.containers(store, ...): every stored container with its devices, its
// pod and the pod's top-level workload, read through the Store like the
// lens.Store queries. Containers carry no environment, mounts or spec (the
// store never has them), so no secret can come back.
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "errors.h"
#include "store_bindings.h"

namespace py = pybind11;
using namespace pybind11::literals;  // NOLINT: "key"_a

namespace lens::python {
namespace {

constexpr int32_t kPageSize = 1000;  // the store's largest page

struct ContainerView {
  ContainerRecord container;
  std::optional<PodRecord> pod;
  std::optional<WorkloadRecord> workload;
};

// `found`, nullopt for NotFound, or the error.
template <typename T>
StatusOr<std::optional<T>> Optional(StatusOr<T> found) {
  if (found.ok()) return std::optional<T>(std::move(*found));
  if (found.status().code() == StatusCode::kNotFound) {
    return std::optional<T>();
  }
  return found.status();
}

// Every container of `query` (all pages, by id), joined with pods and
// workloads; each pod and workload is read once.
StatusOr<std::vector<ContainerView>> ReadContainers(Store& store,
                                                    ContainerQuery query) {
  query.sort = {"container_id", false};
  query.page = {1, kPageSize};
  std::vector<ContainerView> out;
  std::map<std::string, std::optional<PodRecord>> pods;
  std::map<std::string, std::optional<WorkloadRecord>> workloads;
  for (;;) {
    LENS_ASSIGN_OR_RETURN(Page<ContainerRecord> page,
                          store.containers().ListContainers(query));
    for (ContainerRecord& c : page.items) {
      ContainerView v{std::move(c), std::nullopt, std::nullopt};
      const std::string& pod_uid = v.container.pod_uid;
      if (!pod_uid.empty() && !pods.count(pod_uid)) {
        LENS_ASSIGN_OR_RETURN(pods[pod_uid],
                              Optional(store.pods().GetPod(pod_uid)));
      }
      if (!pod_uid.empty()) v.pod = pods[pod_uid];
      const std::string owner = v.pod ? v.pod->owner_uid : "";
      if (!owner.empty() && !workloads.count(owner)) {
        LENS_ASSIGN_OR_RETURN(workloads[owner],
                              Optional(store.pods().GetWorkload(owner)));
      }
      if (!owner.empty()) v.workload = workloads[owner];
      out.push_back(std::move(v));
    }
    if (page.items.size() < static_cast<size_t>(kPageSize) ||
        static_cast<int64_t>(out.size()) >= page.total) {
      return out;
    }
    ++query.page.page_num;
  }
}

}  // namespace

void BindContainers(py::module_& m) {
  m.def(
      "containers",
      [](Store& store, std::optional<std::string> node,
         std::optional<std::string> pod_uid, std::optional<std::string> state) {
        ContainerQuery q;
        q.node = node.value_or("");
        q.pod_uid = pod_uid.value_or("");
        if (state) {
          q.state = ParseContainerState(*state);
          if (*q.state == ContainerState::kUnknown && *state != "unknown") {
            throw py::value_error(
                "unknown container state '" + *state +
                "': one of created, running, paused, exited, deleted");
          }
        }
        std::optional<StatusOr<std::vector<ContainerView>>> result;
        {
          py::gil_scoped_release release;
          result.emplace(ReadContainers(store, q));
        }
        ThrowIfError(result->status());
        py::list out;
        for (const ContainerView& v : **result) {
          py::dict d = ToDict(v.container);
          d["pod"] = v.pod ? py::object(ToDict(*v.pod)) : py::none();
          d["workload"] =
              v.workload ? py::object(ToDict(*v.workload)) : py::none();
          out.append(std::move(d));
        }
        return out;
      },
      py::arg("store"), py::kw_only(), py::arg("node") = py::none(),
      py::arg("pod_uid") = py::none(), py::arg("state") = py::none(),
      "Every stored container (all pages, by container id) as a dict like "
      "Store.container(): identity, state, times in Unix seconds, labels and "
      "'devices' (the GPUs and RDMA devices it holds, each with its source), "
      "plus 'pod' (its pod as Store.pod() returns it, or None when the pod "
      "is not stored) and 'workload' (the pod's top-level workload as "
      "Store.workload() returns it, or None). Filters: node, pod_uid, state "
      "(created, running, paused, exited, deleted). Never environment "
      "variables, mounts or the runtime spec. The GIL is released while "
      "reading.");
}

}  // namespace lens::python
