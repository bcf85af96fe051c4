// Flows attributed to pods for real: a container under a private containerd
// keeps a TCP connection open inside its own network namespace; the eBPF
// probe sees it and the monitor, with the container tracker, names its pod.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "../containers/containerd_env.h"
#include "command.h"
#include "ebpf_env.h"
#include "lens/containers.h"
#include "lens/flow.h"

namespace lens {
namespace {

std::string g_ebpf_skip;

TEST(FlowAttributionTest, NamesThePodOfAContainersConnection) {
  if (!g_ebpf_skip.empty()) GTEST_SKIP() << g_ebpf_skip;
  if (!test::g_containerd) GTEST_SKIP() << test::g_skip;
  ContainerTrackerOptions to;
  to.node = "flow-node";
  to.containerd_socket = test::g_containerd->socket_path();
  to.pod_resources_socket = "";
  ContainerTracker tracker(to);
  ASSERT_TRUE(tracker.Start().ok());

  auto probe = FlowProbe::Open();
  ASSERT_TRUE(probe.ok()) << probe.status();
  FlowMonitorOptions mo;
  mo.containers = &tracker;
  auto monitor = FlowMonitor::Create(std::move(*probe), mo);
  ASSERT_TRUE(monitor.ok()) << monitor.status();

  // A listener and a client that writes a line every 50 ms, both alive for
  // the test, on the container's own loopback.
  test::ContainerSpec spec;
  spec.id = "flow-attribution-0";
  spec.image = test::kBusyboxImage;
  spec.args = {
      "sh", "-c",
      "sleep 3600 | nc -l -p 9000 >/dev/null & sleep 0.5; "
      "while true; do echo hello; sleep 0.05; done | nc 127.0.0.1 9000"};
  spec.labels = {{"io.kubernetes.pod.name", "netflow-pod"},
                 {"io.kubernetes.pod.namespace", "ml"},
                 {"io.kubernetes.pod.uid", "uid-netflow-pod"},
                 {"io.kubernetes.container.name", "talker"}};
  ASSERT_TRUE(test::g_containerd->RunDetached(spec).ok());

  bool found = false;
  TcpFlow seen;
  std::string diag;  // port-9000 flows seen: pid/comm/pod
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (!found && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_TRUE((*monitor)->DrainOnce().ok());
    for (const TcpFlow& f : (*monitor)->RecentFlows()) {
      if (f.dport == 9000 || f.sport == 9000) {
        diag += std::to_string(f.pid) + "/" + f.comm + "/" + f.pod_name + " " +
                test::ReadFile("/proc/" + std::to_string(f.pid) + "/cgroup") +
                "\n";
      }
      if ((f.dport == 9000 || f.sport == 9000) && f.pod_name == "netflow-pod") {
        seen = f;
        found = true;
      }
    }
  }
  const std::string metrics = (*monitor)->RenderMetrics();
  std::string containers;
  for (const auto& c : tracker.Containers()) {
    containers += c.container_id + "(pid " + std::to_string(c.pid) + ") ";
  }
  (void)test::g_containerd->KillTask(spec.id, 9);
  (void)test::g_containerd->DeleteTask(spec.id);
  (void)test::g_containerd->DeleteContainer(spec.id);
  tracker.Stop();
  ASSERT_TRUE(found) << "no flow on port 9000 attributed to netflow-pod; "
                     << "seen: " << diag << "; containers: " << containers;
  EXPECT_EQ(seen.container_id, spec.id);
  EXPECT_EQ(seen.pod_namespace, "ml");
  EXPECT_EQ(seen.remote_class, FlowClass::kLocalhost);
  EXPECT_EQ(seen.comm, "nc");
  EXPECT_NE(metrics.find("workload=\"ml/netflow-pod\""), std::string::npos);
}

}  // namespace
}  // namespace lens

int main(int argc, char** argv) {
  lens::g_ebpf_skip = lens::test::EbpfSkipReason();
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new lens::test::ContainerdEnv);
  return RUN_ALL_TESTS();
}
