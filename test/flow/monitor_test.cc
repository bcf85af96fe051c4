// FlowMonitor and WatchFlows' pieces over a replayed flow source.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <deque>
#include <string>
#include <thread>

#include "flow/flow_merge.h"
#include "lens/flow.h"

namespace lens {
namespace {

const std::string kFixtures = std::string(LENS_FIXTURES_DIR) + "/flow";

// Replays scripted drains, then empty ones.
class ReplaySource : public FlowSource {
 public:
  explicit ReplaySource(std::deque<StatusOr<std::vector<TcpFlow>>> drains)
      : drains_(std::move(drains)) {}
  StatusOr<std::vector<TcpFlow>> Drain() override {
    if (drains_.empty()) return std::vector<TcpFlow>{};
    auto next = std::move(drains_.front());
    drains_.pop_front();
    return next;
  }

 private:
  std::deque<StatusOr<std::vector<TcpFlow>>> drains_;
};

TcpFlow Flow(const char* s, uint16_t sport, const char* d, uint16_t dport,
             FlowRole role) {
  TcpFlow f;
  f.saddr = *IpAddress::Parse(s);
  f.sport = sport;
  f.daddr = *IpAddress::Parse(d);
  f.dport = dport;
  f.role = role;
  return f;
}

FlowMonitorOptions Options() {
  FlowMonitorOptions o;
  auto policy = LoadFlowPolicy(kFixtures + "/policy.yaml");
  EXPECT_TRUE(policy.ok());
  o.policy = *policy;
  o.proc_root = kFixtures + "/proc";
  return o;
}

TEST(FlowMonitorTest, ClassifiesDirectionsAndCountsEachDrain) {
  TcpFlow out = Flow("10.0.0.5", 45678, "10.96.0.1", 443, FlowRole::kActive);
  out.bytes_sent = 1000;
  out.opened = true;
  // Older than the probes: the local port 2024 is a listener -> ingress.
  TcpFlow in = Flow("10.0.0.5", 2024, "10.0.0.9", 51000, FlowRole::kUnknown);
  in.bytes_received = 64;
  // Older than the probes, local port not listening -> egress.
  TcpFlow old = Flow("10.0.0.5", 45000, "8.8.8.8", 443, FlowRole::kUnknown);
  old.bytes_sent = 5;
  std::deque<StatusOr<std::vector<TcpFlow>>> drains;
  drains.push_back(std::vector<TcpFlow>{out, in, old});
  drains.push_back(UnavailableError("replayed failure"));
  drains.push_back(std::vector<TcpFlow>{out});
  auto m = FlowMonitor::Create(
      std::make_unique<ReplaySource>(std::move(drains)), Options());
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE((*m)->DrainOnce().ok());
  auto recent = (*m)->RecentFlows();
  ASSERT_EQ(recent.size(), 3u);
  EXPECT_EQ(recent[0].remote_class, FlowClass::kK8sSvc);
  EXPECT_EQ(recent[0].direction, FlowDirection::kEgress);
  EXPECT_EQ(recent[1].remote_class, FlowClass::kInternal);
  EXPECT_EQ(recent[1].direction, FlowDirection::kIngress);
  EXPECT_EQ(recent[2].remote_class, FlowClass::kExternal);
  EXPECT_EQ(recent[2].direction, FlowDirection::kEgress);
  EXPECT_FALSE((*m)->DrainOnce().ok());  // counted, not fatal
  ASSERT_TRUE((*m)->DrainOnce().ok());
  const std::string text = (*m)->RenderMetrics();
  EXPECT_NE(text.find("lens_tcp_flow_bytes_sent_total{class=\"k8s_svc\","
                      "direction=\"egress\",workload=\"host\"} 2000"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("lens_tcp_flow_connections_total{class=\"k8s_svc\","
                      "direction=\"egress\",workload=\"host\"} 2"),
            std::string::npos);
  EXPECT_NE(text.find("lens_netflow_drain_errors_total 1"), std::string::npos);
  // A replay source is not the probe: no probe cost families.
  EXPECT_EQ(text.find("lens_netflow_bpf_program_runs_total"),
            std::string::npos);
}

TEST(FlowMonitorTest, BackgroundLoopDrainsAndStopDrainsOnceMore) {
  TcpFlow f = Flow("10.0.0.5", 45678, "10.96.0.1", 443, FlowRole::kActive);
  f.bytes_sent = 1;
  std::deque<StatusOr<std::vector<TcpFlow>>> drains;
  for (int i = 0; i < 100; ++i) drains.push_back(std::vector<TcpFlow>{f});
  FlowMonitorOptions o = Options();
  o.drain_interval = std::chrono::milliseconds(10);
  auto m =
      FlowMonitor::Create(std::make_unique<ReplaySource>(std::move(drains)), o);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE((*m)->Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string during = (*m)->RenderMetrics();  // concurrent with drains
  (*m)->Stop();
  const std::string text = (*m)->RenderMetrics();
  const std::string series =
      "lens_tcp_flow_bytes_sent_total{class=\"k8s_svc\",direction=\"egress\","
      "workload=\"host\"} ";
  size_t at = text.find(series);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_GE(std::stod(text.substr(at + series.size())), 5);
  EXPECT_FALSE(during.empty());
}

TEST(FlowMonitorTest, RejectsAZeroInterval) {
  FlowMonitorOptions o = Options();
  o.drain_interval = std::chrono::milliseconds(0);
  auto m =
      FlowMonitor::Create(std::make_unique<ReplaySource>(
                              std::deque<StatusOr<std::vector<TcpFlow>>>{}),
                          o);
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
}

TEST(FlowMergeTest, AddsCountersAndKeepsTheFirstOwner) {
  TcpFlow a = Flow("127.0.0.1", 1, "127.0.0.1", 2, FlowRole::kActive);
  a.bytes_sent = 10;
  a.rtt_count = 2;
  a.rtt_sum_us = 30;
  a.rtt_min_us = 10;
  a.rtt_max_us = 20;
  a.opened = true;
  a.pid = 7;
  a.comm = "first";
  TcpFlow b = a;
  b.bytes_sent = 5;
  b.rtt_count = 1;
  b.rtt_sum_us = 5;
  b.rtt_min_us = 5;
  b.rtt_max_us = 5;
  b.opened = false;
  b.closed = true;
  b.pid = 8;
  b.comm = "second";
  EXPECT_EQ(flow::FlowIdentity(a), flow::FlowIdentity(b));
  flow::MergeFlow(b, &a);
  EXPECT_EQ(a.bytes_sent, 15u);
  EXPECT_EQ(a.rtt_count, 3u);
  EXPECT_EQ(a.rtt_min_us, 5u);
  EXPECT_EQ(a.rtt_max_us, 20u);
  EXPECT_TRUE(a.opened && a.closed);
  EXPECT_EQ(a.pid, 7u);
  EXPECT_EQ(a.comm, "first");
  TcpFlow other = b;
  other.sport = 3;
  EXPECT_NE(flow::FlowIdentity(a), flow::FlowIdentity(other));
  // The same 4-tuple opened again later is another connection.
  TcpFlow reused = b;
  reused.open_time_ns = a.open_time_ns + 1;
  EXPECT_NE(flow::FlowIdentity(a), flow::FlowIdentity(reused));
}

TEST(FlowsJsonTest, DocumentedFieldsOnlyWhereKnown) {
  TcpFlow a = Flow("::ffff:127.0.0.1", 40000, "::ffff:127.0.0.1", 8990,
                   FlowRole::kActive);
  a.bytes_sent = 123;
  a.bytes_received = 45;
  a.rtt_count = 4;
  a.rtt_sum_us = 100;
  a.rtt_min_us = 20;
  a.rtt_max_us = 30;
  a.pid = 99;
  a.comm = "curl";
  a.cgroup_id = 1234;
  a.remote_class = FlowClass::kLocalhost;
  a.direction = FlowDirection::kEgress;
  a.opened = true;
  TcpFlow b = Flow("fd00::5", 2024, "fd00::9", 5000, FlowRole::kUnknown);
  b.container_id = "abc";
  b.pod_namespace = "ml";
  b.pod_name = "p";
  rapidjson::Document doc;
  doc.Parse(FlowsJson({a, b}).c_str());
  ASSERT_FALSE(doc.HasParseError());
  const auto& flows = doc["flows"];
  ASSERT_EQ(flows.Size(), 2u);
  const auto& j = flows[0];
  EXPECT_STREQ(j["saddr"].GetString(), "127.0.0.1");  // unmapped
  EXPECT_EQ(j["sport"].GetUint(), 40000u);
  EXPECT_EQ(j["dport"].GetUint(), 8990u);
  EXPECT_EQ(j["bytes_sent"].GetUint64(), 123u);
  EXPECT_EQ(j["bytes_received"].GetUint64(), 45u);
  EXPECT_DOUBLE_EQ(j["rtt_us"].GetDouble(), 25.0);
  EXPECT_STREQ(j["class"].GetString(), "localhost");
  EXPECT_STREQ(j["direction"].GetString(), "egress");
  EXPECT_STREQ(j["role"].GetString(), "active");
  EXPECT_TRUE(j["opened"].GetBool());
  EXPECT_FALSE(j["closed"].GetBool());
  EXPECT_EQ(j["pid"].GetUint(), 99u);
  EXPECT_STREQ(j["comm"].GetString(), "curl");
  EXPECT_EQ(j["cgroup_id"].GetUint64(), 1234u);
  EXPECT_FALSE(j.HasMember("container_id"));
  const auto& k = flows[1];
  EXPECT_TRUE(k["rtt_us"].IsNull());
  EXPECT_FALSE(k.HasMember("rtt_min_us"));
  EXPECT_FALSE(k.HasMember("pid"));
  EXPECT_FALSE(k.HasMember("cgroup_id"));
  EXPECT_STREQ(k["saddr"].GetString(), "fd00::5");
  EXPECT_STREQ(k["pod_name"].GetString(), "p");
  EXPECT_STREQ(k["role"].GetString(), "unknown");
}

}  // namespace
}  // namespace lens
