// nodes (devices and their change log: devices.cc).
#include <algorithm>

#include "lens/store.h"
#include "store/db.h"
#include "store/table.h"
#include "store/text.h"

namespace lens {
namespace {

using store::Conn;
using store::Param;
using store::Rows;

using NodeField = store::Field<NodeRecord>;

// Each column once, with the writers that own it (NodeColumns).
struct NodeColumn {
  NodeField field;
  bool kubernetes, agent, host;
};

std::vector<NodeColumn> NodeColumnList() {
  using R = NodeRecord;
  namespace f = store::field;
  constexpr bool K = true, A = true, H = true, _ = false;
  return {
      {f::Text("address", &R::address), K, _, H},
      {f::Text("status", &R::status), K, _, H},
      {f::Text("gpu_vendor", &R::gpu_vendor), K, _, H},
      {f::Text("gpu_model", &R::gpu_model), K, _, H},
      {f::Int("gpu_count", &R::gpu_count), K, _, H},
      {f::Text("cpu_model", &R::cpu_model), _, A, _},
      {f::Int("cpu_count", &R::cpu_count), K, _, H},
      {f::Int("memory_bytes", &R::memory_bytes), K, _, H},
      {f::Text("kernel_version", &R::kernel_version), K, _, H},
      {f::Text("os_image", &R::os_image), K, _, H},
      {f::Text("driver_version", &R::driver_version), _, A, _},
      {f::Int("gpu_allocatable", &R::gpu_allocatable), K, _, _},
      {f::Text("kubelet_version", &R::kubelet_version), K, _, _},
      {f::Text("container_runtime", &R::container_runtime), K, _, _},
      {f::Int("gpu_allocated", &R::gpu_allocated), _, A, _},
      {f::OptReal("gpu_utilization", &R::gpu_utilization_ratio), _, A, _},
      {f::Text("agent_state", &R::agent_state), _, A, _},
      {f::OptTime("agent_seen_at", &R::agent_seen_at), _, A, _},
      {f::LabelsColumn("labels", &R::labels), K, _, H},
  };
}

store::Table<NodeRecord> MakeNodes(NodeColumns columns) {
  using R = NodeRecord;
  namespace f = store::field;
  std::vector<NodeField> fields = {f::Key("name", &R::name)};
  for (NodeColumn& c : NodeColumnList()) {
    const bool owned = columns == NodeColumns::kAll ||
                       (columns == NodeColumns::kKubernetes && c.kubernetes) ||
                       (columns != NodeColumns::kKubernetes && c.agent) ||
                       (columns == NodeColumns::kAgentAndHost && c.host);
    if (owned) fields.push_back(std::move(c.field));
  }
  store::OnConflict on_conflict{.keep = {"created_at"}};
  if (columns == NodeColumns::kAgent) {
    // Inserted for a node not stored yet (the column has no default), never
    // updated: the labels are the API server's.
    fields.push_back(f::LabelsColumn("labels", &R::labels));
    on_conflict.keep.push_back("labels");
  }
  fields.push_back(f::CreatedAt("created_at", &R::created_at, &R::updated_at));
  fields.push_back(f::Time("updated_at", &R::updated_at));
  return store::Table<R>("nodes", 1, std::move(fields), std::move(on_conflict));
}

const store::Table<NodeRecord>& Nodes(NodeColumns columns = NodeColumns::kAll) {
  static const store::Table<NodeRecord> all = MakeNodes(NodeColumns::kAll);
  static const store::Table<NodeRecord> kube =
      MakeNodes(NodeColumns::kKubernetes);
  static const store::Table<NodeRecord> agent = MakeNodes(NodeColumns::kAgent);
  static const store::Table<NodeRecord> host =
      MakeNodes(NodeColumns::kAgentAndHost);
  switch (columns) {
    case NodeColumns::kKubernetes:
      return kube;
    case NodeColumns::kAgent:
      return agent;
    case NodeColumns::kAgentAndHost:
      return host;
    case NodeColumns::kAll:
      break;
  }
  return all;
}

const store::Table<GpuAllocationRecord>& Allocation() {
  using R = GpuAllocationRecord;
  namespace f = store::field;
  static const store::Table<R> t(
      "gpu_allocation_history", 2,
      {f::Name("node", &R::node), f::Time("at", &R::at),
       f::Int("gpus_allocated", &R::gpus_allocated),
       f::Int("gpus_allocatable", &R::gpus_allocatable)});
  return t;
}

}  // namespace

Status NodeRepository::UpsertNode(const NodeRecord& n) {
  return Nodes().Write(*db_, std::span(&n, 1));
}

Status NodeRepository::UpsertNodes(std::span<const NodeRecord> nodes,
                                   NodeColumns columns) {
  if (nodes.empty()) return OkStatus();
  return Nodes(columns).Write(*db_, nodes);
}

Status NodeRepository::AddGpuAllocation(
    std::span<const GpuAllocationRecord> points, Timestamp keep_after) {
  store::Batch<GpuAllocationRecord> batch;
  LENS_RETURN_IF_ERROR(Allocation().Prepare(points, &batch));
  const store::UpsertSpec spec = Allocation().upsert();
  const int64_t cutoff = store::Us(keep_after);
  return db_->Write([&](Conn& c) -> Status {
    if (!batch.rows.empty()) {
      LENS_RETURN_IF_ERROR(store::UpsertRows(c, spec, batch.rows).status());
    }
    const Param p[] = {cutoff};
    return c.Execute(
        "DELETE FROM gpu_allocation_history WHERE at < lens_ts($1)", p);
  });
}

StatusOr<std::vector<GpuAllocationRecord>> NodeRepository::ListGpuAllocation(
    std::string_view node, TimeRange range, int32_t limit) {
  if (limit < 1 || limit > 100000) {
    return InvalidArgumentError(
        "gpu_allocation_history: limit must be in 1..100000");
  }
  std::vector<Param> p = {node};
  std::string where = " WHERE node = $1";
  if (range.from) {
    p.push_back(store::Us(*range.from));
    where += " AND at >= lens_ts($" + std::to_string(p.size()) + ")";
  }
  if (range.to) {
    p.push_back(store::Us(*range.to));
    where += " AND at < lens_ts($" + std::to_string(p.size()) + ")";
  }
  p.push_back(int64_t{limit});
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::Query(*db_,
                   "SELECT " + Allocation().select() +
                       " FROM gpu_allocation_history" + where +
                       " ORDER BY at DESC LIMIT $" + std::to_string(p.size()),
                   p));
  std::vector<GpuAllocationRecord> out = Allocation().ReadAll(rows);
  std::reverse(out.begin(), out.end());
  return out;
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
                                        {"gpu_count", "gpu_count"},
                                        {"gpu_allocated", "gpu_allocated"}}));
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
