// NodeAgentService: config -> agent + HTTP server.
#include <unistd.h>

#include <cstdlib>

#include "core/kernel_file.h"
#include "lens/http.h"
#include "lens/log.h"
#include "lens/node_agent.h"

namespace lens {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

// nodeExporter.containers / containerd* / jobs* -> tracker and sender.
Status ContainerOptionsFromConfig(const NodeExporterOptions& ne,
                                  const NodeAgentOptions& a,
                                  NodeAgentServiceOptions* out) {
  if (!ne.containers) return OkStatus();
  ContainerTrackerOptions& t = out->containers.emplace();
  t.node = a.node_name;
  t.roots = a.roots;
  t.containerd_socket = ne.containerd_socket;
  t.containerd_namespace = ne.containerd_namespace;
  t.pod_resources_socket = ne.pod_resources_socket;
  if (ne.jobs_address.empty()) return OkStatus();
  ContainerEventSenderOptions& e = out->events.emplace();
  e.target = ne.jobs_address;
  e.node = a.node_name;
  e.tls_ca_file = ne.jobs_ca_file;
  if (!ne.jobs_bearer_token_file.empty()) {
    LENS_ASSIGN_OR_RETURN(e.bearer_token,
                          ReadBearerTokenFile(ne.jobs_bearer_token_file,
                                    "nodeExporter.jobsBearerTokenFile"));
  }
  return OkStatus();
}

}  // namespace

StatusOr<NodeAgentServiceOptions> NodeAgentServiceOptionsFromConfig(
    const Config& config) {
  const NodeExporterOptions& ne = config.node_exporter;
  LENS_RETURN_IF_ERROR(ne.Validate().WithContext("nodeExporter"));
  NodeAgentServiceOptions out;
  NodeAgentOptions& a = out.agent;
  a.roots = HostRoots{ne.sysfs_root, ne.procfs_root, ne.dev_root};
  a.node_name = Env("NODE_NAME");
  if (a.node_name.empty()) a.node_name = HostName();
  a.node_ip = Env("NODE_IP");
  a.interval = ne.interval;
  a.compat_names = config.metrics.compat_names;
  a.amd_gpus = ne.amd_gpus;
  a.nvidia_gpus = ne.nvidia_gpus;
  a.rdma = ne.rdma;
  a.amd_smi_path = ne.amd_smi_path;
  a.kubelet.url = ne.kubelet_url;
  a.kubelet.token_file = ne.kubelet_token_file;
  a.kubelet.ca_file = ne.kubelet_ca_file;
  a.kubelet.insecure_skip_verify = ne.kubelet_insecure_skip_verify;
  LENS_RETURN_IF_ERROR(a.Validate());

  HttpServerOptions& h = out.http;
  h.listen = ne.listen_address;
  h.tls_cert_file = ne.tls_cert_file;
  h.tls_key_file = ne.tls_key_file;
  if (!ne.bearer_token_file.empty()) {
    LENS_ASSIGN_OR_RETURN(
        h.bearer_token,
        ReadBearerTokenFile(ne.bearer_token_file, "nodeExporter.bearerTokenFile"));
  }
  LENS_RETURN_IF_ERROR(h.Validate());
  LENS_RETURN_IF_ERROR(ContainerOptionsFromConfig(ne, a, &out));
  return out;
}

StatusOr<std::unique_ptr<NodeAgentService>> NodeAgentService::Start(
    const NodeAgentServiceOptions& options) {
  LENS_RETURN_IF_ERROR(options.agent.Validate());
  std::unique_ptr<NodeAgentService> service(new NodeAgentService());
  LENS_ASSIGN_OR_RETURN(service->server_, HttpServer::Create(options.http));
  service->agent_ = std::make_unique<NodeAgent>(
      options.agent, DefaultNodeCollectors(options.agent));
  service->agent_->RegisterRoutes(*service->server_);
  if (options.containers) {
    // One cycle first, so the tracker resolves devices against the real
    // inventory from its first list (not an empty one, then an update).
    service->SetUpContainers(options);
    (void)service->agent_->RunOnce();  // errors are in the snapshot's state
    service->StartContainers(options);
  }
  LENS_RETURN_IF_ERROR(service->agent_->Start());
  LENS_RETURN_IF_ERROR(service->server_->Start());
  return service;
}

void NodeAgentService::SetUpContainers(const NodeAgentServiceOptions& options) {
  ContainerTrackerOptions t = *options.containers;
  t.node = options.agent.node_name;
  t.roots = options.agent.roots;
  tracker_ = std::make_unique<ContainerTracker>(t);
  if (options.events) {
    ContainerEventSenderOptions e = *options.events;
    e.node = options.agent.node_name;  // one node name for everything
    sender_ = std::make_unique<ContainerEventSender>(e);
    ContainerEventSender* sender = sender_.get();
    tracker_->SetListener(
        [sender](const ContainerChange& c) { sender->Publish(c); });
    tracker_->SetResyncListener(
        [sender](const std::vector<ContainerRecord>& all) {
          sender->PublishSnapshot(all);
        });
  }
  ContainerTracker* tracker = tracker_.get();
  agent_->SetInventoryListener([tracker](const NodeSnapshot& s) {
    tracker->SetInventory({s.gpus, s.rdma_devices});
  });
  server_->Handle("GET", "/pods",
                  [tracker](const HttpRequest&, HttpResponse* out) {
                    RespondData(ContainersJson(tracker->Containers()), out);
                  });
}

void NodeAgentService::StartContainers(const NodeAgentServiceOptions& options) {
  // The tracker's first list (and its resync) is queued before the stream
  // starts, so the first snapshot lens-jobs gets is the full set.
  Status st = tracker_->Start();
  if (!st.ok()) {
    LENS_LOG(WARN)
            .Field("socket", options.containers->containerd_socket)
            .Field("error", st)
        << "containerd not reachable yet; container tracking keeps retrying";
  }
  if (sender_) {
    Status sent = sender_->Start();
    if (!sent.ok()) {
      LENS_LOG(ERROR).Field("error", sent)
          << "container event stream not started";
    }
  }
}

NodeAgentService::~NodeAgentService() { Stop(); }

void NodeAgentService::Stop() {
  if (server_) server_->Stop();
  if (agent_) agent_->Stop();
  if (tracker_) tracker_->Stop();
  if (sender_) {
    // What the last changes carried (an exit, an OOM) is only in events:
    // give lens-jobs a moment to ack them.
    (void)sender_->Flush(std::chrono::seconds(2));
    sender_->Stop();
  }
}

std::string NodeAgentService::url() const { return server_->url(); }

const NodeAgent& NodeAgentService::agent() const { return *agent_; }

}  // namespace lens
