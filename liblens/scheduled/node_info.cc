// Node info and device info from the node agents. A node's row takes the
// agent's facts (CPU model, driver version, GPU utilisation, whether it
// answers) and the GPUs its pods hold; a node the API server does not
// describe (no cluster) also takes its host facts from the agent. Devices
// are synced into gpu_devices and rdma_devices (the change log records
// CREATE, DELETE and REPLACE) only when the agent's inventory changed. A
// node whose agent stops answering is marked stale; nothing of it is
// erased.
#include <algorithm>

#include "scheduled/jobs_impl.h"

namespace lens::scheduled {
namespace {

std::string HostOf(const std::string& url) {
  size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  size_t end =
      url[start] == '[' ? url.find(']', start) + 1 : url.find(':', start);
  return url.substr(start,
                    end == std::string::npos ? std::string::npos : end - start);
}

std::optional<double> MeanUtilization(const AgentReport& r) {
  double sum = 0;
  int n = 0;
  for (const AgentGpu& g : r.gpus) {
    if (g.utilization_ratio) {
      sum += *g.utilization_ratio;
      ++n;
    }
  }
  return n > 0 ? std::optional<double>(sum / n) : std::nullopt;
}

bool SameAgentColumns(const NodeRecord& a, const NodeRecord& b) {
  auto close = [](const std::optional<double>& x,
                  const std::optional<double>& y) {
    return x.has_value() == y.has_value() && (!x || std::abs(*x - *y) < 1e-9);
  };
  return a.cpu_model == b.cpu_model && a.driver_version == b.driver_version &&
         a.gpu_allocated == b.gpu_allocated &&
         close(a.gpu_utilization_ratio, b.gpu_utilization_ratio) &&
         a.agent_state == b.agent_state && a.agent_seen_at == b.agent_seen_at;
}

// What the devices of a report are, to tell whether they changed.
std::string Fingerprint(const AgentReport& r) {
  std::string out;
  for (const AgentGpu& g : r.gpus) {
    const GpuDeviceRecord& d = g.device;
    out += std::to_string(d.gpu_index) + '|' + d.vendor + '|' + d.model + '|' +
           d.serial + '|' + d.uuid + '|' + d.bdf + '|' +
           std::to_string(d.vram_bytes) + '|' + std::to_string(d.numa_node) +
           '\n';
  }
  out += "--\n";
  for (const RdmaDeviceRecord& d : r.rdma) {
    out += d.name + '|' + d.node_guid + '|' + d.fw_version + '|' + d.board_id +
           '|' + d.bdf + '|' + d.netdev + '|' + std::to_string(d.numa_node) +
           '\n';
  }
  return out;
}

}  // namespace

Status JobsImpl::RunNodeInfo(SteadyTime deadline) {
  Status discovery;
  const std::vector<AgentView> views = RefreshAgents(deadline, &discovery);
  LENS_ASSIGN_OR_RETURN(std::vector<NodeRecord> stored, ReadNodes(*store_));
  std::map<std::string, const NodeRecord*> by_name;
  for (const NodeRecord& n : stored) by_name[n.name] = &n;
  std::map<std::string, int32_t> allocated;
  {
    std::lock_guard lock(mu_);
    if (allocation_) {
      for (const auto& [name, a] : allocation_->nodes) {
        allocated[name] = a.allocated;
      }
    }
  }
  const Timestamp now = NowUs();
  std::vector<NodeRecord> agent_rows, host_rows;
  std::set<std::string> with_agent;
  for (const AgentView& v : views) {
    with_agent.insert(v.node);
    auto it = by_name.find(v.node);
    const NodeRecord* old = it == by_name.end() ? nullptr : it->second;
    NodeRecord n = old ? *old : NodeRecord{};
    n.name = v.node;
    n.agent_state = v.ok ? "ok" : "stale";
    n.agent_seen_at = v.seen_at;
    n.gpu_allocated = allocated[v.node];
    if (v.report) {
      const AgentReport& r = *v.report;
      n.cpu_model = r.cpu_model;
      n.driver_version = r.driver_version;
      n.gpu_utilization_ratio = MeanUtilization(r);
    }
    n.updated_at = now;
    const bool host = !old || old->kubelet_version.empty();
    if (host) {
      n.address = HostOf(v.url);
      n.status = v.ok ? "Ready" : "NotReady";
      if (v.report) {
        const AgentReport& r = *v.report;
        n.gpu_count = static_cast<int32_t>(r.gpus.size());
        n.gpu_vendor = r.gpus.empty() ? "" : r.gpus[0].device.vendor;
        n.gpu_model = r.gpus.empty() ? "" : r.gpus[0].device.model;
        n.cpu_count = r.cpu_count;
        n.memory_bytes = r.memory_bytes;
        n.kernel_version = r.kernel_release;
        n.os_image = r.os_name;
      }
      host_rows.push_back(std::move(n));
    } else if (!SameAgentColumns(n, *old)) {
      agent_rows.push_back(std::move(n));
    }
  }
  // Nodes without an agent now: their allocation still changes, and an
  // agent that vanished (its pod gone) leaves its node stale.
  for (const NodeRecord& old : stored) {
    if (with_agent.count(old.name)) continue;
    NodeRecord n = old;
    n.gpu_allocated = allocated[old.name];
    if (n.agent_state == "ok") n.agent_state = "stale";
    if (SameAgentColumns(n, old)) continue;
    n.updated_at = now;
    agent_rows.push_back(std::move(n));
  }
  LENS_RETURN_IF_ERROR(
      store_->nodes().UpsertNodes(host_rows, NodeColumns::kAgentAndHost));
  LENS_RETURN_IF_ERROR(
      store_->nodes().UpsertNodes(agent_rows, NodeColumns::kAgent));
  return discovery;
}

Status JobsImpl::RunDeviceInfo(SteadyTime deadline) {
  Status discovery;
  const std::vector<AgentView> views = RefreshAgents(deadline, &discovery);
  LENS_ASSIGN_OR_RETURN(std::vector<NodeRecord> stored, ReadNodes(*store_));
  std::set<std::string> known;
  for (const NodeRecord& n : stored) known.insert(n.name);
  const Timestamp now = NowUs();
  std::vector<NodeRecord> missing;
  for (const AgentView& v : views) {
    if (!v.ok || !v.report || known.count(v.node)) continue;
    NodeRecord n;  // the node info job fills it in
    n.name = v.node;
    n.address = HostOf(v.url);
    n.status = "Ready";
    n.agent_state = "ok";
    n.agent_seen_at = v.seen_at;
    n.updated_at = now;
    missing.push_back(std::move(n));
  }
  LENS_RETURN_IF_ERROR(
      store_->nodes().UpsertNodes(missing, NodeColumns::kAgentAndHost));
  // The nodes whose inventory changed since it was last synced, written in
  // batches of up to 200 nodes per transaction.
  std::vector<NodeInventory> changed;
  std::vector<std::string> prints;
  for (const AgentView& v : views) {
    if (!v.ok || !v.report) continue;  // stale: keep what is stored
    std::string print = Fingerprint(*v.report);
    {
      std::lock_guard lock(mu_);
      auto it = synced_devices_.find(v.node);
      if (it != synced_devices_.end() && it->second == print) continue;
    }
    NodeInventory inventory;
    inventory.node = v.node;
    for (const AgentGpu& g : v.report->gpus) inventory.gpus.push_back(g.device);
    inventory.rdma = v.report->rdma;
    changed.push_back(std::move(inventory));
    prints.push_back(std::move(print));
  }
  constexpr size_t kBatch = 200;
  for (size_t start = 0; start < changed.size(); start += kBatch) {
    const size_t n = std::min(kBatch, changed.size() - start);
    LENS_RETURN_IF_ERROR(
        store_->nodes()
            .SyncNodeDevices(std::span(changed).subspan(start, n), now)
            .status());
    std::lock_guard lock(mu_);
    for (size_t i = start; i < start + n; ++i) {
      synced_devices_[changed[i].node] = prints[i];
    }
  }
  return discovery;
}

}  // namespace lens::scheduled
