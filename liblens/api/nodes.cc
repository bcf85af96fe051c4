// The cluster, node, GPU allocation and storage routes.
#include <algorithm>
#include <string>
#include <vector>

#include "api/api_json.h"
#include "api/params.h"
#include "api/routes.h"

namespace lens::api {
namespace {

constexpr int32_t kReadPage = 1000;  // the store's largest page

// Every node, read page by page (a cluster's nodes, not its history).
StatusOr<std::vector<NodeRecord>> AllNodes(Store& store) {
  std::vector<NodeRecord> nodes;
  NodeQuery q;
  q.page = {1, kReadPage};
  while (true) {
    LENS_ASSIGN_OR_RETURN(Page<NodeRecord> page, store.nodes().ListNodes(q));
    for (NodeRecord& n : page.items) nodes.push_back(std::move(n));
    if (page.items.size() < static_cast<size_t>(kReadPage) ||
        static_cast<int64_t>(nodes.size()) >= page.total)
      return nodes;
    ++q.page.page_num;
  }
}

// GPUs allocated over allocatable; the node's GPU count where the API
// server gave no allocatable.
int32_t Allocatable(const NodeRecord& n) {
  return n.gpu_allocatable > 0 ? n.gpu_allocatable : n.gpu_count;
}

void Ratio(JsonWriter& w, const char* key, int64_t part, int64_t whole) {
  Num(w, key,
      whole > 0 ? std::optional<double>(double(part) / double(whole))
                : std::nullopt);
}

}  // namespace

Status ListClusters(const ApiContext& ctx, const RouteSpec&,
                    const HttpRequest& req, JsonWriter& w) {
  LENS_ASSIGN_OR_RETURN(PageRequest page, PageParams(ctx, req));
  LENS_ASSIGN_OR_RETURN(std::vector<NodeRecord> nodes, AllNodes(*ctx.store));
  WorkloadQuery running;
  running.status = "Running";
  running.page = {1, 1};
  LENS_ASSIGN_OR_RETURN(Page<WorkloadRecord> workloads,
                        ctx.store->pods().ListWorkloads(running));
  int64_t ready = 0, stale = 0, gpus = 0, allocatable = 0, allocated = 0;
  double utilization_sum = 0;
  int64_t utilization_gpus = 0;
  for (const NodeRecord& n : nodes) {
    ready += n.status == "Ready";
    stale += n.agent_state == "stale";
    gpus += n.gpu_count;
    allocatable += Allocatable(n);
    allocated += n.gpu_allocated;
    if (n.gpu_utilization_ratio && n.gpu_count > 0) {
      utilization_sum += *n.gpu_utilization_ratio * n.gpu_count;
      utilization_gpus += n.gpu_count;
    }
  }
  OpenPage(w);
  if (page.page_num == 1) {
    w.StartObject();
    Str(w, "name", ctx.options.cluster);
    w.Key("stale");
    w.Bool(ctx.stale);
    w.Key("nodes");
    w.StartObject();
    Int(w, "total", static_cast<int64_t>(nodes.size()));
    Int(w, "ready", ready);
    Int(w, "stale", stale);
    w.EndObject();
    w.Key("gpus");
    w.StartObject();
    Int(w, "total", gpus);
    Int(w, "allocatable", allocatable);
    Int(w, "allocated", allocated);
    Ratio(w, "allocationRatio", allocated, allocatable);
    Num(w, "utilizationRatio",
        utilization_gpus > 0
            ? std::optional<double>(utilization_sum / double(utilization_gpus))
            : std::nullopt);
    w.EndObject();
    w.Key("workloads");
    w.StartObject();
    Int(w, "running", workloads.total);
    w.EndObject();
    w.EndObject();
  }
  ClosePage(w, 1, page.page_num, page.page_size);
  return OkStatus();
}

Status ListNodes(const ApiContext& ctx, const RouteSpec& route,
                 const HttpRequest& req, JsonWriter& w) {
  NodeQuery q;
  LENS_ASSIGN_OR_RETURN(q.page, PageParams(ctx, req));
  LENS_ASSIGN_OR_RETURN(q.sort, SortParams(route, req));
  q.status = StringParam(req, "status").value_or("");
  q.gpu_vendor = StringParam(req, "gpuVendor").value_or("");
  LENS_ASSIGN_OR_RETURN(Page<NodeRecord> page, ctx.store->nodes().ListNodes(q));
  OpenPage(w);
  for (const NodeRecord& n : page.items) WriteNode(w, n);
  ClosePage(w, page.total, page.page_num, page.page_size);
  return OkStatus();
}

Status GetNode(const ApiContext& ctx, const RouteSpec&, const HttpRequest& req,
               JsonWriter& w) {
  const std::string name = PathParam(req, "name");
  LENS_ASSIGN_OR_RETURN(NodeRecord node, ctx.store->nodes().GetNode(name));
  LENS_ASSIGN_OR_RETURN(std::vector<GpuDeviceRecord> gpus,
                        ctx.store->nodes().ListGpuDevices(name));
  LENS_ASSIGN_OR_RETURN(std::vector<RdmaDeviceRecord> rdma,
                        ctx.store->nodes().ListRdmaDevices(name));
  LENS_ASSIGN_OR_RETURN(
      Page<DeviceChangeRecord> changes,
      ctx.store->nodes().ListDeviceChanges(name, {}, {1, kReadPage}));
  std::vector<ContainerRecord> containers;
  ContainerQuery cq;
  cq.node = name;
  cq.page = {1, kReadPage};
  for (const ContainerState state :
       {ContainerState::kRunning, ContainerState::kPaused,
        ContainerState::kCreated}) {
    cq.state = state;
    LENS_ASSIGN_OR_RETURN(Page<ContainerRecord> page,
                          ctx.store->containers().ListContainers(cq));
    for (ContainerRecord& c : page.items) containers.push_back(std::move(c));
  }
  w.StartObject();
  w.Key("node");
  WriteNode(w, node);
  w.Key("gpus");
  w.StartArray();
  for (const GpuDeviceRecord& g : gpus) WriteGpu(w, g);
  w.EndArray();
  w.Key("rdmaDevices");
  w.StartArray();
  for (const RdmaDeviceRecord& r : rdma) WriteRdma(w, r);
  w.EndArray();
  w.Key("containers");
  w.StartArray();
  for (const ContainerRecord& c : containers) WriteContainer(w, c);
  w.EndArray();
  w.Key("deviceChanges");
  w.StartArray();
  for (const DeviceChangeRecord& c : changes.items) WriteDeviceChange(w, c);
  w.EndArray();
  w.EndObject();
  return OkStatus();
}

Status GetGpuAllocation(const ApiContext& ctx, const RouteSpec&,
                        const HttpRequest& req, JsonWriter& w) {
  TimeRange range;
  LENS_ASSIGN_OR_RETURN(range.from, TimeParam(req, "from"));
  LENS_ASSIGN_OR_RETURN(range.to, TimeParam(req, "to"));
  if (range.from && range.to && *range.to < *range.from)
    return InvalidArgumentError("to: before from");
  const std::string node = StringParam(req, "node").value_or("");
  if (!node.empty())
    LENS_RETURN_IF_ERROR(ctx.store->nodes().GetNode(node).status());
  LENS_ASSIGN_OR_RETURN(std::vector<NodeRecord> nodes, AllNodes(*ctx.store));
  LENS_ASSIGN_OR_RETURN(std::vector<GpuAllocationRecord> history,
                        ctx.store->nodes().ListGpuAllocation(node, range));
  int64_t allocated = 0, allocatable = 0;
  for (const NodeRecord& n : nodes) {
    allocated += n.gpu_allocated;
    allocatable += Allocatable(n);
  }
  w.StartObject();
  w.Key("now");
  w.StartObject();
  Int(w, "allocated", allocated);
  Int(w, "allocatable", allocatable);
  Ratio(w, "ratio", allocated, allocatable);
  w.Key("nodes");
  w.StartArray();
  for (const NodeRecord& n : nodes) {
    w.StartObject();
    Str(w, "name", n.name);
    Int(w, "allocated", n.gpu_allocated);
    Int(w, "allocatable", Allocatable(n));
    Ratio(w, "ratio", n.gpu_allocated, Allocatable(n));
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.Key("history");
  w.StartArray();
  for (const GpuAllocationRecord& p : history) {
    w.StartObject();
    Time(w, "at", p.at);
    Int(w, "allocated", p.gpus_allocated);
    Int(w, "allocatable", p.gpus_allocatable);
    Ratio(w, "ratio", p.gpus_allocated, p.gpus_allocatable);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return OkStatus();
}

Status ListStorage(const ApiContext& ctx, const RouteSpec&,
                   const HttpRequest& req, JsonWriter& w) {
  LENS_ASSIGN_OR_RETURN(PageRequest page, PageParams(ctx, req));
  LENS_ASSIGN_OR_RETURN(std::vector<StorageRecord> all,
                        ctx.store->storage().ListStorage());
  OpenPage(w);
  const size_t first =
      std::min(all.size(), size_t(page.page_num - 1) * page.page_size);
  const size_t last = std::min(all.size(), first + page.page_size);
  for (size_t i = first; i < last; ++i) WriteStorage(w, all[i]);
  ClosePage(w, static_cast<int64_t>(all.size()), page.page_num, page.page_size);
  return OkStatus();
}

}  // namespace lens::api
