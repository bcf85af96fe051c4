// The route table of the REST API: one entry per route (method, path
// pattern, summary, query parameters with their types, sort keys, the
// response schema and the handler). AddApiRoutes registers these entries
// and openapi.cc describes the same entries, so the document cannot
// disagree with what is served.
#ifndef LENS_API_ROUTES_H_
#define LENS_API_ROUTES_H_

#include <span>
#include <string>
#include <string_view>

#include "api/api.h"
#include "core/json.h"
#include "http/http.h"
#include "lens/status.h"
#include "lens/store.h"

namespace lens::api {

enum class ParamType : uint8_t { kString, kInteger, kBoolean, kTime };

struct ParamSpec {
  std::string_view name;
  ParamType type;
  std::string_view description;
};

// An API sort key and the store's key it maps to.
struct SortKey {
  std::string_view name;
  std::string_view store_key;
};

struct ApiContext {
  Store* store;
  TimeSeriesSource* series;  // null: no time series backend
  ApiOptions options;        // options.cluster: the cluster answered for
  bool stale = false;        // a member whose Kubernetes API went quiet
};

struct RouteSpec;
// Writes the response's `data` value; an error becomes the envelope.
using RouteHandler = Status (*)(const ApiContext& ctx, const RouteSpec& route,
                                const HttpRequest& req, JsonWriter& w);

struct RouteSpec {
  std::string_view method;
  std::string_view path;  // pattern: "{name}" captures a segment
  std::string_view summary;
  std::span<const ParamSpec> params;   // beside `cluster` (every route)
  bool paged;                          // pageNum, pageSize; data is a Page
  std::span<const SortKey> sort_keys;  // sort, order when not empty
  // The data's schema in openapi.json (schemas.h); a paged route's is
  // "<Item>Page", generated from <Item>.
  std::string_view schema;
  RouteHandler handler;
  // Reads ApiContext::series: 503 "no time series backend configured"
  // without one (after the parameter checks).
  bool needs_series = false;
};

// Every route, in documentation order.
std::span<const RouteSpec> Routes();

// The OpenAPI 3.0.3 document of `routes`.
std::string OpenApiJson(std::span<const RouteSpec> routes,
                        const ApiOptions& options);

// The handlers (nodes.cc, workloads.cc, gpu_series.cc, flows.cc,
// training_series.cc, insights.cc).
Status ListClusters(const ApiContext&, const RouteSpec&, const HttpRequest&,
                    JsonWriter&);
Status ListNodes(const ApiContext&, const RouteSpec&, const HttpRequest&,
                 JsonWriter&);
Status GetNode(const ApiContext&, const RouteSpec&, const HttpRequest&,
               JsonWriter&);
Status GetGpuAllocation(const ApiContext&, const RouteSpec&, const HttpRequest&,
                        JsonWriter&);
Status ListStorage(const ApiContext&, const RouteSpec&, const HttpRequest&,
                   JsonWriter&);
Status ListWorkloads(const ApiContext&, const RouteSpec&, const HttpRequest&,
                     JsonWriter&);
Status GetWorkload(const ApiContext&, const RouteSpec&, const HttpRequest&,
                   JsonWriter&);
Status ListIterations(const ApiContext&, const RouteSpec&, const HttpRequest&,
                      JsonWriter&);
Status ListPods(const ApiContext&, const RouteSpec&, const HttpRequest&,
                JsonWriter&);
Status GetGpuHeatmap(const ApiContext&, const RouteSpec&, const HttpRequest&,
                     JsonWriter&);
Status GetNodeGpuMetrics(const ApiContext&, const RouteSpec&,
                         const HttpRequest&, JsonWriter&);
Status GetWorkloadGpuMetrics(const ApiContext&, const RouteSpec&,
                             const HttpRequest&, JsonWriter&);
Status ListFlows(const ApiContext&, const RouteSpec&, const HttpRequest&,
                 JsonWriter&);
Status ListWorkloadFlows(const ApiContext&, const RouteSpec&,
                         const HttpRequest&, JsonWriter&);
Status GetTrainingSeries(const ApiContext&, const RouteSpec&,
                         const HttpRequest&, JsonWriter&);
// The insight routes (insights.cc).
Status GetIdleGpus(const ApiContext&, const RouteSpec&, const HttpRequest&,
                   JsonWriter&);
Status GetWorkloadGoodput(const ApiContext&, const RouteSpec&,
                          const HttpRequest&, JsonWriter&);
Status GetWorkloadStragglers(const ApiContext&, const RouteSpec&,
                             const HttpRequest&, JsonWriter&);
Status GetDeviceHealth(const ApiContext&, const RouteSpec&, const HttpRequest&,
                       JsonWriter&);
Status GetPlacementIssues(const ApiContext&, const RouteSpec&,
                          const HttpRequest&, JsonWriter&);

// Parts of the workload detail (workload_devices.cc): the GPUs its pods'
// containers hold, and its pods' lifecycle events in time order.
Status WriteWorkloadGpus(const ApiContext& ctx,
                         const std::vector<PodRecord>& pods, JsonWriter& w);
Status WriteWorkloadLifecycle(const ApiContext& ctx,
                              const std::vector<PodRecord>& pods,
                              JsonWriter& w);

}  // namespace lens::api

#endif  // LENS_API_ROUTES_H_
