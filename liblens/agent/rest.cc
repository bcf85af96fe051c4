#include "agent/rest.h"

#include <cstdio>

#include "agent/json_fields.h"
#include "agent/json_nvidia.h"
#include "core/json.h"
#include "core/metrics.h"

namespace lens::agent {
namespace {

constexpr auto Str = StrField;

std::string Hex(uint16_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", v);
  return buf;
}

void GpuObject(JsonWriter& w, const NodeSnapshot& s, const GpuInfo& g) {
  w.StartObject();
  w.Key("gpu");
  w.Int(g.index);
  w.Key("asic");
  w.StartObject();
  Str(w, "market_name", g.model);
  Str(w, "vendor_id", Hex(g.pci_vendor_id));
  Str(w, "device_id", Hex(g.pci_device_id));
  Str(w, "asic_serial", g.serial);
  w.EndObject();
  w.Key("bus");
  w.StartObject();
  Str(w, "bdf", g.bdf);
  w.EndObject();
  w.Key("dri_device");
  w.StartObject();
  Str(w, "card", g.drm_card.empty() ? "" : "/dev/dri/" + g.drm_card);
  Str(w, "render", g.drm_render.empty() ? "" : "/dev/dri/" + g.drm_render);
  Str(w, "pci_addr", g.bdf);
  w.EndObject();
  GpuInfoFields(w, g, std::nullopt);
  NvidiaGpuInfoFields(w, g);
  (void)s;
  w.EndObject();
}

// The sample of GPU `i`, as /cardMetrics and /report give it.
void SampleFields(JsonWriter& w, const NodeSnapshot& s, size_t i) {
  const GpuSample& m = s.gpu_samples[i];
  OptField(w, "gpu_use_percent", m.utilization_ratio, 100);
  const std::optional<uint64_t> total =
      m.vram_total_bytes ? m.vram_total_bytes : s.gpus[i].vram_total_bytes;
  if (m.vram_used_bytes && total && *total > 0) {
    w.Key("memory_use_percent");
    w.Double(100.0 * static_cast<double>(*m.vram_used_bytes) /
             static_cast<double>(*total));
  }
  OptField(w, "utilization_ratio", m.utilization_ratio);
  OptField(w, "memory_utilization_ratio", m.memory_utilization_ratio);
  OptField(w, "vram_used_bytes", m.vram_used_bytes);
  OptField(w, "vram_total_bytes", total);
  OptField(w, "power_watts", m.power_watts);
  OptField(w, "energy_joules", m.energy_joules);
  OptField(w, "temperature_edge_celsius", m.temperature_edge_celsius);
  OptField(w, "temperature_junction_celsius", m.temperature_junction_celsius);
  OptField(w, "temperature_memory_celsius", m.temperature_memory_celsius);
  OptField(w, "clock_graphics_hz", m.clock_graphics_hz);
  OptField(w, "clock_memory_hz", m.clock_memory_hz);
  OptField(w, "ecc_correctable_errors", m.ecc_correctable_errors);
  OptField(w, "ecc_uncorrectable_errors", m.ecc_uncorrectable_errors);
  NvidiaGpuSampleFields(w, m);
}

// The ports of an RDMA device, as /rdma and /report give them.
void PortsArray(JsonWriter& w, const RdmaDevice& d) {
  w.Key("ports");
  w.StartArray();
  for (const RdmaPort& p : d.ports) {
    w.StartObject();
    w.Key("port");
    w.Int(p.port);
    Str(w, "state", p.state);
    Str(w, "phys_state", p.phys_state);
    Str(w, "link_layer", p.link_layer);
    Str(w, "rate", p.rate);
    OptField(w, "rate_gbps", p.rate_gbps);
    OptField(w, "lid", p.lid);
    w.Key("netdevs");
    w.StartArray();
    for (const std::string& n : p.netdevs) w.String(n.c_str());
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

void Respond(const NodeAgent& agent, std::string (*render)(const NodeSnapshot&),
             HttpResponse* out) {
  RespondData(render(*agent.snapshot()), out);
}

}  // namespace

std::string GpusJson(const NodeSnapshot& s) {
  JsonWriter w;
  w.StartArray();
  for (const GpuInfo& g : s.gpus) GpuObject(w, s, g);
  w.EndArray();
  return w.Take();
}

std::string CardMetricsJson(const NodeSnapshot& s) {
  JsonWriter w;
  w.StartArray();
  for (size_t i = 0; i < s.gpus.size() && i < s.gpu_samples.size(); ++i) {
    w.StartObject();
    w.Key("gpu");
    w.Int(s.gpus[i].index);
    Str(w, "bdf", s.gpus[i].bdf);
    SampleFields(w, s, i);
    w.EndObject();
  }
  w.EndArray();
  return w.Take();
}

std::string DriMappingJson(const NodeSnapshot& s) {
  JsonWriter w;
  w.StartObject();
  for (const DriMapping& d : s.dri) {
    if (d.card.empty()) continue;
    const std::string card = "/dev/dri/" + d.card;
    w.Key(card.c_str());
    w.StartObject();
    Str(w, "card", card);
    Str(w, "render", d.render.empty() ? "" : "/dev/dri/" + d.render);
    Str(w, "pci_addr", d.bdf);
    int card_id = -1;
    std::sscanf(d.card.c_str(), "card%d", &card_id);
    w.Key("card_id");
    w.Int(card_id);
    w.EndObject();
  }
  w.EndObject();
  return w.Take();
}

std::string RdmaJson(const NodeSnapshot& s) {
  JsonWriter w;
  w.StartArray();
  for (size_t i = 0; i < s.rdma_devices.size(); ++i) {
    const RdmaDevice& d = s.rdma_devices[i];
    w.StartObject();
    w.Key("if_index");
    w.Int(static_cast<int>(i));
    Str(w, "if_name", d.name);
    Str(w, "link_layer", d.ports.empty() ? "" : d.ports[0].link_layer);
    RdmaDeviceFields(w, d);
    PortsArray(w, d);
    w.EndObject();
  }
  w.EndArray();
  return w.Take();
}

std::string NodeJson(const NodeSnapshot& s) {
  JsonWriter w;
  w.StartObject();
  Str(w, "node_name", s.node_name);
  if (s.facts) {
    NodeFactsFields(w, *s.facts);
  }
  w.Key("collectors");
  w.StartArray();
  for (const CollectorState& c : s.collectors) {
    w.StartObject();
    Str(w, "name", c.name);
    w.Key("ok");
    w.Bool(c.last_ok);
    Str(w, "error", c.last_error);
    w.Key("runs");
    w.Uint64(c.runs);
    w.Key("failures");
    w.Uint64(c.failures);
    w.Key("duration_seconds");
    w.Double(std::chrono::duration<double>(c.last_duration).count());
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string ReportJson(const NodeSnapshot& s) {
  JsonWriter w;
  w.StartObject();
  Str(w, "node_name", s.node_name);
  w.Key("cycle");
  w.Uint64(s.cycle);
  w.Key("time_ms");
  w.Int64(std::chrono::duration_cast<std::chrono::milliseconds>(
              s.time.time_since_epoch())
              .count());
  Str(w, "gpu_driver_version", GpuDriverVersion(s));
  if (s.facts) {
    w.Key("node");
    w.StartObject();
    NodeFactsFields(w, *s.facts);
    w.EndObject();
  }
  w.Key("gpus");
  w.StartArray();
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    w.StartObject();
    GpuInfoFields(w, s.gpus[i], std::nullopt);
    if (i < s.gpu_samples.size()) {
      w.Key("sample");
      w.StartObject();
      SampleFields(w, s, i);
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("rdma");
  w.StartArray();
  for (const RdmaDevice& d : s.rdma_devices) {
    w.StartObject();
    Str(w, "name", d.name);
    RdmaDeviceFields(w, d);
    PortsArray(w, d);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string GpuDriverVersion(const NodeSnapshot& s) {
  if (s.facts && !s.facts->amdgpu_driver_version.empty())
    return s.facts->amdgpu_driver_version;
  for (const GpuInfo& g : s.gpus) {
    if (!g.driver_version.empty()) return g.driver_version;
  }
  if (s.facts) return s.facts->nvidia_driver_version;
  return "";
}

void RegisterNodeRoutes(const NodeAgent& agent, HttpServer& server) {
  const NodeAgent* a = &agent;
  server.Handle("GET", "/metrics", [a](const HttpRequest&, HttpResponse* out) {
    out->content_type = std::string(kPrometheusTextContentType);
    out->body = a->RenderMetrics();
  });
  server.Handle("GET", "/healthz", [a](const HttpRequest&, HttpResponse* out) {
    auto s = a->snapshot();
    out->content_type = "text/plain; charset=utf-8";
    out->body = s->cycle > 0 ? "ok\n" : "starting\n";
  });
  server.Handle("GET", "/gpus", [a](const HttpRequest&, HttpResponse* out) {
    Respond(*a, &GpusJson, out);
  });
  server.Handle("GET", "/cardMetrics",
                [a](const HttpRequest&, HttpResponse* out) {
                  Respond(*a, &CardMetricsJson, out);
                });
  server.Handle("GET", "/driMapping",
                [a](const HttpRequest&, HttpResponse* out) {
                  Respond(*a, &DriMappingJson, out);
                });
  server.Handle("GET", "/rdma", [a](const HttpRequest&, HttpResponse* out) {
    Respond(*a, &RdmaJson, out);
  });
  server.Handle("GET", "/node", [a](const HttpRequest&, HttpResponse* out) {
    Respond(*a, &NodeJson, out);
  });
  server.Handle("GET", "/report", [a](const HttpRequest&, HttpResponse* out) {
    Respond(*a, &ReportJson, out);
  });
  server.Handle(
      "GET", "/gpuDriverVersion", [a](const HttpRequest&, HttpResponse* out) {
        std::string version = GpuDriverVersion(*a->snapshot());
        if (version.empty()) {
          RespondError(404, "no GPU driver version known on this node", out);
          return;
        }
        JsonWriter data;
        data.String(version);
        RespondData(data.str(), out);
      });
}

}  // namespace lens::agent
