#include "container_events/server_metrics.h"

#include <cstdint>
#include <utility>

namespace lens::container_events {

StatusOr<std::unique_ptr<ServerMetrics>> ServerMetrics::Create() {
  auto m = std::make_unique<ServerMetrics>();
  Registry& r = m->registry;
  LENS_ASSIGN_OR_RETURN(
      m->received,
      r.AddCounter("lens_container_events_received_total",
                   "Container events received from node agents (each entry "
                   "of a snapshot counts as one)."));
  LENS_ASSIGN_OR_RETURN(
      m->snapshots,
      r.AddCounter("lens_container_event_snapshots_received_total",
                   "Full container snapshots received from node agents."));
  LENS_ASSIGN_OR_RETURN(
      m->errors,
      r.AddCounter("lens_container_event_errors_total",
                   "Failed store writes and rejected agent messages."));
  LENS_ASSIGN_OR_RETURN(m->batches,
                        r.AddCounter("lens_container_event_batches_total",
                                     "Batches of agent messages written to the "
                                     "store."));
  LENS_ASSIGN_OR_RETURN(
      m->processing_seconds,
      r.AddHistogram("lens_container_event_processing_seconds",
                     "Time from receiving an agent message to storing it (or "
                     "dropping it as invalid).",
                     {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1}));
  LENS_ASSIGN_OR_RETURN(
      m->agents,
      r.AddGauge("lens_container_event_agents",
                 "Node agents connected now (streams past their Hello)."));
  LENS_ASSIGN_OR_RETURN(
      m->queued_bytes,
      r.AddGauge("lens_container_event_queued_bytes",
                 "Bytes of agent messages waiting for the store writer (wire "
                 "size); bounded by the queue's byte limit."));
  LENS_ASSIGN_OR_RETURN(
      m->unauthenticated,
      r.AddCounter("lens_container_event_unauthenticated_total",
                   "Agent streams refused for a missing or wrong token."));
  LENS_ASSIGN_OR_RETURN(
      m->permission_denied,
      r.AddCounter("lens_container_event_permission_denied_total",
                   "Agent streams ended because a node's identity spoke for "
                   "another node."));
  return m;
}

ContainerEventServerStats ServerMetrics::Stats() const {
  ContainerEventServerStats s;
  s.events_received = static_cast<uint64_t>(received->Value());
  s.snapshots_received = static_cast<uint64_t>(snapshots->Value());
  s.errors = static_cast<uint64_t>(errors->Value());
  s.batches = static_cast<uint64_t>(batches->Value());
  s.processing_seconds_sum = processing_seconds->Snapshot().sum;
  s.connected_agents = static_cast<int64_t>(agents->Value());
  s.unauthenticated = static_cast<uint64_t>(unauthenticated->Value());
  s.permission_denied = static_cast<uint64_t>(permission_denied->Value());
  s.queued_bytes = static_cast<int64_t>(queued_bytes->Value());
  return s;
}

}  // namespace lens::container_events
