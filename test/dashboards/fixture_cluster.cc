#include "fixture_cluster.h"

#include <httplib.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "command.h"
#include "lens/store.h"
#include "loopback_traffic.h"

namespace lens::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The pod and workload of test/fixtures/telemetry/fluentbit_megatron.jsonl
// (its kubernetes map); the second worker and the workload uid are ours.
constexpr char kNamespace[] = "training";
constexpr char kWorkloadUid[] = "3d1f0c52-7a9e-4b6d-8c21-5e0f9a7b4c13";
constexpr char kWorkloadName[] = "llama3-8b-pretrain";
constexpr char kPod0Uid[] = "7c1e4a9b-3f25-4d8e-9b61-0a4f2c8d5e37";
constexpr char kPod1Uid[] = "5b0d2e71-9c43-4f8a-a1d6-2e8b7c0f3a95";
constexpr int kGpusPerPod = 4;

Timestamp Now() {
  return std::chrono::time_point_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now());
}

std::string Port(int port) { return "127.0.0.1:" + std::to_string(port); }

std::string Tail(const std::string& text, size_t bytes = 2000) {
  return text.size() <= bytes ? text : "..." + text.substr(text.size() - bytes);
}

}  // namespace

StatusOr<std::unique_ptr<FixtureCluster>> FixtureCluster::Start(
    FixtureClusterOptions options) {
  fs::create_directories(options.dir);
  std::unique_ptr<FixtureCluster> c(new FixtureCluster(std::move(options)));
  const std::string dir = c->options_.dir;
  const std::string host =
      std::string(LENS_FIXTURES_DIR) + "/hosts/mi300x-8x-mlx5";
  const std::string db = "sqlite://" + dir + "/lens.db";
  const int agent = FreeLoopbackPort(), jobs = FreeLoopbackPort();
  const int jobs_grpc = FreeLoopbackPort(), telemetry = FreeLoopbackPort();
  const int flows = FreeLoopbackPort(), scraper = FreeLoopbackPort();
  c->query_port_ = FreeLoopbackPort();

  LENS_RETURN_IF_ERROR(c->Spawn(
      "lens-node-agent",
      {"--sysfs-root", host + "/sys", "--procfs-root", host + "/proc",
       "--dev-root", host + "/dev", "--listen", Port(agent), "--interval", "1",
       "--no-nvml", "--no-containers", "--compat-names"},
      {std::string("NODE_NAME=") + kNode}));
  LENS_RETURN_IF_ERROR(c->WaitReady("lens-node-agent", agent, "/healthz"));
  // /healthz is up before the first GPU scan has filled /gpus (a slow,
  // sanitized build shows it): wait for the GPUs themselves.
  httplib::Client agent_client("127.0.0.1", agent);
  auto gpus = agent_client.Get("/gpus");
  for (int i = 0; i < 300 && !(gpus && gpus->status == 200 &&
                               gpus->body.find("\"bdf\"") != std::string::npos);
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gpus = agent_client.Get("/gpus");
  }
  if (!gpus || gpus->status != 200)
    return UnavailableError("lens-node-agent /gpus did not answer");
  LENS_RETURN_IF_ERROR(c->SeedStore(gpus->body));

  // The Prometheus the dashboards query: only what lens-telemetry forwards.
  LENS_RETURN_IF_ERROR(c->Spawn(
      "prometheus",
      {"--config.file=/dev/null", "--storage.tsdb.path=" + dir + "/prometheus",
       "--web.listen-address=" + Port(c->query_port_),
       "--web.enable-remote-write-receiver", "--log.level=warn"}));
  LENS_RETURN_IF_ERROR(c->WaitReady("prometheus", c->query_port_, "/-/ready"));
  LENS_RETURN_IF_ERROR(
      c->Spawn("lens-telemetry",
               {"--listen", Port(telemetry), "--database", db, "--forward",
                "http://" + Port(c->query_port_) + "/api/v1/write",
                "--queue-dir", dir + "/queue", "--compat-names"}));
  LENS_RETURN_IF_ERROR(c->WaitReady("lens-telemetry", telemetry, "/readyz"));
  LENS_RETURN_IF_ERROR(c->Spawn(
      "lens-jobs",
      {"--listen-http", Port(jobs), "--listen-grpc", Port(jobs_grpc),
       "--database", db, "--agents",
       std::string(kNode) + "=http://" + Port(agent), "--compat-names"}));
  LENS_RETURN_IF_ERROR(c->WaitReady("lens-jobs", jobs, "/healthz"));
  if (c->options_.flows) {
    LENS_RETURN_IF_ERROR(
        c->Spawn("lens-netflow", {"--listen", Port(flows), "--interval", "1",
                                  "--no-containers", "--compat-names"}));
    LENS_RETURN_IF_ERROR(c->WaitReady("lens-netflow", flows, "/healthz"));
  }

  // The scraper: Prometheus in agent mode, as a deployment runs it (or
  // vmagent), remote-writing everything to lens-telemetry.
  std::ostringstream yml;
  const auto job = [&](const char* name, int port, bool on_node) {
    yml << "  - job_name: " << name
        << "\n    static_configs:\n      - targets: ['" << Port(port) << "']\n";
    if (on_node) yml << "        labels: {node: " << kNode << "}\n";
  };
  yml << "global: {scrape_interval: 1s, scrape_timeout: 1s}\nscrape_configs:\n";
  job("lens-node-agent", agent, true);
  if (c->options_.flows) job("lens-netflow", flows, true);
  job("lens-jobs", jobs, false);
  job("lens-telemetry", telemetry, false);
  yml << "remote_write:\n  - url: http://" << Port(telemetry)
      << "/api/v1/write\n"
      << "    queue_config: {batch_send_deadline: 1s, min_backoff: 100ms, "
         "max_backoff: 1s}\n";
  LENS_RETURN_IF_ERROR(WriteFile(dir + "/scraper.yml", yml.str()));
  LENS_RETURN_IF_ERROR(c->Spawn(
      "prometheus-agent",
      {"--enable-feature=agent", "--config.file=" + dir + "/scraper.yml",
       "--storage.agent.path=" + dir + "/scraper",
       "--web.listen-address=" + Port(scraper), "--log.level=warn"}));
  LENS_RETURN_IF_ERROR(c->WaitReady("prometheus-agent", scraper, "/-/ready"));
  LENS_RETURN_IF_ERROR(c->PostTrainingLogs(telemetry));
  return c;
}

