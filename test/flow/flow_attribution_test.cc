// Flows attributed to pods for real: a container under a private containerd
// keeps a TCP connection open inside its own network namespace; the eBPF
// probe sees it and the monitor, with the container tracker, names its pod.
// The same through lens-netflow as its own process, as a DaemonSet runs it.
#include <gtest/gtest.h>
#include <httplib.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "../containers/containerd_env.h"
#include "command.h"
#include "ebpf_env.h"
#include "lens/containers.h"
#include "lens/flow.h"
#include "loopback_traffic.h"

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

#ifdef LENS_NETFLOW_BIN
// A container's connection, as lens-netflow serves it: /flows names the pod
// and /metrics carries the workload label.
TEST(FlowAttributionTest, LensNetflowNamesThePodsOfFlows) {
  if (!g_ebpf_skip.empty()) GTEST_SKIP() << g_ebpf_skip;
  if (!test::g_containerd) GTEST_SKIP() << test::g_skip;
  const std::string log = ::testing::TempDir() + "/lens-netflow-attribution-" +
                          std::to_string(::getpid()) + ".log";
  const int port = test::FreeLoopbackPort();
  const pid_t pid = test::Spawn(
      {LENS_NETFLOW_BIN, "--listen", "127.0.0.1:" + std::to_string(port),
       "--interval", "0.2", "--bpf-stats-window", "0", "--containerd-socket",
       test::g_containerd->socket_path()},
      log, /*stdout_too=*/false);
  ASSERT_GT(pid, 0);
  httplib::Client client("127.0.0.1", port);
  bool up = false;
  for (int i = 0; i < 200 && !up; ++i) {
    auto r = client.Get("/healthz");
    up = r && r->status == 200;
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  test::ContainerSpec spec;
  spec.id = "flow-attribution-netflow";
  spec.image = test::kBusyboxImage;
  spec.args = {
      "sh", "-c",
      "sleep 3600 | nc -l -p 9001 >/dev/null & sleep 0.5; "
      "while true; do echo hello; sleep 0.05; done | nc 127.0.0.1 9001"};
  spec.labels = {{"io.kubernetes.pod.name", "netflow-daemon-pod"},
                 {"io.kubernetes.pod.namespace", "ml"},
                 {"io.kubernetes.pod.uid", "uid-netflow-daemon-pod"},
                 {"io.kubernetes.container.name", "talker"}};
  const bool ran = up && test::g_containerd->RunDetached(spec).ok();

  std::string container_id, pod_namespace, comm, metrics;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (ran && container_id.empty() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto r = client.Get("/flows?limit=100000");
    if (!r || r->status != 200) continue;
    rapidjson::Document doc;
    doc.Parse(r->body.c_str());
    if (doc.HasParseError() || !doc["data"]["flows"].IsArray()) continue;
    for (const auto& f : doc["data"]["flows"].GetArray()) {
      const bool port_9001 =
          f["dport"].GetInt() == 9001 || f["sport"].GetInt() == 9001;
      if (port_9001 && f.HasMember("pod_name") &&
          std::string(f["pod_name"].GetString()) == "netflow-daemon-pod") {
        container_id = f["container_id"].GetString();
        pod_namespace = f["pod_namespace"].GetString();
        comm = f["comm"].GetString();
      }
    }
  }
  if (auto m = client.Get("/metrics"); m && m->status == 200) metrics = m->body;
  if (ran) {
    (void)test::g_containerd->KillTask(spec.id, 9);
    (void)test::g_containerd->DeleteTask(spec.id);
    (void)test::g_containerd->DeleteContainer(spec.id);
  }
  ::kill(pid, SIGTERM);
  auto status = test::WaitExit(pid, std::chrono::seconds(10));
  if (!status) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  ASSERT_TRUE(up) << "lens-netflow did not serve /healthz\n"
                  << test::ReadFile(log);
  ASSERT_TRUE(ran) << "the container did not start";
  ASSERT_FALSE(container_id.empty())
      << "no flow on port 9001 named netflow-daemon-pod in /flows\n"
      << test::ReadFile(log);
  EXPECT_EQ(container_id, spec.id);
  EXPECT_EQ(pod_namespace, "ml");
  EXPECT_EQ(comm, "nc");
  EXPECT_NE(metrics.find("workload=\"ml/netflow-daemon-pod\""),
            std::string::npos)
      << metrics.substr(0, 2000);
  ASSERT_TRUE(status.has_value()) << "lens-netflow ignored SIGTERM";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << test::Describe(*status) << "\n"
      << test::ReadFile(log);
}
#endif

}  // namespace
}  // namespace lens

int main(int argc, char** argv) {
  lens::g_ebpf_skip = lens::test::EbpfSkipReason();
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new lens::test::ContainerdEnv);
  return RUN_ALL_TESTS();
}
