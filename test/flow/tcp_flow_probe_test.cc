// The eBPF flow probe on this machine's kernel: known loopback traffic
// (IPv4 and IPv6) must come back exactly, in bytes and in connections,
// with each set of programs: socket storage (where the kernel runs it; the
// probe falls back otherwise) and address hash (every kernel).
// Needs root; tracefs is not needed (tracepoints attach by name).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ebpf_env.h"
#include "lens/flow.h"
#include "loopback_traffic.h"
#include "tcp_flow_probe_fixture.h"

namespace lens {
namespace {

using test::TcpFlowProbeTest;

TEST_P(TcpFlowProbeTest, CountsIpv4LoopbackBytesAndConnectionsExactly) {
  ExpectExact("ipv4", 20, 1'000'000, 333'333);
}

TEST_P(TcpFlowProbeTest, CountsIpv6LoopbackBytesAndConnectionsExactly) {
  ExpectExact("ipv6", 20, 777'777, 12'345);
}

// A few thousand short connections at full speed: every one opened, closed
// and counted, and the ring buffer dropped nothing.
TEST_P(TcpFlowProbeTest, ThousandsOfShortConnectionsWithoutDrops) {
  constexpr int kConnections = 3000;
  const auto begin = std::chrono::steady_clock::now();
  ExpectExact("ipv4", kConnections, 100, 10);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  // The reader thread polls every 100 ms: give it time to catch up.
  FlowProbeStats stats = probe_->Stats();
  for (int i = 0; i < 40 && stats.events_received < 4u * kConnections; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stats = probe_->Stats();
  }
  EXPECT_EQ(stats.events_dropped, 0u);
  EXPECT_EQ(stats.flow_create_failed, 0u);
  EXPECT_EQ(stats.flows_evicted, 0u);
  EXPECT_GE(stats.events_received, 4u * kConnections);  // open + close, x2
  std::printf("%d connections in %.2f s (%.0f connections/s)\n", kConnections,
              seconds, kConnections / seconds);
}

// One 4-tuple used by three connections before a drain (the client binds
// the same port each time; the server closes first, so its TIME_WAIT socket
// accepts the next SYN): three connections, not one with three times the
// bytes.
TEST_P(TcpFlowProbeTest, ConnectionsReusingATupleStayApart) {
  constexpr int kConnections = 3;
  constexpr size_t kRequest = 100, kReply = 10;
  auto fail = [](const char* what) {
    return std::string(what) + ": " + std::strerror(errno);
  };
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0) << fail("socket");
  const int one = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr),
            0)
      << fail("bind");
  ASSERT_EQ(::listen(listener, 8), 0) << fail("listen");
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len),
            0);
  const uint16_t server_port = ntohs(addr.sin_port);
  const uint16_t client_port = static_cast<uint16_t>(test::FreeLoopbackPort());
  for (int i = 0; i < kConnections; ++i) {
    const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(c, 0) << fail("socket");
    ::setsockopt(c, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in local{};
    local.sin_family = AF_INET;
    local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    local.sin_port = htons(client_port);
    ASSERT_EQ(::bind(c, reinterpret_cast<sockaddr*>(&local), sizeof local), 0)
        << fail("bind the client port") << " (connection " << i << ")";
    ASSERT_EQ(::connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0)
        << fail("connect") << " (connection " << i << ")";
    const int s = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    ASSERT_GE(s, 0) << fail("accept");
    std::string buf(kRequest, 'q');
    ASSERT_EQ(::send(c, buf.data(), kRequest, 0), ssize_t(kRequest));
    ASSERT_EQ(::recv(s, buf.data(), kRequest, MSG_WAITALL), ssize_t(kRequest));
    ASSERT_EQ(::send(s, buf.data(), kReply, 0), ssize_t(kReply));
    ::close(s);  // server first: TIME_WAIT stays on the server side
    ASSERT_EQ(::recv(c, buf.data(), kReply, MSG_WAITALL), ssize_t(kReply));
    ASSERT_EQ(::recv(c, buf.data(), 1, 0), 0);  // the server's FIN
    ::close(c);
  }
  ::close(listener);

  Totals t = Collect(server_port, kConnections);
  EXPECT_EQ(t.client_opened, uint64_t(kConnections));
  EXPECT_EQ(t.server_opened, uint64_t(kConnections));
  EXPECT_EQ(t.client_closed, uint64_t(kConnections));
  EXPECT_EQ(t.server_closed, uint64_t(kConnections));
  EXPECT_EQ(t.client_sent, kConnections * kRequest);
  EXPECT_EQ(t.server_sent, kConnections * kReply);
}

