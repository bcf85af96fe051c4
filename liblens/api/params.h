// Query parameters of the REST API, decoded once where they enter: each
// error is InvalidArgument naming the parameter and what it accepts.
#ifndef LENS_API_PARAMS_H_
#define LENS_API_PARAMS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "api/routes.h"
#include "lens/http.h"
#include "lens/model.h"
#include "lens/status.h"

namespace lens::api {

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
StatusOr<std::optional<int64_t>> IntParam(const HttpRequest& req,
                                          std::string_view name);
StatusOr<std::optional<bool>> BoolParam(const HttpRequest& req,
                                        std::string_view name);
// Unix seconds (an integer).
StatusOr<std::optional<Timestamp>> TimeParam(const HttpRequest& req,
                                             std::string_view name);

}  // namespace lens::api

#endif  // LENS_API_PARAMS_H_
