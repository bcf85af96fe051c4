#include "cluster_view.h"

#include <cstdio>
#include <set>
#include <utility>

#include "lens/insights_stragglers.h"

namespace extender {
namespace {

// The devices' states at the end of the window, keyed "node/gpu" and
// "node/device/port".
lens::StatusOr<std::map<std::string, lens::DeviceHealth>> ReadHealth(
    lens::TimeSeriesSource& series, lens::Timestamp from, lens::Timestamp to,
    std::chrono::milliseconds step) {
  auto history = lens::ReadDeviceHealthHistory(series, from, to, step);
  if (!history.ok()) return history.status();
  std::map<std::string, lens::DeviceHealth> out;
  for (const lens::DeviceHealthSeen& d : history->devices) {
    std::string key = d.node + "/" + d.device;
    if (d.kind == lens::HealthDeviceKind::kRdmaPort) {
      key += "/" + std::to_string(d.port);
    }
    out[key] = d.state;
  }
  return out;
}

// Node -> why it is a straggler suspect, over the workloads running now.
lens::StatusOr<std::map<std::string, std::string>> ReadStragglers(
    lens::Store& store, lens::TimeSeriesSource& series, lens::Timestamp from,
    lens::Timestamp to, std::chrono::milliseconds step) {
  auto open = store.pods().ListOpenWorkloadPods();
  if (!open.ok()) return open.status();
  std::set<std::string> workloads;
  for (const auto& [uid, pod] : *open) workloads.insert(uid);
  std::map<std::string, std::string> out;
  for (const std::string& uid : workloads) {
    auto found =
        lens::FindWorkloadStragglers(store, series, uid, from, to, step);
    if (!found.ok()) {
      if (found.status().code() == lens::StatusCode::kNotFound) continue;
      return found.status();
    }
    for (const lens::StragglerSuspect& s : found->report.suspects) {
      if (s.findings.empty() || out.contains(s.node)) continue;
      const lens::StragglerFinding& f = s.findings.front();
      char why[160];
      std::snprintf(why, sizeof why,
                    "straggler in workload %s: %s %.2f against the job's %.2f",
                    uid.c_str(),
                    std::string(lens::StragglerMeasureName(f.measure)).c_str(),
                    f.value, f.job_median);
      out[s.node] = why;
    }
  }
  return out;
}

}  // namespace

lens::StatusOr<std::map<std::string, NodeView>> ReadClusterView(
    lens::Store& store, lens::TimeSeriesSource& series, lens::Timestamp now,
    const ViewOptions& options) {
  const lens::Timestamp from = now - options.window;
  auto health = ReadHealth(series, from, now, options.step);
  if (!health.ok()) return health.status();
  auto stragglers = ReadStragglers(store, series, from, now, options.step);
  if (!stragglers.ok()) return stragglers.status();
  auto containers =
      store.containers().ListLiveContainers(/*with_devices=*/true);
  if (!containers.ok()) return containers.status();
  std::set<std::pair<std::string, std::string>> held;  // (node, device key)
  for (const lens::ContainerRecord& c : *containers) {
    for (const lens::ContainerDeviceRecord& d : c.devices) {
      if (d.kind == lens::DeviceKind::kGpu) held.emplace(c.node, d.device_key);
    }
  }
  auto gpus = store.nodes().ListAllGpuDevices();
  if (!gpus.ok()) return gpus.status();

  std::map<std::string, NodeView> view;
  auto state = [&](const std::string& key) {
    auto it = health->find(key);
    return it == health->end() ? lens::DeviceHealth::kHealthy : it->second;
  };
  for (const lens::GpuDeviceRecord& g : *gpus) {
    NodeView& node = view[g.node];
    node.name = g.node;
    GpuView v{.index = g.gpu_index,
              .key = g.serial.empty() ? g.bdf : g.serial,
              .numa_node = g.numa_node};
    v.health = state(g.node + "/" + std::to_string(g.gpu_index));
    v.held = held.contains({g.node, v.key});
    node.gpus.push_back(std::move(v));
  }
  for (auto& [name, node] : view) {
    auto nics = store.nodes().ListRdmaDevices(name);
    if (!nics.ok()) return nics.status();
    for (const lens::RdmaDeviceRecord& nic : *nics) {
      // Each port with a health series; a device without one counts as one
      // healthy port (the agent exports a series per port it has seen).
      bool any = false;
      for (const auto& [key, h] : *health) {
        const std::string prefix = name + "/" + nic.name + "/";
        if (key.rfind(prefix, 0) != 0) continue;
        any = true;
        node.ports.push_back({.device = nic.name,
                              .port = std::stoi(key.substr(prefix.size())),
                              .numa_node = nic.numa_node,
                              .health = h});
      }
      if (!any) {
        node.ports.push_back({.device = nic.name, .numa_node = nic.numa_node});
      }
    }
    if (auto it = stragglers->find(name); it != stragglers->end()) {
      node.straggler = it->second;
    }
  }
  return view;
}

}  // namespace extender
