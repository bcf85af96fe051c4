// node_containers, node_container_devices, node_container_events.
#include <unordered_map>
#include <unordered_set>

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

// At most this many devices per container.
constexpr size_t kMaxDevices = 1024;

const store::Table<ContainerRecord>& Containers() {
  using R = ContainerRecord;
  namespace f = store::field;
  static const store::Table<R> t(
      "node_containers", 1,
      {f::Key("container_id", &R::container_id), f::Key("node", &R::node),
       f::Name("runtime_namespace", &R::runtime_namespace),
       f::Name("pod_uid", &R::pod_uid), f::Name("pod_name", &R::pod_name),
       f::Name("pod_namespace", &R::pod_namespace),
       f::Name("container_name", &R::container_name),
       f::Text("image", &R::image),
       f::Enum("state", &R::state, &ParseContainerState),
       f::Bool("privileged", &R::privileged), f::Int("pid", &R::pid),
       f::OptInt("exit_code", &R::exit_code),
       f::LabelsColumn("labels", &R::labels),
       f::CreatedAt("created_at", &R::created_at, &R::updated_at),
       f::OptTime("started_at", &R::started_at),
       f::OptTime("finished_at", &R::finished_at),
       f::Time("updated_at", &R::updated_at), f::WrittenUs<R>(),
       f::Rule<R>([](std::string_view, R* c) {
         if (c->devices.size() <= kMaxDevices) return OkStatus();
         return InvalidArgumentError(
             "node_container_devices: container " + c->container_id +
             " lists " + std::to_string(c->devices.size()) +
             " devices (limit " + std::to_string(kMaxDevices) + ")");
       })},
      // A writer that saw the container only in a list (after a restart)
      // may not know when it started; what an earlier writer stored stays.
      {.keep = {"created_at"}, .keep_if_null = {"started_at"}});
  return t;
}

// A row of node_container_devices: a device and the container holding it.
struct HeldDevice : ContainerDeviceRecord {
  std::string container_id;
};

const store::Table<HeldDevice>& Devices() {
  using R = HeldDevice;
  namespace f = store::field;
  static const store::Table<R> t(
      "node_container_devices", 3,
      {f::Key<R>("container_id", &R::container_id),
       f::Enum<R, DeviceKind>("kind", &R::kind, &ParseDeviceKind),
       f::Key<R>("device_key", &R::device_key), f::Name<R>("bdf", &R::bdf),
       f::Name<R>("source", &R::source)});
  return t;
}

const store::Table<ContainerEventRecord>& Events() {
  using R = ContainerEventRecord;
  namespace f = store::field;
  static const store::Table<R> t(
      "node_container_events", 3,
      {f::Key("container_id", &R::container_id),
       f::Enum("event_type", &R::event_type, &ParseContainerEventType),
       f::Time("at", &R::at), f::Key("node", &R::node),
       f::Int("sequence", &R::sequence), f::Json("detail", &R::detail_json)});
  return t;
}

Status LoadDevices(Conn& c, ContainerRecord* rec) {
  Rows rows;
  const Param p[] = {std::string_view(rec->container_id)};
  LENS_RETURN_IF_ERROR(
      c.Execute("SELECT " + Devices().select() +
                    " FROM node_container_devices WHERE container_id = $1 "
                    "ORDER BY kind, device_key",
                p, &rows));
  rec->devices.clear();
  for (size_t i = 0; i < rows.size(); ++i) {
    rec->devices.push_back(Devices().Read(rows, i));
  }
  return OkStatus();
}

// Adds the devices of the containers `ids_sql` selects (with `p`) to their
// records in `out`, matched by id (the two engines' collations may order
// ids differently).
Status AttachDevices(Conn& c, const std::string& ids_sql,
                     std::span<const Param> p,
                     std::vector<ContainerRecord>* out) {
  if (out->empty()) return OkStatus();
  Rows devices;
  LENS_RETURN_IF_ERROR(
      c.Execute("SELECT " + Devices().select() +
                    " FROM node_container_devices WHERE container_id IN (" +
                    ids_sql + ") ORDER BY kind, device_key",
                p, &devices));
  std::unordered_map<std::string_view, ContainerRecord*> by_id;
  for (ContainerRecord& rec : *out) by_id[rec.container_id] = &rec;
  for (size_t i = 0; i < devices.size(); ++i) {
    HeldDevice d = Devices().Read(devices, i);
    auto it = by_id.find(d.container_id);
    if (it != by_id.end()) it->second->devices.push_back(std::move(d));
  }
  return OkStatus();
}

}  // namespace

Status ContainerRepository::UpsertContainers(
    std::span<const ContainerRecord> in) {
  store::Batch<ContainerRecord> batch;
  LENS_RETURN_IF_ERROR(Containers().Prepare(in, &batch));
  // A container repeated in one batch: its last state wins (UpsertRows keeps
  // the last row of a key), devices included.
  std::vector<HeldDevice> held;
  std::unordered_set<std::string_view> seen;
  std::vector<std::string_view> ids;
  for (size_t i = batch.records.size(); i-- > 0;) {
    const ContainerRecord& c = batch.records[i];
    if (!seen.insert(c.container_id).second) continue;
    ids.push_back(c.container_id);
    for (const ContainerDeviceRecord& d : c.devices) {
      held.push_back({d, c.container_id});
    }
  }
  store::Batch<HeldDevice> devices;
  LENS_RETURN_IF_ERROR(Devices().Prepare(held, &devices));
  return db_->Write([&](Conn& conn) -> Status {
    LENS_RETURN_IF_ERROR(
        store::UpsertRows(conn, Containers().upsert(), batch.rows).status());
    // Replace each container's device set: delete, then insert the current.
    for (const std::string_view id : ids) {
      const Param p[] = {id};
      LENS_RETURN_IF_ERROR(conn.Execute(
          "DELETE FROM node_container_devices WHERE container_id = $1", p));
    }
    return store::UpsertRows(conn, Devices().upsert(), devices.rows).status();
  });
}

