// gpu_devices, rdma_devices and node_device_changelog.
#include <map>

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

std::string_view ChangeName(DeviceChange c) {
  switch (c) {
    case DeviceChange::kCreate:
      return "CREATE";
    case DeviceChange::kDelete:
      return "DELETE";
    default:
      return "REPLACE";
  }
}

DeviceChange ChangeFromName(std::string_view s) {
  if (s == "CREATE") return DeviceChange::kCreate;
  if (s == "DELETE") return DeviceChange::kDelete;
  return DeviceChange::kReplace;
}

const store::Table<GpuDeviceRecord>& Gpus() {
  using R = GpuDeviceRecord;
  namespace f = store::field;
  static const store::Table<R> t(
      "gpu_devices", 2,
      {f::Key("node", &R::node), f::Int("gpu_index", &R::gpu_index),
       f::Name("vendor", &R::vendor), f::Name("model", &R::model),
       f::Name("serial", &R::serial), f::Name("uuid", &R::uuid),
       f::Name("bdf", &R::bdf), f::Int("vram_bytes", &R::vram_bytes),
       f::Int("numa_node", &R::numa_node),
       f::Time("updated_at", &R::updated_at), f::WrittenUs<R>(),
       f::Rule<R>([](std::string_view t, R* g) {
         if (g->gpu_index >= 0) return OkStatus();
         return InvalidArgumentError(std::string(t) +
                                     ".gpu_index: must be >= 0, got " +
                                     std::to_string(g->gpu_index));
       })});
  return t;
}

const store::Table<RdmaDeviceRecord>& Rdmas() {
  using R = RdmaDeviceRecord;
  namespace f = store::field;
  static const store::Table<R> t(
      "rdma_devices", 2,
      {f::Key("node", &R::node), f::Key("name", &R::name),
       f::Name("node_guid", &R::node_guid),
       f::Name("fw_version", &R::fw_version), f::Name("board_id", &R::board_id),
       f::Name("bdf", &R::bdf), f::Name("netdev", &R::netdev),
       f::Int("numa_node", &R::numa_node),
       f::Time("updated_at", &R::updated_at)});
  return t;
}

const store::Table<DeviceChangeRecord>& ChangeLog() {
  using R = DeviceChangeRecord;
  namespace f = store::field;
  static const store::Table<R> t(
      "node_device_changelog", 5,
      {f::Key("node", &R::node), f::Enum("kind", &R::kind, &ParseDeviceKind),
       f::Key("device_key", &R::device_key),
       f::Enum("op", &R::change, &ChangeFromName, &ChangeName),
       f::Time("at", &R::at), f::Name("old_serial", &R::old_serial),
       f::Name("new_serial", &R::new_serial)},
      {.do_nothing = true});
  return t;
}

Status RequireNode(Conn& c, std::string_view node) {
  Rows rows;
  const Param p[] = {node};
  LENS_RETURN_IF_ERROR(
      c.Execute("SELECT 1 FROM nodes WHERE name = $1", p, &rows));
  if (rows.empty()) {
    return FailedPreconditionError("node '" + std::string(node) +
                                   "' is not stored; upsert it first");
  }
  return OkStatus();
}

// One sync, generic over the device table: `wanted` maps key -> identity;
// `rows` are the table's rows for this node.
struct SyncSpec {
  DeviceKind kind;
  store::UpsertSpec table;
  std::string_view key_column;
  std::string_view id_column;
};

Status Sync(Conn& c, const SyncSpec& spec, std::string_view node,
            const std::map<std::string, std::string>& wanted,
            std::span<const std::vector<Param>> rows, Timestamp now,
            DeviceSyncResult* result) {
  *result = {};
  LENS_RETURN_IF_ERROR(RequireNode(c, node));
  const std::string table(spec.table.table);
  Rows stored_rows;
  const Param p[] = {node};
  LENS_RETURN_IF_ERROR(c.Execute("SELECT " + std::string(spec.key_column) +
                                     ", " + std::string(spec.id_column) +
                                     " FROM " + table + " WHERE node = $1",
                                 p, &stored_rows));
  std::map<std::string, std::string> stored;
  for (size_t i = 0; i < stored_rows.size(); ++i) {
    stored[stored_rows.Text(i, 0)] = stored_rows.Text(i, 1);
  }
  std::vector<DeviceChangeRecord> changes;
  auto change = [&](const std::string& key, DeviceChange op,
                    std::string_view old_id, std::string_view new_id) {
    changes.push_back({std::string(node), spec.kind, key, op,
                       std::string(old_id), std::string(new_id), now});
  };
  for (const auto& [key, id] : wanted) {
    auto it = stored.find(key);
    if (it == stored.end()) {
      change(key, DeviceChange::kCreate, "", id);
      ++result->created;
    } else if (it->second != id) {
      change(key, DeviceChange::kReplace, it->second, id);
      ++result->replaced;
    } else {
      ++result->unchanged;
    }
  }
  for (const auto& [key, id] : stored) {
    if (wanted.count(key)) continue;
    change(key, DeviceChange::kDelete, id, "");
    ++result->deleted;
    // gpu_index is an integer column: compare as text on both engines.
    const Param d[] = {node, std::string_view(key)};
    LENS_RETURN_IF_ERROR(
        c.Execute("DELETE FROM " + table + " WHERE node = $1 AND CAST(" +
                      std::string(spec.key_column) + " AS TEXT) = $2",
                  d));
  }
  LENS_RETURN_IF_ERROR(store::UpsertRows(c, spec.table, rows).status());
  store::Batch<DeviceChangeRecord> log;
  LENS_RETURN_IF_ERROR(ChangeLog().Prepare(changes, &log));
  return store::UpsertRows(c, ChangeLog().upsert(), log.rows).status();
}

}  // namespace

