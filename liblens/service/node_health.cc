// NodeDeviceHealth: the tracker fed from the agent, its metrics and JSON.
#include "service/node_health.h"

#include <map>

#include "core/json.h"
#include "core/metric_writer.h"
#include "lens/log.h"

namespace lens::service {
namespace {

double HealthUnix(Timestamp t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

void HealthKey(JsonWriter& w, const char* key, std::string_view v) {
  w.Key(key);
  w.String(v);
}

void HealthDevice(JsonWriter& w, const HealthDeviceRef& d) {
  HealthKey(w, "kind", HealthDeviceKindName(d.kind));
  HealthKey(w, "id", d.id);
  HealthKey(w, "device", d.device);
  w.Key("port");
  w.Int(d.port);
}

void HealthCause(JsonWriter& w, const HealthEvidence& e) {
  w.StartObject();
  HealthKey(w, "signal", HealthSignalName(e.signal));
  HealthKey(w, "severity", DeviceHealthName(e.severity));
  HealthKey(w, "counter", e.counter);
  w.Key("amount");
  w.Uint64(e.amount);
  HealthKey(w, "detail", e.detail);
  w.Key("at");
  w.Double(HealthUnix(e.at));
  w.EndObject();
}

}  // namespace

StatusOr<std::unique_ptr<NodeDeviceHealth>> NodeDeviceHealth::Create(
    const DeviceHealthOptions& options) {
  LENS_ASSIGN_OR_RETURN(std::unique_ptr<DeviceHealthTracker> tracker,
                        DeviceHealthTracker::Create(options));
  return std::unique_ptr<NodeDeviceHealth>(
      new NodeDeviceHealth(std::move(tracker)));
}

void NodeDeviceHealth::Observe(const NodeSnapshot& s) {
  const HealthSample sample = HealthSampleFromAgent(
      s.node_name,
      std::chrono::time_point_cast<std::chrono::microseconds>(s.time), s.gpus,
      s.gpu_samples, s.rdma_devices, s.rdma_ports);
  std::lock_guard lock(mu_);
  Status st = tracker_->Observe(sample);
  if (!st.ok()) {
    LENS_LOG(WARN).Field("error", st) << "device health: cycle not observed";
    return;
  }
  for (const HealthTransition& t : tracker_->TransitionsAfter(logged_)) {
    logged_ = t.sequence;
    ++transitions_[t.device.kind == HealthDeviceKind::kGpu ? 0 : 1]
                  [static_cast<int>(t.to)];
    const LogLevel level =
        t.to == DeviceHealth::kUnhealthy ? LogLevel::kWarn : LogLevel::kInfo;
    if (!LogEnabled(level)) continue;
    LogMessage(level)
            .Field("kind", HealthDeviceKindName(t.device.kind))
            .Field("id", t.device.id)
            .Field("device", t.device.device)
            .Field("from", DeviceHealthName(t.from))
            .Field("to", DeviceHealthName(t.to))
            .Field("cause", t.cause.detail)
        << "device health changed";
  }
}

void NodeDeviceHealth::RenderMetrics(std::string* out) const {
  std::lock_guard lock(mu_);
  const std::vector<DeviceHealthStatus> states = tracker_->States();
  MetricWriter w(out);
  w.Family("lens_gpu_health",
           "A GPU's health: 0 healthy, 1 degraded, 2 unhealthy (ECC and RAS "
           "errors, throttling; clears after a quiet period).",
           "gauge");
  for (const DeviceHealthStatus& d : states) {
    if (d.device.kind != HealthDeviceKind::kGpu || !d.present) continue;
    w.Sample({{"gpu", d.device.device}, {"id", d.device.id}},
             static_cast<double>(d.state));
  }
  w.Family("lens_rdma_port_health",
           "An RDMA port's health: 0 healthy, 1 degraded, 2 unhealthy (link "
           "state, error counters; clears after a quiet period).",
           "gauge");
  for (const DeviceHealthStatus& d : states) {
    if (d.device.kind != HealthDeviceKind::kRdmaPort || !d.present) continue;
    const std::string port = std::to_string(d.device.port);
    w.Sample({{"device", d.device.device}, {"id", d.device.id}, {"port", port}},
             static_cast<double>(d.state));
  }
  w.Family("lens_device_health_transitions_total",
           "Device health changes, by device kind and the state entered.",
           "counter");
  for (int k = 0; k < 2; ++k) {
    for (int s = 0; s < 3; ++s) {
      w.Sample({{"kind", k == 0 ? "gpu" : "rdma_port"},
                {"to", DeviceHealthName(static_cast<DeviceHealth>(s))}},
               static_cast<double>(transitions_[k][s]));
    }
  }
}

std::string NodeDeviceHealth::Json(std::optional<uint64_t> after) const {
  std::lock_guard lock(mu_);
  JsonWriter w;
  w.StartObject();
  w.Key("devices");
  w.StartArray();
  for (const DeviceHealthStatus& d : tracker_->States()) {
    w.StartObject();
    HealthDevice(w, d.device);
    HealthKey(w, "state", DeviceHealthName(d.state));
    w.Key("since");
    w.Double(HealthUnix(d.since));
    w.Key("clearsAt");
    d.clears_at ? w.Double(HealthUnix(*d.clears_at)) : w.Null();
    w.Key("cause");
    d.cause ? HealthCause(w, *d.cause) : (void)w.Null();
    w.Key("present");
    w.Bool(d.present);
    w.Key("transitions");
    w.Uint(d.transitions);
    w.Key("counterResets");
    w.Uint(d.counter_resets);
    w.EndObject();
  }
  w.EndArray();
  w.Key("transitions");
  w.StartArray();
  for (const HealthTransition& t :
       tracker_->TransitionsAfter(after.value_or(0))) {
    w.StartObject();
    w.Key("sequence");
    w.Uint64(t.sequence);
    w.Key("time");
    w.Double(HealthUnix(t.time));
    HealthDevice(w, t.device);
    HealthKey(w, "from", DeviceHealthName(t.from));
    HealthKey(w, "to", DeviceHealthName(t.to));
    w.Key("cleared");
    w.Bool(t.cleared);
    w.Key("cause");
    HealthCause(w, t.cause);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

void RenderPlacementMetrics(const HostRoots& roots,
                            std::span<const ContainerRecord> containers,
                            std::string* out) {
  MetricWriter w(out);
  w.Family("lens_pod_placement_issues",
           "Placement flags of a running pod with GPUs: a GPU and its NIC on "
           "different NUMA nodes or root complexes, CPUs off the GPUs' NUMA "
           "nodes (GET /placement says which).",
           "gauge");
  StatusOr<std::vector<PodPlacement>> audit =
      AuditNodePlacement(roots, containers);
  if (!audit.ok()) return;
  for (const PodPlacement& p : *audit) {
    std::map<std::string_view, int> by_issue;
    for (const PlacementFlag& f : p.flags) ++by_issue[ToString(f.issue)];
    for (const auto& [issue, n] : by_issue) {
      w.Sample({{"issue", issue},
                {"namespace", p.pod_namespace},
                {"pod", p.pod_name}},
               n);
    }
  }
  w.Family("lens_pod_placement_device_info",
           "Where each GPU and RDMA device of a running pod with GPUs sits: "
           "NUMA node (\"unknown\" for -1), PCIe root complex, and for a GPU "
           "the NIC it uses and how close (1).",
           "gauge");
  for (const PodPlacement& p : *audit) {
    for (const std::vector<PlacedDevice>* list : {&p.gpus, &p.nics}) {
      for (const PlacedDevice& d : *list) {
        const std::string numa =
            d.numa_node ? std::to_string(*d.numa_node) : "unknown";
        const bool gpu = d.kind == DeviceKind::kGpu;
        w.Sample({{"bdf", d.bdf},
                  {"device", d.device_key},
                  {"kind", ToString(d.kind)},
                  {"namespace", p.pod_namespace},
                  {"nic", gpu ? std::string_view(d.nic_key) : ""},
                  {"nic_distance", gpu && !d.nic_key.empty()
                                       ? ToString(d.nic_distance)
                                       : std::string_view()},
                  {"numa_node", numa},
                  {"pod", p.pod_name},
                  {"root_complex", d.topology_known
                                       ? std::string_view(d.root_complex)
                                       : std::string_view("unknown")}},
                 1);
      }
    }
  }
}

}  // namespace lens::service
