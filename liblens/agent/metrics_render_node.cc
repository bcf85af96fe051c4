// The lens_rdma_*, lens_node_* and lens_agent_* families of the node agent's
// /metrics (documented in docs/node-agent.md).
#include "agent/metrics_render_node.h"

#include <chrono>
#include <optional>
#include <string_view>

#include "core/metric_writer.h"

namespace lens::agent {
namespace {

bool IsDataCounter(std::string_view name) {
  return name == "port_xmit_data" || name == "port_rcv_data" ||
         name == "port_xmit_packets" || name == "port_rcv_packets";
}

}  // namespace

void RenderRdmaMetrics(const NodeSnapshot& s, MetricWriter& w) {
  w.Family("lens_rdma_device_info",
           "RDMA device inventory; the value is always 1.", "gauge");
  for (const RdmaDevice& d : s.rdma_devices) {
    w.Sample({{"device", d.name},
              {"node_guid", d.node_guid},
              {"fw_version", d.fw_version},
              {"board_id", d.board_id},
              {"hca_type", d.hca_type},
              {"bdf", d.bdf},
              {"netdev", d.netdevs.empty() ? std::string_view()
                                           : std::string_view(d.netdevs[0])}},
             1);
  }
  w.Family("lens_rdma_port_netdev_info",
           "Network interface of an RDMA port (RoCE GID table, or the "
           "netdev's dev_port); the value is always 1.",
           "gauge");
  for (const RdmaDevice& d : s.rdma_devices) {
    for (const RdmaPort& p : d.ports) {
      IntLabel port(p.port);
      for (const std::string& netdev : p.netdevs) {
        w.Sample(
            {{"device", d.name}, {"port", port.view()}, {"netdev", netdev}}, 1);
      }
    }
  }
  w.Family("lens_rdma_port_up", "1 when the port state is ACTIVE.", "gauge");
  for (const RdmaPortCounters& p : s.rdma_ports) {
    IntLabel port(p.port);
    w.Sample({{"device", p.device}, {"port", port.view()}},
             p.state == "ACTIVE" ? 1 : 0);
  }
  w.Family("lens_rdma_port_rate_bytes_per_second", "Port link rate.", "gauge");
  for (const RdmaDevice& d : s.rdma_devices) {
    for (const RdmaPort& p : d.ports) {
      if (!p.rate_gbps) continue;
      IntLabel port(p.port);
      w.Sample({{"device", d.name},
                {"port", port.view()},
                {"link_layer", p.link_layer}},
               *p.rate_gbps * 1e9 / 8);
    }
  }
  struct PortFamily {
    std::string_view name, help;
    const std::optional<uint64_t> RdmaPortCounters::*field;
  };
  const PortFamily port_families[] = {
      {"lens_rdma_port_transmit_bytes_total",
       "Bytes sent (port_xmit_data x 4).", &RdmaPortCounters::tx_bytes},
      {"lens_rdma_port_receive_bytes_total",
       "Bytes received (port_rcv_data x 4).", &RdmaPortCounters::rx_bytes},
      {"lens_rdma_port_transmit_packets_total", "Packets sent.",
       &RdmaPortCounters::tx_packets},
      {"lens_rdma_port_receive_packets_total", "Packets received.",
       &RdmaPortCounters::rx_packets},
  };
  for (const PortFamily& f : port_families) {
    w.Family(f.name, f.help, "counter");
    for (const RdmaPortCounters& p : s.rdma_ports) {
      const std::optional<uint64_t>& v = p.*f.field;
      if (!v) continue;
      IntLabel port(p.port);
      w.Sample({{"device", p.device}, {"port", port.view()}},
               static_cast<double>(*v));
    }
  }
  for (bool hardware : {false, true}) {
    if (hardware) {
      w.Family("lens_rdma_port_hw_stat_total",
               "Driver-specific port statistic (hw_counters/<counter>).",
               "counter");
    } else {
      w.Family("lens_rdma_port_stat_total",
               "Standard port statistic (counters/<counter>).", "counter");
    }
    for (const RdmaPortCounters& p : s.rdma_ports) {
      IntLabel port(p.port);
      for (const RdmaCounter& c : p.counters) {
        if (c.hardware != hardware || (!hardware && IsDataCounter(c.name)))
          continue;
        w.Sample(
            {{"device", p.device}, {"port", port.view()}, {"counter", c.name}},
            static_cast<double>(c.value));
      }
    }
  }
}

void RenderNodeMetrics(const NodeSnapshot& s, MetricWriter& w) {
  if (s.facts) {
    const NodeFacts& f = *s.facts;
    w.Family("lens_node_info", "Node facts; the value is always 1.", "gauge");
    w.Sample({{"node", s.node_name},
              {"kernel_release", f.kernel_release},
              {"os", f.os_name},
              {"cpu_model", f.cpu_model},
              {"amdgpu_driver_version", f.amdgpu_driver_version},
              {"nvidia_driver_version", f.nvidia_driver_version}},
             1);
    w.Family("lens_node_cpus", "Logical CPUs.", "gauge");
    w.Sample({}, f.cpu_count);
    if (f.memory_total_bytes) {
      w.Family("lens_node_memory_total_bytes", "Physical memory.", "gauge");
      w.Sample({}, static_cast<double>(*f.memory_total_bytes));
    }
    if (f.memory_available_bytes) {
      w.Family("lens_node_memory_available_bytes",
               "Memory available for new work.", "gauge");
      w.Sample({}, static_cast<double>(*f.memory_available_bytes));
    }
  }
  w.Family("lens_node_gpus",
           "GPUs on the node (logical GPUs for partitioned devices).", "gauge");
  w.Sample({}, static_cast<double>(s.gpus.size()));
  if (s.gpu_allocation) {
    w.Family("lens_node_gpus_allocated",
             "GPUs the kubelet has allocated to pods.", "gauge");
    w.Sample({}, static_cast<double>(s.gpu_allocation->allocated));
    if (!s.gpus.empty()) {
      w.Family("lens_node_gpu_allocation_ratio",
               "Allocated GPUs / GPUs on the node (0..1).", "gauge");
      w.Sample(
          {}, static_cast<double>(s.gpu_allocation->allocated) / s.gpus.size());
    }
  }
  if (s.ephemeral_storage) {
    const NodeEphemeralStorage& e = *s.ephemeral_storage;
    struct Field {
      std::string_view name, help;
      const std::optional<uint64_t>& value;
    };
    const Field fields[] = {
        {"lens_node_ephemeral_storage_capacity_bytes",
         "Node root filesystem size.", e.capacity_bytes},
        {"lens_node_ephemeral_storage_used_bytes", "Node root filesystem used.",
         e.used_bytes},
        {"lens_node_ephemeral_storage_available_bytes",
         "Node root filesystem available.", e.available_bytes},
    };
    for (const Field& f : fields) {
      if (!f.value) continue;
      w.Family(f.name, f.help, "gauge");
      w.Sample({}, static_cast<double>(*f.value));
    }
    w.Family("lens_pod_ephemeral_storage_used_bytes",
             "Ephemeral storage used by a pod.", "gauge");
    for (const PodEphemeralStorage& p : e.pods) {
      if (!p.used_bytes) continue;
      w.Sample(
          {{"namespace", p.namespace_name}, {"pod", p.name}, {"uid", p.uid}},
          static_cast<double>(*p.used_bytes));
    }
  }
}

void RenderAgentMetrics(const NodeSnapshot& s, MetricWriter& w) {
  using Dur = std::chrono::duration<double>;
  w.Family("lens_agent_collector_up",
           "1 when the collector's last run succeeded.", "gauge");
  for (const CollectorState& c : s.collectors)
    w.Sample({{"collector", c.name}}, c.last_ok ? 1 : 0);
  w.Family("lens_agent_collector_duration_seconds",
           "Duration of the collector's last run.", "gauge");
  for (const CollectorState& c : s.collectors) {
    w.Sample({{"collector", c.name}},
             std::chrono::duration_cast<Dur>(c.last_duration).count());
  }
  w.Family("lens_agent_collector_runs_total", "Collector runs.", "counter");
  for (const CollectorState& c : s.collectors) {
    w.Sample({{"collector", c.name}}, static_cast<double>(c.runs));
  }
  w.Family("lens_agent_collector_failures_total", "Collector runs that failed.",
           "counter");
  for (const CollectorState& c : s.collectors) {
    w.Sample({{"collector", c.name}}, static_cast<double>(c.failures));
  }
  w.Family("lens_agent_collector_rescans_total",
           "Inventory re-reads after the collector's device set changed.",
           "counter");
  for (const CollectorState& c : s.collectors) {
    w.Sample({{"collector", c.name}}, static_cast<double>(c.rescans));
  }
  w.Family("lens_agent_cycles_total", "Collection cycles run.", "counter");
  w.Sample({}, static_cast<double>(s.cycle));
}

}  // namespace lens::agent
