// The stragglers route: a workload's GPUs (the holdings of its pods'
// containers) over a range, their utilisation against the job's, and the
// evidence the time series hold for the nodes found out (docs/insights.md).
#include <algorithm>
#include <chrono>
#include <string>

#include "api/api_json.h"
#include "api/insight_window.h"
#include "api/params.h"
#include "api/routes.h"
#include "lens/insights_stragglers.h"

namespace lens::api {
namespace {

void WriteStats(JsonWriter& w, const char* key,
                const std::optional<StragglerStats>& s) {
  w.Key(key);
  if (!s) {
    w.Null();
    return;
  }
  w.StartObject();
  Str(w, "measure", StragglerMeasureName(s->measure));
  Int(w, "entities", s->entities);
  Num(w, "median", s->median);
  Num(w, "mad", s->mad);
  Int(w, "nodes", s->nodes);
  Num(w, "nodeMedian", s->node_median);
  Num(w, "nodeMad", s->node_mad);
  w.EndObject();
}

void WriteSuspect(JsonWriter& w, const StragglerSuspect& s) {
  w.StartObject();
  Str(w, "scope", s.scope == StragglerScope::kNode ? "node" : "gpu");
  Str(w, "node", s.node);
  Str(w, "gpu", s.gpu);
  w.Key("rank");
  s.rank ? w.Int(*s.rank) : w.Null();
  w.Key("ranksOut");
  w.StartArray();
  for (int32_t r : s.ranks_out) w.Int(r);
  w.EndArray();
  w.Key("gpusOut");
  w.StartArray();
  for (const std::string& g : s.gpus_out) w.String(g.c_str());
  w.EndArray();
  Num(w, "score", s.score);
  w.Key("findings");
  w.StartArray();
  for (const StragglerFinding& f : s.findings) {
    w.StartObject();
    Str(w, "measure", StragglerMeasureName(f.measure));
    Num(w, "value", f.value);
    Num(w, "jobMedian", f.job_median);
    Num(w, "score", f.score);
    Num(w, "deviationRatio", f.deviation_ratio);
    w.EndObject();
  }
  w.EndArray();
  w.Key("evidence");
  w.StartArray();
  for (const StragglerEvidence& e : s.evidence) {
    w.StartObject();
    Str(w, "kind", StragglerEvidenceKindName(e.kind));
    Str(w, "gpu", e.gpu);
    Str(w, "device", e.device);
    Str(w, "name", e.name);
    Num(w, "amount", e.amount);
    Num(w, "peerMedian", e.peer_median);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

}  // namespace

Status GetWorkloadStragglers(const ApiContext& ctx, const RouteSpec&,
                             const HttpRequest& req, JsonWriter& w) {
  const std::string uid = PathParam(req, "uid");
  LENS_ASSIGN_OR_RETURN(const InsightWindow win, ParseInsightWindow(req, 3600));
  LENS_ASSIGN_OR_RETURN(
      WorkloadStragglers found,
      FindWorkloadStragglers(*ctx.store, *ctx.series, uid, win.from(), win.to(),
                             std::chrono::seconds(win.StepSeconds(30))));
  const StragglerReport& report = found.report;
  w.StartObject();
  Int(w, "from", win.from_s);
  Int(w, "to", win.to_s);
  Int(w, "gpus", found.gpus);
  WriteStats(w, "utilization", report.utilization);
  WriteStats(w, "stepTime", report.step_time);
  w.Key("suspects");
  w.StartArray();
  for (const StragglerSuspect& s : report.suspects) WriteSuspect(w, s);
  w.EndArray();
  w.EndObject();
  return OkStatus();
}

}  // namespace lens::api
