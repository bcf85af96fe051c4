// gpu_pods, gpu_pods_events, pod_snapshots, pod_resources.
#include "lens/store.h"
#include "store/db.h"
#include "store/text.h"

namespace lens {
namespace {

using store::ColumnKind;
using store::Conn;
using store::Param;
using store::Rows;

constexpr store::Column kPodColumns[] = {
    {"uid"},
    {"name"},
    {"namespace"},
    {"node"},
    {"phase"},
    {"owner_uid"},
    {"ip"},
    {"gpu_allocated"},
    {"running"},
    {"deleted"},
    {"labels", ColumnKind::kJson},
    {"created_at", ColumnKind::kTimestamp},
    {"updated_at", ColumnKind::kTimestamp}};

constexpr std::string_view kPodSelect =
    "uid, name, namespace, node, phase, owner_uid, ip, gpu_allocated, "
    "running, deleted, labels, lens_us(created_at), lens_us(updated_at)";

PodRecord ReadPod(const Rows& r, size_t i) {
  constexpr size_t o = 0;
  PodRecord p;
  p.uid = r.Text(i, o + 0);
  p.name = r.Text(i, o + 1);
  p.namespace_name = r.Text(i, o + 2);
  p.node = r.Text(i, o + 3);
  p.phase = r.Text(i, o + 4);
  p.owner_uid = r.Text(i, o + 5);
  p.ip = r.Text(i, o + 6);
  p.gpu_allocated = static_cast<int32_t>(r.Int(i, o + 7));
  p.running = r.Bool(i, o + 8);
  p.deleted = r.Bool(i, o + 9);
  p.labels_json = r.Text(i, o + 10);
  p.created_at = store::FromUs(r.Int(i, o + 11));
  p.updated_at = store::FromUs(r.Int(i, o + 12));
  return p;
}

Status CheckPod(PodRecord* p) {
  constexpr std::string_view t = "gpu_pods";
  LENS_RETURN_IF_ERROR(store::CheckKey(t, "uid", &p->uid));
  LENS_RETURN_IF_ERROR(store::CheckKey(t, "name", &p->name));
  LENS_RETURN_IF_ERROR(store::CheckKey(t, "namespace", &p->namespace_name));
  LENS_RETURN_IF_ERROR(store::CheckTexts(t,
                                         {{"node", &p->node},
                                          {"phase", &p->phase},
                                          {"owner_uid", &p->owner_uid},
                                          {"ip", &p->ip}},
                                         store::kMaxKeyBytes));
  LENS_RETURN_IF_ERROR(store::CheckJson(t, "labels", &p->labels_json));
  return store::CheckTimes(t, &p->created_at, p->updated_at);
}

}  // namespace

Status PodRepository::UpsertPods(std::span<const PodRecord> in) {
  std::vector<PodRecord> pods(in.begin(), in.end());
  std::vector<std::vector<Param>> rows;
  rows.reserve(pods.size());
  for (PodRecord& p : pods) {
    LENS_RETURN_IF_ERROR(CheckPod(&p));
    rows.push_back({p.uid, p.name, p.namespace_name, p.node, p.phase,
                    p.owner_uid, p.ip, int64_t{p.gpu_allocated}, p.running,
                    p.deleted, p.labels_json, store::Us(p.created_at),
                    store::Us(p.updated_at)});
  }
  static constexpr std::string_view kKeep[] = {"created_at"};
  return store::WriteRows(*db_, {"gpu_pods", kPodColumns, 1, kKeep}, rows);
}

StatusOr<PodRecord> PodRepository::GetPod(std::string_view uid) {
  const Param p[] = {uid};
  LENS_ASSIGN_OR_RETURN(Rows rows,
                        store::Query(*db_,
                                     "SELECT " + std::string(kPodSelect) +
                                         " FROM gpu_pods WHERE uid = $1",
                                     p));
  if (rows.empty()) {
    return NotFoundError("pod '" + std::string(uid) + "' not found");
  }
  return ReadPod(rows, 0);
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
  f.AddRange("created_at", q.created);
  Page<PodRecord> page{{}, 0, q.page.page_num, q.page.page_size};
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::ReadPage(*db_, "gpu_pods" + f.sql(), std::string(kPodSelect),
                      order + ", uid", q.page, f, &page.total));
  for (size_t i = 0; i < rows.size(); ++i)
    page.items.push_back(ReadPod(rows, i));
  return page;
}

StatusOr<std::vector<PodRecord>> PodRepository::ListWorkloadPods(
    std::string_view workload_uid) {
  const Param p[] = {workload_uid};
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::Query(*db_,
                   "SELECT " + std::string(kPodSelect) +
                       " FROM gpu_pods WHERE uid IN (SELECT pod_uid FROM "
                       "workload_pod_references WHERE workload_uid = $1) "
                       "ORDER BY created_at, uid",
                   p));
  std::vector<PodRecord> out;
  for (size_t i = 0; i < rows.size(); ++i) out.push_back(ReadPod(rows, i));
  return out;
}

Status PodRepository::AddPodEvents(std::span<const PodEventRecord> in) {
  constexpr std::string_view t = "gpu_pods_events";
  std::vector<PodEventRecord> events(in.begin(), in.end());
  std::vector<std::vector<Param>> rows;
  for (PodEventRecord& e : events) {
    LENS_RETURN_IF_ERROR(store::CheckKey(t, "pod_uid", &e.pod_uid));
    LENS_RETURN_IF_ERROR(store::CheckKey(t, "event_type", &e.event_type));
    LENS_RETURN_IF_ERROR(
        store::CheckText(t, "phase", &e.phase, store::kMaxKeyBytes));
    LENS_RETURN_IF_ERROR(store::CheckTime(t, "at", e.at));
    rows.push_back({e.pod_uid, e.event_type, store::Us(e.at), e.phase,
                    int64_t{e.restart_count}});
  }
  static constexpr store::Column kColumns[] = {{"pod_uid"},
                                               {"event_type"},
                                               {"at", ColumnKind::kTimestamp},
                                               {"phase"},
                                               {"restart_count"}};
  return store::WriteRows(*db_, {t, kColumns, 3}, rows);
}

