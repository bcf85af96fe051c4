// ContainerEventServer against real gRPC client streams and a real store:
// every test runs on SQLite and on PostgreSQL (names end in /sqlite and
// /postgres).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>
#include <sstream>
#include <thread>

#include "container_events/container_events.h"
#include "store_test_env.h"
#include "test_agent.h"

namespace lens::test {
namespace {

using std::chrono::steady_clock;

class ContainerEventServerTest : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    db_ = std::make_unique<TestDatabase>(GetParam());
    StoreOptions so;
    so.retry_deadline = std::chrono::milliseconds(1000);
    auto store = Store::Open(db_->url(), so);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  void StartServer(ContainerEventServerOptions options = {}) {
    options.listen = "127.0.0.1:0";
    server_ = std::make_unique<ContainerEventServer>(options, store_.get());
    const Status st = server_->Start();
    ASSERT_TRUE(st.ok()) << st;
    ASSERT_GT(server_->port(), 0);
  }
  std::string Target() const {
    return "127.0.0.1:" + std::to_string(server_->port());
  }
  std::shared_ptr<grpc::Channel> Channel() const {
    return grpc::CreateChannel(Target(), grpc::InsecureChannelCredentials());
  }

  int64_t CountContainers(const std::string& node, const std::string& state) {
    ContainerQuery q;
    q.node = node;
    if (!state.empty()) q.state = ParseContainerState(state);
    auto page = store_->containers().ListContainers(q);
    EXPECT_TRUE(page.ok()) << page.status();
    return page.ok() ? page->total : -1;
  }
  int64_t CountEvents(const std::string& container_id = "") {
    auto page =
        store_->containers().ListContainerEvents(container_id, {}, {1, 1000});
    EXPECT_TRUE(page.ok()) << page.status();
    return page.ok() ? page->total : -1;
  }
  std::string State(const std::string& id) {
    auto c = store_->containers().GetContainer(id);
    return c.ok() ? std::string(ToString(c->state)) : c.status().ToString();
  }
  // Runs `sql` on the test database from its own connection.
  void ExecSql(const std::string& sql) {
    if (GetParam() == Backend::kSqlite) {
      const std::string path = db_->url().substr(std::strlen("sqlite://"));
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
      sqlite3_busy_timeout(db, 5000);
      const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
      EXPECT_EQ(rc, SQLITE_OK) << sqlite3_errmsg(db);
      sqlite3_close(db);
      return;
    }
    try {
      pqxx::connection c(db_->url());
      pqxx::work w(c);
      w.exec(sql);
      w.commit();
    } catch (const std::exception& e) {
      ADD_FAILURE() << sql << ": " << e.what();
    }
  }

  std::unique_ptr<TestDatabase> db_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<ContainerEventServer> server_;
};

TEST_P(ContainerEventServerTest, RequiresHelloFirst) {
  StartServer();
  TestAgent agent(Channel(), "n1");
  ASSERT_TRUE(
      agent.Event(1, MakeChange(MakeContainer("c1", "n1"), "start", 1)));
  const grpc::Status st = agent.Drain();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("Hello"), std::string::npos);
  EXPECT_EQ(CountEvents(), 0);
}

TEST_P(ContainerEventServerTest, StoresEventsWithPodAndDevicesAndAcks) {
  StartServer();
  TestAgent agent(Channel(), "n1");
  ASSERT_TRUE(agent.Hello());
  ContainerRecord c1 = MakeContainer("c1", "n1", "created");
  c1.devices.push_back(
      {DeviceKind::kRdma, "mlx5_0", "0000:1c:00.0", "oci-spec"});
  ASSERT_TRUE(agent.Event(1, MakeChange(c1, "create", 10)));
  c1.state = ContainerState::kRunning;
  ASSERT_TRUE(agent.Event(2, MakeChange(c1, "start", 20)));
  ASSERT_TRUE(
      agent.Event(3, MakeChange(MakeContainer("c2", "n1"), "start", 30)));
  ASSERT_TRUE(agent.WaitAck(3));
  EXPECT_EQ(agent.acks().back(), 3u);
  for (size_t i = 1; i < agent.acks().size(); ++i) {
    EXPECT_GT(agent.acks()[i], agent.acks()[i - 1]);  // cumulative
  }

  auto got = store_->containers().GetContainer("c1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->node, "n1");
  EXPECT_EQ(got->state, ContainerState::kRunning);
  EXPECT_EQ(got->pod_uid, "uid-c1");
  EXPECT_EQ(got->pod_name, "pod-c1");
  EXPECT_EQ(got->pod_namespace, "ml");
  ASSERT_EQ(got->devices.size(), 2u);
  EXPECT_EQ(got->devices[0].device_key, "GPU-c1");
  EXPECT_EQ(got->devices[0].source, "pod-resources");
  EXPECT_EQ(got->devices[1].device_key, "mlx5_0");
  auto events = store_->containers().ListContainerEvents("c1", {}, {1, 100});
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->items.size(), 2u);
  EXPECT_EQ(events->items[0].event_type, ContainerEventType::kCreate);
  EXPECT_EQ(events->items[0].sequence, 1);
  EXPECT_EQ(events->items[1].event_type, ContainerEventType::kStart);
  EXPECT_EQ(events->items[1].at, Us(20));
  EXPECT_TRUE(agent.Close().ok());
}

