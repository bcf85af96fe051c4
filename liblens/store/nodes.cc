// nodes (devices and their change log: devices.cc).
#include "lens/store.h"
#include "store/db.h"
#include "store/text.h"

namespace lens {
namespace {

using store::Conn;
using store::Param;
using store::Rows;

constexpr std::string_view kNodeColumns =
    "name, address, status, gpu_vendor, gpu_model, gpu_count, cpu_model, "
    "cpu_count, memory_bytes, kernel_version, os_image, driver_version, "
    "labels, lens_us(created_at), lens_us(updated_at)";

NodeRecord ReadNode(const Rows& r, size_t i) {
  NodeRecord n;
  n.name = r.Text(i, 0);
  n.address = r.Text(i, 1);
  n.status = r.Text(i, 2);
  n.gpu_vendor = r.Text(i, 3);
  n.gpu_model = r.Text(i, 4);
  n.gpu_count = static_cast<int32_t>(r.Int(i, 5));
  n.cpu_model = r.Text(i, 6);
  n.cpu_count = static_cast<int32_t>(r.Int(i, 7));
  n.memory_bytes = r.Int(i, 8);
  n.kernel_version = r.Text(i, 9);
  n.os_image = r.Text(i, 10);
  n.driver_version = r.Text(i, 11);
  n.labels_json = r.Text(i, 12);
  n.created_at = store::FromUs(r.Int(i, 13));
  n.updated_at = store::FromUs(r.Int(i, 14));
  return n;
}

Status CheckNode(NodeRecord* n) {
  constexpr std::string_view t = "nodes";
  LENS_RETURN_IF_ERROR(store::CheckKey(t, "name", &n->name));
  LENS_RETURN_IF_ERROR(
      store::CheckTexts(t,
                        {{"address", &n->address},
                         {"status", &n->status},
                         {"gpu_vendor", &n->gpu_vendor},
                         {"gpu_model", &n->gpu_model},
                         {"cpu_model", &n->cpu_model},
                         {"kernel_version", &n->kernel_version},
                         {"os_image", &n->os_image},
                         {"driver_version", &n->driver_version}},
                        store::kMaxTextBytes));
  LENS_RETURN_IF_ERROR(store::CheckJson(t, "labels", &n->labels_json));
  return store::CheckTimes(t, &n->created_at, n->updated_at);
}

}  // namespace

Status NodeRepository::UpsertNode(const NodeRecord& in) {
  NodeRecord n = in;
  LENS_RETURN_IF_ERROR(CheckNode(&n));
  static constexpr store::Column kColumns[] = {
      {"name"},
      {"address"},
      {"status"},
      {"gpu_vendor"},
      {"gpu_model"},
      {"gpu_count"},
      {"cpu_model"},
      {"cpu_count"},
      {"memory_bytes"},
      {"kernel_version"},
      {"os_image"},
      {"driver_version"},
      {"labels", store::ColumnKind::kJson},
      {"created_at", store::ColumnKind::kTimestamp},
      {"updated_at", store::ColumnKind::kTimestamp}};
  static constexpr std::string_view kKeep[] = {"created_at"};
  const std::vector<Param> row = {n.name,
                                  n.address,
                                  n.status,
                                  n.gpu_vendor,
                                  n.gpu_model,
                                  int64_t{n.gpu_count},
                                  n.cpu_model,
                                  int64_t{n.cpu_count},
                                  n.memory_bytes,
                                  n.kernel_version,
                                  n.os_image,
                                  n.driver_version,
                                  n.labels_json,
                                  store::Us(n.created_at),
                                  store::Us(n.updated_at)};
  return store::WriteRows(*db_, {"nodes", kColumns, 1, kKeep},
                          std::span(&row, 1));
}

StatusOr<NodeRecord> NodeRepository::GetNode(std::string_view name) {
  const Param p[] = {name};
  LENS_ASSIGN_OR_RETURN(Rows rows,
                        store::Query(*db_,
                                     "SELECT " + std::string(kNodeColumns) +
                                         " FROM nodes WHERE name = $1",
                                     p));
  if (rows.empty()) {
    return NotFoundError("node '" + std::string(name) + "' not found");
  }
  return ReadNode(rows, 0);
}

StatusOr<Page<NodeRecord>> NodeRepository::ListNodes(const NodeQuery& q) {
  LENS_RETURN_IF_ERROR(store::CheckPage(q.page));
  LENS_ASSIGN_OR_RETURN(std::string order,
                        store::OrderBy("nodes", q.sort,
                                       {{"name", "name"},
                                        {"updated_at", "updated_at"},
                                        {"gpu_count", "gpu_count"}}));
  store::Filter f;
  f.AddIf(!q.gpu_vendor.empty(), "gpu_vendor = ?", q.gpu_vendor);
  f.AddIf(!q.status.empty(), "status = ?", q.status);
  // Prefix match without LIKE (its wildcards would need escaping).
  f.AddIf(!q.name_prefix.empty(), "substr(name, 1, length(?)) = ?",
          q.name_prefix);
  Page<NodeRecord> page{{}, 0, q.page.page_num, q.page.page_size};
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::ReadPage(*db_, "nodes" + f.sql(), std::string(kNodeColumns),
                      order + ", name", q.page, f, &page.total));
  for (size_t i = 0; i < rows.size(); ++i) {
    page.items.push_back(ReadNode(rows, i));
  }
  return page;
}

}  // namespace lens
