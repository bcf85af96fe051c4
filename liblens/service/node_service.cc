// NodeService: the node's parts started in order, served, stopped in
// reverse.
#include "service/node_service.h"

#include <charconv>

#include "lens/insights_placement.h"
#include "lens/log.h"
#include "service/node_health.h"

namespace lens {

struct NodeService::Impl {
  std::unique_ptr<service::NodeDeviceHealth> health;  // outlives the agent
  std::unique_ptr<NodeAgent> agent;
  std::unique_ptr<HttpServer> agent_http;
  std::unique_ptr<ContainerTracker> tracker;
  std::unique_ptr<ContainerEventSender> sender;
  std::unique_ptr<FlowMonitor> flows;
  std::unique_ptr<HttpServer> flow_http;
  Status flows_status;

  void SetUpContainers(const NodeServiceOptions& o);
  void StartContainers(const NodeServiceOptions& o);
  Status StartFlows(const NodeServiceOptions& o);
};

Status NodeServiceOptions::Validate() const {
  if (agent) LENS_RETURN_IF_ERROR(agent->Validate().WithContext("agent"));
  if (agent) LENS_RETURN_IF_ERROR(agent_http.Validate().WithContext("agent"));
  if (agent) LENS_RETURN_IF_ERROR(health.Validate().WithContext("health"));
  if (events && !containers) {
    return InvalidArgumentError(
        "events: the container event stream needs container tracking");
  }
  if (flows) LENS_RETURN_IF_ERROR(flows->http.Validate().WithContext("flows"));
  return OkStatus();
}

NodeService::NodeService() : impl_(std::make_unique<Impl>()) {}

StatusOr<std::unique_ptr<NodeService>> NodeService::Start(
    const NodeServiceOptions& options) {
  LENS_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<NodeService> service(new NodeService());
  Impl& s = *service->impl_;
  if (options.agent) {
    NodeAgentOptions a = *options.agent;
    a.node_name = options.node_name;
    a.roots = options.roots;
    LENS_ASSIGN_OR_RETURN(s.agent_http, HttpServer::Create(options.agent_http));
    s.agent = std::make_unique<NodeAgent>(a, DefaultNodeCollectors(a));
    s.agent->RegisterRoutes(*s.agent_http);
    LENS_ASSIGN_OR_RETURN(s.health,
                          service::NodeDeviceHealth::Create(options.health));
    service::NodeDeviceHealth* health = s.health.get();
    s.agent->SetCycleListener(
        [health](const NodeSnapshot& snap) { health->Observe(snap); });
    // Health, and the placement of the pods the tracker (set up below,
    // before serving) sees.
    s.agent->SetMetricsAppender(
        [impl = &s, roots = options.roots](std::string* out) {
          impl->health->RenderMetrics(out);
          impl->agent_http->RenderMetrics(out);
          if (impl->tracker) {
            service::RenderPlacementMetrics(roots, impl->tracker->Containers(),
                                            out);
          }
        });
    s.agent_http->Handle(
        "GET", "/health/devices",
        [health](const HttpRequest& req, HttpResponse* out) {
          std::optional<uint64_t> after;
          if (auto it = req.query.find("after"); it != req.query.end()) {
            uint64_t v = 0;
            const std::string& text = it->second;
            auto [end, ec] =
                std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec != std::errc() || end != text.data() + text.size()) {
              RespondError(400, "after: not a transition sequence number", out);
              return;
            }
            after = v;
          }
          RespondData(health->Json(after), out);
        });
  }
  if (options.containers) {
    s.SetUpContainers(options);
    // One cycle first, so the tracker resolves devices against the real
    // inventory from its first list (not an empty one, then an update).
    if (s.agent) (void)s.agent->RunOnce();  // errors are in the snapshot
    s.StartContainers(options);
  }
  if (options.flows) {
    Status st = s.StartFlows(options);
    if (!st.ok() && options.flows->required) return st;
    if (!st.ok()) {
      s.flows.reset();
      s.flow_http.reset();
      s.flows_status = st;
    }
  }
  if (s.agent && !options.containers) {
    // Say why there is nothing, rather than a bare 404.
    s.agent_http->Handle(
        "GET", "/pods", [](const HttpRequest&, HttpResponse* out) {
          RespondError(404,
                       "container tracking is off on this node "
                       "(nodeExporter.containers: false, --no-containers, or "
                       "lens up without a containerd or Docker socket)",
                       out);
        });
  }
  if (s.agent) {
    LENS_RETURN_IF_ERROR(s.agent->Start());
    LENS_RETURN_IF_ERROR(s.agent_http->Start());
  }
  return service;
}