TEST_P(ContainerEventServerTest, ResendingTheSameMessagesLeavesTheSameRows) {
  StartServer();
  for (int round = 0; round < 2; ++round) {
    TestAgent agent(Channel(), "n1");
    ASSERT_TRUE(agent.Hello());
    for (int i = 1; i <= 5; ++i) {
      const auto c = MakeContainer("c" + std::to_string(i), "n1");
      ASSERT_TRUE(agent.Event(i, MakeChange(c, "start", i)));
    }
    ASSERT_TRUE(agent.Snapshot(6, {MakeContainer("c1", "n1")}, 100));
    ASSERT_TRUE(agent.WaitAck(6)) << "round " << round;
    grpc::Status st = agent.Close();
    EXPECT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(CountContainers("n1", ""), 5);
    EXPECT_EQ(CountContainers("n1", "deleted"), 4);
    EXPECT_EQ(CountEvents(), 5);
  }
}

TEST_P(ContainerEventServerTest, SnapshotMarksAbsentContainersDeletedInOrder) {
  StartServer();
  TestAgent agent(Channel(), "n1");
  ASSERT_TRUE(agent.Hello());
  uint64_t seq = 0;
  for (const char* id : {"a", "b", "c", "d"}) {
    ++seq;
    const auto at = static_cast<int64_t>(seq);
    ASSERT_TRUE(
        agent.Event(seq, MakeChange(MakeContainer(id, "n1"), "start", at)));
  }
  // Sent back to back: the writer may batch them, and must keep their order.
  ASSERT_TRUE(agent.Snapshot(
      ++seq, {MakeContainer("a", "n1"), MakeContainer("b", "n1")}, 50));
  ASSERT_TRUE(
      agent.Event(++seq, MakeChange(MakeContainer("e", "n1"), "start", 60)));
  ASSERT_TRUE(agent.WaitAck(seq));
  EXPECT_EQ(State("a"), "running");
  EXPECT_EQ(State("b"), "running");
  EXPECT_EQ(State("c"), "deleted");
  EXPECT_EQ(State("d"), "deleted");
  EXPECT_EQ(State("e"), "running");  // after the snapshot: untouched by it
  auto c = store_->containers().GetContainer("c");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->finished_at, Us(50));
  EXPECT_EQ(server_->stats().snapshots_received, 1u);
}

TEST_P(ContainerEventServerTest, RejectsAMessageForAnotherNode) {
  StartServer();
  TestAgent agent(Channel(), "n1");
  ASSERT_TRUE(agent.Hello());
  v1::AgentMessage m;
  m.set_node("n2");
  m.set_sequence(1);
  container_events::ToProto(MakeChange(MakeContainer("x", "n2"), "start", 1),
                            m.mutable_event());
  ASSERT_TRUE(agent.Send(m));
  const grpc::Status st = agent.Drain();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("n2"), std::string::npos);
  EXPECT_EQ(CountEvents(), 0);
  EXPECT_EQ(server_->stats().errors, 1u);
}

TEST_P(ContainerEventServerTest, DropsAnInvalidMessageButAcksIt) {
  StartServer();
  TestAgent agent(Channel(), "n1");
  ASSERT_TRUE(agent.Hello());
  ASSERT_TRUE(
      agent.Event(1, MakeChange(MakeContainer("ok1", "n1"), "start", 1)));
  ASSERT_TRUE(agent.Event(
      2, MakeChange(MakeContainer(std::string(300, 'x'), "n1"), "start", 2)));
  ASSERT_TRUE(
      agent.Event(3, MakeChange(MakeContainer("ok2", "n1"), "start", 3)));
  ASSERT_TRUE(agent.WaitAck(3));
  EXPECT_EQ(CountContainers("n1", ""), 2);
  EXPECT_EQ(CountEvents(), 2);
  EXPECT_EQ(server_->stats().errors, 1u);
  EXPECT_TRUE(agent.Close().ok());
}

