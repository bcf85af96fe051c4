// NodeAgentService: config -> agent + HTTP server.
#include <unistd.h>

#include <cstdlib>

#include "core/kernel_file.h"
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
    StatusOr<std::string> token = ReadKernelValue(ne.bearer_token_file);
    if (!token.ok()) {
      return token.status().WithContext("nodeExporter.bearerTokenFile");
    }
    if (token->empty()) {
      return InvalidArgumentError("nodeExporter.bearerTokenFile: " +
                                  ne.bearer_token_file + " is empty");
    }
    h.bearer_token = std::move(*token);
  }
  LENS_RETURN_IF_ERROR(h.Validate());
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
  LENS_RETURN_IF_ERROR(service->agent_->Start());
  LENS_RETURN_IF_ERROR(service->server_->Start());
  return service;
}

NodeAgentService::~NodeAgentService() { Stop(); }

void NodeAgentService::Stop() {
  if (server_) server_->Stop();
  if (agent_) agent_->Stop();
}

std::string NodeAgentService::url() const { return server_->url(); }

const NodeAgent& NodeAgentService::agent() const { return *agent_; }

}  // namespace lens
