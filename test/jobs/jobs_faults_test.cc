// The jobs when things go wrong: an agent that dies, one that is slow, one
// that answers garbage, agents found through the API server, and a
// PostgreSQL restart in the middle of a round.
#include "jobs_testing.h"
#include "kube_api_server.h"
#include "lens/kube.h"

namespace lens::jobs_testing {
namespace {

class JobsFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = Store::Open(StoreUrl("sqlite", "faults"));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }
  std::unique_ptr<ScheduledJobs> Jobs(const ScheduledJobsOptions& o,
                                      KubeClient* client = nullptr) {
    auto jobs = ScheduledJobs::Create(o, store_.get(), client);
    EXPECT_TRUE(jobs.ok()) << jobs.status();
    return jobs.ok() ? std::move(*jobs) : nullptr;
  }
  std::unique_ptr<Store> store_;
};

TEST_F(JobsFaultsTest, AnAgentThatDiesLeavesItsNodeStaleNotErased) {
  AgentProcess agent("mi300x-8x-mlx5", "node-a", "127.0.0.1", FreePort());
  ASSERT_TRUE(agent.WaitHealthy()) << agent.log();
  ScheduledJobsOptions o;
  o.agents = {{"node-a", agent.url()}};
  o.agent_timeout = milliseconds(500);
  o.node_info.interval = o.device_info.interval = milliseconds(100);
  auto jobs = Jobs(o);
  ASSERT_TRUE(jobs->RunOnce("device-info").ok());
  ASSERT_TRUE(jobs->RunOnce("node-info").ok());
  const auto seen = store_->nodes().GetNode("node-a")->agent_seen_at;
  ASSERT_TRUE(seen.has_value());
  agent.Stop(SIGKILL);
  std::this_thread::sleep_for(milliseconds(120));  // older than max age
  ASSERT_TRUE(jobs->RunOnce("node-info").ok());
  ASSERT_TRUE(jobs->RunOnce("device-info").ok());
  auto node = store_->nodes().GetNode("node-a");
  EXPECT_EQ(node->agent_state, "stale");
  EXPECT_EQ(node->agent_seen_at, seen);  // when it last answered
  EXPECT_EQ(node->cpu_model, "AMD EPYC 9654 96-Core Processor");
  EXPECT_EQ(store_->nodes().ListGpuDevices("node-a")->size(), 8u);
  EXPECT_EQ(store_->nodes().ListRdmaDevices("node-a")->size(), 8u);
  EXPECT_EQ(
      Sample(jobs->RenderMetrics(), "lens_node_agent_up{node=\"node-a\"}"), 0);
}

TEST_F(JobsFaultsTest, ASlowAgentCostsOneTimeoutNotTheRound) {
  FakeAgent slow("{}", milliseconds(3000));
  AgentProcess agent("mi250-mi210", "node-b", "127.0.0.1", FreePort());
  ASSERT_TRUE(agent.WaitHealthy()) << agent.log();
  ScheduledJobsOptions o;
  o.agents = {{"node-slow", slow.url()}, {"node-b", agent.url()}};
  o.agent_timeout = milliseconds(300);
  auto jobs = Jobs(o);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(jobs->RunOnce("node-info").ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2500));
  EXPECT_EQ(store_->nodes().GetNode("node-b")->agent_state, "ok");
  auto slow_node = store_->nodes().GetNode("node-slow");
  ASSERT_TRUE(slow_node.ok()) << slow_node.status();
  EXPECT_EQ(slow_node->agent_state, "stale");
  EXPECT_EQ(slow_node->status, "NotReady");
  const std::string status = jobs->StatusJson();
  EXPECT_NE(status.find("\"name\":\"node-info\""), std::string::npos);
}

