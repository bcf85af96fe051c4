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

namespace lens {
namespace {

class TcpFlowProbeTest : public ::testing::TestWithParam<bool> {
 protected:
  static void SetUpTestSuite() { skip_reason_ = test::EbpfSkipReason(); }

  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    auto probe = FlowProbe::Open(Options());
    if (probe.status().code() == StatusCode::kUnimplemented) {
      GTEST_SKIP() << probe.status();  // built with LENS_BUILD_BPF=OFF
    }
    ASSERT_TRUE(probe.ok()) << probe.status();
    probe_ = std::move(*probe);
  }

  // The options of this instance's set of programs.
  static FlowProbeOptions Options() {
    FlowProbeOptions options;
    options.socket_storage = GetParam();
    return options;
  }

  // Drains until `done` holds for the totals of flows touching `port`, or
  // 5 s pass; returns the totals by local port role.
  struct Totals {
    uint64_t client_sent = 0, client_received = 0;
    uint64_t server_sent = 0, server_received = 0;
    uint64_t client_opened = 0, server_opened = 0;
    uint64_t client_closed = 0, server_closed = 0;
    uint64_t rtt_samples = 0, segments_sent = 0;
    uint64_t client_with_pid = 0;
  };
  Totals Collect(uint16_t port, int expect_connections,
                 const std::string& loopback = "127.0.0.1") {
    Totals t;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    do {
      auto flows = probe_->Drain();
      EXPECT_TRUE(flows.ok()) << flows.status();
      if (!flows.ok()) break;
      for (const TcpFlow& f : *flows) {
        const bool mine = f.dport == port || f.sport == port;
        if (mine) {
          EXPECT_EQ(f.saddr.ToString(), loopback) << f.sport << "->" << f.dport;
          EXPECT_EQ(f.daddr.ToString(), loopback) << f.sport << "->" << f.dport;
        }
        if (f.dport == port) {
          t.client_sent += f.bytes_sent;
          t.client_received += f.bytes_received;
          t.client_opened += f.opened && f.role == FlowRole::kActive;
          t.client_closed += f.closed;
          t.client_with_pid += f.pid == static_cast<uint32_t>(::getpid());
        } else if (f.sport == port) {
          t.server_sent += f.bytes_sent;
          t.server_received += f.bytes_received;
          t.server_opened += f.opened && f.role == FlowRole::kPassive;
          t.server_closed += f.closed;
        } else {
          continue;
        }
        t.rtt_samples += f.rtt_count;
        t.segments_sent += f.segments_sent;
      }
      if (t.client_closed >= static_cast<uint64_t>(expect_connections) &&
          t.server_closed >= static_cast<uint64_t>(expect_connections)) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (std::chrono::steady_clock::now() < deadline);
    return t;
  }

  void ExpectExact(const char* family, int connections, size_t request_bytes,
                   size_t reply_bytes) {
    test::LoopbackTraffic traffic(family);
    ASSERT_TRUE(traffic.ok()) << traffic.error();
    ASSERT_TRUE(traffic.Run(connections, request_bytes, reply_bytes))
        << traffic.error();
    Totals t = Collect(traffic.port(), connections,
                       std::string(family) == "ipv6" ? "::1" : "127.0.0.1");
    const uint64_t up = uint64_t(connections) * request_bytes;
    const uint64_t down = uint64_t(connections) * reply_bytes;
    EXPECT_EQ(t.client_sent, up);
    EXPECT_EQ(t.server_received, up);
    EXPECT_EQ(t.server_sent, down);
    EXPECT_EQ(t.client_received, down);
    EXPECT_EQ(t.client_opened, uint64_t(connections));
    EXPECT_EQ(t.server_opened, uint64_t(connections));
    EXPECT_EQ(t.client_closed, uint64_t(connections));
    EXPECT_EQ(t.server_closed, uint64_t(connections));
    EXPECT_EQ(t.client_with_pid, uint64_t(connections));
    EXPECT_GT(t.rtt_samples, 0u);
    EXPECT_GT(t.segments_sent, 0u);
  }

  static std::string skip_reason_;
  std::unique_ptr<FlowProbe> probe_;
};
std::string TcpFlowProbeTest::skip_reason_;

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

TEST_P(TcpFlowProbeTest, ReportsItsOwnCost) {
  // Statistics on for the probe's whole life.
  FlowProbeOptions options = Options();
  options.kernel_stats_window = options.kernel_stats_period;
  auto probe = FlowProbe::Open(options);
  ASSERT_TRUE(probe.ok()) << probe.status();
  probe_ = std::move(*probe);
  test::LoopbackTraffic traffic("ipv4");
  ASSERT_TRUE(traffic.ok()) << traffic.error();
  ASSERT_TRUE(traffic.Run(5, 10'000, 10'000)) << traffic.error();
  ASSERT_TRUE(probe_->Drain().ok());
  FlowProbeStats stats = probe_->Stats();
  EXPECT_EQ(stats.byte_source, "tracepoint");
  if (GetParam()) {  // where the kernel runs it
    EXPECT_TRUE(stats.socket_entries == "socket-storage" ||
                stats.socket_entries == "address-hash")
        << stats.socket_entries;
    // Socket storage passed the socket iterator's start-up self-test, or the
    // reason it is not used names what the kernel lacks (never the test).
    EXPECT_EQ(stats.socket_entries_reason.empty(),
              stats.socket_entries == "socket-storage")
        << stats.socket_entries_reason;
    EXPECT_EQ(stats.socket_entries_reason.find("self-test"), std::string::npos)
        << stats.socket_entries_reason;
  } else {
    EXPECT_EQ(stats.socket_entries, "address-hash");
    EXPECT_EQ(stats.socket_entries_reason, "FlowProbeOptions");
  }
  EXPECT_EQ(stats.map_capacity, 65536u);
  EXPECT_GE(stats.active_opens, 5u);
  EXPECT_GE(stats.passive_opens, 5u);
  std::map<std::string, FlowProgramStats> by_name;
  for (const auto& p : stats.programs) by_name[p.name] = p;
  for (const char* name : {"sock/inet_sock_set_state", "sock/sock_send_length",
                           "sock/sock_recv_length"}) {
    ASSERT_TRUE(by_name.count(name)) << name;
    EXPECT_TRUE(by_name[name].attached) << name;
    EXPECT_GT(by_name[name].run_count, 0u) << name;
    EXPECT_GT(by_name[name].run_time_ns, 0u) << name;
  }
  EXPECT_EQ(by_name.count("kprobe/tcp_sendmsg"), 0u);  // not loaded here
  EXPECT_EQ(by_name.count("tcp/tcp_probe"), 0u);       // rtt_per_segment off
  EXPECT_GT(stats.kernel_stats_sampled_ns, 0u);
}

// The host-wide BPF statistics are on only in windows: traffic outside them
// is not counted, traffic inside is, and the windows' length is reported.
TEST_P(TcpFlowProbeTest, KernelStatisticsOnlyInWindows) {
  // 1 s off, 1 s on. The test follows the windows through what Stats()
  // reports, not the clock, so a slow machine only makes it wait longer.
  FlowProbeOptions options = Options();
  options.kernel_stats_window = std::chrono::milliseconds(1000);
  options.kernel_stats_period = std::chrono::milliseconds(2000);
  auto probe = FlowProbe::Open(options);
  ASSERT_TRUE(probe.ok()) << probe.status();
  probe_ = std::move(*probe);
  struct Reading {
    uint64_t sampled_ns = 0, send_runs = 0;
  };
  auto read = [&] {
    Reading r;
    FlowProbeStats s = probe_->Stats();
    r.sampled_ns = s.kernel_stats_sampled_ns;
    for (const auto& p : s.programs) {
      if (p.name == "sock/sock_send_length") r.send_runs = p.run_count;
    }
    return r;
  };
  test::LoopbackTraffic traffic("ipv4");
  ASSERT_TRUE(traffic.ok()) << traffic.error();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto wait_for = [&](auto done) {
    while (!done(read())) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  };

  // Before the first window: traffic, and nothing measured.
  ASSERT_TRUE(traffic.Run(20, 1000, 1000)) << traffic.error();
  Reading before = read();
  if (before.sampled_ns == 0) {
    EXPECT_EQ(before.send_runs, 0u);
  }

  // In a window: traffic is counted.
  ASSERT_TRUE(wait_for([&](const Reading& r) {
    return r.sampled_ns > before.sampled_ns;
  })) << "no statistics window opened";
  const Reading opened = read();
  ASSERT_TRUE(traffic.Run(20, 1000, 1000)) << traffic.error();
  EXPECT_GT(read().send_runs, opened.send_runs);

  // Between windows: the sampled time stands still and so do the counts.
  Reading last = read();
  ASSERT_TRUE(wait_for([&](const Reading& r) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    Reading again = read();
    const bool still = again.sampled_ns == r.sampled_ns;
    last = again;
    return still;
  })) << "the statistics window never closed";
  ASSERT_TRUE(traffic.Run(20, 1000, 1000)) << traffic.error();
  const Reading after = read();
  if (after.sampled_ns == last.sampled_ns) {  // still between windows
    EXPECT_EQ(after.send_runs, last.send_runs);
  }
  // One or two windows of 1 s have closed by now.
  EXPECT_GE(after.sampled_ns, 900'000'000u);
  EXPECT_LE(after.sampled_ns, 2'500'000'000u);
}

TEST(FlowProbeOptionsTest, RejectsAWindowLongerThanItsPeriod) {
  FlowProbeOptions options;
  options.kernel_stats_window = std::chrono::seconds(30);
  auto probe = FlowProbe::Open(options);
  if (probe.status().code() == StatusCode::kUnimplemented) {
    GTEST_SKIP() << probe.status();
  }
  EXPECT_EQ(probe.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(probe.status().message().find("kernel_stats_window"),
            std::string::npos);
}

TEST_P(TcpFlowProbeTest, RttPerSegmentFromTcpProbe) {
  FlowProbeOptions options = Options();
  options.rtt_per_segment = true;
  options.kernel_stats_window = options.kernel_stats_period;  // run counts
  auto probe = FlowProbe::Open(options);
  ASSERT_TRUE(probe.ok()) << probe.status();
  probe_ = std::move(*probe);
  ExpectExact("ipv4", 10, 200'000, 1'000);
  bool attached = false;
  for (const auto& p : probe_->Stats().programs) {
    if (p.name == "tcp/tcp_probe") attached = p.attached && p.run_count > 0;
  }
  EXPECT_TRUE(attached);
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
