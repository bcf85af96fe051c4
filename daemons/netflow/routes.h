// lens-netflow's HTTP routes, shared with `lens up`: /metrics (flow metrics
// and the probe's cost), /flows (the last drain's busiest sockets in the REST
// envelope) and /healthz.
#ifndef LENS_DAEMONS_NETFLOW_ROUTES_H_
#define LENS_DAEMONS_NETFLOW_ROUTES_H_

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

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
  // The busiest sockets first; ?limit=N (1..100000, default 1000) bounds the
  // answer (a node can hold 65,536 sockets in the flow table).
  http.Handle(
      "GET", "/flows", [&monitor](const HttpRequest& q, HttpResponse* r) {
        size_t limit = 1000;
        if (std::string text = q.Query("limit"); !text.empty()) {
          auto [end, ec] =
              std::from_chars(text.data(), text.data() + text.size(), limit);
          if (ec != std::errc() || end != text.data() + text.size() ||
              limit < 1 || limit > 100000) {
            RespondError(
                400,
                "limit: expected an integer in 1..100000, got \"" + text + "\"",
                r);
            return;
          }
        }
        std::vector<TcpFlow> flows = monitor.RecentFlows();
        auto bytes = [](const TcpFlow& f) {
          return f.bytes_sent + f.bytes_received;
        };
        if (flows.size() > limit) {
          std::partial_sort(flows.begin(), flows.begin() + limit, flows.end(),
                            [&](const TcpFlow& a, const TcpFlow& b) {
                              return bytes(a) > bytes(b);
                            });
          flows.resize(limit);
        } else {
          std::sort(flows.begin(), flows.end(),
                    [&](const TcpFlow& a, const TcpFlow& b) {
                      return bytes(a) > bytes(b);
                    });
        }
        RespondData(FlowsJson(flows), r);
      });
  http.Handle("GET", "/healthz", [](const HttpRequest&, HttpResponse* r) {
    r->content_type = "text/plain";
    r->body = "ok\n";
  });
}

}  // namespace lens::cli

#endif  // LENS_DAEMONS_NETFLOW_ROUTES_H_