StatusOr<std::vector<PodEventRecord>> PodRepository::ListPodEvents(
    std::string_view pod_uid) {
  const Param p[] = {pod_uid};
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::Query(
          *db_,
          "SELECT pod_uid, event_type, phase, restart_count, lens_us(at) FROM "
          "gpu_pods_events WHERE pod_uid = $1 ORDER BY at, id",
          p));
  std::vector<PodEventRecord> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    out.push_back({rows.Text(i, 0), rows.Text(i, 1), rows.Text(i, 2),
                   static_cast<int32_t>(rows.Int(i, 3)),
                   store::FromUs(rows.Int(i, 4))});
  }
  return out;
}

StatusOr<bool> PodRepository::PutPodSnapshot(const PodSnapshotRecord& in) {
  constexpr std::string_view t = "pod_snapshots";
  PodSnapshotRecord s = in;
  LENS_RETURN_IF_ERROR(store::CheckKey(t, "pod_uid", &s.pod_uid));
  LENS_RETURN_IF_ERROR(
      store::CheckKey(t, "resource_version", &s.resource_version));
  LENS_RETURN_IF_ERROR(store::CheckJson(t, "snapshot", &s.snapshot_json,
                                        store::kMaxSnapshotBytes));
  LENS_RETURN_IF_ERROR(store::CheckTime(t, "at", s.at));
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
    const std::vector<Param> row = {s.pod_uid, s.resource_version, digest,
                                    s.snapshot_json, store::Us(s.at)};
    static constexpr store::Column kColumns[] = {
        {"pod_uid"},
        {"resource_version"},
        {"digest"},
        {"snapshot", ColumnKind::kJson},
        {"at", ColumnKind::kTimestamp}};
    LENS_RETURN_IF_ERROR(
        store::UpsertRows(c, {t, kColumns, 2, {}, true}, std::span(&row, 1))
            .status());
    written = true;
    return OkStatus();
  }));
  return written;
}

StatusOr<std::vector<PodSnapshotRecord>> PodRepository::ListPodSnapshots(
    std::string_view pod_uid) {
  const Param p[] = {pod_uid};
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::Query(
          *db_,
          "SELECT pod_uid, resource_version, snapshot, lens_us(at) FROM "
          "pod_snapshots WHERE pod_uid = $1 ORDER BY at, id",
          p));
  std::vector<PodSnapshotRecord> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    out.push_back({rows.Text(i, 0), rows.Text(i, 1), rows.Text(i, 2),
                   store::FromUs(rows.Int(i, 3))});
  }
  return out;
}

Status PodRepository::UpsertPodResources(
    std::span<const PodResourcesRecord> in) {
  constexpr std::string_view t = "pod_resources";
  std::vector<PodResourcesRecord> res(in.begin(), in.end());
  std::vector<std::vector<Param>> rows;
  for (PodResourcesRecord& r : res) {
    LENS_RETURN_IF_ERROR(store::CheckKey(t, "pod_uid", &r.pod_uid));
    LENS_RETURN_IF_ERROR(
        store::CheckText(t, "gpu_vendor", &r.gpu_vendor, store::kMaxKeyBytes));
    LENS_RETURN_IF_ERROR(
        store::CheckText(t, "gpu_model", &r.gpu_model, store::kMaxKeyBytes));
    LENS_RETURN_IF_ERROR(store::CheckTime(t, "updated_at", r.updated_at));
    rows.push_back({r.pod_uid, r.gpu_vendor, r.gpu_model,
                    int64_t{r.gpu_allocated}, int64_t{r.rdma_allocated},
                    r.cpu_millis, r.memory_bytes, store::Us(r.updated_at)});
  }
  static constexpr store::Column kColumns[] = {
      {"pod_uid"},        {"gpu_vendor"},
      {"gpu_model"},      {"gpu_allocated"},
      {"rdma_allocated"}, {"cpu_millis"},
      {"memory_bytes"},   {"updated_at", ColumnKind::kTimestamp}};
  return store::WriteRows(*db_, {t, kColumns, 1}, rows);
}

StatusOr<PodResourcesRecord> PodRepository::GetPodResources(
    std::string_view pod_uid) {
  const Param p[] = {pod_uid};
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::Query(
          *db_,
          "SELECT pod_uid, gpu_vendor, gpu_model, gpu_allocated, "
          "rdma_allocated, "
          "cpu_millis, memory_bytes, lens_us(updated_at) FROM pod_resources "
          "WHERE pod_uid = $1",
          p));
  if (rows.empty()) {
    return NotFoundError("resources of pod '" + std::string(pod_uid) +
                         "' not found");
  }
  return PodResourcesRecord{rows.Text(0, 0),
                            rows.Text(0, 1),
                            rows.Text(0, 2),
                            static_cast<int32_t>(rows.Int(0, 3)),
                            static_cast<int32_t>(rows.Int(0, 4)),
                            rows.Int(0, 5),
                            rows.Int(0, 6),
                            store::FromUs(rows.Int(0, 7))};
}

}  // namespace lens
