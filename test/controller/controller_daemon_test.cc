// lens-controller as its own process against the in-process API server
// (TLS, bearer token, from a kubeconfig): /healthz, /readyz and /metrics
// behind its own token, the store filled, SIGKILL and a restart that
// neither loses nor doubles, `lens workloads` over what it wrote, and exit
// codes for bad configuration.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "command.h"
#include "kube_api_server.h"
#include "lens/store.h"
#include "loopback_traffic.h"

namespace lens {
namespace {

using std::chrono::milliseconds;
using test::KubeApiServer;

constexpr char kApiToken[] = "api-token-for-lens-controller";
constexpr char kMetricsToken[] = "metrics-token-3c1e";
constexpr char kPyTorchJobUid[] = "c9452740-8789-4bfa-9c31-65306786085f";

void CreateFixture(KubeApiServer& server, const std::string& file) {
  std::ifstream in(std::string(LENS_FIXTURES_DIR) + "/kube/" + file);
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(text.str().c_str());
  ASSERT_TRUE(doc.IsArray()) << file;
  for (const auto& o : doc.GetArray()) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    o.Accept(w);
    ASSERT_NE(server.Create(buffer.GetString()), "") << file;
  }
}

bool WaitUntil(const std::function<bool()>& done,
               milliseconds timeout = milliseconds(20000)) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return true;
}

class ControllerDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok()) << server_.error();
    dir_ =
        ::testing::TempDir() + "lens-controller-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
    kubeconfig_ = dir_ + "/kubeconfig";
    ASSERT_TRUE(
        test::WriteFile(kubeconfig_,
                        "apiVersion: v1\nkind: Config\n"
                        "clusters:\n- name: test\n  cluster:\n"
                        "    server: " +
                            server_.url() +
                            "\n"
                            "    certificate-authority: " +
                            KubeApiServer::CaFile() +
                            "\n"
                            "users:\n- name: lens\n  user:\n    token: " +
                            kApiToken +
                            "\n"
                            "contexts:\n- name: test\n  context:\n"
                            "    cluster: test\n    user: lens\n"
                            "current-context: test\n")
            .ok());
    ASSERT_TRUE(test::WriteFile(dir_ + "/metrics-token",
                                std::string(kMetricsToken) + "\n")
                    .ok());
    database_ = "sqlite://" + dir_ + "/lens.db";
  }

  void TearDown() override {
    Kill(SIGTERM);
    std::filesystem::remove_all(dir_);
  }

  // Starts lens-controller; false (with its log) when it does not serve.
  void Start() {
    log_ = dir_ + "/controller-" + std::to_string(++starts_) + ".log";
    // Built before fork(): the API server's threads may hold the
    // allocator's lock, so the child only calls async-signal-safe functions.
    // Port 0: the controller logs the address it bound.
    const std::string listen = "127.0.0.1:0";
    const std::string token_file = dir_ + "/metrics-token";
    const int err = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(err, 2);
      ::execl(LENS_CONTROLLER_BIN, "lens-controller", "--kubeconfig",
              kubeconfig_.c_str(), "--database", database_.c_str(), "--listen",
              listen.c_str(), "--bearer-token-file", token_file.c_str(),
              "--identity", "replica-0", (char*)nullptr);
      ::_exit(127);
    }
    ::close(err);
    auto url = test::WaitForLoggedUrl(log_, pid_, "http=");
    ASSERT_TRUE(url.ok()) << url.status();
    http_ = std::make_unique<httplib::Client>(*url);
    const bool serving = WaitUntil([&] {
      auto r = http_->Get("/healthz");
      return r && r->status == 200;
    });
    ASSERT_TRUE(serving) << test::ReadFile(log_);
  }

  void Kill(int sig) {
    if (pid_ <= 0) return;
    ::kill(pid_, sig);
    auto status = test::WaitExit(pid_, std::chrono::seconds(15));
    if (!status) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      ADD_FAILURE() << "lens-controller ignored signal " << sig;
    } else if (sig == SIGTERM) {
      EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
          << test::Describe(*status) << "\n"
          << test::ReadFile(log_);
    }
    pid_ = -1;
  }

  bool Ready() {
    auto r = http_->Get("/readyz");
    return r && r->status == 200;
  }

  std::string Metrics() {
    auto r =
        http_->Get("/metrics",
                   {{"Authorization", std::string("Bearer ") + kMetricsToken}});
    return r && r->status == 200 ? r->body : "";
  }

  std::unique_ptr<Store> OpenStore() {
    auto store = Store::Open(database_);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  KubeApiServer server_{{.token = kApiToken, .tls = true}};
  std::string dir_, kubeconfig_, database_, log_;
  int starts_ = 0;
  pid_t pid_ = -1;
  std::unique_ptr<httplib::Client> http_;
};

