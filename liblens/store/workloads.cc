// gpu_workloads and workload_pod_references.
#include "lens/store.h"
#include "store/db.h"
#include "store/feed.h"
#include "store/table.h"
#include "store/text.h"

namespace lens {
namespace {

using store::ColumnKind;
using store::Conn;
using store::Param;
using store::Rows;

const store::Table<WorkloadRecord>& Workloads() {
  using R = WorkloadRecord;
  namespace f = store::field;
  static const store::Table<R> t(
      "gpu_workloads", 1,
      {f::Key("uid", &R::uid), f::Name("api_version", &R::api_version),
       f::Name("kind", &R::kind), f::Key("name", &R::name),
       f::Key("namespace", &R::namespace_name),
       f::Name("parent_uid", &R::parent_uid), f::Name("status", &R::status),
       f::Int("gpu_request", &R::gpu_request),
       f::Int("active_pods", &R::active_pods),
       f::LabelsColumn("labels", &R::labels),
       f::CreatedAt("created_at", &R::created_at, &R::updated_at),
       f::OptTime("ended_at", &R::ended_at),
       f::Time("updated_at", &R::updated_at), f::WrittenUs<R>()},
      {.keep = {"created_at"}});
  return t;
}

}  // namespace

Status PodRepository::UpsertWorkloads(std::span<const WorkloadRecord> in) {
  return Workloads().Write(*db_, in);
}

Status PodRepository::UpdateWorkloadStatus(std::span<const WorkloadRecord> in) {
  constexpr std::string_view t = "gpu_workloads";
  std::vector<WorkloadRecord> rows(in.begin(), in.end());
  for (WorkloadRecord& w : rows) {
    LENS_RETURN_IF_ERROR(store::CheckKey(t, "uid", &w.uid));
    LENS_RETURN_IF_ERROR(store::CheckKey(t, "status", &w.status));
    LENS_RETURN_IF_ERROR(store::CheckTime(t, "updated_at", w.updated_at));
  }
  return db_->Write([&](Conn& c) -> Status {
    for (const WorkloadRecord& w : rows) {
      const Param p[] = {std::string_view(w.uid),  std::string_view(w.status),
                         int64_t{w.gpu_request},   int64_t{w.active_pods},
                         store::OptUs(w.ended_at), store::Us(w.updated_at),
                         c.write_time_us()};
      Rows out;
      LENS_RETURN_IF_ERROR(c.Execute(
          "UPDATE gpu_workloads SET status = $2, gpu_request = $3, "
          "active_pods = $4, ended_at = lens_ts($5), updated_at = lens_ts($6), "
          "written_us = $7 WHERE uid = $1 RETURNING uid",
          p, &out));
      if (out.empty()) {
        return NotFoundError("gpu_workloads: workload '" + w.uid +
                             "' not found");
      }
    }
    return OkStatus();
  });
}

StatusOr<WorkloadRecord> PodRepository::GetWorkload(std::string_view uid) {
  const Param p[] = {uid};
  LENS_ASSIGN_OR_RETURN(Rows rows,
                        store::Query(*db_,
                                     "SELECT " + Workloads().select() +
                                         " FROM gpu_workloads WHERE uid = $1",
                                     p));
  if (rows.empty()) {
    return NotFoundError("workload '" + std::string(uid) + "' not found");
  }
  return Workloads().Read(rows, 0);
}

StatusOr<Page<WorkloadRecord>> PodRepository::ListWorkloads(
    const WorkloadQuery& q) {
  LENS_RETURN_IF_ERROR(store::CheckPage(q.page));
  LENS_ASSIGN_OR_RETURN(std::string order,
                        store::OrderBy("gpu_workloads", q.sort,
                                       {{"created_at", "created_at", true},
                                        {"name", "namespace, name"},
                                        {"kind", "kind"},
                                        {"gpu_request", "gpu_request"}}));
  store::Filter f;
  f.AddIf(!q.namespace_name.empty(), "namespace = ?", q.namespace_name);
  f.AddIf(!q.kind.empty(), "kind = ?", q.kind);
  f.AddIf(!q.status.empty(), "status = ?", q.status);
  f.AddIf(q.parent_uid.has_value(), "parent_uid = ?",
          q.parent_uid ? Param(std::string_view(*q.parent_uid)) : Param());
  if (q.ended)
    f.Add(*q.ended ? "ended_at IS NOT NULL" : "ended_at IS NULL", {});
  f.AddRange("created_at", q.created);
  Page<WorkloadRecord> page{{}, 0, q.page.page_num, q.page.page_size};
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::ReadPage(*db_, "gpu_workloads" + f.sql(), Workloads().select(),
                      order + ", uid", q.page, f, &page.total));
  page.items = Workloads().ReadAll(rows);
  return page;
}

StatusOr<Changes<WorkloadRecord>> PodRepository::ListWorkloadsWrittenSince(
    Timestamp since, size_t limit) {
  Changes<WorkloadRecord> out;
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) -> Status {
    int64_t through = 0;
    LENS_ASSIGN_OR_RETURN(
        Rows rows,
        store::ReadWrittenSince(c, "gpu_workloads", Workloads().select(), "uid",
                                store::Us(since), limit, &through));
    out = {Workloads().ReadAll(rows), store::FromUs(through)};
    return OkStatus();
  }));
  return out;
}

Status PodRepository::LinkPods(
    std::span<const std::pair<std::string, std::string>> in) {
  constexpr std::string_view t = "workload_pod_references";
  std::vector<std::pair<std::string, std::string>> links(in.begin(), in.end());
  const int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  std::vector<std::vector<Param>> rows;
  for (auto& [workload, pod] : links) {
    LENS_RETURN_IF_ERROR(store::CheckKey(t, "workload_uid", &workload));
    LENS_RETURN_IF_ERROR(store::CheckKey(t, "pod_uid", &pod));
    rows.push_back({workload, pod, now});
  }
  static constexpr store::Column kColumns[] = {
      {"workload_uid"}, {"pod_uid"}, {"created_at", ColumnKind::kTimestamp}};
  return store::WriteRows(*db_, {t, kColumns, 2, {}, true}, rows);
}

}  // namespace lens
