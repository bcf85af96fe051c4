// lens-jobs as a library: options from the config, then the store, the event
// server and the HTTP routes started together and stopped together.
#include "service/jobs_service.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "test_agent.h"

namespace lens {
namespace {

namespace fs = std::filesystem;

class JobsServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lens-jobs-service-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "token") << "jobs-token\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  Config MakeConfig() const {
    Config c;
    c.jobs.listen_grpc = "127.0.0.1:0";
    c.jobs.listen_http = "127.0.0.1:0";
    c.jobs.bearer_token_file = (dir_ / "token").string();
    c.database.url = "sqlite://" + (dir_ / "lens.db").string();
    return c;
  }
  fs::path dir_;
};

TEST_F(JobsServiceTest, OptionsComeFromTheJobsAndDatabaseSections) {
  Config config = MakeConfig();
  config.jobs.max_agent_streams = 5;
  auto options = JobsServiceOptionsFromConfig(config);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->database_url, config.database.url);
  EXPECT_EQ(options->events.listen, "127.0.0.1:0");
  EXPECT_EQ(options->events.bearer_token, "jobs-token");
  EXPECT_EQ(options->http.bearer_token, "jobs-token");
  EXPECT_EQ(options->events.max_streams, 5);
  config.jobs.bearer_token_file = (dir_ / "missing").string();
  auto missing = JobsServiceOptionsFromConfig(config);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("jobs.bearerTokenFile"),
            std::string::npos)
      << missing.status();
}

TEST_F(JobsServiceTest, NodeIdentityAndQueueBoundsComeFromTheJobsSection) {
  std::ofstream(dir_ / "node-tokens")
      << "gpu-node-1 0123456789abcdef0123\ngpu-node-2 fedcba9876543210fedc\n";
  Config config = MakeConfig();
  config.jobs.node_tokens_file = (dir_ / "node-tokens").string();
  config.jobs.accept_shared_agent_token = true;
  config.jobs.max_queue_bytes = 8 << 20;
  config.jobs.max_snapshot_bytes = 16 << 20;
  auto options = JobsServiceOptionsFromConfig(config);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->events.node_tokens.size(), 2u);
  EXPECT_EQ(options->events.node_tokens.at("gpu-node-2"),
            "fedcba9876543210fedc");
  EXPECT_TRUE(options->events.accept_shared_token);
  EXPECT_EQ(options->events.max_queued_bytes, size_t{8} << 20);
  EXPECT_EQ(options->events.max_snapshot_bytes, size_t{16} << 20);

  // A bad tokens file is named with its key and line, never a token.
  std::ofstream(dir_ / "node-tokens") << "gpu-node-1 0123456789abcdef0123\n"
                                      << "gpu-node-2 0123456789abcdef0123\n";
  auto shared = JobsServiceOptionsFromConfig(config);
  ASSERT_FALSE(shared.ok());
  const std::string msg(shared.status().message());
  EXPECT_NE(msg.find("jobs.nodeTokensFile"), std::string::npos) << msg;
  EXPECT_NE(msg.find("line 2"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("0123456789abcdef0123"), std::string::npos) << msg;

  // Bounds are checked where the config is validated.
  config.jobs.max_queue_bytes = 1000;
  auto small = JobsServiceOptionsFromConfig(config);
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("maxQueueBytes"), std::string::npos)
      << small.status();
  config = MakeConfig();
  config.jobs.accept_shared_agent_token = true;
  auto alone = JobsServiceOptionsFromConfig(config);
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.status().message().find("acceptSharedAgentToken"),
            std::string::npos);
}

TEST_F(JobsServiceTest, ServesAgentsMetricsAndHealth) {
  auto options = JobsServiceOptionsFromConfig(MakeConfig());
  ASSERT_TRUE(options.ok()) << options.status();
  auto service = JobsService::Start(*options);
  ASSERT_TRUE(service.ok()) << service.status();
  ASSERT_GT((*service)->grpc_port(), 0);
  EXPECT_NE((*service)->database().find("lens.db"), std::string::npos);

  test::TestAgent agent(
      grpc::CreateChannel(
          "127.0.0.1:" + std::to_string((*service)->grpc_port()),
          grpc::InsecureChannelCredentials()),
      "node-1", "jobs-token");
  ASSERT_TRUE(agent.Hello());
  ASSERT_TRUE(agent.Event(
      1, test::MakeChange(test::MakeContainer("c1", "node-1"), "start", 1)));
  EXPECT_TRUE(agent.WaitAck(1));
  EXPECT_TRUE(agent.Close().ok());

  const std::string url = (*service)->http_url();
  httplib::Client http(url);
  EXPECT_EQ(http.Get("/healthz")->status, 200);
  EXPECT_EQ(http.Get("/metrics")->status, 401);
  auto metrics = http.Get("/metrics", {{"Authorization", "Bearer jobs-token"}});
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_NE(metrics->body.find("lens_container_events_received_total 1"),
            std::string::npos)
      << metrics->body;
  (*service)->Stop();
  (*service)->Stop();  // idempotent
  EXPECT_FALSE(http.Get("/healthz"));
}

TEST_F(JobsServiceTest, AnUnopenableDatabaseIsNamed) {
  Config config = MakeConfig();
  config.database.url =
      "sqlite://" + (dir_ / "no" / "such" / "lens.db").string();
  auto options = JobsServiceOptionsFromConfig(config);
  ASSERT_TRUE(options.ok());
  auto service = JobsService::Start(*options);
  ASSERT_FALSE(service.ok());
  EXPECT_NE(service.status().message().find("does not exist"),
            std::string::npos)
      << service.status();
}

}  // namespace
}  // namespace lens
