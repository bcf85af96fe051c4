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

void WriteHoldings(const std::vector<Holding>& holdings, JsonWriter* w) {
  w->Key("holdings");
  w->StartArray();
  for (const Holding& h : holdings) {
    w->StartObject();
    w->Member("from_ms", h.from_ms);
    w->Key("to_ms");
    h.to_ms == kOpenEnd ? w->Null() : w->Int64(h.to_ms);
    w->Member("pod_uid", h.owner->pod_uid);
    w->Member("workload_uid", h.owner->workload_uid);
    w->EndObject();
  }
  w->EndArray();
}

}  // namespace

std::string Processor::PodsCacheJson(size_t limit) const {
  const std::shared_ptr<const OwnershipIndex> index = feed_.Current();
  JsonWriter w;
  w.StartObject();
  w.Key("pods");
  w.StartArray();
  size_t n = 0;
  index->ForEachPod([&](std::string_view ns, std::string_view pod,
                        const std::vector<Holding>& holdings) {
    if (n++ >= limit) return false;
    w.StartObject();
    w.Member("namespace", ns);
    w.Member("pod", pod);
    WriteHoldings(holdings, &w);
    w.EndObject();
    return true;
  });
  w.EndArray();
  w.Key("devices");
  w.StartArray();
  size_t d = 0;
  index->ForEachDevice([&](std::string_view node, std::string_view identity,
                           const std::vector<Holding>& holdings) {
    if (d++ >= limit) return false;
    w.StartObject();
    w.Member("node", node);
    w.Member("device", identity);
    WriteHoldings(holdings, &w);
    w.EndObject();
    return true;
  });
  w.EndArray();
  w.Member("pods_total", uint64_t{index->pods()});
  w.Member("devices_total", uint64_t{index->devices()});
  w.EndObject();
  return w.Take();
}

std::string Processor::WorkloadCacheJson(size_t limit) const {
  const std::shared_ptr<const OwnershipIndex> index = feed_.Current();
  std::map<std::string_view, const Owner*> by_pod;
  index->ForEachPod([&](std::string_view, std::string_view,
                        const std::vector<Holding>& holdings) {
    for (const Holding& h : holdings) by_pod[h.owner->pod_uid] = h.owner.get();
    return true;
  });
  JsonWriter w;
  w.StartObject();
  w.Key("pods");
  w.StartArray();
  size_t n = 0;
  for (const auto& [uid, o] : by_pod) {
    if (n++ >= limit) break;
    w.StartObject();
    w.Member("pod_uid", uid);
    w.Member("workload_uid", o->workload_uid);
    w.Member("workload_name", o->workload_name);
    w.Member("workload_kind", o->workload_kind);
    w.Member("workload_namespace", o->workload_namespace);
    w.EndObject();
  }
  w.EndArray();
  w.Member("total", uint64_t{by_pod.size()});
  w.EndObject();
  return w.Take();
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