// Bytes of a connection that stays open and goes idle: counted in the
// socket first, they must all be in the next drain, not only once the
// socket is busy again or closes.
TEST_P(TcpFlowProbeTest, AnIdleOpenConnectionsBytesAreInTheNextDrain) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr),
            0);
  ASSERT_EQ(::listen(listener, 1), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len),
            0);
  const uint16_t port = ntohs(addr.sin_port);
  const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_EQ(::connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const int s = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(s, 0);
  // Several writes within one kernel tick: the first moves to the flow at
  // once, the rest wait in the socket.
  std::string buf(1000, 'w');
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(::send(c, buf.data(), buf.size(), 0), ssize_t(buf.size()));
  }
  std::string in(5000, '\0');
  ASSERT_EQ(::recv(s, in.data(), in.size(), MSG_WAITALL), 5000);
  auto flows = probe_->Drain();
  ASSERT_TRUE(flows.ok()) << flows.status();
  uint64_t sent = 0, received = 0;
  for (const TcpFlow& f : *flows) {
    if (f.dport == port) sent += f.bytes_sent;
    if (f.sport == port) received += f.bytes_received;
    if (f.dport == port || f.sport == port) {
      EXPECT_FALSE(f.closed);
    }
  }
  EXPECT_EQ(sent, 5000u);
  EXPECT_EQ(received, 5000u);
  ::close(s);
  ::close(c);
  ::close(listener);
}

TEST_P(TcpFlowProbeTest, ClosedSocketsLeaveTheTable) {
  test::LoopbackTraffic traffic("ipv4");
  ASSERT_TRUE(traffic.ok()) << traffic.error();
  ASSERT_TRUE(traffic.Run(50, 1000, 1000)) << traffic.error();
  Collect(traffic.port(), 50);
  auto again = probe_->Drain();
  ASSERT_TRUE(again.ok());
  for (const TcpFlow& f : *again) {
    EXPECT_FALSE(f.dport == traffic.port() || f.sport == traffic.port())
        << "closed flow reported twice: " << f.sport << "->" << f.dport;
  }
}

// Connections made while a probe is attaching: a flow reported as opened
// had every byte of its life counted, however its connection and the
// attachment interleaved (a socket that predates the probe is reported
// with opened false). Each attachment races a stream of short connections.
TEST_P(TcpFlowProbeTest, ASocketReportedOpenedHasAllItsBytes) {
  constexpr size_t kRequest = 1000, kReply = 300;
  probe_.reset();
  test::LoopbackTraffic traffic("ipv4");
  ASSERT_TRUE(traffic.ok()) << traffic.error();
  std::atomic<bool> stop{false};
  std::atomic<bool> failed{false};
  std::thread clients([&] {
    while (!stop && !failed) failed = !traffic.Run(20, kRequest, kReply);
  });
  int whole = 0;
  for (int attach = 0; attach < 12 && !failed; ++attach) {
    auto probe = FlowProbe::Open(Options());
    ASSERT_TRUE(probe.ok()) << probe.status();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto flows = (*probe)->Drain();
    ASSERT_TRUE(flows.ok()) << flows.status();
    for (const TcpFlow& f : *flows) {
      if (!f.opened || !f.closed) continue;
      if (f.dport == traffic.port() && f.role == FlowRole::kActive) {
        ++whole;
        EXPECT_EQ(f.bytes_sent, kRequest) << "attachment " << attach;
        EXPECT_EQ(f.bytes_received, kReply) << "attachment " << attach;
      } else if (f.sport == traffic.port() && f.role == FlowRole::kPassive) {
        EXPECT_EQ(f.bytes_received, kRequest) << "attachment " << attach;
        EXPECT_EQ(f.bytes_sent, kReply) << "attachment " << attach;
      }
    }
  }
  stop = true;
  clients.join();
  EXPECT_FALSE(failed) << traffic.error();
  EXPECT_GT(whole, 0) << "no connection was seen whole";
}

INSTANTIATE_TEST_SUITE_P(Programs, TcpFlowProbeTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "SocketStorage" : "AddressHash";
                         });

}  // namespace
}  // namespace lens