TEST_F(JobsFaultsTest, GarbageFromAnAgentIsRefusedAndNamed) {
  FakeAgent html("<html>502 Bad Gateway</html>", milliseconds(0));
  FakeAgent wrong("{\"code\":0,\"data\":{\"gpus\":\"lots\"}}", milliseconds(0));
  FakeAgent no_index("{\"code\":0,\"data\":{\"gpus\":[{\"serial\":\"x\"}]}}",
                     milliseconds(0));
  ScheduledJobsOptions o;
  o.agents = {{"node-html", html.url()},
              {"node-wrong", wrong.url()},
              {"node-noindex", no_index.url()}};
  auto jobs = Jobs(o);
  ASSERT_TRUE(jobs->RunOnce("device-info").ok());
  ASSERT_TRUE(jobs->RunOnce("node-info").ok());
  for (const char* node : {"node-html", "node-wrong", "node-noindex"}) {
    auto n = store_->nodes().GetNode(node);
    ASSERT_TRUE(n.ok()) << node << ": " << n.status();
    EXPECT_EQ(n->agent_state, "stale") << node;
    EXPECT_TRUE(store_->nodes().ListGpuDevices(node)->empty()) << node;
  }
}

TEST_F(JobsFaultsTest, ReadsAgentsOverTlsWithTheirTokenAndRefusesOthers) {
  const std::string tls = kFixtures + "/node/tls/";
  const std::string token_file =
      ::testing::TempDir() + "agent-token-" + std::to_string(::getpid());
  std::ofstream(token_file) << "agent-token-7d1f\n";
  AgentProcess agent("mi250-mi210", "node-b", "127.0.0.1", FreePort(),
                     {"--tls-cert", tls + "kubelet.crt", "--tls-key",
                      tls + "kubelet.key", "--bearer-token-file", token_file});
  ASSERT_TRUE(agent.WaitHealthy()) << agent.log();
  ASSERT_EQ(agent.url().rfind("https://", 0), 0u);
  ScheduledJobsOptions o;
  o.agents = {{"node-b", agent.url()}};
  o.agent_ca_file = tls + "ca.crt";
  o.agent_token = "agent-token-7d1f";
  o.node_info.interval = o.device_info.interval = milliseconds(100);
  auto jobs = Jobs(o);
  ASSERT_TRUE(WaitFor([&] {
    std::this_thread::sleep_for(milliseconds(60));
    return jobs->RunOnce("device-info").ok() &&
           store_->nodes().ListGpuDevices("node-b")->size() == 4u;
  })) << agent.log();
  // A wrong token, and no CA to trust the agent's certificate: refused.
  ScheduledJobsOptions wrong = o;
  wrong.agent_token = "not-the-token";
  wrong.agents = {{"node-x", agent.url()}};
  ScheduledJobsOptions untrusted = o;
  untrusted.agent_ca_file.clear();
  untrusted.agents = {{"node-y", agent.url()}};
  for (const ScheduledJobsOptions* bad : {&wrong, &untrusted}) {
    auto refused = Jobs(*bad);
    ASSERT_TRUE(refused->RunOnce("node-info").ok());
    const std::string node = bad->agents[0].node;
    EXPECT_EQ(store_->nodes().GetNode(node)->agent_state, "stale") << node;
    EXPECT_TRUE(store_->nodes().ListGpuDevices(node)->empty());
  }
}

