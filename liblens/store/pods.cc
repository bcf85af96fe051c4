// gpu_pods, gpu_pods_events, pod_snapshots, pod_resources.
#include "lens/store.h"
#include "store/db.h"
#include "store/feed.h"
#include "store/table.h"
#include "store/text.h"

namespace lens {
namespace {

using store::Conn;
using store::Param;
using store::Rows;

const store::Table<PodRecord>& Pods() {
  using R = PodRecord;
  namespace f = store::field;
  static const store::Table<R> t(
      "gpu_pods", 1,
      {f::Key("uid", &R::uid), f::Key("name", &R::name),
       f::Key("namespace", &R::namespace_name), f::Name("node", &R::node),
       f::Name("phase", &R::phase), f::Name("owner_uid", &R::owner_uid),
       f::Name("ip", &R::ip), f::Int("gpu_allocated", &R::gpu_allocated),
       f::Bool("running", &R::running), f::Bool("deleted", &R::deleted),
       f::OptTime("started_at", &R::started_at),
       f::OptTime("ended_at", &R::ended_at), f::Int("restarts", &R::restarts),
       f::LabelsColumn("labels", &R::labels),
       f::CreatedAt("created_at", &R::created_at, &R::updated_at),
       f::Time("updated_at", &R::updated_at), f::WrittenUs<R>()},
      {.keep = {"created_at"}});
  return t;
}

const store::Table<PodEventRecord>& PodEvents() {
  using R = PodEventRecord;
  namespace f = store::field;
  static const store::Table<R> t(
      "gpu_pods_events", 3,
      {f::Key("pod_uid", &R::pod_uid), f::Key("event_type", &R::event_type),
       f::Time("at", &R::at), f::Name("phase", &R::phase),
       f::Int("restart_count", &R::restart_count)});
  return t;
}

const store::Table<PodSnapshotRecord>& PodSnapshots() {
  using R = PodSnapshotRecord;
  namespace f = store::field;
  // Only a snapshot that differs from the pod's latest is written; the
  // digest tells.
  store::Field<R> digest{
      {"digest"},
      [](std::string_view, const R& r,
         store::Scratch& scratch) -> StatusOr<Param> {
        scratch.push_back(store::HexDigest64(r.snapshot_json));
        return Param(std::string_view(scratch.back()));
      },
      nullptr,
      nullptr};
  static const store::Table<R> t(
      "pod_snapshots", 2,
      {f::Key("pod_uid", &R::pod_uid),
       f::Key("resource_version", &R::resource_version), std::move(digest),
       f::Json("snapshot", &R::snapshot_json, store::kMaxSnapshotBytes),
       f::Time("at", &R::at)},
      {.do_nothing = true});
  return t;
}

const store::Table<PodResourcesRecord>& PodResources() {
  using R = PodResourcesRecord;
  namespace f = store::field;
  static const store::Table<R> t(
      "pod_resources", 1,
      {f::Key("pod_uid", &R::pod_uid), f::Name("gpu_vendor", &R::gpu_vendor),
       f::Name("gpu_model", &R::gpu_model),
       f::Int("gpu_allocated", &R::gpu_allocated),
       f::Int("rdma_allocated", &R::rdma_allocated),
       f::Int("cpu_millis", &R::cpu_millis),
       f::Int("memory_bytes", &R::memory_bytes),
       f::Time("updated_at", &R::updated_at)});
  return t;
}

}  // namespace

Status PodRepository::UpsertPods(std::span<const PodRecord> in) {
  return Pods().Write(*db_, in);
}

StatusOr<PodRecord> PodRepository::GetPod(std::string_view uid) {
  const Param p[] = {uid};
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::Query(
          *db_, "SELECT " + Pods().select() + " FROM gpu_pods WHERE uid = $1",
          p));
  if (rows.empty()) {
    return NotFoundError("pod '" + std::string(uid) + "' not found");
  }
  return Pods().Read(rows, 0);
}

StatusOr<Page<PodRecord>> PodRepository::ListPods(const PodQuery& q) {
  LENS_RETURN_IF_ERROR(store::CheckPage(q.page));
  LENS_ASSIGN_OR_RETURN(std::string order,
                        store::OrderBy("gpu_pods", q.sort,
                                       {{"created_at", "created_at", true},
                                        {"name", "name"},
                                        {"namespace", "namespace, name"},
                                        {"node", "node"}}));
  store::Filter f;
  f.AddIf(!q.namespace_name.empty(), "namespace = ?", q.namespace_name);
  f.AddIf(!q.node.empty(), "node = ?", q.node);
  f.AddIf(!q.owner_uid.empty(), "owner_uid = ?", q.owner_uid);
  f.AddIf(q.running.has_value(), "running = ?", q.running.value_or(false));
  f.AddIf(q.deleted.has_value(), "deleted = ?", q.deleted.value_or(false));
  f.AddRange("created_at", q.created);
  Page<PodRecord> page{{}, 0, q.page.page_num, q.page.page_size};
  LENS_ASSIGN_OR_RETURN(
      Rows rows, store::ReadPage(*db_, "gpu_pods" + f.sql(), Pods().select(),
                                 order + ", uid", q.page, f, &page.total));
  page.items = Pods().ReadAll(rows);
  return page;
}

StatusOr<std::vector<PodRecord>> PodRepository::ListWorkloadPods(
    std::string_view workload_uid) {
  const Param p[] = {workload_uid};
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::Query(*db_,
                   "SELECT " + Pods().select() +
                       " FROM gpu_pods WHERE uid IN (SELECT pod_uid FROM "
                       "workload_pod_references WHERE workload_uid = $1) "
                       "ORDER BY created_at, uid",
                   p));
  return Pods().ReadAll(rows);
}

