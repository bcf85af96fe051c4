// gpu_workloads and workload_pod_references.
#include "lens/store.h"
#include "store/db.h"
#include "store/text.h"

namespace lens {
namespace {

using store::ColumnKind;
using store::Conn;
using store::Param;
using store::Rows;

constexpr std::string_view kWorkloadSelect =
    "uid, api_version, kind, name, namespace, parent_uid, status, "
    "gpu_request, labels, lens_us(created_at), lens_us(ended_at), "
    "lens_us(updated_at)";

WorkloadRecord ReadWorkload(const Rows& r, size_t i) {
  WorkloadRecord w;
  w.uid = r.Text(i, 0);
  w.api_version = r.Text(i, 1);
  w.kind = r.Text(i, 2);
  w.name = r.Text(i, 3);
  w.namespace_name = r.Text(i, 4);
  w.parent_uid = r.Text(i, 5);
  w.status = r.Text(i, 6);
  w.gpu_request = static_cast<int32_t>(r.Int(i, 7));
  w.labels_json = r.Text(i, 8);
  w.created_at = store::FromUs(r.Int(i, 9));
  if (!r.IsNull(i, 10)) w.ended_at = store::FromUs(r.Int(i, 10));
  w.updated_at = store::FromUs(r.Int(i, 11));
  return w;
}

Status CheckWorkload(WorkloadRecord* w) {
  constexpr std::string_view t = "gpu_workloads";
  LENS_RETURN_IF_ERROR(store::CheckKey(t, "uid", &w->uid));
  LENS_RETURN_IF_ERROR(store::CheckKey(t, "name", &w->name));
  LENS_RETURN_IF_ERROR(store::CheckKey(t, "namespace", &w->namespace_name));
  LENS_RETURN_IF_ERROR(store::CheckTexts(t,
                                         {{"api_version", &w->api_version},
                                          {"kind", &w->kind},
                                          {"parent_uid", &w->parent_uid},
                                          {"status", &w->status}},
                                         store::kMaxKeyBytes));
  LENS_RETURN_IF_ERROR(store::CheckJson(t, "labels", &w->labels_json));
  return store::CheckTimes(t, &w->created_at, w->updated_at);
}

}  // namespace

Status PodRepository::UpsertWorkloads(std::span<const WorkloadRecord> in) {
  std::vector<WorkloadRecord> workloads(in.begin(), in.end());
  std::vector<std::vector<Param>> rows;
  for (WorkloadRecord& w : workloads) {
    LENS_RETURN_IF_ERROR(CheckWorkload(&w));
    rows.push_back({w.uid, w.api_version, w.kind, w.name, w.namespace_name,
                    w.parent_uid, w.status, int64_t{w.gpu_request},
                    w.labels_json, store::Us(w.created_at),
                    store::OptUs(w.ended_at), store::Us(w.updated_at)});
  }
  static constexpr store::Column kColumns[] = {
      {"uid"},
      {"api_version"},
      {"kind"},
      {"name"},
      {"namespace"},
      {"parent_uid"},
      {"status"},
      {"gpu_request"},
      {"labels", ColumnKind::kJson},
      {"created_at", ColumnKind::kTimestamp},
      {"ended_at", ColumnKind::kTimestamp},
      {"updated_at", ColumnKind::kTimestamp}};
  static constexpr std::string_view kKeep[] = {"created_at"};
  return store::WriteRows(*db_, {"gpu_workloads", kColumns, 1, kKeep}, rows);
}

StatusOr<WorkloadRecord> PodRepository::GetWorkload(std::string_view uid) {
  const Param p[] = {uid};
  LENS_ASSIGN_OR_RETURN(Rows rows,
                        store::Query(*db_,
                                     "SELECT " + std::string(kWorkloadSelect) +
                                         " FROM gpu_workloads WHERE uid = $1",
                                     p));
  if (rows.empty()) {
    return NotFoundError("workload '" + std::string(uid) + "' not found");
  }
  return ReadWorkload(rows, 0);
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
  f.AddRange("created_at", q.created);
  Page<WorkloadRecord> page{{}, 0, q.page.page_num, q.page.page_size};
  LENS_ASSIGN_OR_RETURN(
      Rows rows, store::ReadPage(*db_, "gpu_workloads" + f.sql(),
                                 std::string(kWorkloadSelect), order + ", uid",
                                 q.page, f, &page.total));
  for (size_t i = 0; i < rows.size(); ++i) {
    page.items.push_back(ReadWorkload(rows, i));
  }
  return page;
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
