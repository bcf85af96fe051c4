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
#ifndef LENS_API_API_H_
#define LENS_API_API_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "http/http.h"
#include "lens/status.h"
#include "lens/store.h"
#include "lens/timeseries.h"

namespace lens {

// The clusters other than its own that an API answers `cluster=<name>` for,
// each with its own store and time series (lens-multicluster's directory).
// Thread-safe.
class ApiClusters {
 public:
  struct Handle {
    std::shared_ptr<Store> store;
    std::shared_ptr<TimeSeriesSource> series;  // never null
    bool stale = false;  // its Kubernetes API did not answer lately
  };
  virtual ~ApiClusters() = default;
  // NotFound "unknown cluster" when it is not in the directory; Unavailable
  // when its store cannot be opened now (the message names the store with
  // its password redacted).
  virtual StatusOr<Handle> Find(std::string_view name) = 0;
};

// Options of the directory file (core/cluster_directory.h).
struct ClusterDirectoryOptions {
  std::string path;
  // The file is looked at again (mtime and size) at most this often.
  std::chrono::milliseconds recheck{2000};
  // Time series of a member with a prometheusUrl come from it (its token as
  // bearer token) with this timeout; without one, from its store's sample
  // history.
  std::chrono::milliseconds prometheus_timeout{10000};
  // A member's store opens on a thread of the directory's own: a request
  // waits at most `open_wait` for it, then gets Unavailable naming the
  // cluster (an unreachable member never holds a request for a connect
  // timeout). A failed open is remembered and tried again after a backoff
  // from `retry_min` doubling to `retry_max`; requests meanwhile get the
  // failure at once.
  std::chrono::milliseconds open_wait{50};
  std::chrono::milliseconds retry_min{1000};
  std::chrono::milliseconds retry_max{60000};
};

// The clusters of the directory file. A file that is missing or does not
// parse keeps the last good directory (empty at first) and is logged once
// per change; a cluster whose endpoints change is reopened on its next
// request, and requests in flight finish on the old store.
std::unique_ptr<ApiClusters> NewClusterDirectoryFile(
    const ClusterDirectoryOptions& options);

struct ApiOptions {
  // The cluster this API serves. The `cluster` query parameter of every
  // route may be empty or this name, or one of `clusters`; any other is 404
  // "unknown cluster".
  std::string cluster = "default";
  // Other clusters (borrowed; must outlive the server's serving); null:
  // none.
  ApiClusters* clusters = nullptr;
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
Status AddApiRoutes(Store* store, TimeSeriesSource* series,
                    const ApiOptions& options, HttpServer* server);

}  // namespace lens

#endif  // LENS_API_API_H_