StatusOr<ContainerRecord> ContainerRepository::GetContainer(
    std::string_view id) {
  ContainerRecord out;
  bool found = false;
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) -> Status {
    Rows rows;
    const Param p[] = {id};
    LENS_RETURN_IF_ERROR(c.Execute("SELECT " + Containers().select() +
                                       " FROM node_containers WHERE "
                                       "container_id = $1",
                                   p, &rows));
    found = !rows.empty();
    if (!found) return OkStatus();
    out = Containers().Read(rows, 0);
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
  f.AddIf(q.state.has_value(), "state = ?",
          q.state ? ToString(*q.state) : std::string_view());
  Page<ContainerRecord> page{{}, 0, q.page.page_num, q.page.page_size};
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::ReadPage(*db_, "node_containers" + f.sql(), Containers().select(),
                      order + ", container_id", q.page, f, &page.total));
  page.items = Containers().ReadAll(rows);
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) -> Status {
    for (ContainerRecord& rec : page.items) {
      LENS_RETURN_IF_ERROR(LoadDevices(c, &rec));
    }
    return OkStatus();
  }));
  return page;
}

StatusOr<std::vector<ContainerRecord>> ContainerRepository::ListLiveContainers(
    bool with_devices, std::optional<Timestamp> ended_since) {
  std::vector<ContainerRecord> out;
  std::string where =
      " FROM node_containers WHERE state IN ('created', 'running', 'paused')";
  std::vector<Param> p;
  if (ended_since) {
    p.push_back(store::Us(*ended_since));
    where +=
        " OR finished_at >= lens_ts($1) OR (state IN ('exited', 'deleted') "
        "AND updated_at >= lens_ts($1))";
  }
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) -> Status {
    out.clear();
    Rows rows;
    LENS_RETURN_IF_ERROR(c.Execute(
        "SELECT " + Containers().select() + where + " ORDER BY container_id", p,
        &rows));
    out = Containers().ReadAll(rows);
    if (!with_devices) return OkStatus();
    // Every live container's devices in one query.
    return AttachDevices(c, "SELECT container_id" + where, p, &out);
  }));
  return out;
}

StatusOr<Changes<ContainerRecord>>
ContainerRepository::ListContainersWrittenSince(Timestamp since,
                                                bool with_devices,
                                                size_t limit) {
  Changes<ContainerRecord> out;
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) -> Status {
    int64_t through = 0;
    LENS_ASSIGN_OR_RETURN(
        Rows rows, store::ReadWrittenSince(
                       c, "node_containers", Containers().select(),
                       "container_id", store::Us(since), limit, &through));
    out = {Containers().ReadAll(rows), store::FromUs(through)};
    if (!with_devices) return OkStatus();
    // The page is every row stamped in [since, through] (feed.h), read in
    // this same transaction.
    const Param p[] = {store::Us(since), through};
    return AttachDevices(c,
                         "SELECT container_id FROM node_containers WHERE "
                         "written_us >= $1 AND written_us <= $2",
                         p, &out.items);
  }));
  return out;
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
      const Param u[] = {std::string_view(id), store::Us(now),
                         c.write_time_us()};
      LENS_RETURN_IF_ERROR(c.Execute(
          "UPDATE node_containers SET state = 'deleted', updated_at = "
          "lens_ts($2), finished_at = COALESCE(finished_at, lens_ts($2)), "
          "written_us = $3 WHERE container_id = $1",
          u));
      ++changed;
    }
    return OkStatus();
  }));
  return changed;
}

Status ContainerRepository::AddContainerEvents(
    std::span<const ContainerEventRecord> in) {
  return Events().Write(*db_, in);
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
      Rows rows, store::ReadPage(*db_, "node_container_events" + f.sql(),
                                 Events().select(), "at, id", page_request, f,
                                 &page.total));
  page.items = Events().ReadAll(rows);
  return page;
}

StatusOr<std::vector<ContainerRecord>> ContainerRepository::FindDeviceHolders(
    DeviceKind kind, std::string_view device_key) {
  std::vector<ContainerRecord> out;
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) -> Status {
    out.clear();
    Rows rows;
    const Param p[] = {ToString(kind), device_key};
    LENS_RETURN_IF_ERROR(c.Execute(
        "SELECT " + Containers().select() +
            " FROM node_containers WHERE state <> 'deleted' AND container_id "
            "IN (SELECT container_id FROM node_container_devices WHERE kind = "
            "$1 AND device_key = $2) ORDER BY container_id",
        p, &rows));
    for (size_t i = 0; i < rows.size(); ++i) {
      out.push_back(Containers().Read(rows, i));
      LENS_RETURN_IF_ERROR(LoadDevices(c, &out.back()));
    }
    return OkStatus();
  }));
  return out;
}

}  // namespace lens
