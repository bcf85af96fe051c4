#include "api/params.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <limits>

namespace lens::api {

std::optional<std::string> StringParam(const HttpRequest& req,
                                       std::string_view name) {
  auto it = req.query.find(std::string(name));
  if (it == req.query.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

StatusOr<std::optional<int64_t>> IntParam(const HttpRequest& req,
                                          std::string_view name) {
  std::optional<std::string> text = StringParam(req, name);
  if (!text) return std::optional<int64_t>();
  int64_t value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end) {
    return InvalidArgumentError(std::string(name) + ": \"" + *text +
                                "\" is not an integer");
  }
  return std::optional<int64_t>(value);
}

StatusOr<std::optional<bool>> BoolParam(const HttpRequest& req,
                                        std::string_view name) {
  std::optional<std::string> text = StringParam(req, name);
  if (!text) return std::optional<bool>();
  if (*text == "true" || *text == "1") return std::optional<bool>(true);
  if (*text == "false" || *text == "0") return std::optional<bool>(false);
  return InvalidArgumentError(std::string(name) + ": \"" + *text +
                              "\" is not true or false");
}

StatusOr<std::optional<Timestamp>> TimeParam(const HttpRequest& req,
                                             std::string_view name) {
  LENS_ASSIGN_OR_RETURN(std::optional<int64_t> seconds, IntParam(req, name));
  if (!seconds) return std::optional<Timestamp>();
  // Years 0..9999 keep the microsecond clock far from overflow.
  if (*seconds < 0 || *seconds > int64_t{253402300799}) {
    return InvalidArgumentError(std::string(name) + ": " +
                                std::to_string(*seconds) +
                                " is not Unix seconds in years 1970..9999");
  }
  return std::optional<Timestamp>(Timestamp(std::chrono::seconds(*seconds)));
}

StatusOr<PageRequest> PageParams(const ApiContext& ctx,
                                 const HttpRequest& req) {
  PageRequest page{1, ctx.options.default_page_size};
  LENS_ASSIGN_OR_RETURN(std::optional<int64_t> num, IntParam(req, "pageNum"));
  LENS_ASSIGN_OR_RETURN(std::optional<int64_t> size, IntParam(req, "pageSize"));
  if (num) {
    if (*num < 1 || *num > std::numeric_limits<int32_t>::max()) {
      return InvalidArgumentError(
          "pageNum: " + std::to_string(*num) + " is not a page number (1.." +
          std::to_string(std::numeric_limits<int32_t>::max()) + ")");
    }
    page.page_num = static_cast<int32_t>(*num);
  }
  if (size) {
    if (*size < 1 || *size > ctx.options.max_page_size) {
      return InvalidArgumentError("pageSize: " + std::to_string(*size) +
                                  " is not in 1.." +
                                  std::to_string(ctx.options.max_page_size));
    }
    page.page_size = static_cast<int32_t>(*size);
  }
  return page;
}

StatusOr<Sort> SortParams(const RouteSpec& route, const HttpRequest& req) {
  Sort sort;
  std::optional<std::string> key = StringParam(req, "sort");
  if (key) {
    std::string allowed;
    for (const SortKey& k : route.sort_keys) {
      if (k.name == *key) sort.key = std::string(k.store_key);
      allowed += (allowed.empty() ? "" : ", ") + std::string(k.name);
    }
    if (sort.key.empty()) {
      return InvalidArgumentError("sort: unknown key \"" + *key +
                                  "\" (allowed: " + allowed + ")");
    }
  }
  std::optional<std::string> order = StringParam(req, "order");
  if (order) {
    if (*order != "asc" && *order != "desc") {
      return InvalidArgumentError("order: \"" + *order +
                                  "\" is not asc or desc");
    }
    if (!key) return InvalidArgumentError("order: needs a sort key");
    sort.descending = *order == "desc";
  }
  return sort;
}

namespace {

constexpr int64_t kHourS = 3600;
constexpr int64_t kDefaultSteps = 120;
constexpr int64_t kMinDefaultStepS = 60;
constexpr int64_t kMaxStepS = int64_t{366} * 86400;  // RangeQuery's bound

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t Seconds(Timestamp t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch())
      .count();
}

}  // namespace

RangeQuery SeriesRange::Query(std::string metric,
                              RangeFunction function) const {
  RangeQuery q;
  q.metric = std::move(metric);
  q.from_ms = from_s * 1000;
  q.to_ms = to_s * 1000;
  q.step = std::chrono::seconds(step_s);
  q.function = function;
  return q;
}

StatusOr<SeriesRange> SeriesRangeParams(const HttpRequest& req, bool step_param,
                                        int64_t max_steps) {
  LENS_ASSIGN_OR_RETURN(std::optional<Timestamp> from, TimeParam(req, "from"));
  LENS_ASSIGN_OR_RETURN(std::optional<Timestamp> to, TimeParam(req, "to"));
  SeriesRange r;
  r.to_s = to ? Seconds(*to) : UnixNow();
  r.from_s = from ? Seconds(*from) : std::max<int64_t>(0, r.to_s - kHourS);
  if (r.to_s < r.from_s) {
    return InvalidArgumentError("to: " + std::to_string(r.to_s) +
                                " is before from (" + std::to_string(r.from_s) +
                                ")");
  }
  const int64_t span = r.to_s - r.from_s;
  r.step_s = std::clamp((span + kDefaultSteps - 1) / kDefaultSteps,
                        kMinDefaultStepS, kMaxStepS);
  std::optional<int64_t> step;
  if (step_param) {
    LENS_ASSIGN_OR_RETURN(step, IntParam(req, "step"));
  }
  if (step) {
    if (*step < 1 || *step > kMaxStepS) {
      return InvalidArgumentError("step: " + std::to_string(*step) +
                                  " is not seconds in 1.." +
                                  std::to_string(kMaxStepS));
    }
    r.step_s = *step;
  }
  r.start_s = r.from_s / r.step_s * r.step_s;
  r.steps = r.to_s / r.step_s - r.from_s / r.step_s + 1;
  if (r.steps > max_steps) {
    return InvalidArgumentError(
        "step: " + std::to_string(r.step_s) + " s gives " +
        std::to_string(r.steps) + " points from " + std::to_string(r.from_s) +
        " to " + std::to_string(r.to_s) + " (at most " +
        std::to_string(max_steps) + "); use a larger step");
  }
  return r;
}

Status ResolveCluster(const ApiContext& home, const HttpRequest& req,
                      ApiClusters::Handle* member,
                      std::optional<ApiContext>* other) {
  std::optional<std::string> cluster = StringParam(req, "cluster");
  if (!cluster || *cluster == home.options.cluster ||
      home.options.clusters == nullptr) {
    return OkStatus();  // CheckParams answers an unknown one
  }
  LENS_ASSIGN_OR_RETURN(*member, home.options.clusters->Find(*cluster));
  ApiContext& c = other->emplace(home);
  c.store = member->store.get();
  c.series = member->series.get();
  c.options.cluster = *cluster;
  c.stale = member->stale;
  return OkStatus();
}

Status CheckParams(const ApiContext& ctx, const RouteSpec& route,
                   const HttpRequest& req) {
  std::optional<std::string> cluster = StringParam(req, "cluster");
  if (cluster && *cluster != ctx.options.cluster) {
    return NotFoundError("unknown cluster \"" + *cluster + "\" (this is \"" +
                         ctx.options.cluster + "\")");
  }
  if (route.paged) LENS_RETURN_IF_ERROR(PageParams(ctx, req).status());
  if (!route.sort_keys.empty())
    LENS_RETURN_IF_ERROR(SortParams(route, req).status());
  for (const ParamSpec& p : route.params) {
    switch (p.type) {
      case ParamType::kString:
        break;
      case ParamType::kInteger:
        LENS_RETURN_IF_ERROR(IntParam(req, p.name).status());
        break;
      case ParamType::kBoolean:
        LENS_RETURN_IF_ERROR(BoolParam(req, p.name).status());
        break;
      case ParamType::kTime:
        LENS_RETURN_IF_ERROR(TimeParam(req, p.name).status());
        break;
    }
  }
  return OkStatus();
}

std::string PathParam(const HttpRequest& req, const char* name) {
  auto it = req.path_params.find(name);
  return it == req.path_params.end() ? std::string() : it->second;
}

}  // namespace lens::api
