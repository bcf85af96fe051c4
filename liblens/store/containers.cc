// node_containers, node_container_devices, node_container_events.
#include <unordered_set>

#include "lens/store.h"
#include "store/db.h"
#include "store/text.h"

namespace lens {
namespace {

using store::ColumnKind;
using store::Conn;
using store::Param;
using store::Rows;

constexpr std::string_view kContainerSelect =
    "container_id, node, runtime_namespace, pod_uid, pod_name, pod_namespace, "
    "container_name, image, state, privileged, pid, exit_code, labels, "
    "lens_us(created_at), lens_us(started_at), lens_us(finished_at), "
    "lens_us(updated_at)";

constexpr store::Column kContainerColumns[] = {
    {"container_id"},
    {"node"},
    {"runtime_namespace"},
    {"pod_uid"},
    {"pod_name"},
    {"pod_namespace"},
    {"container_name"},
    {"image"},
    {"state"},
    {"privileged"},
    {"pid"},
    {"exit_code"},
    {"labels", ColumnKind::kJson},
    {"created_at", ColumnKind::kTimestamp},
    {"started_at", ColumnKind::kTimestamp},
    {"finished_at", ColumnKind::kTimestamp},
    {"updated_at", ColumnKind::kTimestamp}};

constexpr store::Column kDeviceColumns[] = {
    {"container_id"}, {"kind"}, {"device_key"}, {"bdf"}, {"source"}};

ContainerRecord ReadContainer(const Rows& r, size_t i) {
  ContainerRecord c;
  c.container_id = r.Text(i, 0);
  c.node = r.Text(i, 1);
  c.runtime_namespace = r.Text(i, 2);
  c.pod_uid = r.Text(i, 3);
  c.pod_name = r.Text(i, 4);
  c.pod_namespace = r.Text(i, 5);
  c.container_name = r.Text(i, 6);
  c.image = r.Text(i, 7);
  c.state = r.Text(i, 8);
  c.privileged = r.Bool(i, 9);
  c.pid = r.Int(i, 10);
  if (!r.IsNull(i, 11)) c.exit_code = static_cast<int32_t>(r.Int(i, 11));
  c.labels_json = r.Text(i, 12);
  c.created_at = store::FromUs(r.Int(i, 13));
  if (!r.IsNull(i, 14)) c.started_at = store::FromUs(r.Int(i, 14));
  if (!r.IsNull(i, 15)) c.finished_at = store::FromUs(r.Int(i, 15));
  c.updated_at = store::FromUs(r.Int(i, 16));
  return c;
}

Status CheckContainer(ContainerRecord* c) {
  constexpr std::string_view t = "node_containers";
  LENS_RETURN_IF_ERROR(store::CheckKey(t, "container_id", &c->container_id));
  LENS_RETURN_IF_ERROR(store::CheckKey(t, "node", &c->node));
  LENS_RETURN_IF_ERROR(
      store::CheckTexts(t,
                        {{"runtime_namespace", &c->runtime_namespace},
                         {"pod_uid", &c->pod_uid},
                         {"pod_name", &c->pod_name},
                         {"pod_namespace", &c->pod_namespace},
                         {"container_name", &c->container_name},
                         {"state", &c->state}},
                        store::kMaxKeyBytes));
  LENS_RETURN_IF_ERROR(
      store::CheckText(t, "image", &c->image, store::kMaxTextBytes));
  LENS_RETURN_IF_ERROR(store::CheckJson(t, "labels", &c->labels_json));
  LENS_RETURN_IF_ERROR(store::CheckTimes(t, &c->created_at, c->updated_at));
  if (c->devices.size() > 1024) {
    return InvalidArgumentError(
        "node_container_devices: container " + c->container_id + " lists " +
        std::to_string(c->devices.size()) + " devices (limit 1024)");
  }
  for (ContainerDeviceRecord& d : c->devices) {
    constexpr std::string_view dt = "node_container_devices";
    LENS_RETURN_IF_ERROR(store::CheckKey(dt, "kind", &d.kind));
    LENS_RETURN_IF_ERROR(store::CheckKey(dt, "device_key", &d.device_key));
    LENS_RETURN_IF_ERROR(
        store::CheckText(dt, "bdf", &d.bdf, store::kMaxKeyBytes));
    LENS_RETURN_IF_ERROR(
        store::CheckText(dt, "source", &d.source, store::kMaxKeyBytes));
  }
  return OkStatus();
}

Status LoadDevices(Conn& c, ContainerRecord* rec) {
  Rows rows;
  const Param p[] = {std::string_view(rec->container_id)};
  LENS_RETURN_IF_ERROR(c.Execute(
      "SELECT kind, device_key, bdf, source FROM node_container_devices "
      "WHERE container_id = $1 ORDER BY kind, device_key",
      p, &rows));
  rec->devices.clear();
  for (size_t i = 0; i < rows.size(); ++i) {
    rec->devices.push_back(
        {rows.Text(i, 0), rows.Text(i, 1), rows.Text(i, 2), rows.Text(i, 3)});
  }
  return OkStatus();
}

}  // namespace

Status ContainerRepository::UpsertContainers(
    std::span<const ContainerRecord> in) {
  std::vector<ContainerRecord> containers(in.begin(), in.end());
  std::vector<std::vector<Param>> rows, devices;
  for (ContainerRecord& c : containers) {
    LENS_RETURN_IF_ERROR(CheckContainer(&c));
  }
  // A container repeated in one batch: its last state wins, devices included.
  std::unordered_set<std::string_view> seen;
  for (auto it = containers.rbegin(); it != containers.rend(); ++it) {
    const ContainerRecord& c = *it;
    if (!seen.insert(c.container_id).second) continue;
    rows.push_back(
        {c.container_id, c.node, c.runtime_namespace, c.pod_uid, c.pod_name,
         c.pod_namespace, c.container_name, c.image, c.state, c.privileged,
         c.pid, c.exit_code ? Param(int64_t{*c.exit_code}) : Param(),
         c.labels_json, store::Us(c.created_at), store::OptUs(c.started_at),
         store::OptUs(c.finished_at), store::Us(c.updated_at)});
    for (const ContainerDeviceRecord& d : c.devices) {
      devices.push_back(
          {c.container_id, d.kind, d.device_key, d.bdf, d.source});
    }
  }
  static constexpr std::string_view kKeep[] = {"created_at"};
  // A writer that saw the container only in a list (after a restart) may
  // not know when it started; what an earlier writer stored stays.
  static constexpr std::string_view kKeepIfNull[] = {"started_at"};
  return db_->Write([&](Conn& conn) -> Status {
    LENS_RETURN_IF_ERROR(
        store::UpsertRows(conn,
                          {"node_containers", kContainerColumns, 1, kKeep,
                           false, kKeepIfNull},
                          rows)
            .status());
    // Replace each container's device set: delete, then insert the current.
    for (const auto& row : rows) {
      const Param p[] = {row[0]};
      LENS_RETURN_IF_ERROR(conn.Execute(
          "DELETE FROM node_container_devices WHERE container_id = $1", p));
    }
    return store::UpsertRows(
               conn, {"node_container_devices", kDeviceColumns, 3}, devices)
        .status();
  });
}

StatusOr<ContainerRecord> ContainerRepository::GetContainer(
    std::string_view id) {
  ContainerRecord out;
  bool found = false;
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) -> Status {
    Rows rows;
    const Param p[] = {id};
    LENS_RETURN_IF_ERROR(c.Execute("SELECT " + std::string(kContainerSelect) +
                                       " FROM node_containers WHERE "
                                       "container_id = $1",
                                   p, &rows));
    found = !rows.empty();
    if (!found) return OkStatus();
    out = ReadContainer(rows, 0);
    return LoadDevices(c, &out);
  }));
  if (!found) {
    return NotFoundError("container '" + std::string(id) + "' not found");
  }
  return out;
}

