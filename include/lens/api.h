// The Lens REST API (docs/api.md): read-only routes under /api/v1 over a
// Store and a TimeSeriesSource, registered on an HttpServer, and the
// OpenAPI 3.0.3 document of those same routes at GET /api/v1/openapi.json.
//
//   lens::ApiOptions options;
//   options.cluster = "prod";
//   lens::Status st = lens::AddApiRoutes(store.get(), series.get(), options,
//   server.get());
//   ... server->Start();
//
// Every response carries the envelope {"code","data","message"} with a real
// HTTP status: 400 for a bad parameter (the message names it), 404 for an
// unknown id or cluster, 429 when a series query matches too many series,
// 503 when the store or the time-series backend is unreachable (or there is
// no time-series backend). Lists are pages:
// {"items":[...],"total":N,"pageNum":P,"pageSize":S}. Times are Unix
// seconds. No route returns labels, environment or any other field that
// could hold a secret. Auth is the server's (HttpServerOptions::bearer_token).
#ifndef LENS_API_H_
#define LENS_API_H_

#include <cstdint>
#include <string>

#include "lens/export.h"
#include "lens/http.h"
#include "lens/status.h"
#include "lens/store.h"
#include "lens/timeseries.h"

namespace lens {

struct LENS_EXPORT ApiOptions {
  // The cluster this API serves. The `cluster` query parameter of every
  // route may be empty or this name; any other is 404 "unknown cluster".
  std::string cluster = "default";
  // pageSize when a request gives none, and the largest it may give
  // (1..1000, the store's limit).
  int32_t default_page_size = 50;
  int32_t max_page_size = 1000;

  // InvalidArgument naming the field.
  Status Validate() const;
};

// Registers every route of the API on `server` (before server->Start()).
// `store`, `series` and `server` are borrowed: all must outlive the
// server's serving. `series` may be null: the time-series routes (GPU
// heatmap and metrics, flows) then answer 503 "no time series backend
// configured"; the others work. Handlers are thread-safe (the Store
// and the source are). Errors: InvalidArgument for bad options or a null
// store/server.
LENS_EXPORT Status AddApiRoutes(Store* store, TimeSeriesSource* series,
                                const ApiOptions& options, HttpServer* server);

}  // namespace lens

#endif  // LENS_API_H_
