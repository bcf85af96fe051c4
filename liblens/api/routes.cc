// The route table (data) and AddApiRoutes: each route's parameters are
// checked against its entry before its handler runs, and
// /api/v1/openapi.json is generated from the same table.
#include "api/routes.h"

#include <memory>

#include "api/params.h"
#include "core/json.h"

namespace lens::api {
namespace {

using T = ParamType;

constexpr ParamSpec kNodeParams[] = {
    {"status", T::kString, "Node status, exact (\"Ready\")"},
    {"gpuVendor", T::kString, "\"amd\" or \"nvidia\""},
};
constexpr SortKey kNodeSort[] = {{"name", "name"},
                                 {"gpuCount", "gpu_count"},
                                 {"gpuAllocated", "gpu_allocated"},
                                 {"updatedAt", "updated_at"}};
constexpr ParamSpec kNodeDetailParams[] = {
    {"name", T::kString, "Node name (path)"},
};
constexpr ParamSpec kAllocationParams[] = {
    {"from", T::kTime, "History from (Unix seconds, inclusive)"},
    {"to", T::kTime, "History to (Unix seconds, exclusive)"},
    {"node", T::kString, "One node's history (default: the cluster's)"},
};
constexpr ParamSpec kWorkloadParams[] = {
    {"namespace", T::kString, "Kubernetes namespace, exact"},
    {"kind", T::kString, "Workload kind, exact (\"PyTorchJob\")"},
    {"status", T::kString, "Workload status, exact (\"Running\")"},
};
constexpr SortKey kWorkloadSort[] = {{"createdAt", "created_at"},
                                     {"name", "name"},
                                     {"kind", "kind"},
                                     {"gpuRequest", "gpu_request"}};
constexpr ParamSpec kWorkloadDetailParams[] = {
    {"uid", T::kString, "Workload uid (path)"},
};
constexpr ParamSpec kIterationParams[] = {
    {"uid", T::kString, "Workload uid (path)"},
    {"run", T::kInteger, "Only this training run"},
};
constexpr SortKey kIterationSort[] = {{"iteration", "iteration"},
                                      {"timestamp", "timestamp"}};
constexpr ParamSpec kPodParams[] = {
    {"namespace", T::kString, "Kubernetes namespace, exact"},
    {"node", T::kString, "Node name, exact"},
    {"workloadUid", T::kString, "Pods of this workload"},
    {"running", T::kBoolean, "true: running pods only; false: the others"},
};
constexpr ParamSpec kHeatmapParams[] = {
    {"from", T::kTime, "Range from (Unix seconds; default: an hour before to)"},
    {"to", T::kTime, "Range to (Unix seconds, inclusive; default: now)"},
    {"step", T::kInteger,
     "Seconds between columns (default: the range over at most 120 "
     "columns, at least 60; at most 1,000 columns)"},
    {"node", T::kString, "Only this node"},
};
constexpr ParamSpec kNodeSeriesParams[] = {
    {"name", T::kString, "Node name (path)"},
    {"from", T::kTime, "Range from (Unix seconds; default: an hour before to)"},
    {"to", T::kTime, "Range to (Unix seconds, inclusive; default: now)"},
    {"step", T::kInteger,
     "Seconds between points (default: the range over at most 120 points, "
     "at least 60; at most 11,000 points)"},
};
constexpr ParamSpec kWorkloadSeriesParams[] = {
    {"uid", T::kString, "Workload uid (path)"},
    {"from", T::kTime, "Range from (Unix seconds; default: an hour before to)"},
    {"to", T::kTime, "Range to (Unix seconds, inclusive; default: now)"},
    {"step", T::kInteger,
     "Seconds between points (default: the range over at most 120 points, "
     "at least 60; at most 11,000 points)"},
};
constexpr ParamSpec kFlowParams[] = {
    {"from", T::kTime, "Range from (Unix seconds; default: an hour before to)"},
    {"to", T::kTime, "Range to (Unix seconds, inclusive; default: now)"},
    {"node", T::kString, "Only this node"},
    {"workload", T::kString,
     "Only this pod's traffic: its namespace/name, or \"host\" for traffic "
     "of no pod (remotes are then left out: they are counted per node)"},
};
constexpr ParamSpec kWorkloadFlowParams[] = {
    {"uid", T::kString, "Workload uid (path)"},
    {"from", T::kTime, "Range from (Unix seconds; default: an hour before to)"},
    {"to", T::kTime, "Range to (Unix seconds, inclusive; default: now)"},
};
constexpr ParamSpec kTrainingSeriesParams[] = {
    {"uid", T::kString, "Workload uid (path)"},
    {"run", T::kInteger, "Only this training run"},
    {"points", T::kInteger, "Points per run at most, 10..5000 (default 400)"},
};
constexpr ParamSpec kIdleGpuParams[] = {
    {"from", T::kTime, "Range from (Unix seconds; default: a day before to)"},
    {"to", T::kTime, "Range to (Unix seconds; default: now); at most 7 days"},
    {"thresholdPercent", T::kInteger,
     "Utilisation under this percentage is idle, 1..100 (default 5)"},
    {"windowMinutes", T::kInteger,
     "An idle stretch counts once it lasts this long (default 30)"},
};
constexpr ParamSpec kStragglerParams[] = {
    {"uid", T::kString, "Workload uid (path)"},
    {"from", T::kTime, "Range from (Unix seconds; default: an hour before to)"},
    {"to", T::kTime, "Range to (Unix seconds; default: now); at most 7 days"},
};
constexpr ParamSpec kDeviceHealthParams[] = {
    {"from", T::kTime, "Range from (Unix seconds; default: a day before to)"},
    {"to", T::kTime, "Range to (Unix seconds; default: now); at most 7 days"},
};
constexpr ParamSpec kPlacementParams[] = {
    {"from", T::kTime, "Range from (Unix seconds; default: an hour before to)"},
    {"to", T::kTime, "Range to (Unix seconds; default: now); at most 7 days"},
};
constexpr ParamSpec kGoodputParams[] = {
    {"uid", T::kString, "Workload uid (path)"},
};
constexpr SortKey kPodSort[] = {{"createdAt", "created_at"},
                                {"name", "name"},
                                {"namespace", "namespace"},
                                {"node", "node"}};

// One row per route: method, path, summary, parameters, paged, sort keys,
// the data's schema, handler, and whether it reads the time series.
// clang-format off
constexpr RouteSpec kRoutes[] = {
    {"GET", "/api/v1/clusters", "Cluster overview: nodes, GPUs, workloads",
     {}, true, {}, "ClusterPage", ListClusters},
    {"GET", "/api/v1/nodes", "Nodes, filtered, sorted and paged",
     kNodeParams, true, kNodeSort, "NodePage", ListNodes},
    {"GET", "/api/v1/nodes/{name}",
     "One node with its GPUs, RDMA devices, live containers and device "
     "change log",
     kNodeDetailParams, false, {}, "NodeDetail", GetNode},
    {"GET", "/api/v1/nodes/{name}/gpu-metrics",
     "A node's GPU utilisation, memory, power and temperature over time",
     kNodeSeriesParams, false, {}, "GpuMetrics", GetNodeGpuMetrics, true},
    {"GET", "/api/v1/gpu-allocation",
     "GPU allocation now (from the nodes) and over a time range",
     kAllocationParams, false, {}, "GpuAllocation", GetGpuAllocation},
    {"GET", "/api/v1/gpu-heatmap",
     "GPU utilisation, node x GPU x time, for a heatmap",
     kHeatmapParams, false, {}, "GpuHeatmap", GetGpuHeatmap, true},
    {"GET", "/api/v1/workloads", "Workloads, filtered, sorted and paged",
     kWorkloadParams, true, kWorkloadSort, "WorkloadPage", ListWorkloads},
    {"GET", "/api/v1/workloads/{uid}",
     "One workload with its pods, training runs, latest iteration and "
     "training events",
     kWorkloadDetailParams, false, {}, "WorkloadDetail", GetWorkload},
    {"GET", "/api/v1/workloads/{uid}/iterations",
     "A workload's training iterations, paged",
     kIterationParams, true, kIterationSort, "IterationPage", ListIterations},
    {"GET", "/api/v1/workloads/{uid}/training-series",
     "A workload's training progress per run, downsampled for charts, with "
     "run starts and checkpoints",
     kTrainingSeriesParams, false, {}, "TrainingSeries", GetTrainingSeries},
    {"GET", "/api/v1/workloads/{uid}/gpu-metrics",
     "The GPU metrics of a workload's GPUs over time",
     kWorkloadSeriesParams, false, {}, "WorkloadGpuMetrics",
     GetWorkloadGpuMetrics, true},
    {"GET", "/api/v1/workloads/{uid}/flows",
     "TCP traffic rates of a workload's pods over a range",
     kWorkloadFlowParams, false, {}, "Flows", ListWorkloadFlows, true},
    {"GET", "/api/v1/workloads/{uid}/goodput",
     "A workload's wall time split into scheduling, start-up, productive "
     "training, checkpoints, restart loss and idle; goodput and MFU per run",
     kGoodputParams, false, {}, "Goodput", GetWorkloadGoodput},
    {"GET", "/api/v1/workloads/{uid}/stragglers",
     "A workload's GPUs and nodes whose utilisation is out of line with the "
     "job's (median and MAD), ranked, each with the throttling, ECC, RDMA "
     "and TCP evidence for the same range",
     kStragglerParams, false, {}, "Stragglers", GetWorkloadStragglers, true},
    {"GET", "/api/v1/insights/idle-gpus",
     "GPUs held by running containers whose utilisation stayed under a "
     "threshold for a window: who holds them, since when, GPU-hours wasted",
     kIdleGpuParams, false, {}, "IdleGpus", GetIdleGpus, true},
    {"GET", "/api/v1/insights/device-health",
     "Every GPU and RDMA port the agents judge (healthy, degraded, "
     "unhealthy) with its state over a range, and the changes, from their "
     "lens_gpu_health and lens_rdma_port_health series",
     kDeviceHealthParams, false, {}, "DeviceHealth", GetDeviceHealth, true},
    {"GET", "/api/v1/insights/placement",
     "Running pods with GPUs at the range's end: where their GPUs and RDMA "
     "devices sit (NUMA node, PCIe root complex, each GPU's NIC) and their "
     "flags (a GPU and its NIC on different NUMA nodes or root complexes, "
     "CPUs off the GPUs' NUMA nodes), from the agents' placement series",
     kPlacementParams, false, {}, "PlacementIssues", GetPlacementIssues,
     true},
    {"GET", "/api/v1/pods", "GPU pods, filtered, sorted and paged",
     kPodParams, true, kPodSort, "PodPage", ListPods},
    {"GET", "/api/v1/flows",
     "TCP traffic rates by node, workload, class and direction over a "
     "range, and the busiest remote addresses",
     kFlowParams, false, {}, "Flows", ListFlows, true},
    {"GET", "/api/v1/storage", "Storage systems the cluster uses",
     {}, true, {}, "StoragePage", ListStorage},
    // Served as the document itself, without the envelope.
    {"GET", "/api/v1/openapi.json", "This OpenAPI 3.0.3 document",
     {}, false, {}, "", nullptr},
};
// clang-format on

bool IsPattern(std::string_view path) {
  return path.find('{') != std::string_view::npos;
}

}  // namespace

std::span<const RouteSpec> Routes() { return kRoutes; }

}  // namespace lens::api

