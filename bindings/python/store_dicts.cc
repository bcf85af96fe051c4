// Store rows as plain Python dicts (store_bindings.h).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "lens/store.h"
#include "store_bindings.h"

namespace py = pybind11;
using namespace pybind11::literals;  // NOLINT: "key"_a

namespace lens::python {
namespace {

py::object Seconds(Timestamp t) {
  return py::float_(static_cast<double>(t.time_since_epoch().count()) / 1e6);
}
py::object Seconds(const std::optional<Timestamp>& t) {
  return t ? Seconds(*t) : py::none();
}
py::object Json(const std::string& text) {
  return py::module_::import("json").attr("loads")(text);
}
py::dict Dict(const Labels& labels) {
  py::dict out;
  for (const auto& [k, v] : labels) out[py::str(k)] = py::str(v);
  return out;
}
py::str Str(std::string_view text) { return py::str(text.data(), text.size()); }

}  // namespace

py::dict ToDict(const NodeRecord& n) {
  return py::dict(
      "name"_a = n.name, "address"_a = n.address, "status"_a = n.status,
      "gpu_vendor"_a = n.gpu_vendor, "gpu_model"_a = n.gpu_model,
      "gpu_count"_a = n.gpu_count, "cpu_model"_a = n.cpu_model,
      "cpu_count"_a = n.cpu_count, "memory_bytes"_a = n.memory_bytes,
      "kernel_version"_a = n.kernel_version, "os_image"_a = n.os_image,
      "driver_version"_a = n.driver_version,
      "gpu_allocatable"_a = n.gpu_allocatable,
      "kubelet_version"_a = n.kubelet_version,
      "container_runtime"_a = n.container_runtime,
      "gpu_allocated"_a = n.gpu_allocated,
      "gpu_utilization_ratio"_a =
          n.gpu_utilization_ratio
              ? py::object(py::float_(*n.gpu_utilization_ratio))
              : py::object(py::none()),
      "agent_state"_a = n.agent_state,
      "agent_seen_at"_a = Seconds(n.agent_seen_at), "labels"_a = Dict(n.labels),
      "created_at"_a = Seconds(n.created_at),
      "updated_at"_a = Seconds(n.updated_at));
}
py::dict ToDict(const GpuDeviceRecord& g) {
  return py::dict("node"_a = g.node, "gpu_index"_a = g.gpu_index,
                  "vendor"_a = g.vendor, "model"_a = g.model,
                  "serial"_a = g.serial, "uuid"_a = g.uuid, "bdf"_a = g.bdf,
                  "vram_bytes"_a = g.vram_bytes, "numa_node"_a = g.numa_node,
                  "updated_at"_a = Seconds(g.updated_at));
}
py::dict ToDict(const RdmaDeviceRecord& d) {
  return py::dict("node"_a = d.node, "name"_a = d.name,
                  "node_guid"_a = d.node_guid, "fw_version"_a = d.fw_version,
                  "board_id"_a = d.board_id, "bdf"_a = d.bdf,
                  "netdev"_a = d.netdev, "numa_node"_a = d.numa_node,
                  "updated_at"_a = Seconds(d.updated_at));
}
py::dict ToDict(const DeviceChangeRecord& c) {
  static const char* kChanges[] = {"CREATE", "DELETE", "REPLACE"};
  return py::dict("node"_a = c.node, "kind"_a = Str(ToString(c.kind)),
                  "device_key"_a = c.device_key,
                  "change"_a = kChanges[static_cast<int>(c.change)],
                  "old_serial"_a = c.old_serial, "new_serial"_a = c.new_serial,
                  "at"_a = Seconds(c.at));
}
py::dict ToDict(const PodRecord& p) {
  return py::dict(
      "uid"_a = p.uid, "name"_a = p.name, "namespace"_a = p.namespace_name,
      "node"_a = p.node, "phase"_a = p.phase, "owner_uid"_a = p.owner_uid,
      "ip"_a = p.ip, "gpu_allocated"_a = p.gpu_allocated,
      "running"_a = p.running, "deleted"_a = p.deleted,
      "started_at"_a = Seconds(p.started_at),
      "ended_at"_a = Seconds(p.ended_at), "restarts"_a = p.restarts,
      "labels"_a = Dict(p.labels), "created_at"_a = Seconds(p.created_at),
      "updated_at"_a = Seconds(p.updated_at));
}
py::dict ToDict(const PodEventRecord& e) {
  return py::dict("pod_uid"_a = e.pod_uid, "event_type"_a = e.event_type,
                  "phase"_a = e.phase, "restart_count"_a = e.restart_count,
                  "at"_a = Seconds(e.at));
}
py::dict ToDict(const PodSnapshotRecord& s) {
  return py::dict("pod_uid"_a = s.pod_uid,
                  "resource_version"_a = s.resource_version,
                  "snapshot"_a = s.snapshot_json, "at"_a = Seconds(s.at));
}
py::dict ToDict(const PodResourcesRecord& r) {
  return py::dict(
      "pod_uid"_a = r.pod_uid, "gpu_vendor"_a = r.gpu_vendor,
      "gpu_model"_a = r.gpu_model, "gpu_allocated"_a = r.gpu_allocated,
      "rdma_allocated"_a = r.rdma_allocated, "cpu_millis"_a = r.cpu_millis,
      "memory_bytes"_a = r.memory_bytes,
      "updated_at"_a = Seconds(r.updated_at));
}
py::dict ToDict(const WorkloadRecord& w) {
  return py::dict(
      "uid"_a = w.uid, "api_version"_a = w.api_version, "kind"_a = w.kind,
      "name"_a = w.name, "namespace"_a = w.namespace_name,
      "parent_uid"_a = w.parent_uid, "status"_a = w.status,
      "gpu_request"_a = w.gpu_request, "active_pods"_a = w.active_pods,
      "labels"_a = Dict(w.labels), "created_at"_a = Seconds(w.created_at),
      "ended_at"_a = Seconds(w.ended_at),
      "updated_at"_a = Seconds(w.updated_at));
}
py::dict ToDict(const ContainerRecord& c) {
  py::list devices;
  for (const auto& d : c.devices) {
    devices.append(py::dict("kind"_a = Str(ToString(d.kind)),
                            "device_key"_a = d.device_key, "bdf"_a = d.bdf,
                            "source"_a = d.source));
  }
  return py::dict(
      "container_id"_a = c.container_id, "node"_a = c.node,
      "runtime_namespace"_a = c.runtime_namespace, "pod_uid"_a = c.pod_uid,
      "pod_name"_a = c.pod_name, "pod_namespace"_a = c.pod_namespace,
      "container_name"_a = c.container_name, "image"_a = c.image,
      "state"_a = Str(ToString(c.state)), "privileged"_a = c.privileged,
      "pid"_a = c.pid, "exit_code"_a = c.exit_code, "labels"_a = Dict(c.labels),
      "created_at"_a = Seconds(c.created_at),
      "started_at"_a = Seconds(c.started_at),
      "finished_at"_a = Seconds(c.finished_at),
      "updated_at"_a = Seconds(c.updated_at), "devices"_a = devices);
}
py::dict ToDict(const ContainerEventRecord& e) {
  return py::dict("container_id"_a = e.container_id, "node"_a = e.node,
                  "event_type"_a = Str(ToString(e.event_type)),
                  "sequence"_a = e.sequence, "detail"_a = Json(e.detail_json),
                  "at"_a = Seconds(e.at));
}
py::dict ToDict(const TrainingRunRecord& r) {
  return py::dict(
      "workload_uid"_a = r.workload_uid, "run"_a = r.run, "source"_a = r.source,
      "first_iteration"_a = r.first_iteration,
      "last_iteration"_a = r.last_iteration, "iterations"_a = r.iterations,
      "created_at"_a = Seconds(r.created_at));
}
py::dict ToDict(const StorageRecord& s) {
  return py::dict("name"_a = s.name, "kind"_a = s.kind, "status"_a = s.status,
                  "config"_a = Json(s.config_json),
                  "updated_at"_a = Seconds(s.updated_at));
}
py::dict ToDict(const SchemaStatus& s) {
  py::list migrations;
  for (const auto& m : s.migrations) {
    migrations.append(py::dict("version"_a = m.version, "name"_a = m.name,
                               "applied"_a = m.applied,
                               "applied_at"_a = Seconds(m.applied_at)));
  }
  return py::dict("backend"_a = s.backend, "target"_a = s.target,
                  "current_version"_a = s.current_version,
                  "latest_version"_a = s.latest_version,
                  "migrations"_a = migrations);
}

}  // namespace lens::python
