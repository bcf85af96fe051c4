// The lens_* metric schema, as tables of (name, help, accessor).
#include "agent/metrics_render.h"

#include <array>
#include <charconv>
#include <optional>

#include "agent/metrics_render_nvidia.h"
#include "core/metric_writer.h"

namespace lens::agent {
namespace {

// Short decimal text in a fixed buffer (label values like gpu="3").
struct IntText {
  explicit IntText(int64_t v) {
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    len = static_cast<size_t>(r.ptr - buf);
  }
  std::string_view view() const { return {buf, len}; }
  char buf[24];
  size_t len = 0;
};

template <typename T>
std::optional<double> AsDouble(const std::optional<T>& v, double scale = 1) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v) * scale;
}

// One GPU gauge or counter: the value of a sample, or nullopt.
struct GpuFamily {
  std::string_view name;
  std::string_view help;
  std::string_view type;
  std::optional<double> (*value)(const GpuInfo&, const GpuSample&);
};

constexpr std::array kGpuFamilies = {
    GpuFamily{
        "lens_gpu_utilization_ratio",
        "Fraction of time the GPU was busy (0..1).", "gauge",
        [](const GpuInfo&, const GpuSample& s) { return s.utilization_ratio; }},
    GpuFamily{"lens_gpu_memory_utilization_ratio",
              "Fraction of time the GPU memory controller was busy (0..1).",
              "gauge",
              [](const GpuInfo&, const GpuSample& s) {
                return s.memory_utilization_ratio;
              }},
    GpuFamily{"lens_gpu_memory_used_bytes", "GPU memory (VRAM) in use.",
              "gauge",
              [](const GpuInfo&, const GpuSample& s) {
                return AsDouble(s.vram_used_bytes);
              }},
    GpuFamily{"lens_gpu_memory_total_bytes", "GPU memory (VRAM) size.", "gauge",
              [](const GpuInfo& i, const GpuSample& s) {
                return AsDouble(s.vram_total_bytes ? s.vram_total_bytes
                                                   : i.vram_total_bytes);
              }},
    GpuFamily{"lens_gpu_power_watts", "Average board power.", "gauge",
              [](const GpuInfo&, const GpuSample& s) { return s.power_watts; }},
    GpuFamily{
        "lens_gpu_power_cap_watts", "Board power limit.", "gauge",
        [](const GpuInfo& i, const GpuSample&) { return i.power_cap_watts; }},
    GpuFamily{
        "lens_gpu_energy_joules_total",
        "Energy consumed since the driver loaded.", "counter",
        [](const GpuInfo&, const GpuSample& s) { return s.energy_joules; }},
    GpuFamily{
        "lens_gpu_fan_speed_ratio", "Fan speed as a fraction of its maximum.",
        "gauge",
        [](const GpuInfo&, const GpuSample& s) { return s.fan_speed_ratio; }},
    GpuFamily{"lens_gpu_pcie_link_speed_transfers_per_second",
              "Current PCIe link speed per lane.", "gauge",
              [](const GpuInfo&, const GpuSample& s) {
                return AsDouble(s.pcie_link_speed_gtps, 1e9);
              }},
    GpuFamily{"lens_gpu_pcie_link_width", "Current PCIe link width (lanes).",
              "gauge",
              [](const GpuInfo&, const GpuSample& s) {
                return AsDouble(s.pcie_link_width);
              }},
    GpuFamily{"lens_gpu_pcie_replays_total",
              "PCIe replays since the driver loaded.", "counter",
              [](const GpuInfo&, const GpuSample& s) {
                return AsDouble(s.pcie_replay_count);
              }},
    GpuFamily{"lens_gpu_processes", "Processes using the GPU.", "gauge",
              [](const GpuInfo&, const GpuSample& s) {
                return s.processes_known
                           ? std::optional<double>(
                                 static_cast<double>(s.processes.size()))
                           : std::nullopt;
              }},
};