TEST_P(ContainerEventServerTest, RefusesMessagesOverTheSizeLimit) {
  ContainerEventServerOptions options;
  options.max_message_bytes = 4096;
  StartServer(options);
  TestAgent agent(Channel(), "n1");
  ASSERT_TRUE(agent.Hello());
  ContainerRecord big = MakeContainer("big", "n1");
  big.labels = {{"k", std::string(8192, 'v')}};
  agent.Event(1, MakeChange(big, "start", 1));
  EXPECT_EQ(agent.Drain().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(CountContainers("n1", ""), 0);
}

TEST_P(ContainerEventServerTest, RequiresTheBearerTokenWhenSet) {
  ContainerEventServerOptions options;
  options.bearer_token = "s3cret";
  StartServer(options);
  for (const std::string token : {"", "wrong"}) {
    TestAgent agent(Channel(), "n1", token);
    agent.Hello();
    EXPECT_EQ(agent.Drain().error_code(), grpc::StatusCode::UNAUTHENTICATED)
        << "token '" << token << "'";
  }
  TestAgent agent(Channel(), "n1", "s3cret");
  ASSERT_TRUE(agent.Hello());
  ASSERT_TRUE(
      agent.Event(1, MakeChange(MakeContainer("c1", "n1"), "start", 1)));
  EXPECT_TRUE(agent.WaitAck(1));
  EXPECT_TRUE(agent.Close().ok());
}

TEST_P(ContainerEventServerTest, ServesTls) {
  const auto dir = std::filesystem::path(testing::TempDir()) /
                   ("lens_tls" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string cert = (dir / "cert.pem").string();
  const std::string key = (dir / "key.pem").string();
  const std::string cmd =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
      "-addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout " +
      key + " -out " + cert + " >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    GTEST_SKIP() << "openssl CLI not available to make a certificate";
  }
  ContainerEventServerOptions options;
  options.tls_cert_file = cert;
  options.tls_key_file = key;
  StartServer(options);
  std::ifstream in(cert);
  std::stringstream pem;
  pem << in.rdbuf();
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("localhost");
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = pem.str();
  auto channel =
      grpc::CreateCustomChannel(Target(), grpc::SslCredentials(ssl), args);
  TestAgent agent(channel, "n1");
  ASSERT_TRUE(agent.Hello());
  ASSERT_TRUE(
      agent.Event(1, MakeChange(MakeContainer("c1", "n1"), "start", 1)));
  EXPECT_TRUE(agent.WaitAck(1));
  EXPECT_TRUE(agent.Close().ok());
  // A plaintext client gets nowhere.
  TestAgent plain(Channel(), "n1");
  plain.Hello();
  EXPECT_EQ(plain.Drain().error_code(), grpc::StatusCode::UNAVAILABLE);
  std::filesystem::remove_all(dir);
}

TEST_P(ContainerEventServerTest, UnreadableTlsFilesAreNamed) {
  ContainerEventServerOptions options;
  options.listen = "127.0.0.1:0";
  options.tls_cert_file = "/nonexistent/cert.pem";
  options.tls_key_file = "/nonexistent/key.pem";
  server_ = std::make_unique<ContainerEventServer>(options, store_.get());
  const Status st = server_->Start();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("/nonexistent/cert.pem"), std::string::npos);
}

TEST_P(ContainerEventServerTest, TwoNodesAtOnce) {
  ContainerEventServerOptions options;
  options.max_batch = 64;
  StartServer(options);
  constexpr int kEvents = 300;
  auto run = [this](const std::string& node) {
    TestAgent agent(Channel(), node);
    ASSERT_TRUE(agent.Hello());
    for (int i = 1; i <= kEvents; ++i) {
      const auto c = MakeContainer(node + "-c" + std::to_string(i), node);
      ASSERT_TRUE(agent.Event(i, MakeChange(c, "start", i)));
    }
    ASSERT_TRUE(agent.WaitAck(kEvents));
    EXPECT_TRUE(agent.Close().ok());
  };
  std::thread a(run, "n1");
  std::thread b(run, "n2");
  a.join();
  b.join();
  EXPECT_EQ(CountContainers("n1", "running"), kEvents);
  EXPECT_EQ(CountContainers("n2", "running"), kEvents);
  EXPECT_EQ(CountEvents(), 2 * kEvents);
  EXPECT_GE(server_->stats().batches, 2u * kEvents / 64);
}

