// The node side of Lens, composed once: what lens-node-agent, lens-netflow
// and `lens up` run, each choosing its parts.
//
//   auto config = lens::LoadConfig(path, {.overrides = flags});
//   auto options = lens::NodeServiceOptionsFromConfig(
//       *config, lens::kNodeAgent | lens::kNodeContainers);
//   auto service = lens::NodeService::Start(*options);
//   ...
//   (*service)->Stop();
//
// Parts:
//   agent       GPU/RDMA/node probes and the node REST API (/metrics, /gpus,
//               /cardMetrics, /rdma, /node, /driMapping, /healthz) on
//               `agent_http`, plus /pods when containers are tracked.
//   containers  the container tracker (containerd + pod-resources): /pods,
//               GPUs and NICs per container, and pod/workload names for
//               flows. The container events stream to lens-jobs rides on it
//               (`events`, only where the agent runs).
//   flows       TCP flows with eBPF (/metrics, /flows, /healthz on
//               `flows->http`), attributed to pods when containers are
//               tracked.
#ifndef LENS_SERVICE_NODE_SERVICE_H_
#define LENS_SERVICE_NODE_SERVICE_H_

#include <memory>
#include <optional>
#include <string>

#include "agent/node_agent.h"
#include "container_events/container_events.h"
#include "http/http.h"
#include "lens/containers.h"
#include "lens/flow.h"
#include "lens/insights_health.h"
#include "lens/status.h"
#include "service/config.h"

namespace lens {

// TCP flows and where they are served.
struct NodeFlowOptions {
  FlowProbeOptions probe;
  FlowMonitorOptions monitor;  // `containers` is set by the service
  HttpServerOptions http;      // /metrics, /flows, /healthz
  // true: Start fails when the probe cannot load (lens-netflow); false: the
  // service runs without flows and flows_status() says why (`lens up`
  // without root).
  bool required = true;
};

// What a NodeService runs. Plain value.
struct NodeServiceOptions {
  // Every part's node name and host roots (the parts' own fields are
  // overwritten with these).
  std::string node_name;
  HostRoots roots;
  std::optional<NodeAgentOptions> agent;  // nullopt: no probes, no node API
  HttpServerOptions agent_http;
  // Device health from the agent's cycles (lens_gpu_health,
  // lens_rdma_port_health, GET /health/devices); with the agent.
  DeviceHealthOptions health;
  std::optional<ContainerTrackerOptions> containers;  // nullopt: off
  // Streams the tracker's changes to lens-jobs; needs `containers`.
  std::optional<ContainerEventSenderOptions> events;
  std::optional<NodeFlowOptions> flows;  // nullopt: off

  // InvalidArgument naming the part and field.
  Status Validate() const;
};

// Which parts NodeServiceOptionsFromConfig turns on (bits).
enum NodePart : unsigned {
  kNodeAgent = 1u << 0,
  kNodeContainers = 1u << 1,  // still off where nodeExporter.containers is
  kNodeFlows = 1u << 2,
  // Everything on one machine, as `lens up` runs it: flows are optional
  // (without root the rest still runs), containers are tracked only when
  // the containerd socket exists, and the flows port takes the node agent's
  // token when netflow.bearerTokenFile is not set.
  kNodeOnOneMachine = 1u << 3,
};

// Builds the options from the config: `nodeExporter` (agent, containers,
// events), `netflow` (flows) and `metrics.compatNames`. Reads bearer token
// files and the flow policy (errors name the key and file, never a token).
// The node name is $NODE_NAME, else the hostname; the node IP is $NODE_IP.
// Container events go to lens-jobs only from a service with the agent
// (nodeExporter.jobsAddress), so one node never streams them twice.
StatusOr<NodeServiceOptions> NodeServiceOptionsFromConfig(const Config& config,
                                                          unsigned parts);

// The running parts. Thread-safe.
class NodeService {
 public:
  // Runs the agent's first cycle (so the tracker resolves devices against
  // the real inventory), starts the tracker, the event stream and the flow
  // monitor, then binds and serves. Errors: InvalidArgument (options),
  // Unavailable (cannot listen; names the address), and the flow probe's
  // errors when flows are required. containerd being unreachable is not an
  // error: the tracker keeps retrying.
  static StatusOr<std::unique_ptr<NodeService>> Start(
      const NodeServiceOptions& options);
  ~NodeService();  // stops
  NodeService(const NodeService&) = delete;
  NodeService& operator=(const NodeService&) = delete;

  // Stops serving, then the parts; gives the event stream 2 s to deliver
  // what is queued. Idempotent.
  void Stop();

  // nullptr / "" for a part that does not run.
  const NodeAgent* agent() const;
  std::string url() const;  // the agent's: "http://127.0.0.1:8989"
  const ContainerTracker* containers() const;
  const ContainerEventSender* events() const;
  const FlowMonitor* flows() const;
  std::string flows_url() const;
  // Why flows do not run although asked for (not required); OK otherwise.
  Status flows_status() const;

 private:
  NodeService();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens

#endif  // LENS_SERVICE_NODE_SERVICE_H_
