// The training-series route: a workload's iterations sampled by the store
// (TrainingRepository::SampleIterations: index lookups, one query per run),
// with the markers a chart draws: run starts and training events.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/api_json.h"
#include "api/params.h"
#include "api/routes.h"

namespace lens::api {
namespace {

constexpr int64_t kDefaultPoints = 400;
constexpr int64_t kMinPoints = 10;
constexpr int64_t kMaxPoints = 5000;

struct Marker {
  int32_t run;
  std::string_view type;
  std::optional<int64_t> iteration;
  std::optional<double> timestamp_s;
};

void WritePoint(JsonWriter& w, const IterationRecord& r) {
  using F = IterationField;
  w.StartObject();
  Int(w, "iteration", r.iteration);
  Num(w, "timestamp", r.timestamp_s);
  Num(w, "loss", r.Get(F::kLoss));
  Num(w, "tflopsPerGpu", r.Get(F::kTflopsPerGpu));
  Num(w, "tokensPerSecondPerGpu", r.Get(F::kTokensPerSPerGpu));
  const std::optional<double> step_ms = r.Get(F::kElapsedMs);
  Num(w, "stepSeconds",
      step_ms ? std::optional<double>(*step_ms / 1000) : std::nullopt);
  w.EndObject();
}

// Each run's start (its first record), then the run's stored events in
// log order, run by run.
std::vector<Marker> Markers(const std::vector<IterationRecord>& samples,
                            const std::vector<TrainingEvent>& events,
                            std::optional<int32_t> run) {
  std::vector<Marker> out;
  for (size_t i = 0; i < samples.size(); ++i) {
    const IterationRecord& r = samples[i];
    if (i == 0 || samples[i - 1].run != r.run)
      out.push_back({r.run, "run_start", r.iteration, r.timestamp_s});
  }
  for (const TrainingEvent& e : events) {
    if (run && e.run != *run) continue;
    out.push_back(
        {e.run, TrainingEventTypeName(e.type), e.iteration, e.timestamp_s});
  }
  std::stable_sort(
      out.begin(), out.end(),
      [](const Marker& a, const Marker& b) { return a.run < b.run; });
  return out;
}

// The query of the request: the path's uid, `run` and `points`.
StatusOr<IterationSampleQuery> SampleQuery(const HttpRequest& req) {
  IterationSampleQuery q;
  auto uid = req.path_params.find("uid");
  if (uid != req.path_params.end()) q.workload_uid = uid->second;
  LENS_ASSIGN_OR_RETURN(std::optional<int64_t> run, IntParam(req, "run"));
  if (run) {
    if (*run < 1 || *run > INT32_MAX) {
      return InvalidArgumentError("run: " + std::to_string(*run) +
                                  " is not a run number (1 or more)");
    }
    q.run = static_cast<int32_t>(*run);
  }
  LENS_ASSIGN_OR_RETURN(std::optional<int64_t> points, IntParam(req, "points"));
  if (points && (*points < kMinPoints || *points > kMaxPoints)) {
    return InvalidArgumentError("points: " + std::to_string(*points) +
                                " is not in " + std::to_string(kMinPoints) +
                                ".." + std::to_string(kMaxPoints));
  }
  q.max_points = static_cast<int32_t>(points.value_or(kDefaultPoints));
  return q;
}

// "runs": the samples (ordered by run) grouped by run.
void WriteRuns(JsonWriter& w, const std::vector<IterationRecord>& samples) {
  w.Key("runs");
  w.StartArray();
  for (size_t i = 0; i < samples.size(); ++i) {
    if (i == 0 || samples[i - 1].run != samples[i].run) {
      if (i > 0) {
        w.EndArray();
        w.EndObject();
      }
      w.StartObject();
      Int(w, "run", samples[i].run);
      w.Key("points");
      w.StartArray();
    }
    WritePoint(w, samples[i]);
  }
  if (!samples.empty()) {
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

Status GetTrainingSeries(const ApiContext& ctx, const RouteSpec&,
                         const HttpRequest& req, JsonWriter& w) {
  LENS_ASSIGN_OR_RETURN(IterationSampleQuery q, SampleQuery(req));
  StatusOr<WorkloadRecord> workload =
      ctx.store->pods().GetWorkload(q.workload_uid);
  if (!workload.ok() && workload.status().code() != StatusCode::kNotFound)
    return workload.status();
  LENS_ASSIGN_OR_RETURN(std::vector<IterationRecord> samples,
                        ctx.store->training().SampleIterations(q));
  LENS_ASSIGN_OR_RETURN(std::vector<TrainingEvent> events,
                        ctx.store->training().ListEvents(q.workload_uid));
  // A workload the store does not know may still have training data (a log
  // read before its workload was seen); without either it is unknown.
  if (!workload.ok() && samples.empty() && events.empty())
    return workload.status();
  w.StartObject();
  WriteRuns(w, samples);
  w.Key("events");
  w.StartArray();
  for (const Marker& m : Markers(samples, events, q.run)) {
    w.StartObject();
    Str(w, "type", m.type);
    w.Key("iteration");
    m.iteration ? w.Int64(*m.iteration) : w.Null();
    Num(w, "timestamp", m.timestamp_s);
    Int(w, "run", m.run);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return OkStatus();
}

}  // namespace lens::api
