// Per-node identity on the event stream: with node tokens configured a
// stream speaks only for the node whose token it carries. Real gRPC streams
// into a real SQLite store; the tokens file parser on real files.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "container_events/container_events.h"
#include "stream_fixture.h"

namespace lens::test {
namespace {

constexpr char kTokenN1[] = "n1-token-0123456789abcdef";
constexpr char kTokenN2[] = "n2-token-fedcba9876543210";
constexpr char kShared[] = "shared-token-0123456789";

class IdentityTest : public StreamTest {
 protected:
  void StartWithNodeTokens(bool accept_shared = false) {
    ContainerEventServerOptions options;
    options.node_tokens = {{"n1", kTokenN1}, {"n2", kTokenN2}};
    options.bearer_token = kShared;
    options.accept_shared_token = accept_shared;
    StartServer(options);
  }
  // A stream with `token` saying Hello as `node`, then one event for
  // `event_node`; its final status.
  grpc::Status Speak(const std::string& token, const std::string& node,
                     const std::string& event_node) {
    TestAgent agent(Channel(), node, token);
    agent.Hello();
    v1::AgentMessage m;
    m.set_node(event_node);
    m.set_sequence(1);
    container_events::ToProto(
        MakeChange(MakeContainer(event_node + "-c", event_node), "start", 1),
        m.mutable_event());
    agent.Send(m);
    if (agent.WaitAck(1)) return agent.Close();
    return agent.Drain();
  }
  std::string WriteFile(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
};

TEST_F(IdentityTest, ANodeTokenSpeaksForItsNode) {
  StartWithNodeTokens();
  EXPECT_TRUE(Speak(kTokenN1, "n1", "n1").ok());
  EXPECT_TRUE(Speak(kTokenN2, "n2", "n2").ok());
  EXPECT_EQ(State("n1-c"), "running");
  EXPECT_EQ(State("n2-c"), "running");
  EXPECT_EQ(server_->stats().permission_denied, 0u);
}

TEST_F(IdentityTest, ANodeTokenCannotSpeakForAnotherNode) {
  StartWithNodeTokens();
  // A Hello for another node.
  grpc::Status st = Speak(kTokenN1, "n2", "n2");
  EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(st.error_message().find("node 'n1' cannot speak for node 'n2'"),
            std::string::npos)
      << st.error_message();
  // Its own Hello, then a message for another node.
  st = Speak(kTokenN1, "n1", "n2");
  EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Count("n2"), 0);
  EXPECT_EQ(server_->stats().permission_denied, 2u);
  EXPECT_NE(server_->RenderMetrics().find(
                "lens_container_event_permission_denied_total 2\n"),
            std::string::npos);
}

TEST_F(IdentityTest, MissingOrUnknownTokensAreUnauthenticated) {
  StartWithNodeTokens();
  // The shared token no longer opens the stream once node tokens are set.
  for (const std::string token : {"", "not-a-node-token-at-all", kShared}) {
    const grpc::Status st = Speak(token, "n1", "n1");
    EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED)
        << "token '" << token << "'";
    EXPECT_NE(st.error_message().find("its node's own token"),
              std::string::npos);
  }
  EXPECT_EQ(Count("n1"), 0);
  EXPECT_EQ(server_->stats().unauthenticated, 3u);
}

TEST_F(IdentityTest, TheSharedTokenStillWorksWhenAccepted) {
  StartWithNodeTokens(/*accept_shared=*/true);
  // Shared: any node (the documented trade-off).
  EXPECT_TRUE(Speak(kShared, "n2", "n2").ok());
  EXPECT_TRUE(Speak(kShared, "n9", "n9").ok());
  // A node token stays bound to its node.
  EXPECT_EQ(Speak(kTokenN1, "n2", "n2").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(IdentityTest, TheSenderAuthenticatesWithItsNodesToken) {
  StartWithNodeTokens();
  ContainerEventSender sender(
      {.target = Target(), .node = "n2", .bearer_token = kTokenN2});
  ASSERT_TRUE(sender.Start().ok());
  const uint64_t seq =
      sender.Publish(MakeChange(MakeContainer("s1", "n2"), "start", 1));
  ASSERT_TRUE(sender.Flush(std::chrono::seconds(30)));
  EXPECT_GE(sender.stats().acked, seq);
  EXPECT_EQ(State("s1"), "running");
}

TEST_F(IdentityTest, ReadsATokensFile) {
  const std::string path =
      WriteFile("tokens", "# node token\n\nn1 " + std::string(kTokenN1) +
                              "\n  gpu-node-7.example\t" + kTokenN2 + "  \r\n");
  auto tokens = ReadNodeTokensFile(path, "jobs.nodeTokensFile");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  EXPECT_EQ(tokens->size(), 2u);
  EXPECT_EQ(tokens->at("n1"), kTokenN1);
  EXPECT_EQ(tokens->at("gpu-node-7.example"), kTokenN2);
}

TEST_F(IdentityTest, TokensFileErrorsNameTheLineNeverTheToken) {
  const std::string a = kTokenN1;
  const std::string b = kTokenN2;
  const struct {
    std::string text;
    std::string expect;
  } cases[] = {
      {"n1 " + a + "\nn2\n", "line 2: expected \"NODE TOKEN\", got 1 words"},
      {"n1 " + a + " extra\n", "line 1: expected \"NODE TOKEN\", got 3 words"},
      {"n/1 " + a + "\n", "line 1: not a node name"},
      {"n1 short\n", "line 1: the token of node 'n1' is shorter than 16"},
      {"n1 " + a + "\nn1 " + b + "\n", "line 2: node 'n1' listed twice"},
      {"n1 " + a + "\nn2 " + a + "\n",
       "line 2: node 'n2' has the token of another node"},
      {"# nothing\n", "lists no node tokens"},
  };
  for (const auto& c : cases) {
    const std::string path = WriteFile("bad", c.text);
    auto tokens = ReadNodeTokensFile(path, "jobs.nodeTokensFile");
    ASSERT_FALSE(tokens.ok()) << c.text;
    EXPECT_EQ(tokens.status().code(), StatusCode::kInvalidArgument);
    const std::string msg(tokens.status().message());
    EXPECT_NE(msg.find("jobs.nodeTokensFile: " + path), std::string::npos)
        << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
    EXPECT_EQ(msg.find(a), std::string::npos) << msg;
    EXPECT_EQ(msg.find(b), std::string::npos) << msg;
  }
  auto missing = ReadNodeTokensFile((dir_ / "none").string(), "k");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace lens::test