namespace {

// One node's devices of one kind, checked and ready to sync: the rows to
// upsert and each key's identity.
template <typename R>
struct Prepared {
  std::string node;
  store::Batch<R> batch;
  std::map<std::string, std::string> wanted;
};

Status PrepareGpus(std::string_view node_in,
                   std::span<const GpuDeviceRecord> devices, Timestamp now,
                   Prepared<GpuDeviceRecord>* out) {
  constexpr std::string_view t = "gpu_devices";
  out->node = std::string(node_in);
  LENS_RETURN_IF_ERROR(store::CheckKey(t, "node", &out->node));
  LENS_RETURN_IF_ERROR(store::CheckTime(t, "now", now));
  std::vector<GpuDeviceRecord> gpus(devices.begin(), devices.end());
  for (GpuDeviceRecord& g : gpus) {
    g.node = out->node;
    g.updated_at = now;
  }
  LENS_RETURN_IF_ERROR(Gpus().Prepare(gpus, &out->batch));
  for (const GpuDeviceRecord& g : out->batch.records) {
    // Identity: the serial, or the BDF for GPUs that report no serial.
    const std::string key = std::to_string(g.gpu_index);
    if (!out->wanted.emplace(key, g.serial.empty() ? g.bdf : g.serial).second) {
      return InvalidArgumentError("gpu_devices: index " + key +
                                  " appears twice for node " + out->node);
    }
  }
  return OkStatus();
}

Status PrepareRdma(std::string_view node_in,
                   std::span<const RdmaDeviceRecord> devices, Timestamp now,
                   Prepared<RdmaDeviceRecord>* out) {
  constexpr std::string_view t = "rdma_devices";
  out->node = std::string(node_in);
  LENS_RETURN_IF_ERROR(store::CheckKey(t, "node", &out->node));
  LENS_RETURN_IF_ERROR(store::CheckTime(t, "now", now));
  std::vector<RdmaDeviceRecord> devs(devices.begin(), devices.end());
  for (RdmaDeviceRecord& d : devs) {
    d.node = out->node;
    d.updated_at = now;
  }
  LENS_RETURN_IF_ERROR(Rdmas().Prepare(devs, &out->batch));
  for (const RdmaDeviceRecord& d : out->batch.records) {
    if (!out->wanted.emplace(d.name, d.node_guid).second) {
      return InvalidArgumentError("rdma_devices: device " + d.name +
                                  " appears twice for node " + out->node);
    }
  }
  return OkStatus();
}

const SyncSpec& GpuSync() {
  static const SyncSpec spec{DeviceKind::kGpu, Gpus().upsert(), "gpu_index",
                             "CASE WHEN serial = '' THEN bdf ELSE serial END"};
  return spec;
}
const SyncSpec& RdmaSync() {
  static const SyncSpec spec{DeviceKind::kRdma, Rdmas().upsert(), "name",
                             "node_guid"};
  return spec;
}

void Add(const DeviceSyncResult& r, DeviceSyncResult* total) {
  total->created += r.created;
  total->deleted += r.deleted;
  total->replaced += r.replaced;
  total->unchanged += r.unchanged;
}

}  // namespace

StatusOr<DeviceSyncResult> NodeRepository::SyncGpuDevices(
    std::string_view node, std::span<const GpuDeviceRecord> devices,
    Timestamp now) {
  Prepared<GpuDeviceRecord> p;
  LENS_RETURN_IF_ERROR(PrepareGpus(node, devices, now, &p));
  DeviceSyncResult result;
  LENS_RETURN_IF_ERROR(db_->Write([&](Conn& c) {
    return Sync(c, GpuSync(), p.node, p.wanted, p.batch.rows, now, &result);
  }));
  return result;
}