TEST_F(JobsFaultsTest, FindsAgentsThroughTheirDaemonSetPods) {
  test::KubeApiServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  const int port = FreePort();
  AgentProcess a("mi300x-8x-mlx5", "node-a", "127.0.0.2", port);
  AgentProcess b("mi250-mi210", "node-b", "127.0.0.3", port);
  ASSERT_TRUE(a.WaitHealthy()) << a.log();
  ASSERT_TRUE(b.WaitHealthy()) << b.log();
  auto pod = [](const std::string& name, const std::string& node,
                const std::string& ip, const std::string& phase,
                const std::string& app) {
    return "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" +
           name +
           "\",\"namespace\":\"lens\",\"labels\":{"
           "\"app.kubernetes.io/name\":\"" +
           app +
           "\"}},\"spec\":{"
           "\"nodeName\":\"" +
           node +
           "\",\"containers\":[{\"name\":\"agent\","
           "\"image\":\"lens:1\"}]},\"status\":{\"phase\":\"" +
           phase + "\",\"podIP\":\"" + ip + "\"}}";
  };
  ASSERT_NE(server.Create(pod("agent-a", "node-a", "127.0.0.2", "Running",
                              "lens-node-agent")),
            "");
  ASSERT_NE(server.Create(pod("agent-b", "node-b", "127.0.0.3", "Running",
                              "lens-node-agent")),
            "");
  ASSERT_NE(server.Create(pod("agent-old", "node-x", "127.0.0.9", "Failed",
                              "lens-node-agent")),
            "");
  ASSERT_NE(server.Create(pod("other", "node-y", "127.0.0.8", "Running",
                              "something-else")),
            "");
  auto client = KubeClient::Create(KubeConnection{.server = server.url()});
  ASSERT_TRUE(client.ok());
  ScheduledJobsOptions o;
  o.agent_port = port;
  auto jobs = Jobs(o, client->get());
  ASSERT_TRUE(jobs->RunOnce("device-info").ok());
  EXPECT_EQ(store_->nodes().ListGpuDevices("node-a")->size(), 8u);
  EXPECT_EQ(store_->nodes().ListGpuDevices("node-b")->size(), 4u);
  EXPECT_FALSE(store_->nodes().GetNode("node-x").ok());
  EXPECT_FALSE(store_->nodes().GetNode("node-y").ok());
  bool selected = false;
  for (const test::KubeRequest& r : server.Requests()) {
    selected |= r.resource == "pods" && r.namespace_name == "lens" &&
                r.query.find(
                    "labelSelector=app.kubernetes.io%2Fname%3D"
                    "lens-node-agent") != std::string::npos;
  }
  EXPECT_TRUE(selected);
}

TEST(JobsPostgresTest, PostgresRestartedMidRoundLosesNothing) {
  auto pg = test::PostgresServer::Start();
  ASSERT_TRUE(pg.ok()) << pg.status();
  auto url = (*pg)->CreateDatabase("jobs_restart");
  ASSERT_TRUE(url.ok()) << url.status();
  auto store = Store::Open(*url);
  ASSERT_TRUE(store.ok()) << store.status();
  AgentProcess agent("mi300x-8x-mlx5", "node-a", "127.0.0.1", FreePort());
  ASSERT_TRUE(agent.WaitHealthy()) << agent.log();
  ScheduledJobsOptions o;
  o.agents = {{"node-a", agent.url()}};
  auto jobs = ScheduledJobs::Create(o, store->get(), nullptr);
  ASSERT_TRUE(jobs.ok());
  ASSERT_TRUE((*pg)->Stop().ok());
  // The store retries the round's reads and writes until the server is back.
  Status st;
  std::thread round([&] { st = (*jobs)->RunOnce("device-info"); });
  std::this_thread::sleep_for(milliseconds(1500));
  const auto start = std::chrono::steady_clock::now();
  Status started = (*pg)->StartAgain();
  round.join();
  ASSERT_TRUE(started.ok()) << started;
  ASSERT_TRUE(st.ok()) << st << " (server started again after "
                       << std::chrono::duration_cast<milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count()
                       << " ms)";
  ASSERT_TRUE((*jobs)->RunOnce("node-info").ok());
  EXPECT_EQ((*store)->nodes().ListGpuDevices("node-a")->size(), 8u);
  EXPECT_EQ((*store)->nodes().GetNode("node-a")->agent_state, "ok");
  EXPECT_EQ(
      (*store)->nodes().ListDeviceChanges("node-a", {}, {1, 100})->items.size(),
      16u);
}

}  // namespace
}  // namespace lens::jobs_testing
