// The lens_* metric schema, as tables of (name, help, accessor): the GPU
// families here, RDMA, node and agent in metrics_render_node.cc.
#include "agent/metrics_render.h"

#include <array>
#include <optional>

#include "agent/metrics_render_node.h"
#include "agent/metrics_render_nvidia.h"
#include "core/metric_writer.h"

namespace lens::agent {
namespace {

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
      IntLabel idx(s.gpus[i].index);
      const std::vector<GpuXcdSample>& xcds = s.gpu_samples[i].xcds;
      for (size_t x = 0; x < xcds.size(); ++x) {
        const std::optional<double>& v = xcds[x].*f.field;
        if (!v) continue;
        IntLabel xcd(static_cast<int64_t>(x));
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
    IntLabel idx(g.index);
    IntLabel part(g.partition_id);
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
      IntLabel idx(s.gpus[i].index);
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
      IntLabel idx(s.gpus[i].index);
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
    IntLabel idx(s.gpus[i].index);
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

}  // namespace

void RenderLensMetrics(const NodeSnapshot& snapshot, std::string* out) {
  MetricWriter w(out);
  RenderGpus(snapshot, w);
  RenderNvidiaGpuMetrics(snapshot, w);
  RenderRdmaMetrics(snapshot, w);
  RenderNodeMetrics(snapshot, w);
  RenderAgentMetrics(snapshot, w);
}

}  // namespace lens::agent
