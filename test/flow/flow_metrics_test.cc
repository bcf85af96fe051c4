#include "flow/flow_metrics.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "command.h"
#include "flow/attribution.h"

namespace lens::flow {
namespace {

using Clock = FlowMetrics::Clock;

TcpFlow Flow(const char* daddr, FlowClass cls, FlowDirection dir, uint64_t sent,
             uint64_t received) {
  TcpFlow f;
  f.saddr = *IpAddress::Parse("10.0.0.5");
  f.daddr = *IpAddress::Parse(daddr);
  f.remote_class = cls;
  f.direction = dir;
  f.bytes_sent = sent;
  f.bytes_received = received;
  return f;
}

// The value of the sample line that starts with `series` (name + labels).
double Value(const std::string& text, const std::string& series) {
  size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

TEST(FlowMetricsTest, CountsPerClassDirectionAndWorkload) {
  FlowMetrics m(20, false);
  TcpFlow a =
      Flow("10.96.0.1", FlowClass::kK8sSvc, FlowDirection::kEgress, 100, 40);
  a.opened = true;
  a.retransmits = 2;
  TcpFlow b = a;
  b.pod_namespace = "ml";
  b.pod_name = "trainer-0";
  b.bytes_sent = 7;
  Clock::time_point t0 = Clock::now();
  m.Update({a, b}, t0);
  m.Update({a}, t0 + std::chrono::seconds(5));
  std::string out;
  m.Render(&out);
  const std::string host =
      "{class=\"k8s_svc\",direction=\"egress\",workload=\"host\"}";
  EXPECT_EQ(Value(out, "lens_tcp_flow_bytes_sent_total" + host), 200);
  EXPECT_EQ(Value(out, "lens_tcp_flow_bytes_received_total" + host), 80);
  EXPECT_EQ(Value(out, "lens_tcp_flow_connections_total" + host), 2);
  EXPECT_EQ(Value(out, "lens_tcp_flow_retransmits_total" + host), 4);
  EXPECT_EQ(Value(out,
                  "lens_tcp_flow_bytes_sent_total{class=\"k8s_svc\","
                  "direction=\"egress\",workload=\"ml/trainer-0\"}"),
            7);
  EXPECT_EQ(out.find("primus_lens_network"), std::string::npos);
}

TEST(FlowMetricsTest, RttHistogramFromLog2Buckets) {
  FlowMetrics m(20, false);
  TcpFlow f =
      Flow("127.0.0.1", FlowClass::kLocalhost, FlowDirection::kEgress, 1, 1);
  f.rtt_histogram[3] = 5;   // 8-15 us
  f.rtt_histogram[10] = 1;  // 1024-2047 us
  f.rtt_count = 6;
  f.rtt_sum_us = 5 * 10 + 1500;
  m.Update({f}, Clock::now());
  std::string out;
  m.Render(&out);
  const std::string l = "class=\"localhost\",direction=\"egress\"";
  EXPECT_EQ(
      Value(out, "lens_tcp_flow_rtt_microseconds_bucket{" + l + ",le=\"8\"}"),
      0);
  EXPECT_EQ(
      Value(out, "lens_tcp_flow_rtt_microseconds_bucket{" + l + ",le=\"16\"}"),
      5);
  EXPECT_EQ(Value(out, "lens_tcp_flow_rtt_microseconds_bucket{" + l +
                           ",le=\"2048\"}"),
            6);
  EXPECT_EQ(Value(out, "lens_tcp_flow_rtt_microseconds_bucket{" + l +
                           ",le=\"+Inf\"}"),
            6);
  EXPECT_EQ(Value(out, "lens_tcp_flow_rtt_microseconds_sum{" + l + "}"), 1550);
  EXPECT_EQ(Value(out, "lens_tcp_flow_rtt_microseconds_count{" + l + "}"), 6);
}

TEST(FlowMetricsTest, TopRemotesStayMonotonicAndTheRestIsOther) {
  FlowMetrics m(2, false);
  auto ext = [](const char* addr, uint64_t bytes) {
    return Flow(addr, FlowClass::kExternal, FlowDirection::kEgress, bytes, 0);
  };
  Clock::time_point t = Clock::now();
  m.Update({ext("1.1.1.1", 500), ext("2.2.2.2", 300), ext("3.3.3.3", 100)}, t);
  // A bigger newcomer does not take an occupied slot: 1.1.1.1 and 2.2.2.2
  // keep theirs, and their counters only grow.
  m.Update({ext("4.4.4.4", 9000), ext("1.1.1.1", 1)},
           t + std::chrono::seconds(5));
  std::string out;
  m.Render(&out);
  auto remote = [&](const char* addr) {
    return Value(
        out, std::string("lens_tcp_flow_remote_bytes_total{remote=\"") + addr +
                 "\",class=\"external\",direction=\"egress\"}");
  };
  EXPECT_EQ(remote("1.1.1.1"), 501);
  EXPECT_EQ(remote("2.2.2.2"), 300);
  EXPECT_EQ(remote("3.3.3.3"), -1);
  EXPECT_EQ(remote("4.4.4.4"), -1);
  EXPECT_EQ(remote("other"), 9100);
  // Ten minutes later 2.2.2.2 has gone idle: its slot frees for the busiest
  // newcomer.
  auto later = t + FlowMetrics::kRemoteIdle + std::chrono::seconds(10);
  m.Update({ext("1.1.1.1", 1), ext("4.4.4.4", 50), ext("5.5.5.5", 10)}, later);
  out.clear();
  m.Render(&out);
  EXPECT_EQ(remote("1.1.1.1"), 502);
  EXPECT_EQ(remote("2.2.2.2"), -1);
  EXPECT_EQ(remote("4.4.4.4"), 50);
  EXPECT_EQ(remote("other"), 9110);
}

TEST(FlowMetricsTest, CompatNamesOnlyWhenAskedAndLabelsEscaped) {
  FlowMetrics m(20, true);
  TcpFlow f =
      Flow("10.244.1.1", FlowClass::kK8sPod, FlowDirection::kIngress, 10, 20);
  f.pod_namespace = "ml";
  f.pod_name = "we\"ird";
  f.rtt_count = 1;
  f.rtt_sum_us = 30;
  f.rtt_histogram[4] = 1;
  m.Update({f}, Clock::now());
  std::string out;
  m.Render(&out);
  EXPECT_EQ(
      Value(out, "primus_lens_network_tcp_flow_ingress{type=\"k8s_pod\"}"), 30);
  EXPECT_EQ(
      Value(out,
            "primus_lens_network_k8s_tcp_flow{namespace=\"ml\",pod=\"we\\\""
            "ird\",type=\"k8s_pod\",direction=\"ingress\"}"),
      30);
  EXPECT_EQ(
      Value(out, "primus_lens_network_tcp_flow_rtt_count{type=\"k8s_pod\"}"),
      1);
  EXPECT_EQ(out.find("primus_lens_network_tcp_flow_egress"), std::string::npos);
}

TEST(AttributionTest, FindsTheContainerOfAProcessOnCgroupV1AndV2) {
  const std::string proc = std::string(LENS_FIXTURES_DIR) + "/flow/proc";
  ContainerRecord c1, c2;
  c1.container_id =
      "3f2a1c9b8e7d6c5b4a39281716f5e4d3c2b1a09f8e7d6c5b4a3928171605f4e3";
  c1.pod_namespace = "ml";
  c1.pod_name = "trainer-0";
  c2.container_id =
      "9e8d7c6b5a493827160f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69";
  c2.pod_namespace = "kube-system";
  c2.pod_name = "coredns-1";
  int calls = 0;
  Attribution a(
      [&] {
        ++calls;
        return std::vector<ContainerRecord>{c1, c2};
      },
      proc);
  a.Refresh();
  TcpFlow v1, v2, host, unknown;
  v1.pid = 4242;
  v2.pid = 4343;
  host.pid = 1;  // no cgroup file in the fixture
  a.Attribute(&v1);
  a.Attribute(&v2);
  a.Attribute(&host);
  a.Attribute(&unknown);  // pid 0
  EXPECT_EQ(v1.pod_name, "trainer-0");
  EXPECT_EQ(v1.container_id, c1.container_id);
  EXPECT_EQ(v2.pod_namespace, "kube-system");
  EXPECT_EQ(v2.pod_name, "coredns-1");
  EXPECT_TRUE(host.container_id.empty());
  EXPECT_TRUE(unknown.container_id.empty());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(WorkloadOf(v1), "ml/trainer-0");
  EXPECT_EQ(WorkloadOf(host), "host");
}

// By the socket's cgroup v2 id alone (no pid: an accepted socket that has
// not moved data): the container's cgroup directory is found through
// mountinfo and its init process's "0::" path, and its inode is the id.
TEST(AttributionTest, FindsTheContainerByTheSocketsCgroupId) {
  const std::string root = ::testing::TempDir() + "/attr-cgroup";
  const std::string cid =
      "9e8d7c6b5a493827160f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69";
  const std::string path =
      "/kubepods.slice/kubepods-pod1.slice/cri-containerd-" + cid + ".scope";
  ASSERT_EQ(std::system(("rm -rf " + root + " && mkdir -p " + root + "/cg" +
                         path + " " + root + "/proc/self " + root + "/proc/77")
                            .c_str()),
            0);
  ASSERT_TRUE(
      test::WriteFile(root + "/proc/77/cgroup", "0::" + path + "\n").ok());
  ASSERT_TRUE(test::WriteFile(root + "/proc/self/mountinfo",
                              "25 1 0:23 / /sys rw shared:7 - sysfs sysfs rw\n"
                              "35 25 0:30 / " +
                                  root +
                                  "/cg rw,nosuid shared:10 - cgroup2 "
                                  "cgroup2 rw,nsdelegate\n")
                  .ok());
  struct stat st;
  ASSERT_EQ(::stat((root + "/cg" + path).c_str(), &st), 0);
  ContainerRecord c;
  c.container_id = cid;
  c.pod_namespace = "ml";
  c.pod_name = "server-0";
  c.pid = 77;
  Attribution a([&] { return std::vector<ContainerRecord>{c}; },
                root + "/proc");
  a.Refresh();
  TcpFlow f;
  f.cgroup_id = st.st_ino;
  a.Attribute(&f);
  EXPECT_EQ(f.pod_name, "server-0");
  TcpFlow root_cgroup;
  root_cgroup.cgroup_id = 1;
  a.Attribute(&root_cgroup);
  EXPECT_TRUE(root_cgroup.pod_name.empty());
}

}  // namespace
}  // namespace lens::flow