TEST_P(ContainerEventServerTest, MetricsCountWhatArrived) {
  StartServer();
  TestAgent agent(Channel(), "n1");
  ASSERT_TRUE(agent.Hello());
  for (int i = 1; i <= 3; ++i) {
    const auto c = MakeContainer("c" + std::to_string(i), "n1");
    ASSERT_TRUE(agent.Event(i, MakeChange(c, "start", i)));
  }
  ASSERT_TRUE(agent.Snapshot(
      4, {MakeContainer("c1", "n1"), MakeContainer("c2", "n1")}, 10));
  ASSERT_TRUE(agent.WaitAck(4));
  // The writer acknowledges a batch, then counts it: under a slow build
  // (sanitizers) the count may follow the ack by a moment.
  for (int i = 0; i < 500 && server_->stats().batches == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const ContainerEventServerStats s = server_->stats();
  EXPECT_EQ(s.events_received, 5u);
  EXPECT_EQ(s.snapshots_received, 1u);
  EXPECT_EQ(s.errors, 0u);
  EXPECT_GE(s.batches, 1u);
  EXPECT_EQ(s.connected_agents, 1);
  EXPECT_GT(s.processing_seconds_sum, 0.0);
  const std::string text = server_->RenderMetrics();
  for (const char* want :
       {"# TYPE lens_container_events_received_total counter\n",
        "lens_container_events_received_total 5\n",
        "lens_container_event_snapshots_received_total 1\n",
        "# HELP lens_container_event_errors_total ",
        "lens_container_event_errors_total 0\n",
        "# TYPE lens_container_event_batches_total counter\n",
        "# TYPE lens_container_event_processing_seconds histogram\n",
        "lens_container_event_processing_seconds_bucket{le=\"+Inf\"} 4\n",
        "lens_container_event_processing_seconds_count 4\n",
        "# TYPE lens_container_event_agents gauge\n",
        "lens_container_event_agents 1\n"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }
  EXPECT_TRUE(agent.Close().ok());
  const auto deadline = steady_clock::now() + std::chrono::seconds(5);
  while (server_->stats().connected_agents != 0 &&
         steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(server_->stats().connected_agents, 0);
}

TEST_P(ContainerEventServerTest, StoreFailureEndsTheStreamAndResendHeals) {
  StartServer();
  ExecSql("ALTER TABLE node_container_events RENAME TO moved_events");
  TestAgent agent(Channel(), "n1");
  ASSERT_TRUE(agent.Hello());
  const auto change = MakeChange(MakeContainer("c1", "n1"), "start", 1);
  ASSERT_TRUE(agent.Event(1, change));
  const grpc::Status st = agent.Drain();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE)
      << st.error_message();
  EXPECT_TRUE(agent.acks().empty());
  EXPECT_GE(server_->stats().errors, 1u);

  ExecSql("ALTER TABLE moved_events RENAME TO node_container_events");
  TestAgent again(Channel(), "n1");
  ASSERT_TRUE(again.Hello());
  ASSERT_TRUE(again.Event(1, change));
  ASSERT_TRUE(again.WaitAck(1));
  EXPECT_EQ(CountEvents("c1"), 1);
  EXPECT_TRUE(again.Close().ok());
}

TEST_P(ContainerEventServerTest, StopWithAConnectedAgentIsPrompt) {
  StartServer();
  TestAgent agent(Channel(), "n1");
  ASSERT_TRUE(agent.Hello());
  ASSERT_TRUE(
      agent.Event(1, MakeChange(MakeContainer("c1", "n1"), "start", 1)));
  ASSERT_TRUE(agent.WaitAck(1));
  const auto start = steady_clock::now();
  server_->Stop();
  EXPECT_LT(steady_clock::now() - start, std::chrono::milliseconds(1500));
  EXPECT_EQ(agent.Drain().error_code(), grpc::StatusCode::UNAVAILABLE);
  server_->Stop();  // idempotent
  EXPECT_EQ(server_->stats().connected_agents, 0);
}

TEST_P(ContainerEventServerTest, PortInUseIsUnavailable) {
  StartServer();
  ContainerEventServerOptions options;
  options.listen = Target();
  ContainerEventServer second(options, store_.get());
  EXPECT_EQ(second.Start().code(), StatusCode::kUnavailable);
}

INSTANTIATE_TEST_SUITE_P(Backends, ContainerEventServerTest,
                         testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

}  // namespace
}  // namespace lens::test