StatusOr<std::vector<PodRecord>> PodRepository::ListLivePods(
    std::optional<Timestamp> ended_since) {
  std::vector<Param> p = {false};
  std::string where = "(deleted = $1 AND ended_at IS NULL)";
  if (ended_since) {
    p.push_back(store::Us(*ended_since));
    p.push_back(true);
    where +=
        " OR ended_at >= lens_ts($2) OR (deleted = $3 AND updated_at >= "
        "lens_ts($2))";
  }
  LENS_ASSIGN_OR_RETURN(Rows rows, store::Query(*db_,
                                                "SELECT " + Pods().select() +
                                                    " FROM gpu_pods WHERE " +
                                                    where + " ORDER BY uid",
                                                p));
  return Pods().ReadAll(rows);
}

StatusOr<std::vector<std::pair<std::string, PodRecord>>>
PodRepository::ListOpenWorkloadPods() {
  // The pods' own column names, unqualified, from a derived table.
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::Query(*db_,
                   "SELECT workload_uid, " + Pods().select() +
                       " FROM (SELECT r.workload_uid AS workload_uid, p.* "
                       "FROM workload_pod_references r JOIN gpu_workloads w "
                       "ON w.uid = r.workload_uid JOIN gpu_pods p ON p.uid = "
                       "r.pod_uid WHERE w.ended_at IS NULL) AS open_pods "
                       "ORDER BY workload_uid, uid",
                   {}));
  std::vector<std::pair<std::string, PodRecord>> out;
  out.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    out.emplace_back(rows.Text(i, 0), Pods().Read(rows, i, 1));
  }
  return out;
}

StatusOr<Changes<PodRecord>> PodRepository::ListPodsWrittenSince(
    Timestamp since, size_t limit) {
  Changes<PodRecord> out;
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) -> Status {
    int64_t through = 0;
    LENS_ASSIGN_OR_RETURN(Rows rows, store::ReadWrittenSince(
                                         c, "gpu_pods", Pods().select(), "uid",
                                         store::Us(since), limit, &through));
    out = {Pods().ReadAll(rows), store::FromUs(through)};
    return OkStatus();
  }));
  return out;
}

Status PodRepository::AddPodEvents(std::span<const PodEventRecord> in) {
  return PodEvents().Write(*db_, in);
}

StatusOr<std::vector<PodEventRecord>> PodRepository::ListPodEvents(
    std::string_view pod_uid) {
  const Param p[] = {pod_uid};
  LENS_ASSIGN_OR_RETURN(
      Rows rows, store::Query(*db_,
                              "SELECT " + PodEvents().select() +
                                  " FROM gpu_pods_events WHERE pod_uid = $1 "
                                  "ORDER BY at, id",
                              p));
  return PodEvents().ReadAll(rows);
}

StatusOr<bool> PodRepository::PutPodSnapshot(const PodSnapshotRecord& in) {
  store::Batch<PodSnapshotRecord> batch;
  LENS_RETURN_IF_ERROR(PodSnapshots().Prepare(std::span(&in, 1), &batch));
  const PodSnapshotRecord& s = batch.records[0];
  const std::string digest = store::HexDigest64(s.snapshot_json);
  bool written = false;
  LENS_RETURN_IF_ERROR(db_->Write([&](Conn& c) -> Status {
    written = false;
    Rows last;
    const Param p[] = {std::string_view(s.pod_uid)};
    LENS_RETURN_IF_ERROR(
        c.Execute("SELECT digest FROM pod_snapshots WHERE pod_uid = $1 "
                  "ORDER BY at DESC, id DESC LIMIT 1",
                  p, &last));
    if (!last.empty() && last.Text(0, 0) == digest) return OkStatus();
    Rows same_version;
    const Param q[] = {std::string_view(s.pod_uid),
                       std::string_view(s.resource_version)};
    LENS_RETURN_IF_ERROR(
        c.Execute("SELECT 1 FROM pod_snapshots WHERE pod_uid = $1 AND "
                  "resource_version = $2",
                  q, &same_version));
    if (!same_version.empty()) return OkStatus();  // first write wins
    LENS_RETURN_IF_ERROR(
        store::UpsertRows(c, PodSnapshots().upsert(), batch.rows).status());
    written = true;
    return OkStatus();
  }));
  return written;
}

StatusOr<std::vector<PodSnapshotRecord>> PodRepository::ListPodSnapshots(
    std::string_view pod_uid) {
  const Param p[] = {pod_uid};
  LENS_ASSIGN_OR_RETURN(
      Rows rows, store::Query(*db_,
                              "SELECT " + PodSnapshots().select() +
                                  " FROM pod_snapshots WHERE pod_uid = $1 "
                                  "ORDER BY at, id",
                              p));
  return PodSnapshots().ReadAll(rows);
}

Status PodRepository::UpsertPodResources(
    std::span<const PodResourcesRecord> in) {
  return PodResources().Write(*db_, in);
}

StatusOr<PodResourcesRecord> PodRepository::GetPodResources(
    std::string_view pod_uid) {
  const Param p[] = {pod_uid};
  LENS_ASSIGN_OR_RETURN(
      Rows rows, store::Query(*db_,
                              "SELECT " + PodResources().select() +
                                  " FROM pod_resources WHERE pod_uid = $1",
                              p));
  if (rows.empty()) {
    return NotFoundError("resources of pod '" + std::string(pod_uid) +
                         "' not found");
  }
  return PodResources().Read(rows, 0);
}

}  // namespace lens
