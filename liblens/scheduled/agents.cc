#include "scheduled/agents.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include "core/http_client.h"
#include "core/json_reader.h"
#include "core/text.h"

namespace lens::scheduled {
namespace {

constexpr size_t kMaxDevices = 1024;

Timestamp Now() {
  return std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
}

int64_t Int(const rapidjson::Value& o, const char* key, int64_t fallback) {
  const rapidjson::Value* v = JsonMember(o, key);
  if (v && v->IsInt64()) return v->GetInt64();
  if (v && v->IsUint64()) return static_cast<int64_t>(v->GetUint64());
  if (v && v->IsDouble() && std::isfinite(v->GetDouble())) {
    return static_cast<int64_t>(v->GetDouble());
  }
  return fallback;
}

std::optional<double> Ratio(const rapidjson::Value& o, const char* key) {
  const rapidjson::Value* v = JsonMember(o, key);
  if (!v || !v->IsNumber()) return std::nullopt;
  const double d = v->GetDouble();
  if (!std::isfinite(d)) return std::nullopt;
  return std::clamp(d, 0.0, 1.0);
}

Status DecodeGpus(const rapidjson::Value& gpus, AgentReport* out) {
  if (!gpus.IsArray()) return InvalidArgumentError("gpus: not an array");
  if (gpus.Size() > kMaxDevices) {
    return InvalidArgumentError("gpus: more than 1024");
  }
  for (rapidjson::SizeType i = 0; i < gpus.Size(); ++i) {
    const rapidjson::Value& g = gpus[i];
    const std::string where = "gpus[" + std::to_string(i) + "]";
    if (!g.IsObject()) return InvalidArgumentError(where + ": not an object");
    const int64_t index = Int(g, "index", -1);
    if (index < 0 || index > 65535) {
      return InvalidArgumentError(where + ": no valid index");
    }
    AgentGpu gpu;
    GpuDeviceRecord& d = gpu.device;
    d.gpu_index = static_cast<int32_t>(index);
    d.vendor = JsonString(g, "vendor");
    d.model = JsonString(g, "model");
    d.serial = JsonString(g, "serial");
    d.uuid = JsonString(g, "unique_id");
    d.bdf = JsonString(g, "bdf");
    d.vram_bytes = Int(g, "vram_total_bytes", 0);
    d.numa_node = static_cast<int32_t>(Int(g, "numa_node", -1));
    if (const rapidjson::Value* s = JsonMember(g, "sample");
        s && s->IsObject()) {
      gpu.utilization_ratio = Ratio(*s, "utilization_ratio");
    }
    out->gpus.push_back(std::move(gpu));
  }
  return OkStatus();
}

Status DecodeRdma(const rapidjson::Value& rdma, AgentReport* out) {
  if (!rdma.IsArray()) return InvalidArgumentError("rdma: not an array");
  if (rdma.Size() > kMaxDevices) {
    return InvalidArgumentError("rdma: more than 1024");
  }
  for (rapidjson::SizeType i = 0; i < rdma.Size(); ++i) {
    const rapidjson::Value& r = rdma[i];
    const std::string where = "rdma[" + std::to_string(i) + "]";
    if (!r.IsObject()) return InvalidArgumentError(where + ": not an object");
    RdmaDeviceRecord d;
    d.name = JsonString(r, "name");
    if (d.name.empty()) return InvalidArgumentError(where + ": no name");
    d.node_guid = JsonString(r, "node_guid");
    d.fw_version = JsonString(r, "fw_version");
    d.board_id = JsonString(r, "board_id");
    d.bdf = JsonString(r, "bdf");
    d.numa_node = static_cast<int32_t>(Int(r, "numa_node", -1));
    if (const rapidjson::Value* n = JsonMember(r, "netdevs");
        n && n->IsArray() && !n->Empty() && (*n)[0].IsString()) {
      d.netdev = (*n)[0].GetString();
    }
    out->rdma.push_back(std::move(d));
  }
  return OkStatus();
}

}  // namespace

StatusOr<AgentReport> ParseAgentReport(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError("not a JSON object");
  }
  const rapidjson::Value* data = JsonMember(doc, "data");
  if (!data || !data->IsObject()) {
    return InvalidArgumentError("no \"data\" object (not a node agent?)");
  }
  AgentReport out;
  out.node_name = JsonString(*data, "node_name");
  out.driver_version = JsonString(*data, "gpu_driver_version");
  if (const rapidjson::Value* n = JsonMember(*data, "node")) {
    if (!n->IsObject()) return InvalidArgumentError("node: not an object");
    out.hostname = JsonString(*n, "hostname");
    out.kernel_release = JsonString(*n, "kernel_release");
    out.os_name = JsonString(*n, "os_name");
    out.cpu_model = JsonString(*n, "cpu_model");
    out.cpu_count = static_cast<int32_t>(Int(*n, "cpu_count", 0));
    out.memory_bytes = Int(*n, "memory_total_bytes", 0);
  }
  if (const rapidjson::Value* g = JsonMember(*data, "gpus")) {
    LENS_RETURN_IF_ERROR(DecodeGpus(*g, &out));
  }
  if (const rapidjson::Value* r = JsonMember(*data, "rdma")) {
    LENS_RETURN_IF_ERROR(DecodeRdma(*r, &out));
  }
  return out;
}

struct AgentPool::Agent {
  std::unique_ptr<HttpClient> http;
  SteadyTime read_at{};
  AgentView view;  // GUARDED_BY(AgentPool::mu_)
};

AgentPool::AgentPool(const ScheduledJobsOptions& options, KubeClient* client)
    : options_(options), client_(client) {}
AgentPool::~AgentPool() = default;