StatusOr<Page<ContainerRecord>> ContainerRepository::ListContainers(
    const ContainerQuery& q) {
  LENS_RETURN_IF_ERROR(store::CheckPage(q.page));
  LENS_ASSIGN_OR_RETURN(
      std::string order,
      store::OrderBy("node_containers", q.sort,
                     {{"created_at", "created_at", true},
                      {"container_id", "container_id"},
                      {"pod_name", "pod_namespace, pod_name"}}));
  store::Filter f;
  f.AddIf(!q.node.empty(), "node = ?", q.node);
  f.AddIf(!q.pod_uid.empty(), "pod_uid = ?", q.pod_uid);
  f.AddIf(!q.state.empty(), "state = ?", q.state);
  Page<ContainerRecord> page{{}, 0, q.page.page_num, q.page.page_size};
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::ReadPage(*db_, "node_containers" + f.sql(),
                      std::string(kContainerSelect), order + ", container_id",
                      q.page, f, &page.total));
  for (size_t i = 0; i < rows.size(); ++i) {
    page.items.push_back(ReadContainer(rows, i));
  }
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) -> Status {
    for (ContainerRecord& rec : page.items) {
      LENS_RETURN_IF_ERROR(LoadDevices(c, &rec));
    }
    return OkStatus();
  }));
  return page;
}