TEST_F(ControllerDaemonTest, ServesItsStateAndSurvivesSigkill) {
  CreateFixture(server_, "nodes.json");
  CreateFixture(server_, "pytorchjob.json");
  Start();
  ASSERT_TRUE(WaitUntil([&] { return Ready(); })) << test::ReadFile(log_);
  // /metrics needs the token; /healthz and /readyz do not.
  EXPECT_EQ(http_->Get("/metrics")->status, 401);
  std::string metrics;
  ASSERT_TRUE(WaitUntil([&] {
    metrics = Metrics();
    return metrics.find(
               "lens_controller_rows_written_total{table=\"gpu_pods\"} 4") !=
           std::string::npos;
  })) << metrics;
  EXPECT_NE(metrics.find("lens_controller_leader 1"), std::string::npos);
  EXPECT_NE(metrics.find("lens_controller_lists_total{resource=\"pods\"} 1"),
            std::string::npos);
  EXPECT_NE(metrics.find("lens_controller_ready 1"), std::string::npos);
  // The Lease is the controller's, the only object it writes.
  EXPECT_NE(
      server_.Get("coordination.k8s.io/v1", "Lease", "lens", "lens-controller")
          .find("replica-0"),
      std::string::npos);

  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto pods = store->pods().ListWorkloadPods(kPyTorchJobUid);
  ASSERT_TRUE(pods.ok());
  ASSERT_EQ(pods->size(), 4u);
  std::string master_uid;
  for (const PodRecord& p : *pods) {
    if (p.name == "llama-pretrain-master-0") master_uid = p.uid;
  }
  const size_t events = store->pods().ListPodEvents(master_uid)->size();
  EXPECT_EQ(events, 3u);

  // Killed without a chance to clean up; the cluster moves on meanwhile.
  Kill(SIGKILL);
  ASSERT_TRUE(server_.Delete("v1", "Pod", "ml", "llama-pretrain-worker-1"));
  Start();  // the same identity takes its Lease back at once
  ASSERT_TRUE(WaitUntil([&] {
    auto p = store->pods().ListWorkloadPods(kPyTorchJobUid);
    if (!p.ok()) return false;
    for (const PodRecord& r : *p) {
      if (r.name == "llama-pretrain-worker-1") return r.deleted;
    }
    return false;
  })) << test::ReadFile(log_);
  EXPECT_EQ(store->pods().ListPodEvents(master_uid)->size(), events)
      << "no event written twice after the restart";
  EXPECT_EQ(store->pods().ListPodSnapshots(master_uid)->size(), 1u);

  // `lens workloads` reads what the controller wrote.
  auto table = test::RunCommand(
      {LENS_CLI_BIN, "workloads", "--database", database_, "--pods"});
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(WEXITSTATUS(table->wait_status), 0) << table->err;
  EXPECT_NE(table->out.find("ml/llama-pretrain"), std::string::npos)
      << table->out;
  EXPECT_NE(table->out.find("PyTorchJob"), std::string::npos);
  EXPECT_NE(table->out.find("mi300x-node-01"), std::string::npos);
  EXPECT_NE(table->out.find("Deleted"), std::string::npos);
  auto json = test::RunCommand(
      {LENS_CLI_BIN, "workloads", "--database", database_, "--json"});
  ASSERT_TRUE(json.ok());
  rapidjson::Document doc;
  doc.Parse(json->out.c_str());
  ASSERT_TRUE(doc.IsArray()) << json->out;
  ASSERT_EQ(doc.Size(), 1u);
  EXPECT_STREQ(doc[0]["kind"].GetString(), "PyTorchJob");
  EXPECT_EQ(doc[0]["gpu_request"].GetInt(), 24) << "three pods still run";
  EXPECT_EQ(doc[0]["pods"].Size(), 4u);
}