Status AgentPool::Discover() {
  std::vector<NodeAgentTarget> targets = options_.agents;
  if (targets.empty() && client_) {
    const std::string path =
        "/api/v1/namespaces/" + options_.agent_namespace +
        "/pods?labelSelector=" + KubeQueryEscape(options_.agent_selector);
    LENS_ASSIGN_OR_RETURN(KubeResponse r, client_->Request("GET", path));
    if (r.status != 200) return KubeError("GET", client_->server(), path, r);
    rapidjson::Document doc;
    doc.Parse(r.body.data(), r.body.size());
    const rapidjson::Value* items =
        doc.IsObject() ? JsonMember(doc, "items") : nullptr;
    if (!items || !items->IsArray()) {
      return InvalidArgumentError("GET " + path + ": not a PodList");
    }
    for (const rapidjson::Value& pod : items->GetArray()) {
      const rapidjson::Value* spec = JsonMember(pod, "spec");
      const rapidjson::Value* status = JsonMember(pod, "status");
      if (!spec || !status || !spec->IsObject() || !status->IsObject()) {
        continue;
      }
      const std::string node = JsonString(*spec, "nodeName");
      const std::string ip = JsonString(*status, "podIP");
      if (node.empty() || ip.empty() ||
          JsonString(*status, "phase") != "Running") {
        continue;
      }
      const std::string host =
          ip.find(':') != std::string::npos ? "[" + ip + "]" : ip;
      targets.push_back({node, options_.agent_scheme + "://" + host + ":" +
                                   std::to_string(options_.agent_port)});
    }
  }
  std::lock_guard lock(mu_);
  std::map<std::string, std::unique_ptr<Agent>> next;
  for (const NodeAgentTarget& t : targets) {
    auto it = agents_.find(t.node);
    if (it != agents_.end() && it->second->view.url == t.url) {
      next[t.node] = std::move(it->second);
      continue;
    }
    HttpClientOptions o;
    o.base_url = t.url;
    o.origin = "node agent of " + t.node;
    o.bearer_token = options_.agent_token;
    o.ca_file = options_.agent_ca_file;
    o.tls_server_name = options_.agent_tls_server_name;
    o.insecure_skip_verify = options_.agent_insecure_skip_tls_verify;
    o.timeout = options_.agent_timeout;
    o.connect_timeout = std::min<std::chrono::milliseconds>(
        options_.agent_timeout, std::chrono::seconds(3));
    o.max_response_bytes = 16ull << 20;
    o.user_agent = "lens-jobs";
    o.idle_handles = 1;  // one read at a time per agent
    auto agent = std::make_unique<Agent>();
    agent->view.node = t.node;
    agent->view.url = t.url;
    if (it != agents_.end()) {  // moved: keep what it said last
      agent->view.report = it->second->view.report;
      agent->view.seen_at = it->second->view.seen_at;
    }
    auto http = HttpClient::Create(std::move(o));
    if (http.ok()) {
      agent->http = std::move(*http);
    } else {
      agent->view.error = http.status().message();
    }
    next[t.node] = std::move(agent);
  }
  agents_.swap(next);
  return OkStatus();
}

void AgentPool::Read(Agent* agent, SteadyTime deadline) {
  std::string error;
  std::optional<AgentReport> report;
  if (!agent->http) {
    std::lock_guard lock(mu_);
    agent->view.ok = false;
    return;
  }
  if (std::chrono::steady_clock::now() > deadline) {
    // Not read this round: what it said last stands (it is due next round),
    // unless it was never read at all.
    std::lock_guard lock(mu_);
    if (!agent->view.seen_at && agent->view.error.empty()) {
      agent->view.error = "not read: the job ran out of time";
    }
    return;
  }
  {
    HttpClient::Request request;
    request.path = "/report";
    request.headers = {{"Accept", "application/json"}};
    auto r = agent->http->Send(request);
    if (!r.ok()) {
      error = r.status().message();
    } else if (r->status != 200) {
      error = "GET " + agent->http->shown() + "/report: HTTP " +
              std::to_string(r->status) + ": " +
              PrintableExcerpt(agent->http->Scrub(r->body));
    } else if (auto parsed = ParseAgentReport(r->body); !parsed.ok()) {
      error = "GET " + agent->http->shown() +
              "/report: " + parsed.status().message();
    } else {
      report = std::move(*parsed);
    }
  }
  std::lock_guard lock(mu_);
  agent->read_at = std::chrono::steady_clock::now();
  agent->view.ok = report.has_value();
  agent->view.error = error;
  if (report) {
    agent->view.report = std::move(report);
    agent->view.seen_at = Now();
  }
}

std::vector<AgentView> AgentPool::Refresh(std::chrono::milliseconds max_age,
                                          SteadyTime deadline,
                                          Status* discovery) {
  std::lock_guard refresh(refresh_mu_);
  Status discovered = Discover();
  std::vector<Agent*> due;
  const SteadyTime now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mu_);
    for (auto& [node, agent] : agents_) {
      if (agent->read_at == SteadyTime{} || now - agent->read_at >= max_age) {
        due.push_back(agent.get());
      }
    }
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < due.size(); i = next++) Read(due[i], deadline);
  };
  const size_t threads = std::min<size_t>(
      due.size(), static_cast<size_t>(std::max(1, options_.agent_concurrency)));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (discovery) *discovery = discovered.WithContext("finding node agents");
  return Views();
}

std::vector<AgentView> AgentPool::Views() const {
  std::vector<AgentView> out;
  std::lock_guard lock(mu_);
  for (const auto& [node, agent] : agents_) out.push_back(agent->view);
  return out;
}

}  // namespace lens::scheduled
