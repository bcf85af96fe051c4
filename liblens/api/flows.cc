// The TCP flow routes: lens-netflow's counters (liblens/flow/flow_metrics.cc)
// from ApiContext::series as mean rates over a range. Their `workload` label
// is the pod as "namespace/name", or "host" for traffic of no pod; the
// scrape adds `node`.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "api/api_json.h"
#include "api/params.h"
#include "api/routes.h"

namespace lens::api {
namespace {

constexpr std::string_view kBytesSent = "lens_tcp_flow_bytes_sent_total";
constexpr std::string_view kBytesReceived =
    "lens_tcp_flow_bytes_received_total";
constexpr std::string_view kRetransmits = "lens_tcp_flow_retransmits_total";
constexpr std::string_view kRemoteBytes = "lens_tcp_flow_remote_bytes_total";
constexpr std::string_view kHostWorkload = "host";
constexpr int64_t kMaxSteps = 11000;
constexpr size_t kMaxFlowSeries = 100000;
// A workload on more nodes than this is read with one query per metric
// (all nodes, filtered here) instead of one per node.
constexpr size_t kMaxNodeQueries = 32;

using Matchers = std::vector<std::pair<std::string, std::string>>;

std::string FlowLabel(const SeriesSamples& s, std::string_view name) {
  for (const auto& [key, value] : s.labels) {
    if (key == name) return value;
  }
  return {};
}

// A counter's mean per-second rate over the range: its per-step rates
// summed over every step of the range (a step without data adds nothing).
double MeanRate(const SeriesSamples& s, int64_t steps) {
  double sum = 0;
  for (const SamplePoint& p : s.points) {
    if (std::isfinite(p.value)) sum += p.value;
  }
  return steps > 0 ? sum / static_cast<double>(steps) : 0;
}

// (node, workload or "", class, direction), and (node, remote, class,
// direction) for remotes.
using FlowKey = std::tuple<std::string, std::string, std::string, std::string>;
struct Rates {
  double bytes = 0;
  double retransmits = 0;
};
using FlowTable = std::map<FlowKey, Rates>;

// Adds the rates of the flow counters matching `matchers` to `out`; with
// `workloads`, only those of the pods it names.
Status AddFlows(TimeSeriesSource& source, const SeriesRange& range,
                const Matchers& matchers,
                const std::set<std::string>* workloads, FlowTable* out) {
  for (std::string_view metric : {kBytesSent, kBytesReceived, kRetransmits}) {
    RangeQuery q = range.Query(std::string(metric), RangeFunction::kRate);
    q.matchers = matchers;
    q.max_series = kMaxFlowSeries;
    LENS_ASSIGN_OR_RETURN(std::vector<SeriesSamples> series,
                          source.QueryRange(q));
    for (const SeriesSamples& s : series) {
      std::string workload = FlowLabel(s, "workload");
      if (workloads != nullptr && !workloads->contains(workload)) continue;
      if (workload == kHostWorkload) workload.clear();
      Rates& r = (*out)[{FlowLabel(s, "node"), std::move(workload),
                         FlowLabel(s, "class"), FlowLabel(s, "direction")}];
      (metric == kRetransmits ? r.retransmits : r.bytes) +=
          MeanRate(s, range.steps);
    }
  }
  return OkStatus();
}

Status AddRemotes(TimeSeriesSource& source, const SeriesRange& range,
                  const Matchers& matchers, FlowTable* out) {
  RangeQuery q = range.Query(std::string(kRemoteBytes), RangeFunction::kRate);
  q.matchers = matchers;
  q.max_series = kMaxFlowSeries;
  LENS_ASSIGN_OR_RETURN(std::vector<SeriesSamples> series,
                        source.QueryRange(q));
  for (const SeriesSamples& s : series) {
    (*out)[{FlowLabel(s, "node"), FlowLabel(s, "remote"), FlowLabel(s, "class"),
            FlowLabel(s, "direction")}]
        .bytes += MeanRate(s, range.steps);
  }
  return OkStatus();
}

// The groups with traffic, busiest first (then by key, for a stable order).
std::vector<FlowTable::const_iterator> Busiest(const FlowTable& table) {
  std::vector<FlowTable::const_iterator> out;
  for (auto it = table.begin(); it != table.end(); ++it) {
    if (it->second.bytes > 0 || it->second.retransmits > 0) out.push_back(it);
  }
  std::stable_sort(out.begin(), out.end(), [](auto a, auto b) {
    return a->second.bytes > b->second.bytes;
  });
  return out;
}

void WriteFlows(JsonWriter& w, const FlowTable& flows,
                const FlowTable& remotes) {
  w.StartObject();
  w.Key("items");
  w.StartArray();
  for (auto it : Busiest(flows)) {
    const auto& [node, workload, cls, direction] = it->first;
    w.StartObject();
    Str(w, "node", node);
    Str(w, "workload", workload);
    Str(w, "class", cls);
    Str(w, "direction", direction);
    w.Key("bytesPerSecond");
    w.Double(it->second.bytes);
    w.Key("retransmitsPerSecond");
    w.Double(it->second.retransmits);
    w.EndObject();
  }
  w.EndArray();
  w.Key("remotes");
  w.StartArray();
  for (auto it : Busiest(remotes)) {
    const auto& [node, remote, cls, direction] = it->first;
    w.StartObject();
    Str(w, "node", node);
    Str(w, "remote", remote);
    Str(w, "class", cls);
    Str(w, "direction", direction);
    w.Key("bytesPerSecond");
    w.Double(it->second.bytes);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

}  // namespace

Status ListFlows(const ApiContext& ctx, const RouteSpec&,
                 const HttpRequest& req, JsonWriter& w) {
  LENS_ASSIGN_OR_RETURN(SeriesRange range,
                        SeriesRangeParams(req, false, kMaxSteps));
  Matchers by_node;
  if (std::optional<std::string> node = StringParam(req, "node"))
    by_node.emplace_back("node", *node);
  Matchers matchers = by_node;
  const std::optional<std::string> workload = StringParam(req, "workload");
  if (workload) matchers.emplace_back("workload", *workload);
  FlowTable flows, remotes;
  LENS_RETURN_IF_ERROR(AddFlows(*ctx.series, range, matchers, nullptr, &flows));
  // Remotes are counted per node: a workload's share is not known.
  if (!workload)
    LENS_RETURN_IF_ERROR(AddRemotes(*ctx.series, range, by_node, &remotes));
  WriteFlows(w, flows, remotes);
  return OkStatus();
}

// The flows whose `workload` label names one of the workload's pods, read
// node by node (a pod's flows carry its node).
Status ListWorkloadFlows(const ApiContext& ctx, const RouteSpec&,
                         const HttpRequest& req, JsonWriter& w) {
  LENS_ASSIGN_OR_RETURN(SeriesRange range,
                        SeriesRangeParams(req, false, kMaxSteps));
  auto uid = req.path_params.find("uid");
  const std::string workload_uid =
      uid == req.path_params.end() ? std::string() : uid->second;
  LENS_RETURN_IF_ERROR(ctx.store->pods().GetWorkload(workload_uid).status());
  LENS_ASSIGN_OR_RETURN(std::vector<PodRecord> pods,
                        ctx.store->pods().ListWorkloadPods(workload_uid));
  std::set<std::string> names, nodes;
  for (const PodRecord& p : pods) {
    if (p.node.empty()) continue;  // never scheduled: no traffic
    names.insert(p.namespace_name + "/" + p.name);
    nodes.insert(p.node);
  }
  FlowTable flows;
  if (nodes.size() > kMaxNodeQueries) {
    LENS_RETURN_IF_ERROR(AddFlows(*ctx.series, range, {}, &names, &flows));
  } else {
    for (const std::string& node : nodes) {
      LENS_RETURN_IF_ERROR(
          AddFlows(*ctx.series, range, {{"node", node}}, &names, &flows));
    }
  }
  WriteFlows(w, flows, {});
  return OkStatus();
}

}  // namespace lens::api
