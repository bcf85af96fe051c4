// The flow monitor's HTTP routes: what lens-netflow serves, and `lens up`
// on its flows port.
#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "core/metrics.h"
#include "http/http.h"
#include "lens/flow.h"

namespace lens {

void AddFlowRoutes(HttpServer& http, const FlowMonitor& monitor) {
  http.Handle("GET", "/metrics",
              [&monitor, &http](const HttpRequest&, HttpResponse* r) {
                r->content_type = std::string(kPrometheusTextContentType);
                r->body = monitor.RenderMetrics();
                http.RenderMetrics(&r->body);
              });
  // A node can hold 65,536 sockets in the flow table: ?limit bounds the
  // answer.
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
        auto busier = [](const TcpFlow& a, const TcpFlow& b) {
          return a.bytes_sent + a.bytes_received >
                 b.bytes_sent + b.bytes_received;
        };
        const size_t n = std::min(limit, flows.size());
        std::partial_sort(flows.begin(), flows.begin() + static_cast<long>(n),
                          flows.end(), busier);
        flows.resize(n);
        RespondData(FlowsJson(flows), r);
      });
  http.Handle("GET", "/healthz", [](const HttpRequest&, HttpResponse* r) {
    r->content_type = "text/plain";
    r->body = "ok\n";
  });
}

}  // namespace lens
