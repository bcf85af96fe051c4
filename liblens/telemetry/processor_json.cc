// What the processor shows: its ownership caches as JSON (GET /pods/cache,
// GET /pods/workload/cache) and its metrics.
#include <map>

#include "core/json.h"
#include "core/metric_writer.h"
#include "telemetry/processor.h"

namespace lens::telemetry {
namespace {

double Seconds(Timestamp t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

void AppendKv(std::string_view key, std::string_view value, std::string* out) {
  AppendJsonString(key, out);
  out->push_back(':');
  AppendJsonString(value, out);
}

void AppendHoldings(const std::vector<Holding>& holdings, std::string* out) {
  out->append("\"holdings\":[");
  bool first = true;
  for (const Holding& h : holdings) {
    if (!first) out->push_back(',');
    first = false;
    out->append("{\"from_ms\":").append(std::to_string(h.from_ms));
    out->append(",\"to_ms\":");
    out->append(h.to_ms == kOpenEnd ? "null" : std::to_string(h.to_ms));
    out->push_back(',');
    AppendKv("pod_uid", h.owner->pod_uid, out);
    out->push_back(',');
    AppendKv("workload_uid", h.owner->workload_uid, out);
    out->push_back('}');
  }
  out->push_back(']');
}

}  // namespace

std::string Processor::PodsCacheJson(size_t limit) const {
  const std::shared_ptr<const OwnershipIndex> index = feed_.Current();
  std::string out = "{\"pods\":[";
  size_t n = 0;
  index->ForEachPod([&](std::string_view ns, std::string_view pod,
                        const std::vector<Holding>& holdings) {
    if (n >= limit) return false;
    if (n++) out.push_back(',');
    out.push_back('{');
    AppendKv("namespace", ns, &out);
    out.push_back(',');
    AppendKv("pod", pod, &out);
    out.push_back(',');
    AppendHoldings(holdings, &out);
    out.push_back('}');
    return true;
  });
  out += "],\"devices\":[";
  size_t d = 0;
  index->ForEachDevice([&](std::string_view node, std::string_view identity,
                           const std::vector<Holding>& holdings) {
    if (d >= limit) return false;
    if (d++) out.push_back(',');
    out.push_back('{');
    AppendKv("node", node, &out);
    out.push_back(',');
    AppendKv("device", identity, &out);
    out.push_back(',');
    AppendHoldings(holdings, &out);
    out.push_back('}');
    return true;
  });
  out += "],\"pods_total\":" + std::to_string(index->pods());
  out += ",\"devices_total\":" + std::to_string(index->devices()) + "}";
  return out;
}

std::string Processor::WorkloadCacheJson(size_t limit) const {
  const std::shared_ptr<const OwnershipIndex> index = feed_.Current();
  std::map<std::string_view, const Owner*> by_pod;
  index->ForEachPod([&](std::string_view, std::string_view,
                        const std::vector<Holding>& holdings) {
    for (const Holding& h : holdings) by_pod[h.owner->pod_uid] = h.owner.get();
    return true;
  });
  std::string out = "{\"pods\":[";
  size_t n = 0;
  for (const auto& [uid, o] : by_pod) {
    if (n >= limit) break;
    if (n++) out.push_back(',');
    out.push_back('{');
    AppendKv("pod_uid", uid, &out);
    out.push_back(',');
    AppendKv("workload_uid", o->workload_uid, &out);
    out.push_back(',');
    AppendKv("workload_name", o->workload_name, &out);
    out.push_back(',');
    AppendKv("workload_kind", o->workload_kind, &out);
    out.push_back(',');
    AppendKv("workload_namespace", o->workload_namespace, &out);
    out.push_back('}');
  }
  out += "],\"total\":" + std::to_string(by_pod.size()) + "}";
  return out;
}

std::string Processor::RenderMetrics() const {
  std::string out;
  metrics_.RenderTo(&out);
  const OwnershipFeedStats s = feed_.stats();
  MetricWriter w(&out);
  struct Gauge {
    const char* name;
    const char* help;
    double value;
  };
  const Gauge gauges[] = {
      {"lens_telemetry_ownership_pods", "Pods in the ownership index",
       static_cast<double>(s.pods)},
      {"lens_telemetry_ownership_containers",
       "Containers in the ownership index", static_cast<double>(s.containers)},
      {"lens_telemetry_ownership_refresh_seconds",
       "How long the last ownership refresh took", s.last_refresh_seconds}};
  for (const Gauge& g : gauges) {
    w.Family(g.name, g.help, "gauge");
    w.Sample({}, g.value);
  }
  if (s.last_success) {
    w.Family("lens_telemetry_ownership_last_refresh_timestamp_seconds",
             "When the ownership index last followed the store (Unix "
             "seconds)",
             "gauge");
    w.Sample({}, Seconds(*s.last_success));
  }
  w.Family("lens_telemetry_ownership_refreshes_total",
           "Ownership refreshes, by result", "counter");
  w.Sample({{"result", "ok"}}, static_cast<double>(s.refreshes - s.failures));
  w.Sample({{"result", "error"}}, static_cast<double>(s.failures));
  w.Family("lens_telemetry_ownership_rows_read_total",
           "Store rows the ownership feed read (changes only, after the "
           "first load)",
           "counter");
  w.Sample({}, static_cast<double>(s.rows_read));
  std::vector<const Forwarder*> forwarders;
  for (const auto& f : forwarders_) forwarders.push_back(f.get());
  RenderForwarderMetrics(forwarders, &out);
  if (logs_) logs_->RenderMetrics(&out);
  return out;
}

}  // namespace lens::telemetry