StatusOr<DeviceSyncResult> NodeRepository::SyncRdmaDevices(
    std::string_view node, std::span<const RdmaDeviceRecord> devices,
    Timestamp now) {
  Prepared<RdmaDeviceRecord> p;
  LENS_RETURN_IF_ERROR(PrepareRdma(node, devices, now, &p));
  DeviceSyncResult result;
  LENS_RETURN_IF_ERROR(db_->Write([&](Conn& c) {
    return Sync(c, RdmaSync(), p.node, p.wanted, p.batch.rows, now, &result);
  }));
  return result;
}

StatusOr<DeviceSyncResult> NodeRepository::SyncNodeDevices(
    std::span<const NodeInventory> nodes, Timestamp now) {
  std::vector<Prepared<GpuDeviceRecord>> gpus(nodes.size());
  std::vector<Prepared<RdmaDeviceRecord>> rdma(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    LENS_RETURN_IF_ERROR(
        PrepareGpus(nodes[i].node, nodes[i].gpus, now, &gpus[i]));
    LENS_RETURN_IF_ERROR(
        PrepareRdma(nodes[i].node, nodes[i].rdma, now, &rdma[i]));
  }
  DeviceSyncResult total;
  LENS_RETURN_IF_ERROR(db_->Write([&](Conn& c) -> Status {
    total = {};  // a retried transaction starts over
    for (size_t i = 0; i < nodes.size(); ++i) {
      DeviceSyncResult r;
      LENS_RETURN_IF_ERROR(Sync(c, GpuSync(), gpus[i].node, gpus[i].wanted,
                                gpus[i].batch.rows, now, &r));
      Add(r, &total);
      LENS_RETURN_IF_ERROR(Sync(c, RdmaSync(), rdma[i].node, rdma[i].wanted,
                                rdma[i].batch.rows, now, &r));
      Add(r, &total);
    }
    return OkStatus();
  }));
  return total;
}

StatusOr<std::vector<GpuDeviceRecord>> NodeRepository::ListGpuDevices(
    std::string_view node) {
  Rows rows;
  const Param p[] = {node};
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) {
    return c.Execute("SELECT " + Gpus().select() +
                         " FROM gpu_devices WHERE node = $1 ORDER BY gpu_index",
                     p, &rows);
  }));
  return Gpus().ReadAll(rows);
}

StatusOr<std::vector<GpuDeviceRecord>> NodeRepository::ListAllGpuDevices() {
  Rows rows;
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) {
    return c.Execute("SELECT " + Gpus().select() +
                         " FROM gpu_devices ORDER BY node, gpu_index",
                     {}, &rows);
  }));
  return Gpus().ReadAll(rows);
}

StatusOr<GpuDeviceRecord> NodeRepository::GetGpuDevice(std::string_view node,
                                                       int32_t index) {
  Rows rows;
  const Param p[] = {node, int64_t{index}};
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) {
    return c.Execute("SELECT " + Gpus().select() +
                         " FROM gpu_devices WHERE node = $1 AND gpu_index = $2",
                     p, &rows);
  }));
  if (rows.empty()) {
    return NotFoundError("gpu " + std::to_string(index) + " of node '" +
                         std::string(node) + "' not found");
  }
  return Gpus().Read(rows, 0);
}

StatusOr<Changes<GpuDeviceRecord>> NodeRepository::ListGpuDevicesWrittenSince(
    Timestamp since, size_t limit) {
  Changes<GpuDeviceRecord> out;
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) -> Status {
    int64_t through = 0;
    LENS_ASSIGN_OR_RETURN(
        Rows rows, store::ReadWrittenSince(c, "gpu_devices", Gpus().select(),
                                           "node, gpu_index", store::Us(since),
                                           limit, &through));
    out = {Gpus().ReadAll(rows), store::FromUs(through)};
    return OkStatus();
  }));
  return out;
}

StatusOr<std::vector<RdmaDeviceRecord>> NodeRepository::ListRdmaDevices(
    std::string_view node) {
  Rows rows;
  const Param p[] = {node};
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) {
    return c.Execute("SELECT " + Rdmas().select() +
                         " FROM rdma_devices WHERE node = $1 ORDER BY name",
                     p, &rows);
  }));
  return Rdmas().ReadAll(rows);
}

StatusOr<Page<DeviceChangeRecord>> NodeRepository::ListDeviceChanges(
    std::string_view node, TimeRange range, PageRequest page_request) {
  LENS_RETURN_IF_ERROR(store::CheckPage(page_request));
  store::Filter f;
  f.AddIf(!node.empty(), "node = ?", node);
  f.AddRange("at", range);
  Page<DeviceChangeRecord> page{
      {}, 0, page_request.page_num, page_request.page_size};
  LENS_ASSIGN_OR_RETURN(
      Rows rows, store::ReadPage(*db_, "node_device_changelog" + f.sql(),
                                 ChangeLog().select(), "at DESC, id DESC",
                                 page_request, f, &page.total));
  page.items = ChangeLog().ReadAll(rows);
  return page;
}

}  // namespace lens
