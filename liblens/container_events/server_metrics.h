// The counters of a ContainerEventServer, kept in their own metrics
// registry so RenderMetrics() is that registry's text.
#ifndef LENS_CONTAINER_EVENTS_SERVER_METRICS_H_
#define LENS_CONTAINER_EVENTS_SERVER_METRICS_H_

#include <memory>
#include <string>

#include "container_events/container_events.h"
#include "core/metrics.h"
#include "lens/status.h"

namespace lens::container_events {

// Thread-safe (the children are atomics). Built by Create(); the handles
// stay valid for the object's lifetime.
struct ServerMetrics {
  static StatusOr<std::unique_ptr<ServerMetrics>> Create();

  ContainerEventServerStats Stats() const;
  std::string Render() const { return registry.Render(); }

  Registry registry;
  std::shared_ptr<Counter> received;   // events + snapshot entries
  std::shared_ptr<Counter> snapshots;  // snapshot messages
  std::shared_ptr<Counter> errors;     // store failures, bad messages
  std::shared_ptr<Counter> batches;    // batches written
  std::shared_ptr<Histogram> processing_seconds;  // receive -> stored
  std::shared_ptr<Gauge> agents;                  // open streams after Hello
  std::shared_ptr<Gauge> queued_bytes;            // waiting for the writer
  std::shared_ptr<Counter> unauthenticated;    // streams without a valid token
  std::shared_ptr<Counter> permission_denied;  // a node speaking for another
};

}  // namespace lens::container_events

#endif  // LENS_CONTAINER_EVENTS_SERVER_METRICS_H_