FixtureCluster::~FixtureCluster() {
  // The scraper first, the store's writers last.
  for (auto it = processes_.rbegin(); it != processes_.rend(); ++it) {
    if (it->pid <= 0) continue;
    ::kill(it->pid, SIGTERM);
    if (!WaitExit(it->pid, std::chrono::seconds(10))) {
      ::kill(it->pid, SIGKILL);
      ::waitpid(it->pid, nullptr, 0);
    }
  }
}

std::string FixtureCluster::Bin(const std::string& name) const {
  auto it = options_.binaries.find(name);
  if (it != options_.binaries.end()) return it->second;
  return FindBinary(name);  // prometheus
}

Status FixtureCluster::Spawn(const std::string& name,
                             const std::vector<std::string>& args,
                             const std::vector<std::string>& env) {
  std::vector<std::string> argv = {
      Bin(name.rfind("prometheus", 0) == 0 ? "prometheus" : name)};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p{name, -1, options_.dir + "/" + name + ".log"};
  p.pid = test::Spawn(argv, p.log, true, false, env);
  if (p.pid <= 0) return InternalError("cannot start " + name);
  processes_.push_back(p);
  return OkStatus();
}

Status FixtureCluster::WaitReady(const std::string& name, int port,
                                 const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(std::chrono::seconds(1));
  for (auto end = Clock::now() + std::chrono::seconds(10);
       Clock::now() < end;) {
    auto res = client.Get(path);
    if (res && res->status == 200) return OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return UnavailableError(name + " never answered " + path + ":\n" +
                          Tail(ReadFile(options_.dir + "/" + name + ".log")));
}

// The cluster as the controller and the container stream would have stored
// it: the node (8 allocatable GPUs), its GPUs as the agent reports them, the
// PyTorchJob and its two running pods, each container holding 4 GPUs.
Status FixtureCluster::SeedStore(const std::string& gpus_json) {
  rapidjson::Document doc;
  doc.Parse(gpus_json.c_str());
  if (doc.HasParseError() || !doc.IsObject() || !doc["data"].IsArray())
    return InvalidArgumentError("lens-node-agent /gpus: " + gpus_json);
  LENS_ASSIGN_OR_RETURN(auto store,
                        Store::Open("sqlite://" + options_.dir + "/lens.db"));
  const Timestamp now = Now(), start = now - std::chrono::minutes(10);
  NodeRecord node;
  node.name = kNode;
  node.status = "Ready";
  node.gpu_vendor = "amd";
  node.gpu_count = node.gpu_allocatable = 2 * kGpusPerPod;
  node.created_at = node.updated_at = start;
  LENS_RETURN_IF_ERROR(store->nodes().UpsertNode(node));
  std::vector<GpuDeviceRecord> gpus;
  for (const auto& g : doc["data"].GetArray()) {
    GpuDeviceRecord r;
    r.node = kNode;
    r.gpu_index = g["gpu"].GetInt();
    r.vendor = g["vendor"].GetString();
    r.serial = g["serial"].GetString();
    r.bdf = g["bdf"].GetString();
    gpus.push_back(r);
  }
  if (gpus.size() != 2 * kGpusPerPod)
    return FailedPreconditionError(
        "the fixture host has " + std::to_string(gpus.size()) + " GPUs, not 8");
  LENS_RETURN_IF_ERROR(
      store->nodes().SyncGpuDevices(kNode, gpus, start).status());
  WorkloadRecord w;
  w.uid = kWorkloadUid;
  w.api_version = "kubeflow.org/v1";
  w.kind = "PyTorchJob";
  w.name = kWorkloadName;
  w.namespace_name = kNamespace;
  w.status = "Running";
  w.created_at = w.updated_at = start;
  LENS_RETURN_IF_ERROR(store->pods().UpsertWorkloads({&w, 1}));
  std::vector<PodRecord> pods;
  std::vector<ContainerRecord> containers;
  for (int i = 0; i < 2; ++i) {
    PodRecord p;
    p.uid = i == 0 ? kPod0Uid : kPod1Uid;
    p.name = std::string(kWorkloadName) + "-worker-" + std::to_string(i);
    p.namespace_name = kNamespace;
    p.node = kNode;
    p.phase = "Running";
    p.owner_uid = kWorkloadUid;
    p.gpu_allocated = kGpusPerPod;
    p.running = true;
    p.created_at = p.updated_at = start;
    p.started_at = start;
    pods.push_back(p);
    ContainerRecord c;
    c.container_id = "c-worker-" + std::to_string(i);
    c.node = kNode;
    c.runtime_namespace = "k8s.io";
    c.pod_uid = p.uid;
    c.pod_name = p.name;
    c.pod_namespace = kNamespace;
    c.container_name = "pytorch";
    c.state = ContainerState::kRunning;
    c.created_at = c.updated_at = start;
    c.started_at = start;
    for (int k = 0; k < kGpusPerPod; ++k) {
      const GpuDeviceRecord& g = gpus[i * kGpusPerPod + k];
      c.devices.push_back({DeviceKind::kGpu, g.serial, g.bdf, "pod-resources"});
    }
    containers.push_back(c);
  }
  LENS_RETURN_IF_ERROR(store->pods().UpsertPods(pods));
  return store->containers().UpsertContainers(containers);
}

// fluent-bit's json_lines body: the fixture's records, in one request.
Status FixtureCluster::PostTrainingLogs(int telemetry_port) {
  const std::string body = ReadFile(std::string(LENS_FIXTURES_DIR) +
                                    "/telemetry/fluentbit_megatron.jsonl");
  if (body.empty()) return NotFoundError("telemetry/fluentbit_megatron.jsonl");
  httplib::Client client("127.0.0.1", telemetry_port);
  client.set_read_timeout(std::chrono::seconds(30));
  auto res = client.Post("/v1/logs", body, "application/json");
  if (!res || res->status / 100 != 2) {
    return UnavailableError(
        "POST /v1/logs: " +
        (res ? std::to_string(res->status) + " " + res->body : "no answer"));
  }
  return OkStatus();
}

std::string FixtureCluster::Logs() const {
  std::string out;
  for (const Process& p : processes_)
    out +=
        "--- " + p.name + " (" + p.log + ")\n" + Tail(ReadFile(p.log)) + "\n";
  return out;
}

}  // namespace lens::test
