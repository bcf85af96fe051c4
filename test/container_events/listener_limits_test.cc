// The container event server's gRPC listener against hostile clients: idle
// and half-open connections, too many streams, ping floods. Each bounded in
// time; a well-behaved agent must still get through.
#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "container_events/container_events.h"
#include "lens/store.h"
#include "test_agent.h"

namespace lens {
namespace {

using std::chrono::milliseconds;

class ListenerLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("lens-grpc-limits-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    auto store = Store::Open("sqlite://" + (dir_ / "lens.db").string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }
  void TearDown() override {
    if (server_) server_->Stop();
    std::filesystem::remove_all(dir_);
  }
  void Start(ContainerEventServerOptions options) {
    options.listen = "127.0.0.1:0";
    server_ = std::make_unique<ContainerEventServer>(options, store_.get());
    ASSERT_TRUE(server_->Start().ok());
  }
  std::string Target() const {
    return "127.0.0.1:" + std::to_string(server_->port());
  }
  std::shared_ptr<grpc::Channel> Channel(grpc::ChannelArguments args = {}) {
    return grpc::CreateCustomChannel(Target(),
                                     grpc::InsecureChannelCredentials(), args);
  }
  // An agent that says hello and gets one event acknowledged.
  bool AgentGetsThrough(const std::string& node) {
    test::TestAgent agent(Channel(), node);
    if (!agent.Hello()) return false;
    if (!agent.Event(1, test::MakeChange(test::MakeContainer("c-" + node, node),
                                         "start", 1)))
      return false;
    return agent.WaitAck(1);
  }
  int RawConnect() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      return -1;
    }
    timeval tv{0, 100 * 1000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
  }

  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<ContainerEventServer> server_;
};

TEST_F(ListenerLimitsTest, HalfOpenConnectionsAreClosedAtTheHandshakeTimeout) {
  ContainerEventServerOptions options;
  options.handshake_timeout = milliseconds(1000);
  Start(options);
  // 200 connections that never finish the HTTP/2 preface, some with a part.
  std::vector<int> fds;
  for (int i = 0; i < 200; ++i) {
    const int fd = RawConnect();
    ASSERT_GE(fd, 0);
    if (i % 2 == 0) (void)!::send(fd, "PRI * HTTP/2.0\r\n", 16, MSG_NOSIGNAL);
    fds.push_back(fd);
  }
  EXPECT_TRUE(AgentGetsThrough("n1"));
  std::this_thread::sleep_for(milliseconds(2500));
  int closed = 0;
  for (int fd : fds) {
    char buf[256];
    ssize_t n;
    // Whatever the server sent (a SETTINGS frame, a GOAWAY), then the close.
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) {
    }
    if (n == 0) ++closed;
    ::close(fd);
  }
  EXPECT_EQ(closed, 200);
}

TEST_F(ListenerLimitsTest, StreamsBeyondTheCapAreRefused) {
  ContainerEventServerOptions options;
  options.max_streams = 2;
  Start(options);
  std::vector<std::unique_ptr<test::TestAgent>> agents;
  for (int i = 0; i < 2; ++i) {
    agents.push_back(
        std::make_unique<test::TestAgent>(Channel(), "n" + std::to_string(i)));
    ASSERT_TRUE(agents.back()->Hello());
  }
  // Let both streams reach their handlers before the third arrives.
  std::this_thread::sleep_for(milliseconds(300));
  test::TestAgent third(Channel(), "n3");
  third.Hello();
  EXPECT_EQ(third.Drain().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  // Once one ends, there is room again.
  EXPECT_TRUE(agents[0]->Close().ok());
  agents.erase(agents.begin());
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_TRUE(AgentGetsThrough("n4"));
}

TEST_F(ListenerLimitsTest, APingFloodIsDisconnected) {
  Start({});
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 100);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  args.SetInt(GRPC_ARG_HTTP2_MIN_SENT_PING_INTERVAL_WITHOUT_DATA_MS, 100);
  test::TestAgent agent(Channel(args), "flood");
  ASSERT_TRUE(agent.Hello());
  const auto start = std::chrono::steady_clock::now();
  const grpc::Status status = agent.Drain();
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << status.error_message();
  EXPECT_LT(took, std::chrono::seconds(10));
  // A well-behaved agent is unaffected.
  EXPECT_TRUE(AgentGetsThrough("calm"));
}

}  // namespace
}  // namespace lens
