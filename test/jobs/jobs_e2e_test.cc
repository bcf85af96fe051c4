// The cluster side end to end: the Kubernetes test API server with GPU nodes
// and a 4-pod PyTorchJob (real object JSON), the controller writing them
// into the store, the containers' ownership rows as the node stream writes
// them, real node agents on two of the nodes and the NVIDIA host on a
// third, and the jobs over all of it, on SQLite and PostgreSQL.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <sstream>

#include "jobs_testing.h"
#include "kube_api_server.h"
#include "service/controller_service.h"

namespace lens::jobs_testing {
namespace {

constexpr char kJob[] = "c9452740-8789-4bfa-9c31-65306786085f";
constexpr char kMaster[] = "a0c2fa37-a9ac-4d27-be32-75c2d2c18de3";
constexpr char kWorker0[] = "eca9a512-f2bb-4071-827a-937bda269946";

void CreateAll(test::KubeApiServer& server, const std::string& file) {
  std::ifstream in(kFixtures + "/kube/" + file);
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(text.str().c_str());
  ASSERT_TRUE(doc.IsArray()) << file;
  for (const auto& o : doc.GetArray()) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    o.Accept(w);
    ASSERT_NE(server.Create(buffer.GetString()), "") << file;
  }
}

class JobsEndToEndTest : public ::testing::TestWithParam<std::string> {};

TEST_P(JobsEndToEndTest, ControllerAndAgentsToAllocationConsumersAndInventory) {
  test::KubeApiServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  CreateAll(server, "nodes.json");
  CreateAll(server, "pytorchjob.json");
  const std::string url = StoreUrl(GetParam(), "e2e");
  ASSERT_FALSE(url.empty());

  ControllerServiceOptions co;
  co.database_url = url;
  co.connection.server = server.url();
  co.leader_election = false;
  co.http.listen = "127.0.0.1:0";
  auto controller = ControllerService::Start(co);
  ASSERT_TRUE(controller.ok()) << controller.status();
  auto store = Store::Open(url);
  ASSERT_TRUE(store.ok()) << store.status();
  Store& s = **store;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto pods = s.pods().ListWorkloadPods(kJob);
        return (*controller)->Ready() && pods.ok() && pods->size() == 4;
      },
      milliseconds(20000)));

  // The master's and worker-0's trainer containers hold their node's eight
  // GPUs (the node stream's rows: pod-resources, by serial).
  auto container = [&](const std::string& id, const std::string& pod,
                       const std::string& node) {
    ContainerRecord c;
    c.container_id = id;
    c.node = node;
    c.runtime_namespace = "k8s.io";
    c.pod_uid = pod;
    c.pod_namespace = "ml";
    c.container_name = "pytorch";
    c.state = ContainerState::kRunning;
    c.created_at = c.updated_at = NowUs();
    for (const std::string& serial : kNodeASerials) {
      c.devices.push_back({DeviceKind::kGpu, serial, "", "pod-resources"});
    }
    return c;
  };
  const ContainerRecord containers[] = {
      container("ctr-master", kMaster, "mi300x-node-01"),
      container("ctr-worker-0", kWorker0, "mi300x-node-02")};
  ASSERT_TRUE(s.containers().UpsertContainers(containers).ok());

  const int port = FreePort();
  AgentProcess a("mi300x-8x-mlx5", "mi300x-node-01", "127.0.0.5", port);
  AgentProcess b("mi300x-8x-mlx5", "mi300x-node-02", "127.0.0.6", port);
  NvidiaAgent c;
  ASSERT_TRUE(c.Start("127.0.0.7", port));
  ASSERT_TRUE(a.WaitHealthy()) << a.log();
  ASSERT_TRUE(b.WaitHealthy()) << b.log();
  ScheduledJobsOptions o;
  o.agents = {{"mi300x-node-01", a.url()},
              {"mi300x-node-02", b.url()},
              {"h100-node-01", c.url()}};
  auto jobs = ScheduledJobs::Create(o, &s, nullptr);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  for (std::string_view job : ScheduledJobNames()) {
    Status st = (*jobs)->RunOnce(job);
    EXPECT_TRUE(st.ok()) << job << ": " << st;
  }
  const std::string m = (*jobs)->RenderMetrics();
  // Four 8-GPU pods on the four MI300X nodes; the H100s are free.
  for (const char* node : {"mi300x-node-01", "mi300x-node-04"}) {
    EXPECT_EQ(Sample(m, "lens_gpu_allocation_ratio{node=\"" +
                            std::string(node) + "\"}"),
              1)
        << m;
  }
  EXPECT_EQ(Sample(m, "lens_gpu_allocation_ratio{node=\"h100-node-01\"}"), 0);
  EXPECT_EQ(Sample(m, "lens_cluster_gpus_allocated"), 32);
  EXPECT_EQ(Sample(m, "lens_cluster_gpus_allocatable"), 48);
  const std::string job =
      "{workload_uid=\"c9452740-8789-4bfa-9c31-65306786085f\","
      "workload_name=\"llama-pretrain\",workload_kind=\"PyTorchJob\","
      "namespace=\"ml\"}";
  EXPECT_EQ(Sample(m, "lens_workload_gpus" + job), 32);
  EXPECT_EQ(Sample(m, "lens_workload_pods" + job), 4);
  // The 16 GPUs with a sample (one busy per node); the other two nodes'
  // containers are not known.
  EXPECT_EQ(Sample(m, "lens_workload_gpu_utilization_ratio" + job), 0.125);

  // Node rows: the controller's facts and the agent's side by side.
  auto node = s.nodes().GetNode("mi300x-node-01");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->status, "Ready");
  EXPECT_EQ(node->gpu_allocatable, 8);
  EXPECT_FALSE(node->kubelet_version.empty());
  EXPECT_EQ(node->cpu_model, "AMD EPYC 9654 96-Core Processor");
  EXPECT_EQ(node->gpu_allocated, 8);
  EXPECT_EQ(node->agent_state, "ok");
  EXPECT_EQ(s.nodes().ListGpuDevices("mi300x-node-01")->size(), 8u);
  EXPECT_EQ(s.nodes().ListGpuDevices("h100-node-01")->size(), 8u);
  EXPECT_TRUE(s.nodes().ListGpuDevices("mi300x-node-03")->empty());
  auto w = s.pods().GetWorkload(kJob);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->active_pods, 4);
  EXPECT_EQ(w->gpu_request, 32);
  EXPECT_EQ(w->status, "Running");
  (*controller)->Stop();
}

INSTANTIATE_TEST_SUITE_P(Backends, JobsEndToEndTest,
                         ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace lens::jobs_testing
