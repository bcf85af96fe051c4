// lens-netflow's HTTP routes, shared with `lens up`: /metrics (flow metrics
// and the probe's cost), /flows (the last drain's sockets in the REST
// envelope) and /healthz.
#ifndef LENS_DAEMONS_NETFLOW_ROUTES_H_
#define LENS_DAEMONS_NETFLOW_ROUTES_H_

#include <string>

#include "lens/flow.h"
#include "lens/http.h"
#include "lens/metrics.h"

namespace lens::cli {

// `monitor` must outlive the server's handlers.
inline void AddFlowRoutes(HttpServer& http, const FlowMonitor& monitor) {
  http.Handle("GET", "/metrics",
              [&monitor](const HttpRequest&, HttpResponse* r) {
                r->content_type = std::string(kPrometheusTextContentType);
                r->body = monitor.RenderMetrics();
              });
  http.Handle("GET", "/flows", [&monitor](const HttpRequest&, HttpResponse* r) {
    RespondData(FlowsJson(monitor.RecentFlows()), r);
  });
  http.Handle("GET", "/healthz", [](const HttpRequest&, HttpResponse* r) {
    r->content_type = "text/plain";
    r->body = "ok\n";
  });
}

}  // namespace lens::cli

#endif  // LENS_DAEMONS_NETFLOW_ROUTES_H_
