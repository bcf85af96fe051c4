// gpu_devices, rdma_devices and node_device_changelog.
#include <map>

#include "lens/store.h"
#include "store/db.h"
#include "store/text.h"

namespace lens {
namespace {

using store::ColumnKind;
using store::Conn;
using store::Param;
using store::Rows;

constexpr store::Column kGpuColumns[] = {
    {"node"},      {"gpu_index"},
    {"vendor"},    {"model"},
    {"serial"},    {"uuid"},
    {"bdf"},       {"vram_bytes"},
    {"numa_node"}, {"updated_at", ColumnKind::kTimestamp}};

constexpr store::Column kRdmaColumns[] = {
    {"node"},       {"name"},      {"node_guid"},
    {"fw_version"}, {"board_id"},  {"bdf"},
    {"netdev"},     {"numa_node"}, {"updated_at", ColumnKind::kTimestamp}};

constexpr store::Column kChangeColumns[] = {{"node"},
                                            {"kind"},
                                            {"device_key"},
                                            {"op"},
                                            {"at", ColumnKind::kTimestamp},
                                            {"old_serial"},
                                            {"new_serial"}};

constexpr std::string_view kGpuSelect =
    "SELECT node, gpu_index, vendor, model, serial, uuid, bdf, vram_bytes, "
    "numa_node, lens_us(updated_at) FROM gpu_devices";
constexpr std::string_view kRdmaSelect =
    "SELECT node, name, node_guid, fw_version, board_id, bdf, netdev, "
    "numa_node, lens_us(updated_at) FROM rdma_devices";

GpuDeviceRecord ReadGpu(const Rows& r, size_t i) {
  GpuDeviceRecord g;
  g.node = r.Text(i, 0);
  g.gpu_index = static_cast<int32_t>(r.Int(i, 1));
  g.vendor = r.Text(i, 2);
  g.model = r.Text(i, 3);
  g.serial = r.Text(i, 4);
  g.uuid = r.Text(i, 5);
  g.bdf = r.Text(i, 6);
  g.vram_bytes = r.Int(i, 7);
  g.numa_node = static_cast<int32_t>(r.Int(i, 8));
  g.updated_at = store::FromUs(r.Int(i, 9));
  return g;
}

RdmaDeviceRecord ReadRdma(const Rows& r, size_t i) {
  RdmaDeviceRecord d;
  d.node = r.Text(i, 0);
  d.name = r.Text(i, 1);
  d.node_guid = r.Text(i, 2);
  d.fw_version = r.Text(i, 3);
  d.board_id = r.Text(i, 4);
  d.bdf = r.Text(i, 5);
  d.netdev = r.Text(i, 6);
  d.numa_node = static_cast<int32_t>(r.Int(i, 7));
  d.updated_at = store::FromUs(r.Int(i, 8));
  return d;
}

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

// One sync, generic over the device kind: `wanted` maps key -> (identity,
// row params); `table`/`key_column`/`id_column` name the stored side.
struct SyncSpec {
  std::string_view kind;  // "gpu" / "rdma"
  std::string_view table;
  std::string_view key_column;
  std::string_view id_column;
  std::span<const store::Column> columns;
};

Status Sync(Conn& c, const SyncSpec& spec, std::string_view node,
            const std::map<std::string, std::string>& wanted,
            const std::vector<std::vector<Param>>& rows, int64_t now,
            DeviceSyncResult* result) {
  *result = {};
  LENS_RETURN_IF_ERROR(RequireNode(c, node));
  Rows stored_rows;
  const Param p[] = {node};
  LENS_RETURN_IF_ERROR(c.Execute("SELECT " + std::string(spec.key_column) +
                                     ", " + std::string(spec.id_column) +
                                     " FROM " + std::string(spec.table) +
                                     " WHERE node = $1",
                                 p, &stored_rows));
  std::map<std::string, std::string> stored;
  for (size_t i = 0; i < stored_rows.size(); ++i) {
    stored[stored_rows.Text(i, 0)] = stored_rows.Text(i, 1);
  }
  std::vector<std::vector<Param>> changes;
  auto change = [&](const std::string& key, DeviceChange op,
                    std::string_view old_id, std::string_view new_id) {
    changes.push_back({node, spec.kind, std::string_view(key), ChangeName(op),
                       now, old_id, new_id});
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
    LENS_RETURN_IF_ERROR(c.Execute(
        "DELETE FROM " + std::string(spec.table) + " WHERE node = $1 AND " +
            "CAST(" + std::string(spec.key_column) + " AS TEXT) = $2",
        d));
  }
  LENS_RETURN_IF_ERROR(
      store::UpsertRows(c, {spec.table, spec.columns, 2}, rows).status());
  return store::UpsertRows(
             c, {"node_device_changelog", kChangeColumns, 5, {}, true}, changes)
      .status();
}

}  // namespace

StatusOr<DeviceSyncResult> NodeRepository::SyncGpuDevices(
    std::string_view node_in, std::span<const GpuDeviceRecord> devices,
    Timestamp now) {
  constexpr std::string_view t = "gpu_devices";
  std::string node(node_in);
  LENS_RETURN_IF_ERROR(store::CheckKey(t, "node", &node));
  LENS_RETURN_IF_ERROR(store::CheckTime(t, "now", now));
  std::vector<GpuDeviceRecord> gpus(devices.begin(), devices.end());
  std::map<std::string, std::string> wanted;
  std::vector<std::vector<Param>> rows;
  for (GpuDeviceRecord& g : gpus) {
    LENS_RETURN_IF_ERROR(store::CheckTexts(t,
                                           {{"vendor", &g.vendor},
                                            {"model", &g.model},
                                            {"serial", &g.serial},
                                            {"uuid", &g.uuid},
                                            {"bdf", &g.bdf}},
                                           store::kMaxKeyBytes));
    if (g.gpu_index < 0) {
      return InvalidArgumentError("gpu_devices.gpu_index: must be >= 0, got " +
                                  std::to_string(g.gpu_index));
    }
    // Identity: the serial, or the BDF for GPUs that report no serial.
    const std::string key = std::to_string(g.gpu_index);
    if (!wanted.emplace(key, g.serial.empty() ? g.bdf : g.serial).second) {
      return InvalidArgumentError("gpu_devices: index " + key +
                                  " appears twice for node " + node);
    }
  }
  for (const GpuDeviceRecord& g : gpus) {
    rows.push_back({std::string_view(node), int64_t{g.gpu_index}, g.vendor,
                    g.model, g.serial, g.uuid, g.bdf, g.vram_bytes,
                    int64_t{g.numa_node}, store::Us(now)});
  }
  DeviceSyncResult result;
  LENS_RETURN_IF_ERROR(db_->Write([&](Conn& c) {
    return Sync(c,
                {"gpu", t, "gpu_index",
                 "CASE WHEN serial = '' THEN bdf ELSE serial END", kGpuColumns},
                node, wanted, rows, store::Us(now), &result);
  }));
  return result;
}

StatusOr<DeviceSyncResult> NodeRepository::SyncRdmaDevices(
    std::string_view node_in, std::span<const RdmaDeviceRecord> devices,
    Timestamp now) {
  constexpr std::string_view t = "rdma_devices";
  std::string node(node_in);
  LENS_RETURN_IF_ERROR(store::CheckKey(t, "node", &node));
  LENS_RETURN_IF_ERROR(store::CheckTime(t, "now", now));
  std::vector<RdmaDeviceRecord> devs(devices.begin(), devices.end());
  std::map<std::string, std::string> wanted;
  for (RdmaDeviceRecord& d : devs) {
    LENS_RETURN_IF_ERROR(store::CheckKey(t, "name", &d.name));
    LENS_RETURN_IF_ERROR(store::CheckTexts(t,
                                           {{"node_guid", &d.node_guid},
                                            {"fw_version", &d.fw_version},
                                            {"board_id", &d.board_id},
                                            {"bdf", &d.bdf},
                                            {"netdev", &d.netdev}},
                                           store::kMaxKeyBytes));
    if (!wanted.emplace(d.name, d.node_guid).second) {
      return InvalidArgumentError("rdma_devices: device " + d.name +
                                  " appears twice for node " + node);
    }
  }
  std::vector<std::vector<Param>> rows;
  for (const RdmaDeviceRecord& d : devs) {
    rows.push_back({std::string_view(node), d.name, d.node_guid, d.fw_version,
                    d.board_id, d.bdf, d.netdev, int64_t{d.numa_node},
                    store::Us(now)});
  }
  DeviceSyncResult result;
  LENS_RETURN_IF_ERROR(db_->Write([&](Conn& c) {
    return Sync(c, {"rdma", t, "name", "node_guid", kRdmaColumns}, node, wanted,
                rows, store::Us(now), &result);
  }));
  return result;
}

StatusOr<std::vector<GpuDeviceRecord>> NodeRepository::ListGpuDevices(
    std::string_view node) {
  Rows rows;
  const Param p[] = {node};
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) {
    return c.Execute(
        std::string(kGpuSelect) + " WHERE node = $1 ORDER BY gpu_index", p,
        &rows);
  }));
  std::vector<GpuDeviceRecord> out;
  for (size_t i = 0; i < rows.size(); ++i) out.push_back(ReadGpu(rows, i));
  return out;
}

