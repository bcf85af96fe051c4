// Query parameters of the REST API, decoded once where they enter: each
// error is InvalidArgument naming the parameter and what it accepts.
#ifndef LENS_API_PARAMS_H_
#define LENS_API_PARAMS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "api/routes.h"
#include "http/http.h"
#include "lens/model.h"
#include "lens/status.h"
#include "lens/timeseries.h"

namespace lens::api {

// The context of the cluster a request names: `home` for none or its own
// cluster, else a member from home.options.clusters (its handle kept in
// `*member` for the request's life, the context in `*other`). NotFound
// "unknown cluster", or the member's store error.
Status ResolveCluster(const ApiContext& home, const HttpRequest& req,
                      ApiClusters::Handle* member,
                      std::optional<ApiContext>* other);

// Checks every parameter `route` declares (and cluster, pageNum, pageSize,
// sort, order) for its type: 400 naming the first bad one. `cluster` must
// be empty or the configured name (NotFound "unknown cluster" otherwise).
Status CheckParams(const ApiContext& ctx, const RouteSpec& route,
                   const HttpRequest& req);

// pageNum (default 1) and pageSize (default and maximum from the options).
StatusOr<PageRequest> PageParams(const ApiContext& ctx, const HttpRequest& req);
// sort (one of route.sort_keys, mapped to the store's key) and order
// (asc or desc); an empty sort is the store's default.
StatusOr<Sort> SortParams(const RouteSpec& route, const HttpRequest& req);

std::optional<std::string> StringParam(const HttpRequest& req,
                                       std::string_view name);

// The path parameter `name` of the route ("/nodes/{name}"); "" when absent.
std::string PathParam(const HttpRequest& req, const char* name);
StatusOr<std::optional<int64_t>> IntParam(const HttpRequest& req,
                                          std::string_view name);
StatusOr<std::optional<bool>> BoolParam(const HttpRequest& req,
                                        std::string_view name);
// Unix seconds (an integer).
StatusOr<std::optional<Timestamp>> TimeParam(const HttpRequest& req,
                                             std::string_view name);

// The time range of a series route: [from_s, to_s] in Unix seconds and the
// step between points. The points lie on start_s + k * step_s for k <
// steps, start_s being from_s rounded down to a multiple of the step, as
// TimeSeriesSource aligns its answer.
struct SeriesRange {
  int64_t from_s = 0;
  int64_t to_s = 0;
  int64_t step_s = 60;
  int64_t start_s = 0;
  int64_t steps = 0;

  // The query of `metric` over this range.
  RangeQuery Query(std::string metric, RangeFunction function) const;
};

// from and to (default: the hour up to now) and, with `step_param`, step
// (otherwise, and by default, the range over at most 120 steps, at least
// 60 s). 400 naming the parameter: `to` before `from`, a step under 1 s or
// over 366 days, or more than `max_steps` steps.
StatusOr<SeriesRange> SeriesRangeParams(const HttpRequest& req, bool step_param,
                                        int64_t max_steps);

}  // namespace lens::api

#endif  // LENS_API_PARAMS_H_
