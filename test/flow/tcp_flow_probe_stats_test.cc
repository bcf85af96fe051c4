// The flow probe's account of itself on this machine's kernel: its programs'
// run time and counts, kernel statistics only inside their windows, RTT per
// segment. Needs root, like tcp_flow_probe_test.cc (which instantiates the
// suite for both sets of programs).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "lens/flow.h"
#include "loopback_traffic.h"
#include "tcp_flow_probe_fixture.h"

namespace lens {
namespace {

using test::TcpFlowProbeTest;

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

}  // namespace
}  // namespace lens
