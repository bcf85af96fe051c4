// ProbeHost and its JSON / text renderings.

#include <cstdio>

#include "agent/json_fields.h"
#include "core/json.h"
#include "lens/probe.h"

namespace lens {
namespace {

constexpr auto Str = agent::StrField;

void Num(JsonWriter& w, const char* key, const std::optional<double>& v) {
  agent::OptField(w, key, v);
}
template <typename T>
void Int(JsonWriter& w, const char* key, const std::optional<T>& v) {
  agent::OptField(w, key, v);
}

void GpuJson(JsonWriter& w, const Gpu& g) {
  const GpuInfo& i = g.info;
  const GpuSample& s = g.sample;
  w.StartObject();
  agent::GpuInfoFields(w, i, s.vram_total_bytes);
  Num(w, "utilization_ratio", s.utilization_ratio);
  Num(w, "memory_utilization_ratio", s.memory_utilization_ratio);
  Int(w, "vram_used_bytes", s.vram_used_bytes);
  Num(w, "power_watts", s.power_watts);
  Num(w, "energy_joules", s.energy_joules);
  Num(w, "temperature_edge_celsius", s.temperature_edge_celsius);
  Num(w, "temperature_junction_celsius", s.temperature_junction_celsius);
  Num(w, "temperature_memory_celsius", s.temperature_memory_celsius);
  Num(w, "clock_graphics_hz", s.clock_graphics_hz);
  Num(w, "clock_memory_hz", s.clock_memory_hz);
  Num(w, "clock_soc_hz", s.clock_soc_hz);
  Num(w, "fan_speed_ratio", s.fan_speed_ratio);
  Num(w, "pcie_link_speed_gtps", s.pcie_link_speed_gtps);
  Int(w, "pcie_link_width", s.pcie_link_width);
  Int(w, "ecc_correctable_errors", s.ecc_correctable_errors);
  Int(w, "ecc_uncorrectable_errors", s.ecc_uncorrectable_errors);
  if (s.throttle_known) {
    w.Key("throttle_reasons");
    w.StartArray();
    for (const std::string& r : s.throttle_reasons) w.String(r.c_str());
    w.EndArray();
  }
  if (s.processes_known) {
    w.Key("processes");
    w.StartArray();
    for (const GpuProcess& p : s.processes) {
      w.StartObject();
      w.Key("pid");
      w.Int64(p.pid);
      if (!p.name.empty()) Str(w, "name", p.name);
      Int(w, "used_memory_bytes", p.used_memory_bytes);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

void RdmaJson(JsonWriter& w, const RdmaProbe& r) {
  const RdmaDevice& d = r.device;
  w.StartObject();
  Str(w, "name", d.name);
  agent::RdmaDeviceFields(w, d);
  w.Key("ports");
  w.StartArray();
  for (size_t p = 0; p < d.ports.size(); ++p) {
    const RdmaPort& port = d.ports[p];
    const RdmaPortCounters* c = p < r.ports.size() ? &r.ports[p] : nullptr;
    w.StartObject();
    w.Key("port");
    w.Int(port.port);
    Str(w, "state", c && !c->state.empty() ? c->state : port.state);
    Str(w, "phys_state",
        c && !c->phys_state.empty() ? c->phys_state : port.phys_state);
    Str(w, "link_layer", port.link_layer);
    Num(w, "rate_gbps", port.rate_gbps);
    Int(w, "lid", port.lid);
    w.Key("netdevs");
    w.StartArray();
    for (const std::string& n : port.netdevs) w.String(n.c_str());
    w.EndArray();
    if (c) {
      Int(w, "tx_bytes", c->tx_bytes);
      Int(w, "rx_bytes", c->rx_bytes);
      Int(w, "tx_packets", c->tx_packets);
      Int(w, "rx_packets", c->rx_packets);
      w.Key("counters");
      w.StartObject();
      for (const RdmaCounter& k : c->counters) {
        w.Key(k.name.c_str());
        w.Uint64(k.value);
      }
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void NodeJson(JsonWriter& w, const NodeFacts& f) {
  w.StartObject();
  agent::NodeFactsFields(w, f);
  w.EndObject();
}

}  // namespace

std::string HumanBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
  if (bytes < 1000) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes) / 1000;
  size_t unit = 0;
  while (v >= 999.95 && unit + 1 < std::size(kUnits)) {
    v /= 1000;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  return buf;
}

namespace {

std::string Fmt(const std::optional<double>& v, const char* fmt,
                double scale = 1) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, *v * scale);
  return buf;
}

}  // namespace

StatusOr<ProbeReport> ProbeHost(const HostRoots& roots,
                                const GpuProbeOptions& gpu) {
  ProbeReport report;
  int failures = 0;
  std::string errors;
  auto note = [&](std::string_view part, const Status& st) {
    ++failures;
    report.warnings.push_back(std::string(part) + ": " + st.message());
    errors += (errors.empty() ? "" : "; ") + report.warnings.back();
  };
  StatusOr<std::vector<Gpu>> gpus = ProbeGpus(roots, gpu);
  if (gpus.ok())
    report.gpus = std::move(*gpus);
  else
    note("gpus", gpus.status());
  StatusOr<std::vector<RdmaProbe>> rdma = ProbeRdma(roots);
  if (rdma.ok())
    report.rdma = std::move(*rdma);
  else
    note("rdma", rdma.status());
  StatusOr<NodeFacts> node = ReadNodeFacts(roots);
  if (node.ok())
    report.node = std::move(*node);
  else
    note("node", node.status());
  if (failures == 3)
    return UnavailableError("probe found nothing readable: " + errors);
  return report;
}

std::string ProbeReportJson(const ProbeReport& report) {
  JsonWriter w;
  w.StartObject();
  w.Key("gpus");
  w.StartArray();
  for (const Gpu& g : report.gpus) GpuJson(w, g);
  w.EndArray();
  w.Key("rdma");
  w.StartArray();
  for (const RdmaProbe& r : report.rdma) RdmaJson(w, r);
  w.EndArray();
  w.Key("node");
  NodeJson(w, report.node);
  w.Key("warnings");
  w.StartArray();
  for (const std::string& s : report.warnings) w.String(s.c_str());
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string ProbeReportText(const ProbeReport& r) {
  std::string out;
  char line[512];
  const NodeFacts& f = r.node;
  std::snprintf(
      line, sizeof line, "node  %s  %s  kernel %s  %d CPUs (%s)  %s memory\n",
      f.hostname.c_str(), f.os_name.c_str(), f.kernel_release.c_str(),
      f.cpu_count, f.cpu_model.c_str(),
      Fmt(f.memory_total_bytes ? std::optional<double>(*f.memory_total_bytes)
                               : std::nullopt,
          "%.1f GiB", 1.0 / (1u << 30))
          .c_str());
  out += line;
  out += "\nGPUs: " + std::to_string(r.gpus.size()) + "\n";
  if (!r.gpus.empty()) {
    std::snprintf(line, sizeof line,
                  "  %-3s %-7s %-13s %-26s %-18s %6s %6s %8s %7s %7s\n", "#",
                  "vendor", "bdf", "model", "serial", "busy%", "mem%",
                  "power W", "edge C", "hot C");
    out += line;
  }
  for (const Gpu& g : r.gpus) {
    const GpuSample& s = g.sample;
    std::optional<double> vram_pct;
    const auto total =
        s.vram_total_bytes ? s.vram_total_bytes : g.info.vram_total_bytes;
    if (s.vram_used_bytes && total && *total) {
      vram_pct = 100.0 * static_cast<double>(*s.vram_used_bytes) /
                 static_cast<double>(*total);
    }
    std::snprintf(
        line, sizeof line,
        "  %-3d %-7s %-13s %-26.26s %-18.18s %6s %6s %8s %7s %7s\n",
        g.info.index, std::string(GpuVendorName(g.info.vendor)).c_str(),
        g.info.bdf.c_str(), g.info.model.c_str(),
        g.info.serial.empty() ? "-" : g.info.serial.c_str(),
        Fmt(s.utilization_ratio, "%.0f", 100).c_str(),
        Fmt(vram_pct, "%.0f").c_str(), Fmt(s.power_watts, "%.0f").c_str(),
        Fmt(s.temperature_edge_celsius, "%.0f").c_str(),
        Fmt(s.temperature_junction_celsius, "%.0f").c_str());
    out += line;
  }
  size_t ports = 0;
  for (const RdmaProbe& p : r.rdma) ports += p.device.ports.size();
  out += "\nRDMA devices: " + std::to_string(r.rdma.size()) + " (" +
         std::to_string(ports) + " ports)\n";
  for (const RdmaProbe& p : r.rdma) {
    for (size_t i = 0; i < p.device.ports.size(); ++i) {
      const RdmaPort& port = p.device.ports[i];
      const RdmaPortCounters* c = i < p.ports.size() ? &p.ports[i] : nullptr;
      std::snprintf(
          line, sizeof line,
          "  %-10s port %d  %-8s %-10s %8s Gb/s  fw %-12s %s\n",
          p.device.name.c_str(), port.port, port.state.c_str(),
          port.link_layer.c_str(), Fmt(port.rate_gbps, "%.0f").c_str(),
          p.device.fw_version.c_str(),
          c && c->tx_bytes ? ("tx " + HumanBytes(*c->tx_bytes) + "  rx " +
                              HumanBytes(c->rx_bytes.value_or(0)))
                                 .c_str()
                           : "");
      out += line;
    }
  }
  for (const std::string& w : r.warnings) out += "\nwarning: " + w + "\n";
  return out;
}

}  // namespace lens
