// nodes (devices and their change log: devices.cc).
#include "lens/store.h"
#include "store/db.h"
#include "store/table.h"
#include "store/text.h"

namespace lens {
namespace {

using store::Conn;
using store::Param;
using store::Rows;

const store::Table<NodeRecord>& Nodes() {
  using R = NodeRecord;
  namespace f = store::field;
  static const store::Table<R> t(
      "nodes", 1,
      {f::Key("name", &R::name), f::Text("address", &R::address),
       f::Text("status", &R::status), f::Text("gpu_vendor", &R::gpu_vendor),
       f::Text("gpu_model", &R::gpu_model), f::Int("gpu_count", &R::gpu_count),
       f::Text("cpu_model", &R::cpu_model), f::Int("cpu_count", &R::cpu_count),
       f::Int("memory_bytes", &R::memory_bytes),
       f::Text("kernel_version", &R::kernel_version),
       f::Text("os_image", &R::os_image),
       f::Text("driver_version", &R::driver_version),
       f::Int("gpu_allocatable", &R::gpu_allocatable),
       f::Text("kubelet_version", &R::kubelet_version),
       f::Text("container_runtime", &R::container_runtime),
       f::LabelsColumn("labels", &R::labels),
       f::CreatedAt("created_at", &R::created_at, &R::updated_at),
       f::Time("updated_at", &R::updated_at)},
      {.keep = {"created_at"}});
  return t;
}

}  // namespace

Status NodeRepository::UpsertNode(const NodeRecord& n) {
  return Nodes().Write(*db_, std::span(&n, 1));
}

StatusOr<NodeRecord> NodeRepository::GetNode(std::string_view name) {
  const Param p[] = {name};
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::Query(*db_,
                   "SELECT " + Nodes().select() + " FROM nodes WHERE name = $1",
                   p));
  if (rows.empty()) {
    return NotFoundError("node '" + std::string(name) + "' not found");
  }
  return Nodes().Read(rows, 0);
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
      Rows rows, store::ReadPage(*db_, "nodes" + f.sql(), Nodes().select(),
                                 order + ", name", q.page, f, &page.total));
  page.items = Nodes().ReadAll(rows);
  return page;
}

}  // namespace lens
