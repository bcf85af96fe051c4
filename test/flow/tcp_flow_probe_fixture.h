// The flow probe tests' fixture: a FlowProbe with one set of programs per
// parameter (true: socket storage, false: address hash), and the totals of the
// loopback flows of one port. Shared by the probe's test files; the suite is
// instantiated once, in tcp_flow_probe_test.cc.
#ifndef LENS_TEST_FLOW_TCP_FLOW_PROBE_FIXTURE_H_
#define LENS_TEST_FLOW_TCP_FLOW_PROBE_FIXTURE_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "ebpf_env.h"
#include "lens/flow.h"
#include "loopback_traffic.h"

namespace lens::test {

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

  inline static std::string skip_reason_;
  std::unique_ptr<FlowProbe> probe_;
};

}  // namespace lens::test

#endif  // LENS_TEST_FLOW_TCP_FLOW_PROBE_FIXTURE_H_