namespace lens {

Status ApiOptions::Validate() const {
  if (cluster.empty()) return InvalidArgumentError("cluster must not be empty");
  if (max_page_size < 1 || max_page_size > 1000) {
    return InvalidArgumentError("max_page_size must be in 1..1000, got " +
                                std::to_string(max_page_size));
  }
  if (default_page_size < 1 || default_page_size > max_page_size) {
    return InvalidArgumentError("default_page_size must be in 1.." +
                                std::to_string(max_page_size) + ", got " +
                                std::to_string(default_page_size));
  }
  return OkStatus();
}

Status AddApiRoutes(Store* store, TimeSeriesSource* series,
                    const ApiOptions& options, HttpServer* server) {
  if (store == nullptr || server == nullptr)
    return InvalidArgumentError("AddApiRoutes: null store or server");
  LENS_RETURN_IF_ERROR(options.Validate());
  auto ctx = std::make_shared<const api::ApiContext>(
      api::ApiContext{store, series, options});
  for (const api::RouteSpec& route : api::Routes()) {
    HttpHandler handler;
    if (route.handler == nullptr) {
      auto doc = std::make_shared<const std::string>(
          api::OpenApiJson(api::Routes(), options));
      handler = [doc](const HttpRequest&, HttpResponse* out) {
        out->body = *doc;
      };
    } else {
      handler = [ctx, &route](const HttpRequest& req, HttpResponse* out) {
        ApiClusters::Handle member;
        std::optional<api::ApiContext> other;
        Status st = api::ResolveCluster(*ctx, req, &member, &other);
        const api::ApiContext& c = other ? *other : *ctx;
        if (st.ok()) st = api::CheckParams(c, route, req);
        JsonWriter w;
        if (st.ok() && route.needs_series && c.series == nullptr)
          st = UnavailableError("no time series backend configured");
        if (st.ok()) st = route.handler(c, route, req, w);
        if (!st.ok()) return RespondStatus(st, out);
        RespondData(w.str(), out);
      };
    }
    if (api::IsPattern(route.path)) {
      server->HandlePattern(std::string(route.method), std::string(route.path),
                            std::move(handler));
    } else {
      server->Handle(std::string(route.method), std::string(route.path),
                     std::move(handler));
    }
  }
  return OkStatus();
}

}  // namespace lens