// `lens up --kubeconfig` runs the controller and the scheduled jobs in the
// same process as the node side, without a Lease.
TEST_F(ControllerDaemonTest, LensUpRunsTheControllerInProcess) {
  CreateFixture(server_, "nodes.json");
  CreateFixture(server_, "pytorchjob.json");
  log_ = dir_ + "/up.log";
  // Every port is 0: lens up says what it bound (nothing here may depend on
  // a port being free, 8080 included).
  const int out = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err =
      ::open((dir_ + "/up.err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execl(LENS_CLI_BIN, "lens", "up", "--kubeconfig", kubeconfig_.c_str(),
            "--database", database_.c_str(), "--listen", "127.0.0.1:0",
            "--flows-listen", "127.0.0.1:0", "--controller-listen",
            "127.0.0.1:0", "--jobs-listen", "127.0.0.1:0", "--telemetry-listen",
            "127.0.0.1:0", "--api-listen", "127.0.0.1:0", (char*)nullptr);
    ::_exit(127);
  }
  ::close(out);
  ::close(err);
  // "  http://127.0.0.1:<port>/readyz  ..." (the controller), "...: <url>/jobs"
  auto url_before = [&](const std::string& suffix) {
    std::string url;
    WaitUntil([&] {
      const std::string text = test::ReadFile(log_);
      const std::regex re("(http://127\\.0\\.0\\.1:[0-9]+)" + suffix);
      std::smatch m;
      if (std::regex_search(text, m, re)) url = m[1];
      return !url.empty();
    });
    return url;
  };
  const std::string controller_url = url_before("/readyz");
  ASSERT_FALSE(controller_url.empty())
      << test::ReadFile(log_) << test::ReadFile(dir_ + "/up.err");
  const std::string jobs_url = url_before("/jobs");
  ASSERT_FALSE(jobs_url.empty()) << test::ReadFile(log_);
  http_ = std::make_unique<httplib::Client>(controller_url);
  ASSERT_TRUE(WaitUntil([&] { return Ready(); }))
      << test::ReadFile(log_) << test::ReadFile(dir_ + "/up.err");
  EXPECT_NE(test::ReadFile(log_).find("controller: " + server_.url()),
            std::string::npos)
      << test::ReadFile(log_);
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(WaitUntil([&] {
    auto pods = store->pods().ListWorkloadPods(kPyTorchJobUid);
    auto job = store->pods().GetWorkload(kPyTorchJobUid);
    return pods.ok() && pods->size() == 4 && job.ok() &&
           job->status == "Running";
  }));
  EXPECT_EQ(
      server_.Get("coordination.k8s.io/v1", "Lease", "lens", "lens-controller"),
      "")
      << "one process, no election";
  // The jobs read this machine's agent into the same store.
  httplib::Client jobs(jobs_url);
  ASSERT_TRUE(WaitUntil([&] {
    auto r = jobs.Get("/jobs");
    if (!r || r->status != 200) return false;
    rapidjson::Document doc;
    doc.Parse(r->body.c_str());
    if (!doc.IsObject() || !doc["data"].IsArray()) return false;
    for (const auto& job : doc["data"].GetArray()) {
      if (job["name"] == "node-info" && job["last_result"] == "ok") {
        return true;
      }
    }
    return false;
  })) << test::ReadFile(log_);
  ASSERT_TRUE(WaitUntil([&] {
    auto nodes = store->nodes().ListNodes({});
    if (!nodes.ok()) return false;
    for (const NodeRecord& n : nodes->items) {
      if (n.agent_state == "ok" && n.agent_seen_at) return true;
    }
    return false;
  }));
  EXPECT_EQ(server_.Get("coordination.k8s.io/v1", "Lease", "lens", "lens-jobs"),
            "");
  ::kill(pid_, SIGINT);
  auto status = test::WaitExit(pid_, std::chrono::seconds(20));
  pid_ = -1;
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << test::Describe(*status) << test::ReadFile(dir_ + "/up.err");
}

TEST_F(ControllerDaemonTest, BadConfigurationExitsWithTwoAndSaysWhy) {
  auto missing =
      test::RunCommand({LENS_CONTROLLER_BIN, "--database", database_});
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(WEXITSTATUS(missing->wait_status), 2);
  EXPECT_NE(missing->err.find("--kubeconfig"), std::string::npos)
      << missing->err;

  auto absent = test::RunCommand({LENS_CONTROLLER_BIN, "--kubeconfig",
                                  dir_ + "/nope", "--database", database_});
  ASSERT_TRUE(absent.ok());
  EXPECT_EQ(WEXITSTATUS(absent->wait_status), 2);
  EXPECT_NE(absent->err.find(dir_ + "/nope"), std::string::npos) << absent->err;

  auto resources = test::RunCommand({LENS_CONTROLLER_BIN, "--kubeconfig",
                                     kubeconfig_, "--database", database_,
                                     "--gpu-resources", "amd.com/gpu,,x"});
  ASSERT_TRUE(resources.ok());
  EXPECT_EQ(WEXITSTATUS(resources->wait_status), 2);
  EXPECT_NE(resources->err.find("gpuResources"), std::string::npos)
      << resources->err;
  EXPECT_EQ(resources->err.find(kApiToken), std::string::npos);
}

}  // namespace
}  // namespace lens
