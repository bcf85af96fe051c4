// The workload, training and pod routes.
#include <string>
#include <vector>

#include "api/api_json.h"
#include "api/params.h"
#include "api/routes.h"

namespace lens::api {
namespace {

std::string PathUid(const HttpRequest& req) {
  auto it = req.path_params.find("uid");
  return it == req.path_params.end() ? std::string() : it->second;
}

}  // namespace

Status ListWorkloads(const ApiContext& ctx, const RouteSpec& route,
                     const HttpRequest& req, JsonWriter& w) {
  WorkloadQuery q;
  LENS_ASSIGN_OR_RETURN(q.page, PageParams(ctx, req));
  LENS_ASSIGN_OR_RETURN(q.sort, SortParams(route, req));
  q.namespace_name = StringParam(req, "namespace").value_or("");
  q.kind = StringParam(req, "kind").value_or("");
  q.status = StringParam(req, "status").value_or("");
  LENS_ASSIGN_OR_RETURN(Page<WorkloadRecord> page,
                        ctx.store->pods().ListWorkloads(q));
  OpenPage(w);
  for (const WorkloadRecord& wl : page.items) WriteWorkload(w, wl);
  ClosePage(w, page.total, page.page_num, page.page_size);
  return OkStatus();
}

Status GetWorkload(const ApiContext& ctx, const RouteSpec&,
                   const HttpRequest& req, JsonWriter& w) {
  const std::string uid = PathUid(req);
  LENS_ASSIGN_OR_RETURN(WorkloadRecord workload,
                        ctx.store->pods().GetWorkload(uid));
  LENS_ASSIGN_OR_RETURN(std::vector<PodRecord> pods,
                        ctx.store->pods().ListWorkloadPods(uid));
  LENS_ASSIGN_OR_RETURN(std::vector<TrainingRunRecord> runs,
                        ctx.store->training().ListRuns(uid));
  LENS_ASSIGN_OR_RETURN(std::vector<TrainingEvent> events,
                        ctx.store->training().ListEvents(uid));
  StatusOr<IterationRecord> latest = ctx.store->training().LatestIteration(uid);
  if (!latest.ok() && latest.status().code() != StatusCode::kNotFound)
    return latest.status();
  w.StartObject();
  w.Key("workload");
  WriteWorkload(w, workload);
  w.Key("pods");
  w.StartArray();
  for (const PodRecord& p : pods) WritePod(w, p);
  w.EndArray();
  w.Key("gpus");
  LENS_RETURN_IF_ERROR(WriteWorkloadGpus(ctx, pods, w));
  w.Key("lifecycle");
  LENS_RETURN_IF_ERROR(WriteWorkloadLifecycle(ctx, pods, w));
  w.Key("runs");
  w.StartArray();
  for (const TrainingRunRecord& r : runs) WriteRun(w, r);
  w.EndArray();
  w.Key("latestIteration");
  if (latest.ok()) {
    WriteIteration(w, *latest);
  } else {
    w.Null();
  }
  w.Key("events");
  w.StartArray();
  for (const TrainingEvent& e : events) WriteTrainingEvent(w, e);
  w.EndArray();
  w.EndObject();
  return OkStatus();
}

// A workload known to the store or one with training data (a log read
// before its workload was seen) has iterations; any other uid is 404.
Status ListIterations(const ApiContext& ctx, const RouteSpec& route,
                      const HttpRequest& req, JsonWriter& w) {
  IterationQuery q;
  q.workload_uid = PathUid(req);
  LENS_ASSIGN_OR_RETURN(q.page, PageParams(ctx, req));
  LENS_ASSIGN_OR_RETURN(q.sort, SortParams(route, req));
  LENS_ASSIGN_OR_RETURN(std::optional<int64_t> run, IntParam(req, "run"));
  if (run) {
    if (*run < 1 || *run > INT32_MAX) {
      return InvalidArgumentError("run: " + std::to_string(*run) +
                                  " is not a run number (1 or more)");
    }
    q.run = static_cast<int32_t>(*run);
  }
  StatusOr<WorkloadRecord> workload =
      ctx.store->pods().GetWorkload(q.workload_uid);
  if (!workload.ok()) {
    if (workload.status().code() != StatusCode::kNotFound)
      return workload.status();
    LENS_ASSIGN_OR_RETURN(std::vector<TrainingRunRecord> runs,
                          ctx.store->training().ListRuns(q.workload_uid));
    if (runs.empty()) return workload.status();
  }
  LENS_ASSIGN_OR_RETURN(Page<IterationRecord> page,
                        ctx.store->training().ListIterations(q));
  OpenPage(w);
  for (const IterationRecord& it : page.items) WriteIteration(w, it);
  ClosePage(w, page.total, page.page_num, page.page_size);
  return OkStatus();
}

Status ListPods(const ApiContext& ctx, const RouteSpec& route,
                const HttpRequest& req, JsonWriter& w) {
  PodQuery q;
  LENS_ASSIGN_OR_RETURN(q.page, PageParams(ctx, req));
  LENS_ASSIGN_OR_RETURN(q.sort, SortParams(route, req));
  LENS_ASSIGN_OR_RETURN(q.running, BoolParam(req, "running"));
  q.namespace_name = StringParam(req, "namespace").value_or("");
  q.node = StringParam(req, "node").value_or("");
  q.owner_uid = StringParam(req, "workloadUid").value_or("");
  LENS_ASSIGN_OR_RETURN(Page<PodRecord> page, ctx.store->pods().ListPods(q));
  OpenPage(w);
  for (const PodRecord& p : page.items) WritePod(w, p);
  ClosePage(w, page.total, page.page_num, page.page_size);
  return OkStatus();
}

}  // namespace lens::api