// A GPU value with one extra label (sensor, clock, error type).
struct GpuLabeled {
  std::string_view label_value;
  std::optional<double> (*value)(const GpuSample&);
};
constexpr std::array kTemperatures = {
    GpuLabeled{"edge",
               [](const GpuSample& s) { return s.temperature_edge_celsius; }},
    GpuLabeled{
        "junction",
        [](const GpuSample& s) { return s.temperature_junction_celsius; }},
    GpuLabeled{"memory",
               [](const GpuSample& s) { return s.temperature_memory_celsius; }},
};
constexpr std::array kClocks = {
    GpuLabeled{"graphics",
               [](const GpuSample& s) { return s.clock_graphics_hz; }},
    GpuLabeled{"memory", [](const GpuSample& s) { return s.clock_memory_hz; }},
    GpuLabeled{"soc", [](const GpuSample& s) { return s.clock_soc_hz; }},
    GpuLabeled{"video", [](const GpuSample& s) { return s.clock_video_hz; }},
    GpuLabeled{"decode", [](const GpuSample& s) { return s.clock_decode_hz; }},
};
constexpr std::array kEcc = {
    GpuLabeled{
        "correctable",
        [](const GpuSample& s) { return AsDouble(s.ecc_correctable_errors); }},
    GpuLabeled{"uncorrectable",
               [](const GpuSample& s) {
                 return AsDouble(s.ecc_uncorrectable_errors);
               }},
};
constexpr std::array<std::string_view, 13> kThrottleReasons = {
    "applications_clocks",
    "current",
    "display_clocks",
    "hw_power_brake",
    "hw_slowdown",
    "hw_thermal",
    "idle",
    "power_cap",
    "reliability",
    "sw_power_cap",
    "sw_thermal",
    "sync_boost",
    "thermal"};

// Per-XCD (AMD compute die) gauges: the value of one XCD, or nullopt.
struct XcdFamily {
  std::string_view name, help;
  std::optional<double> GpuXcdSample::*field;
};
constexpr std::array kXcdFamilies = {
    XcdFamily{"lens_gpu_xcd_utilization_ratio",
              "Fraction of time an XCD (AMD compute die) was busy (0..1).",
              &GpuXcdSample::utilization_ratio},
    XcdFamily{"lens_gpu_xcd_clock_hertz",
              "Current graphics clock of an XCD (AMD compute die).",
              &GpuXcdSample::clock_graphics_hz},
};

void RenderXcds(const NodeSnapshot& s, size_t n, MetricWriter& w) {
  for (const XcdFamily& f : kXcdFamilies) {
    w.Family(f.name, f.help, "gauge");
    for (size_t i = 0; i < n; ++i) {
      IntText idx(s.gpus[i].index);
      const std::vector<GpuXcdSample>& xcds = s.gpu_samples[i].xcds;
      for (size_t x = 0; x < xcds.size(); ++x) {
        const std::optional<double>& v = xcds[x].*f.field;
        if (!v) continue;
        IntText xcd(static_cast<int64_t>(x));
        w.Sample(
            {{"gpu", idx.view()}, {"bdf", s.gpus[i].bdf}, {"xcd", xcd.view()}},
            *v);
      }
    }
  }
}