void NodeService::Impl::SetUpContainers(const NodeServiceOptions& o) {
  ContainerTrackerOptions t = *o.containers;
  t.node = o.node_name;
  t.roots = o.roots;
  tracker = std::make_unique<ContainerTracker>(t);
  if (o.events) {
    ContainerEventSenderOptions e = *o.events;
    e.node = o.node_name;  // one node name for everything
    sender = std::make_unique<ContainerEventSender>(e);
    ContainerEventSender* out = sender.get();
    tracker->SetListener([out](const ContainerChange& c) { out->Publish(c); });
    tracker->SetResyncListener([out](const std::vector<ContainerRecord>& all) {
      out->PublishSnapshot(all);
    });
  }
  if (!agent) return;
  ContainerTracker* t_ptr = tracker.get();
  agent->SetInventoryListener([t_ptr](const NodeSnapshot& s) {
    t_ptr->SetInventory({s.gpus, s.rdma_devices});
  });
  agent_http->Handle("GET", "/pods",
                     [t_ptr](const HttpRequest&, HttpResponse* out) {
                       RespondData(ContainersJson(t_ptr->Containers()), out);
                     });
  // The placement audit of the pods running here (docs/insights.md).
  agent_http->Handle(
      "GET", "/placement",
      [t_ptr, roots = o.roots](const HttpRequest&, HttpResponse* out) {
        StatusOr<std::vector<PodPlacement>> audit =
            AuditNodePlacement(roots, t_ptr->Containers());
        if (!audit.ok()) {
          RespondError(500, audit.status().message(), out);
          return;
        }
        RespondData(PlacementJson(*audit), out);
      });
}

void NodeService::Impl::StartContainers(const NodeServiceOptions& o) {
  // The tracker's first list (and its resync) is queued before the stream
  // starts, so the first snapshot lens-jobs gets is the full set.
  Status st = tracker->Start();
  if (!st.ok()) {
    const bool docker =
        ResolveContainerRuntime(*o.containers) == ContainerRuntime::kDocker;
    LENS_LOG(WARN)
            .Field("socket", docker ? o.containers->docker_socket
                                    : o.containers->containerd_socket)
            .Field("error", st)
        << (docker ? "Docker Engine" : "containerd")
        << " not reachable yet; container tracking keeps retrying";
  }
  if (sender) {
    Status sent = sender->Start();
    if (!sent.ok()) {
      LENS_LOG(ERROR).Field("error", sent)
          << "container event stream not started";
    }
  }
}

Status NodeService::Impl::StartFlows(const NodeServiceOptions& o) {
  auto probe = FlowProbe::Open(o.flows->probe);
  if (!probe.ok()) return probe.status().WithContext("eBPF");
  FlowMonitorOptions m = o.flows->monitor;
  m.containers = tracker.get();
  LENS_ASSIGN_OR_RETURN(flows, FlowMonitor::Create(std::move(*probe), m));
  LENS_ASSIGN_OR_RETURN(flow_http, HttpServer::Create(o.flows->http));
  AddFlowRoutes(*flow_http, *flows);
  LENS_RETURN_IF_ERROR(flows->Start());
  Status st = flow_http->Start();
  if (!st.ok()) flows->Stop();
  return st;
}

NodeService::~NodeService() { Stop(); }

void NodeService::Stop() {
  Impl& s = *impl_;
  if (s.flow_http) s.flow_http->Stop();
  if (s.agent_http) s.agent_http->Stop();
  if (s.flows) s.flows->Stop();
  if (s.agent) s.agent->Stop();
  if (s.tracker) s.tracker->Stop();
  if (s.sender) {
    // What the last changes carried (an exit, an OOM) is only in events:
    // give lens-jobs a moment to ack them.
    (void)s.sender->Flush(std::chrono::seconds(2));
    s.sender->Stop();
  }
}

const NodeAgent* NodeService::agent() const { return impl_->agent.get(); }
std::string NodeService::url() const {
  return impl_->agent_http ? impl_->agent_http->url() : "";
}
const ContainerTracker* NodeService::containers() const {
  return impl_->tracker.get();
}
const ContainerEventSender* NodeService::events() const {
  return impl_->sender.get();
}
const FlowMonitor* NodeService::flows() const { return impl_->flows.get(); }
std::string NodeService::flows_url() const {
  return impl_->flow_http ? impl_->flow_http->url() : "";
}
Status NodeService::flows_status() const { return impl_->flows_status; }

}  // namespace lens