StatusOr<int64_t> ContainerRepository::MarkMissingDeleted(
    std::string_view node, std::span<const std::string> live_ids,
    Timestamp now) {
  LENS_RETURN_IF_ERROR(store::CheckTime("node_containers", "now", now));
  const std::unordered_set<std::string_view> live(live_ids.begin(),
                                                  live_ids.end());
  int64_t changed = 0;
  LENS_RETURN_IF_ERROR(db_->Write([&](Conn& c) -> Status {
    changed = 0;
    Rows rows;
    const Param p[] = {node};
    LENS_RETURN_IF_ERROR(c.Execute(
        "SELECT container_id FROM node_containers WHERE node = $1 AND "
        "state <> 'deleted'",
        p, &rows));
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string id = rows.Text(i, 0);
      if (live.count(id)) continue;
      const Param u[] = {std::string_view(id), store::Us(now)};
      LENS_RETURN_IF_ERROR(c.Execute(
          "UPDATE node_containers SET state = 'deleted', updated_at = "
          "lens_ts($2), finished_at = COALESCE(finished_at, lens_ts($2)) "
          "WHERE container_id = $1",
          u));
      ++changed;
    }
    return OkStatus();
  }));
  return changed;
}

Status ContainerRepository::AddContainerEvents(
    std::span<const ContainerEventRecord> in) {
  constexpr std::string_view t = "node_container_events";
  std::vector<ContainerEventRecord> events(in.begin(), in.end());
  std::vector<std::vector<Param>> rows;
  for (ContainerEventRecord& e : events) {
    LENS_RETURN_IF_ERROR(store::CheckKey(t, "container_id", &e.container_id));
    LENS_RETURN_IF_ERROR(store::CheckKey(t, "node", &e.node));
    LENS_RETURN_IF_ERROR(store::CheckKey(t, "event_type", &e.event_type));
    LENS_RETURN_IF_ERROR(store::CheckJson(t, "detail", &e.detail_json));
    LENS_RETURN_IF_ERROR(store::CheckTime(t, "at", e.at));
    rows.push_back({e.container_id, e.event_type, store::Us(e.at), e.node,
                    e.sequence, e.detail_json});
  }
  static constexpr store::Column kColumns[] = {
      {"container_id"}, {"event_type"}, {"at", ColumnKind::kTimestamp},
      {"node"},         {"sequence"},   {"detail", ColumnKind::kJson}};
  return store::WriteRows(*db_, {t, kColumns, 3}, rows);
}

StatusOr<Page<ContainerEventRecord>> ContainerRepository::ListContainerEvents(
    std::string_view container_id, TimeRange range, PageRequest page_request) {
  LENS_RETURN_IF_ERROR(store::CheckPage(page_request));
  store::Filter f;
  f.AddIf(!container_id.empty(), "container_id = ?", container_id);
  f.AddRange("at", range);
  Page<ContainerEventRecord> page{
      {}, 0, page_request.page_num, page_request.page_size};
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::ReadPage(*db_, "node_container_events" + f.sql(),
                      "container_id, node, event_type, sequence, detail, "
                      "lens_us(at)",
                      "at, id", page_request, f, &page.total));
  for (size_t i = 0; i < rows.size(); ++i) {
    page.items.push_back({rows.Text(i, 0), rows.Text(i, 1), rows.Text(i, 2),
                          rows.Int(i, 3), rows.Text(i, 4),
                          store::FromUs(rows.Int(i, 5))});
  }
  return page;
}

StatusOr<std::vector<ContainerRecord>> ContainerRepository::FindDeviceHolders(
    std::string_view kind, std::string_view device_key) {
  std::vector<ContainerRecord> out;
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) -> Status {
    out.clear();
    Rows rows;
    const Param p[] = {kind, device_key};
    LENS_RETURN_IF_ERROR(c.Execute(
        "SELECT " + std::string(kContainerSelect) +
            " FROM node_containers WHERE state <> 'deleted' AND container_id "
            "IN (SELECT container_id FROM node_container_devices WHERE kind = "
            "$1 AND device_key = $2) ORDER BY container_id",
        p, &rows));
    for (size_t i = 0; i < rows.size(); ++i) {
      out.push_back(ReadContainer(rows, i));
      LENS_RETURN_IF_ERROR(LoadDevices(c, &out.back()));
    }
    return OkStatus();
  }));
  return out;
}

}  // namespace lens
