// lens-jobs as processes reading a real lens-node-agent: two replicas on one
// Lease (the follower takes over after SIGKILL), /jobs, promtool-clean
// /metrics, a node whose agent stops marked stale, bad configuration.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "command.h"
#include "kube_api_server.h"
#include "lens/store.h"
#include "loopback_traffic.h"

namespace lens {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using test::KubeApiServer;

constexpr char kApiToken[] = "api-token-for-lens-jobs";  // in kKubeconfig
constexpr char kNode[] = "node-a";
constexpr char kAgentUp[] = "lens_node_agent_up{node=\"node-a\"} ";
// The API server's, with TLS and a bearer token (YAML flow style).
constexpr char kKubeconfig[] =
    "{apiVersion: v1, kind: Config, current-context: test,\n"
    " clusters: [{name: test, cluster: {server: '@SERVER@',"
    " certificate-authority: '@CA@'}}],\n"
    " users: [{name: lens, user: {token: api-token-for-lens-jobs}}],\n"
    " contexts: [{name: test, context: {cluster: test, user: lens}}]}\n";
// Every job every 500ms.
constexpr char kConfig[] =
    "jobs: {gpuAllocationInterval: 500ms, gpuConsumersInterval: 500ms, "
    "nodeInfoInterval: 500ms, deviceInfoInterval: 500ms, "
    "workloadStatusInterval: 500ms, podStatusInterval: 500ms, "
    "storageScanInterval: 500ms}\n";
constexpr const char* kJobNames[] = {
    "gpu-allocation",  "gpu-consumers", "node-info",   "device-info",
    "workload-status", "pod-status",    "storage-scan"};

bool WaitUntil(const std::function<bool()>& done,
               milliseconds timeout = milliseconds(10000)) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(milliseconds(100));
  }
  return true;
}

// The samples of one family in Prometheus text: label text ("{job=...}",
// "" when none) -> value.
std::map<std::string, double> Samples(const std::string& text,
                                      const std::string& family) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t space = line.rfind(' ');
    if (line.rfind(family, 0) != 0 || space == std::string::npos) continue;
    std::string labels = line.substr(family.size(), space - family.size());
    if (labels.empty() || labels[0] == '{') {
      out[labels] = std::stod(line.substr(space + 1));
    }
  }
  return out;
}

std::string Loopback(int port) { return "127.0.0.1:" + std::to_string(port); }

// A process the test started: its log (stdout and stderr) and HTTP port.
struct Child {
  pid_t pid = -1;
  std::string log;
  int port = 0;
};

class JobsDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok()) << server_.error();
    // What the storage scan lists, so that it succeeds on an empty cluster.
    server_.AddResource(
        {"storage.k8s.io", "v1", "csidrivers", "CSIDriver", false});
    server_.AddResource(
        {"", "v1", "persistentvolumes", "PersistentVolume", false});
    dir_ = ::testing::TempDir() + "lens-jobs-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
    kubeconfig_ = dir_ + "/kubeconfig";
    ASSERT_TRUE(test::WriteFile(kubeconfig_,
                                test::Fill(kKubeconfig,
                                           {{"@SERVER@", server_.url()},
                                            {"@CA@", KubeApiServer::CaFile()}}))
                    .ok());
    config_ = dir_ + "/lens.yaml";
    ASSERT_TRUE(test::WriteFile(config_, kConfig).ok());
    database_ = "sqlite://" + dir_ + "/lens.db";
  }

  void TearDown() override {
    for (Child& c : children_) {
      if (c.pid <= 0) continue;
      EXPECT_EQ(test::Describe(Stop(c, SIGTERM)), "exit status 0")
          << c.log << ": " << test::ReadFile(c.log);
    }
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Starts `argv` with stdout and stderr to `name`.log (killed with the
  // test if it dies first) and waits until `port` serves /healthz.
  // Starts `argv` (which binds port 0) and reads the port it got from its
  // log: the first "<key>http://...".
  Child& Spawn(const std::vector<std::string>& argv, const std::string& name,
               std::string_view key) {
    Child& c = children_.emplace_back();
    c.log = dir_ + "/" + name + ".log";
    // Built before fork: the API server's threads may hold malloc's locks.
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    c.pid = ::fork();
    if (c.pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const int fd = ::open(c.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execv(args[0], args.data());
      (void)!::write(2, "execv failed\n", 13);
      ::_exit(127);
    }
    auto port = test::WaitForLoggedPort(c.log, c.pid, key);
    EXPECT_TRUE(port.ok()) << name << ": " << port.status();
    c.port = port.ok() ? *port : 0;
    EXPECT_TRUE(WaitUntil([&] { return Get(c, "/healthz") == "ok\n"; }))
        << test::ReadFile(c.log);
    return c;
  }

  // The wait status after `sig` (SIGKILL when it ignores it for 15 s).
  int Stop(Child& c, int sig) {
    ::kill(c.pid, sig);
    auto status = test::WaitExit(c.pid, seconds(15));
    if (!status) {
      ADD_FAILURE() << c.log << " ignored signal " << sig;
      ::kill(c.pid, SIGKILL);
      status = test::WaitExit(c.pid, seconds(15));
    }
    c.pid = -1;
    return status.value_or(-1);
  }

  // The body of GET `path`, or "" unless 200.
  static std::string Get(const Child& c, const std::string& path) {
    httplib::Client http("127.0.0.1", c.port);
    http.set_connection_timeout(seconds(2));
    http.set_read_timeout(seconds(5));
    auto r = http.Get(path);
    return r && r->status == 200 ? r->body : "";
  }

  // One family of `c`'s /metrics (see Samples).
  static std::map<std::string, double> Scrape(const Child& c,
                                              const std::string& family) {
    return Samples(Get(c, "/metrics"), family);
  }

  // lens-node-agent for kNode on the MI300X fixture host, serving.
  Child& StartAgent() {
    const std::string host =
        std::string(LENS_FIXTURES_DIR) + "/hosts/mi300x-8x-mlx5";
    // env(1) execs the agent in its own process, with NODE_NAME set.
    return Spawn(
        {"/usr/bin/env", std::string("NODE_NAME=") + kNode, LENS_NODE_AGENT_BIN,
         "--sysfs-root", host + "/sys", "--procfs-root", host + "/proc",
         "--dev-root", host + "/dev", "--listen", "127.0.0.1:0", "--interval",
         "1", "--no-nvml", "--no-containers"},
        "agent", "url=");
  }

  // lens-jobs reading the agent, its jobs every 500ms, serving /healthz.
  Child& StartJobs(const Child& agent, const std::string& name,
                   std::vector<std::string> extra) {
    const std::string agents =
        std::string(kNode) + "=http://" + Loopback(agent.port);
    std::vector<std::string> argv = {
        LENS_JOBS_BIN, "--config",      config_,       "--database",
        database_,     "--listen-grpc", "127.0.0.1:0", "--listen-http",
        "127.0.0.1:0", "--agents",      agents};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return Spawn(argv, name, "http=");
  }

  // kNode in the store: its agent_state (or why there is none) and the
  // number of its gpu_devices rows.
  std::pair<std::string, size_t> NodeInStore() {
    if (!store_) {
      auto store = Store::Open(database_);
      if (!store.ok()) return {store.status().message(), 0};
      store_ = std::move(*store);
    }
    auto node = store_->nodes().GetNode(kNode);
    auto gpus = store_->nodes().ListGpuDevices(kNode);
    return {node.ok() ? node->agent_state : node.status().message(),
            gpus.ok() ? gpus->size() : 0};
  }

  std::string LeaseHolder() {
    rapidjson::Document doc;
    doc.Parse(
        server_.Get("coordination.k8s.io/v1", "Lease", "lens", "lens-jobs")
            .c_str());
    const auto* v = rapidjson::Pointer("/spec/holderIdentity").Get(doc);
    return v && v->IsString() ? v->GetString() : "";
  }

  KubeApiServer server_{{.token = kApiToken, .tls = true}};
  std::string dir_, kubeconfig_, config_, database_;
  std::deque<Child> children_;
  std::unique_ptr<Store> store_;
};

TEST_F(JobsDaemonTest, TwoReplicasOneLeaderAndTakeoverAfterSigkill) {
  Child& agent = StartAgent();
  Child* replicas[2] = {
      &StartJobs(agent, "replica-a",
                 {"--kubeconfig", kubeconfig_, "--identity", "replica-a"}),
      &StartJobs(agent, "replica-b",
                 {"--kubeconfig", kubeconfig_, "--identity", "replica-b"})};
  const char* identities[2] = {"replica-a", "replica-b"};
  int leader = -1;
  ASSERT_TRUE(WaitUntil([&] {
    auto a = Scrape(*replicas[0], "lens_jobs_leader");
    auto b = Scrape(*replicas[1], "lens_jobs_leader");
    if (a.size() != 1 || b.size() != 1 || a[""] + b[""] != 1) return false;
    leader = a[""] == 1 ? 0 : 1;
    return true;
  })) << test::ReadFile(replicas[0]->log)
      << test::ReadFile(replicas[1]->log);
  Child& lead = *replicas[leader];
  Child& follower = *replicas[1 - leader];
  EXPECT_EQ(LeaseHolder(), identities[leader]);

  // Over three seconds the follower runs nothing while the leader runs
  // every job again and again.
  const auto first = Scrape(lead, "lens_job_runs_total");
  ASSERT_EQ(first.size(), std::size(kJobNames));
  for (int i = 0; i < 6; ++i) {
    std::this_thread::sleep_for(milliseconds(500));
    const std::string text = Get(follower, "/metrics");
    EXPECT_EQ(Samples(text, "lens_jobs_leader")[""], 0);
    const auto runs = Samples(text, "lens_job_runs_total");
    ASSERT_EQ(runs.size(), std::size(kJobNames)) << text;
    for (const auto& [job, n] : runs) EXPECT_EQ(n, 0) << job;
    for (const auto& [job, n] : Samples(text, "lens_job_running")) {
      EXPECT_EQ(n, 0) << job;
    }
    EXPECT_EQ(text.find(kAgentUp), std::string::npos)
        << "a follower exports no results";
  }
  const std::string lead_text = Get(lead, "/metrics");
  EXPECT_EQ(Samples(lead_text, "lens_jobs_leader")[""], 1);
  for (const auto& [job, n] : Samples(lead_text, "lens_job_runs_total")) {
    EXPECT_GE(n, first.at(job) + 2) << job;
  }

  // Killed without releasing the Lease: the follower takes over once it
  // expires (15 s, seen on the follower's own clock).
  Stop(lead, SIGKILL);
  ASSERT_TRUE(
      WaitUntil([&] { return Scrape(follower, "lens_jobs_leader")[""] == 1; },
                seconds(20)))
      << test::ReadFile(follower.log);
  EXPECT_EQ(LeaseHolder(), identities[1 - leader]);
  ASSERT_TRUE(WaitUntil([&] {
    auto runs = Scrape(follower, "lens_job_runs_total");
    for (const char* job : kJobNames) {
      if (runs["{job=\"" + std::string(job) + "\"}"] < 2) return false;
    }
    return true;
  })) << test::ReadFile(follower.log);

  EXPECT_EQ(NodeInStore(), std::make_pair(std::string("ok"), size_t{8}));
}

TEST_F(JobsDaemonTest, ServesJobsAndPromtoolCleanMetrics) {
  Child& agent = StartAgent();
  Child& jobs =
      StartJobs(agent, "jobs", {"--no-leader-election", "--compat-names"});
  rapidjson::Document doc;
  std::string body;
  ASSERT_TRUE(WaitUntil([&] {
    body = Get(jobs, "/jobs");
    doc.Parse(body.c_str());
    if (!doc.IsObject() || !doc.HasMember("data")) return false;
    for (const auto& j : doc["data"].GetArray()) {
      if (j["runs"].GetUint64() < 1) return false;
    }
    return true;
  })) << body;
  EXPECT_EQ(doc["code"].GetInt(), 0);
  EXPECT_STREQ(doc["message"].GetString(), "success");
  const auto& data = doc["data"];
  ASSERT_EQ(data.Size(), std::size(kJobNames)) << body;
  for (rapidjson::SizeType i = 0; i < data.Size(); ++i) {
    const auto& j = data[i];
    const std::string name = j["name"].GetString();
    EXPECT_EQ(name, kJobNames[i]);
    EXPECT_DOUBLE_EQ(j["interval_seconds"].GetDouble(), 0.5) << name;
    EXPECT_TRUE(j["last_start"].IsNumber() && j["running"].IsBool() &&
                j["failures"].IsUint64() && j["skipped"].IsUint64() &&
                j["last_duration_seconds"].IsNumber())
        << name;
    if (name == "node-info" || name == "device-info") {
      EXPECT_STREQ(j["last_result"].GetString(), "ok") << body;
      EXPECT_TRUE(j["last_success"].IsNumber()) << name;
    }
  }

  std::string metrics;
  ASSERT_TRUE(WaitUntil([&] {
    metrics = Get(jobs, "/metrics");
    return metrics.find(std::string(kAgentUp) + "1\n") != std::string::npos &&
           metrics.find("\ngpu_allocation_rate ") != std::string::npos;
  })) << metrics;
  EXPECT_EQ(Samples(metrics, "lens_jobs_leader")[""], 1);
  EXPECT_EQ(Samples(metrics, "lens_cluster_gpu_allocation_ratio").size(), 1u);
  EXPECT_NE(metrics.find("# TYPE lens_job_duration_seconds histogram"),
            std::string::npos);

  const std::string promtool = test::FindBinary("promtool");
  if (promtool.empty()) GTEST_SKIP() << "promtool is not installed";
  const std::string file = dir_ + "/metrics.txt";
  ASSERT_TRUE(test::WriteFile(file, metrics).ok());
  auto check = test::RunCommand(
      {"sh", "-c", "'" + promtool + "' check metrics < '" + file + "'"});
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(test::Describe(check->wait_status), "exit status 0") << check->err;
  EXPECT_EQ(check->out, "");
  EXPECT_EQ(check->err, "");
}

TEST_F(JobsDaemonTest, AgentDownMarksItsNodeStale) {
  Child& agent = StartAgent();
  Child& jobs = StartJobs(agent, "jobs", {"--no-leader-election"});
  ASSERT_TRUE(WaitUntil([&] {
    return NodeInStore() == std::make_pair(std::string("ok"), size_t{8});
  })) << NodeInStore().first
      << "\n"
      << test::ReadFile(jobs.log);

  EXPECT_EQ(test::Describe(Stop(agent, SIGTERM)), "exit status 0");
  EXPECT_TRUE(
      WaitUntil([&] { return NodeInStore().first == "stale"; }, seconds(5)))
      << NodeInStore().first;
  std::string metrics;
  EXPECT_TRUE(WaitUntil(
      [&] {
        metrics = Get(jobs, "/metrics");
        return metrics.find(std::string(kAgentUp) + "0\n") != std::string::npos;
      },
      seconds(5)))
      << metrics;
  EXPECT_EQ(NodeInStore().second, 8u) << "a stale node keeps its devices";
}

TEST_F(JobsDaemonTest, BadConfigurationExitsWithTwo) {
  const std::array<std::string, 3> cases[] = {
      {"--agents", "nonsense", "agents"},
      {"--agents", "a=ftp://x", "agents"},
      {"--kubeconfig", "/nonexistent", "/nonexistent"}};
  for (const auto& [flag, value, says] : cases) {
    auto run = test::RunCommand(
        {LENS_JOBS_BIN, "--database", database_, "--listen-http", "127.0.0.1:0",
         "--listen-grpc", "127.0.0.1:0", flag, value},
        seconds(20));
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(test::Describe(run->wait_status), "exit status 2")
        << value << ": " << run->err;
    EXPECT_NE(run->err.find(says), std::string::npos)
        << value << ": " << run->err;
  }
}

}  // namespace
}  // namespace lens
