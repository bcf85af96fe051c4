// The HTTP server's own counters (docs/http.md): requests by route and
// code, connections accepted, closed and refused by reason, requests refused
// before a handler or dropped, queue depths.
#include "http/epoll_server.h"

namespace lens::http {

void EpollServer::AddMetrics(Registry* registry) {
  auto requests = registry->AddCounterFamily(
      "lens_http_requests_total",
      "HTTP requests answered, by route and status.", {"route", "code"});
  auto durations = registry->AddHistogramFamily(
      "lens_http_request_duration_seconds",
      "Time in the route's handler, from its call to its response.", {"route"},
      {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10});
  // One registry per server: a second server on the same registry is
  // refused the names (AlreadyExists) and counts nothing.
  if (requests.ok()) requests_ = *requests;
  if (durations.ok()) durations_ = *durations;
  // The family's one child for `label` (created now, so it shows as 0).
  auto child = [](const auto& family, std::string_view label) {
    using Ptr = std::remove_reference_t<decltype(*(*family)->WithLabels({}))>;
    if (!family.ok()) return Ptr();
    auto c = (*family)->WithLabels({label});
    return c.ok() ? *c : Ptr();
  };
  if (auto a = registry->AddCounter("lens_http_connections_accepted_total",
                                    "HTTP connections accepted.");
      a.ok()) {
    accepted_ = *a;
  }
  static constexpr const char* kCloseReasons[] = {
      "peer",          "done",    "idle_timeout", "read_timeout",
      "write_timeout", "evicted", "stopping"};
  auto closed = registry->AddCounterFamily(
      "lens_http_connections_closed_total",
      "HTTP connections closed, by reason: peer (the client closed or reset), "
      "done (answered with Connection: close), idle_timeout, read_timeout, "
      "write_timeout, evicted (stalled, closed to make room at a cap), "
      "stopping.",
      {"reason"});
  for (int i = 0; i < static_cast<int>(CloseReason::kCount); ++i)
    closed_[i] = child(closed, kCloseReasons[i]);
  auto rejected = registry->AddCounterFamily(
      "lens_http_connections_rejected_total",
      "HTTP connections refused at accept, by cap: max_connections, "
      "max_connections_per_peer, file_descriptors.",
      {"reason"});
  rejected_at_total_cap_ = child(rejected, "max_connections");
  rejected_at_peer_cap_ = child(rejected, "max_connections_per_peer");
  rejected_no_fds_ = child(rejected, "file_descriptors");
  static constexpr const char* kRefusals[] = {
      "malformed",          "unauthorized",    "not_found",
      "method_not_allowed", "timeout",         "length_required",
      "body_too_large",     "uri_too_long",    "headers_too_large",
      "queue_full",         "bodies_in_flight"};
  auto refused = registry->AddCounterFamily(
      "lens_http_requests_refused_total",
      "HTTP requests answered before any handler ran, by reason (4xx, and 503 "
      "when the handler queue was full).",
      {"reason"});
  for (int i = 0; i < static_cast<int>(Refusal::kCount); ++i)
    refused_[i] = child(refused, kRefusals[i]);
  if (auto d = registry->AddCounter(
          "lens_http_requests_dropped_total",
          "Queued HTTP requests dropped because the client had gone before "
          "their handler ran.");
      d.ok()) {
    dropped_ = *d;
  }
  if (auto o = registry->AddGauge("lens_http_connections",
                                  "HTTP connections open now.");
      o.ok()) {
    open_ = *o;
  }
  auto queued = registry->AddGaugeFamily(
      "lens_http_queued_requests",
      "HTTP requests waiting for a handler thread, by pool (workers, or "
      "priority: the thread reserved for scrapes and liveness).",
      {"pool"});
  queued_workers_ = child(queued, "workers");
  queued_priority_ = child(queued, "priority");
  workers_.SetDepthGauge(queued_workers_);
  priority_.SetDepthGauge(queued_priority_);
}

void EpollServer::RenderMetrics(std::string* out) const {
  if (own_metrics_) own_metrics_->RenderTo(out);
}

void EpollServer::SetGauges() {
  if (open_) open_->Set(static_cast<double>(conns_.size()));
}

void EpollServer::CountAnswer(const std::string& route, int status,
                              double seconds) {
  if (requests_ != nullptr) {
    auto c = requests_->WithLabels({route, std::to_string(status)});
    if (c.ok()) (*c)->Inc();
  }
  if (durations_ != nullptr && seconds >= 0) {
    auto h = durations_->WithLabels({route});
    if (h.ok()) (*h)->Observe(seconds);
  }
}

void EpollServer::CountRefused(int status) {
  CountAnswer("unrouted", status);
  Refusal why;
  switch (status) {
    case 401:
      why = Refusal::kUnauthorized;
      break;
    case 404:
      why = Refusal::kNotFound;
      break;
    case 405:
      why = Refusal::kMethodNotAllowed;
      break;
    case 408:
      why = Refusal::kTimeout;
      break;
    case 411:
      why = Refusal::kLengthRequired;
      break;
    case 413:
      why = Refusal::kBodyTooLarge;
      break;
    case 414:
      why = Refusal::kLineTooLong;
      break;
    case 431:
      why = Refusal::kHeadersTooLarge;
      break;
    case 503:
      why = Refusal::kQueueFull;
      break;
    default:
      why = Refusal::kMalformed;
      break;
  }
  if (auto& c = refused_[static_cast<int>(why)]) c->Inc();
}

}  // namespace lens::http