void RenderGpus(const NodeSnapshot& s, MetricWriter& w) {
  const size_t n = std::min(s.gpus.size(), s.gpu_samples.size());
  w.Family("lens_gpu_info", "GPU inventory; the value is always 1.", "gauge");
  for (size_t i = 0; i < n; ++i) {
    const GpuInfo& g = s.gpus[i];
    IntText idx(g.index);
    IntText part(g.partition_id);
    w.Sample({{"gpu", idx.view()},
              {"bdf", g.bdf},
              {"vendor", GpuVendorName(g.vendor)},
              {"model", g.model},
              {"serial", g.serial},
              {"unique_id", g.unique_id},
              {"card", g.drm_card},
              {"render", g.drm_render},
              {"compute_partition", g.compute_partition},
              {"partition_id", part.view()},
              {"driver_version", g.driver_version}},
             1);
  }
  for (const GpuFamily& f : kGpuFamilies) {
    w.Family(f.name, f.help, f.type);
    for (size_t i = 0; i < n; ++i) {
      std::optional<double> v = f.value(s.gpus[i], s.gpu_samples[i]);
      if (!v) continue;
      IntText idx(s.gpus[i].index);
      w.Sample({{"gpu", idx.view()}, {"bdf", s.gpus[i].bdf}}, *v);
    }
  }
  struct Labeled {
    std::string_view name, help, type, label;
    const GpuLabeled* begin;
    const GpuLabeled* end;
  };
  const Labeled labeled[] = {
      {"lens_gpu_temperature_celsius", "GPU temperature by sensor.", "gauge",
       "sensor", kTemperatures.data(),
       kTemperatures.data() + kTemperatures.size()},
      {"lens_gpu_clock_hertz", "Current GPU clock by domain.", "gauge", "clock",
       kClocks.data(), kClocks.data() + kClocks.size()},
      {"lens_gpu_ecc_errors_total", "ECC/RAS errors since the driver loaded.",
       "counter", "type", kEcc.data(), kEcc.data() + kEcc.size()},
  };
  for (const Labeled& f : labeled) {
    w.Family(f.name, f.help, f.type);
    for (size_t i = 0; i < n; ++i) {
      IntText idx(s.gpus[i].index);
      for (const GpuLabeled* l = f.begin; l != f.end; ++l) {
        std::optional<double> v = l->value(s.gpu_samples[i]);
        if (v)
          w.Sample({{"gpu", idx.view()},
                    {"bdf", s.gpus[i].bdf},
                    {f.label, l->label_value}},
                   *v);
      }
    }
  }
  w.Family("lens_gpu_throttled", "1 while the clock throttle reason is active.",
           "gauge");
  for (size_t i = 0; i < n; ++i) {
    const GpuSample& g = s.gpu_samples[i];
    if (!g.throttle_known) continue;
    IntText idx(s.gpus[i].index);
    for (std::string_view reason : kThrottleReasons) {
      bool active =
          std::find(g.throttle_reasons.begin(), g.throttle_reasons.end(),
                    reason) != g.throttle_reasons.end();
      w.Sample(
          {{"gpu", idx.view()}, {"bdf", s.gpus[i].bdf}, {"reason", reason}},
          active ? 1 : 0);
    }
  }
  RenderXcds(s, n, w);
}

bool IsDataCounter(std::string_view name) {
  return name == "port_xmit_data" || name == "port_rcv_data" ||
         name == "port_xmit_packets" || name == "port_rcv_packets";
}

void RenderRdma(const NodeSnapshot& s, MetricWriter& w) {
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
      IntText port(p.port);
      for (const std::string& netdev : p.netdevs) {
        w.Sample(
            {{"device", d.name}, {"port", port.view()}, {"netdev", netdev}}, 1);
      }
    }
  }
  w.Family("lens_rdma_port_up", "1 when the port state is ACTIVE.", "gauge");
  for (const RdmaPortCounters& p : s.rdma_ports) {
    IntText port(p.port);
    w.Sample({{"device", p.device}, {"port", port.view()}},
             p.state == "ACTIVE" ? 1 : 0);
  }
  w.Family("lens_rdma_port_rate_bytes_per_second", "Port link rate.", "gauge");
  for (const RdmaDevice& d : s.rdma_devices) {
    for (const RdmaPort& p : d.ports) {
      if (!p.rate_gbps) continue;
      IntText port(p.port);
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
      IntText port(p.port);
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
      IntText port(p.port);
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

void RenderNode(const NodeSnapshot& s, MetricWriter& w) {
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

void RenderAgent(const NodeSnapshot& s, MetricWriter& w) {
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

}  // namespace

void RenderLensMetrics(const NodeSnapshot& snapshot, std::string* out) {
  MetricWriter w(out);
  RenderGpus(snapshot, w);
  RenderNvidiaGpuMetrics(snapshot, w);
  RenderRdma(snapshot, w);
  RenderNode(snapshot, w);
  RenderAgent(snapshot, w);
}

}  // namespace lens::agent