StatusOr<GpuDeviceRecord> NodeRepository::GetGpuDevice(std::string_view node,
                                                       int32_t index) {
  Rows rows;
  const Param p[] = {node, int64_t{index}};
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) {
    return c.Execute(
        std::string(kGpuSelect) + " WHERE node = $1 AND gpu_index = $2", p,
        &rows);
  }));
  if (rows.empty()) {
    return NotFoundError("gpu " + std::to_string(index) + " of node '" +
                         std::string(node) + "' not found");
  }
  return ReadGpu(rows, 0);
}

StatusOr<std::vector<RdmaDeviceRecord>> NodeRepository::ListRdmaDevices(
    std::string_view node) {
  Rows rows;
  const Param p[] = {node};
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) {
    return c.Execute(
        std::string(kRdmaSelect) + " WHERE node = $1 ORDER BY name", p, &rows);
  }));
  std::vector<RdmaDeviceRecord> out;
  for (size_t i = 0; i < rows.size(); ++i) out.push_back(ReadRdma(rows, i));
  return out;
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
      Rows rows,
      store::ReadPage(*db_, "node_device_changelog" + f.sql(),
                      "node, kind, device_key, op, old_serial, new_serial, "
                      "lens_us(at)",
                      "at DESC, id DESC", page_request, f, &page.total));
  for (size_t i = 0; i < rows.size(); ++i) {
    DeviceChangeRecord r;
    r.node = rows.Text(i, 0);
    r.kind = rows.Text(i, 1) == "gpu" ? DeviceKind::kGpu : DeviceKind::kRdma;
    r.device_key = rows.Text(i, 2);
    r.change = ChangeFromName(rows.Text(i, 3));
    r.old_serial = rows.Text(i, 4);
    r.new_serial = rows.Text(i, 5);
    r.at = store::FromUs(rows.Int(i, 6));
    page.items.push_back(std::move(r));
  }
  return page;
}

}  // namespace lens
