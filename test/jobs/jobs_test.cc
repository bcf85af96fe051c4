// Every job against real node agents (two lens-node-agent processes on
// fixture hosts, the NVIDIA host over the NVML replay) and a store seeded
// as the controller and the container stream write it, on SQLite and
// PostgreSQL: rows and metrics checked value by value.
#include <cmath>

#include "jobs_testing.h"

namespace lens::jobs_testing {
namespace {

constexpr char kTrain[] = "6f1d2c9a-train";
constexpr char kNotebook[] = "0c55a1e2-notebook";

class JobsTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    const int port = FreePort();
    node_a_ = new AgentProcess("mi300x-8x-mlx5", "node-a", "127.0.0.2", port);
    node_b_ = new AgentProcess("mi250-mi210", "node-b", "127.0.0.3", port);
    node_c_ = new NvidiaAgent();
    nvidia_ok_ = node_c_->Start("127.0.0.4", port);
  }
  static void TearDownTestSuite() {
    delete node_a_;
    delete node_b_;
    delete node_c_;
  }

  void SetUp() override {
    ASSERT_TRUE(node_a_->WaitHealthy()) << node_a_->log();
    ASSERT_TRUE(node_b_->WaitHealthy()) << node_b_->log();
    ASSERT_TRUE(nvidia_ok_);
    const std::string url = StoreUrl(GetParam(), "jobs");
    ASSERT_FALSE(url.empty());
    auto store = Store::Open(url);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    Seed();
    options_.agents = {{"node-a", node_a_->url()},
                       {"node-b", node_b_->url()},
                       {"node-c", node_c_->url()}};
    options_.compat_names = true;
    // Agents are read again when their answer is older than half of this.
    options_.node_info.interval = options_.device_info.interval =
        milliseconds(200);
    auto jobs = ScheduledJobs::Create(options_, store_.get(), nullptr);
    ASSERT_TRUE(jobs.ok()) << jobs.status();
    jobs_ = std::move(*jobs);
  }

  PodRecord Pod(const std::string& uid, const std::string& owner,
                const std::string& node, const std::string& phase,
                int32_t gpus) {
    PodRecord p;
    p.uid = uid;
    p.name = uid;
    p.namespace_name = "ml";
    p.owner_uid = owner;
    p.node = node;
    p.phase = phase;
    p.gpu_allocated = gpus;
    p.running = phase == "Running";
    p.created_at = NowUs() - std::chrono::minutes(30);
    p.updated_at = p.created_at;
    return p;
  }

  ContainerRecord Container(const std::string& id, const std::string& pod,
                            const std::string& node,
                            const std::vector<std::string>& serials,
                            bool privileged = false) {
    ContainerRecord c;
    c.container_id = id;
    c.node = node;
    c.runtime_namespace = "k8s.io";
    c.pod_uid = pod;
    c.pod_name = pod;
    c.pod_namespace = "ml";
    c.container_name = id;
    c.state = ContainerState::kRunning;
    c.privileged = privileged;
    c.created_at = NowUs() - std::chrono::minutes(20);
    c.updated_at = c.created_at;
    for (const std::string& s : serials) {
      c.devices.push_back({DeviceKind::kGpu, s, "", "pod-resources"});
    }
    return c;
  }

  // The controller's view: node-a and node-c from the API server (node-b is
  // not a Kubernetes node), a PyTorchJob with pods on node-a (two GPU
  // containers and a privileged sidecar that sees every GPU) and node-c, a
  // finished, a deleted and an unscheduled pod, a bare notebook pod, and a
  // privileged debug pod that requested no GPU.
  void Seed() {
    NodeRecord a;
    a.name = "node-a";
    a.status = "Ready";
    a.address = "10.0.0.11";
    a.gpu_vendor = "amd";
    a.gpu_count = 8;
    a.gpu_allocatable = 8;
    a.kubelet_version = "v1.30.4";
    a.container_runtime = "containerd://1.7.20";
    a.labels = {{"kubernetes.io/hostname", "node-a"}};
    a.updated_at = NowUs();
    NodeRecord c = a;
    c.name = "node-c";
    c.gpu_vendor = "nvidia";
    c.address = "10.0.0.13";
    const NodeRecord nodes[] = {a, c};
    ASSERT_TRUE(
        store_->nodes().UpsertNodes(nodes, NodeColumns::kKubernetes).ok());
    WorkloadRecord w;
    w.uid = kTrain;
    w.api_version = "kubeflow.org/v1";
    w.kind = "PyTorchJob";
    w.name = "llama-70b";
    w.namespace_name = "ml";
    w.status = "Running";
    w.created_at = NowUs() - std::chrono::hours(1);
    w.updated_at = w.created_at;
    ASSERT_TRUE(store_->pods().UpsertWorkloads(std::span(&w, 1)).ok());
    PodRecord done = Pod("p-done", kTrain, "node-a", "Succeeded", 2);
    done.ended_at = NowUs() - std::chrono::minutes(10);
    PodRecord gone = Pod("p-deleted", "old", "node-a", "Running", 8);
    gone.deleted = true;
    const PodRecord pods[] = {Pod("p-a", kTrain, "node-a", "Running", 4),
                              Pod("p-c", kTrain, "node-c", "Running", 2),
                              done,
                              gone,
                              Pod("p-pending", kTrain, "", "Pending", 4),
                              Pod(kNotebook, "", "node-c", "Running", 1)};
    ASSERT_TRUE(store_->pods().UpsertPods(pods).ok());
    const std::pair<std::string, std::string> links[] = {
        {kTrain, "p-a"}, {kTrain, "p-c"}, {kTrain, "p-done"}};
    ASSERT_TRUE(store_->pods().LinkPods(links).ok());
    const ContainerRecord containers[] = {
        Container("c-a1", "p-a", "node-a",
                  {kNodeASerials[2], kNodeASerials[3]}),
        Container("c-a2", "p-a", "node-a",
                  {kNodeASerials[4], kNodeASerials[5]}),
        Container("c-a-sidecar", "p-a", "node-a", kNodeASerials, true),
        Container("c-debug", "p-debug", "node-a", kNodeASerials, true),
        Container("c-c1", "p-c", "node-c",
                  {kNodeCSerials[0], kNodeCSerials[2]}),
        Container("c-nb", kNotebook, "node-c", {kNodeCSerials[1]})};
    ASSERT_TRUE(store_->containers().UpsertContainers(containers).ok());
  }

  std::string Metrics() const { return jobs_->RenderMetrics(); }

  static inline AgentProcess* node_a_ = nullptr;
  static inline AgentProcess* node_b_ = nullptr;
  static inline NvidiaAgent* node_c_ = nullptr;
  static inline bool nvidia_ok_ = false;
  ScheduledJobsOptions options_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<ScheduledJobs> jobs_;
};

TEST_P(JobsTest, AllocationCountsEachBoundLivePodOnce) {
  ASSERT_TRUE(jobs_->RunOnce("gpu-allocation").ok());
  const std::string m = Metrics();
  // node-a: p-a's 4 (two GPU containers, one pod); the finished, deleted
  // and unscheduled pods hold nothing. node-c: p-c's 2 + the notebook's 1.
  EXPECT_EQ(Sample(m, "lens_gpu_allocation_ratio{node=\"node-a\"}"), 0.5) << m;
  EXPECT_EQ(Sample(m, "lens_gpu_allocation_ratio{node=\"node-c\"}"), 0.375);
  EXPECT_EQ(Sample(m, "lens_gpu_allocated{node=\"node-a\"}"), 4);
  EXPECT_EQ(Sample(m, "lens_cluster_gpus_allocated"), 7);
  EXPECT_EQ(Sample(m, "lens_cluster_gpus_allocatable"), 16);
  EXPECT_EQ(Sample(m, "lens_cluster_gpu_allocation_ratio"), 7.0 / 16);
  EXPECT_EQ(Sample(m, "gpu_allocation_rate"), 7.0 / 16);
  EXPECT_EQ(Sample(m, "node_k8s_gpu_allocation_rate{node=\"node-a\"}"), 0.5);
  auto cluster = store_->nodes().ListGpuAllocation("", {});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_EQ(cluster->size(), 1u);
  EXPECT_EQ((*cluster)[0].gpus_allocated, 7);
  EXPECT_EQ((*cluster)[0].gpus_allocatable, 16);
  // Unchanged node points are not written again each round.
  ASSERT_TRUE(jobs_->RunOnce("gpu-allocation").ok());
  EXPECT_EQ(store_->nodes().ListGpuAllocation("node-a", {})->size(), 1u);
  EXPECT_EQ(store_->nodes().ListGpuAllocation("", {})->size(), 2u);
}

TEST_P(JobsTest, ConsumersHoldExactlyTheirContainersGpus) {
  ASSERT_TRUE(jobs_->RunOnce("gpu-consumers").ok());
  const std::string m = Metrics();
  const std::string train =
      "{workload_uid=\"6f1d2c9a-train\",workload_name=\"llama-70b\","
      "workload_kind=\"PyTorchJob\",namespace=\"ml\"}";
  EXPECT_EQ(Sample(m, "lens_workload_gpus" + train), 6) << m;
  EXPECT_EQ(Sample(m, "lens_workload_pods" + train), 2);
  // Its four node-a GPUs (one busy) and two H100s (one busy); never the
  // privileged sidecar's view of all eight.
  auto util = Sample(m, "lens_workload_gpu_utilization_ratio" + train);
  ASSERT_TRUE(util.has_value()) << m;
  EXPECT_NEAR(*util, 2.0 / 6, 1e-9);
  const std::string notebook =
      "{workload_uid=\"0c55a1e2-notebook\",workload_name=\"0c55a1e2-notebook\","
      "workload_kind=\"Pod\",namespace=\"ml\"}";
  EXPECT_EQ(Sample(m, "lens_workload_gpus" + notebook), 1);
  EXPECT_EQ(Sample(m, "lens_workload_gpu_utilization_ratio" + notebook), 1);
  EXPECT_EQ(Sample(m, "consumer_pod_gpu_allocated" + train), 6);
  // The privileged debug pod requested nothing: nobody's consumer.
  EXPECT_EQ(m.find("p-debug"), std::string::npos);

  // The job ends: its series are gone from the next round.
  PodRecord a = *store_->pods().GetPod("p-a");
  PodRecord c = *store_->pods().GetPod("p-c");
  for (PodRecord* p : {&a, &c}) {
    p->phase = "Succeeded";
    p->running = false;
    p->ended_at = NowUs();
  }
  const PodRecord ended[] = {a, c};
  ASSERT_TRUE(store_->pods().UpsertPods(ended).ok());
  ASSERT_TRUE(jobs_->RunOnce("gpu-consumers").ok());
  EXPECT_EQ(Metrics().find("llama-70b"), std::string::npos);
}

TEST_P(JobsTest, LabelValuesAreEscapedAndTheTextIsPromtoolClean) {
  // No Kubernetes name holds these, but a custom kind or a store written by
  // something else might: the exposition must stay valid.
  WorkloadRecord odd;
  odd.uid = "odd-uid";
  odd.kind = "Odd\"Kind\\v1";
  odd.name = "line\nbreak";
  odd.namespace_name = "ml";
  odd.status = "Running";
  odd.created_at = odd.updated_at = NowUs();
  ASSERT_TRUE(store_->pods().UpsertWorkloads(std::span(&odd, 1)).ok());
  const PodRecord pod = Pod("p-odd", "odd-uid", "node-c", "Running", 1);
  ASSERT_TRUE(store_->pods().UpsertPods(std::span(&pod, 1)).ok());
  ASSERT_TRUE(jobs_->RunOnce("gpu-consumers").ok());
  ASSERT_TRUE(jobs_->RunOnce("gpu-allocation").ok());
  const std::string m = Metrics();
  EXPECT_EQ(Sample(m,
                   "lens_workload_gpus{workload_uid=\"odd-uid\","
                   "workload_name=\"line\\nbreak\",workload_kind=\"Odd\\\""
                   "Kind\\\\v1\",namespace=\"ml\"}"),
            1)
      << m;
  if (!std::filesystem::exists("/usr/bin/promtool")) {
    GTEST_SKIP() << "promtool not installed (scripts/install-deps.sh)";
  }
  const std::string file = ::testing::TempDir() + "jobs-metrics-" +
                           std::to_string(::getpid()) + ".txt";
  std::ofstream(file) << m;
  const std::string out = file + ".out";
  const int rc = std::system(
      ("/usr/bin/promtool check metrics < " + file + " > " + out + " 2>&1")
          .c_str());
  std::ifstream in(out);
  const std::string said(std::istreambuf_iterator<char>(in), {});
  EXPECT_EQ(rc, 0) << said;
  EXPECT_EQ(said, "");
}

TEST_P(JobsTest, NodeInfoKeepsTheControllersColumnsAndAddsTheAgents) {
  ASSERT_TRUE(jobs_->RunOnce("gpu-allocation").ok());
  ASSERT_TRUE(jobs_->RunOnce("node-info").ok());
  auto a = store_->nodes().GetNode("node-a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->cpu_model, "AMD EPYC 9654 96-Core Processor");
  EXPECT_EQ(a->driver_version, "6.8.5");
  EXPECT_EQ(a->agent_state, "ok");
  EXPECT_TRUE(a->agent_seen_at.has_value());
  EXPECT_EQ(a->gpu_allocated, 4);
  ASSERT_TRUE(a->gpu_utilization_ratio.has_value());
  EXPECT_NEAR(*a->gpu_utilization_ratio, 1.0 / 8, 1e-9);
  // The API server's facts stay as the controller wrote them.
  EXPECT_EQ(a->kubelet_version, "v1.30.4");
  EXPECT_EQ(a->address, "10.0.0.11");
  EXPECT_EQ(a->gpu_allocatable, 8);
  EXPECT_EQ(a->labels.at("kubernetes.io/hostname"), "node-a");
  // node-b is no Kubernetes node: its host facts come from its agent.
  auto b = store_->nodes().GetNode("node-b");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->status, "Ready");
  EXPECT_EQ(b->address, "127.0.0.3");
  EXPECT_EQ(b->gpu_count, 4);
  EXPECT_EQ(b->gpu_vendor, "amd");
  EXPECT_GT(b->cpu_count, 0);
  EXPECT_GT(b->memory_bytes, 0);
  EXPECT_FALSE(b->kernel_version.empty());
  auto c = store_->nodes().GetNode("node-c");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->driver_version, "550.90.07");
  EXPECT_NEAR(*c->gpu_utilization_ratio, 2.0 / 8, 1e-9);
  const std::string m = Metrics();
  EXPECT_EQ(Sample(m, "lens_node_agent_up{node=\"node-b\"}"), 1);
}

TEST_P(JobsTest, DeviceInfoSyncsInventoryAndLogsOnlyRealChanges) {
  ASSERT_TRUE(jobs_->RunOnce("device-info").ok());
  auto gpus = store_->nodes().ListGpuDevices("node-a");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  std::vector<std::string> serials;
  for (const GpuDeviceRecord& g : *gpus) serials.push_back(g.serial);
  std::vector<std::string> want = kNodeASerials;
  std::sort(serials.begin(), serials.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(serials, want);
  auto rdma = store_->nodes().ListRdmaDevices("node-a");
  ASSERT_TRUE(rdma.ok());
  ASSERT_EQ(rdma->size(), 8u);
  EXPECT_EQ((*rdma)[0].name, "mlx5_0");
  EXPECT_EQ((*rdma)[0].node_guid, "946d:ae03:004a:1b20");
  EXPECT_EQ(store_->nodes().ListRdmaDevices("node-b")->size(), 2u);
  auto changes = [&](const std::string& node) {
    return store_->nodes().ListDeviceChanges(node, {}, {1, 1000})->items;
  };
  EXPECT_EQ(changes("node-a").size(), 16u);  // 8 GPUs + 8 HCAs created
  EXPECT_EQ(changes("node-c").size(), 8u);
  // Nothing changed: nothing logged.
  ASSERT_TRUE(jobs_->RunOnce("device-info").ok());
  EXPECT_EQ(changes("node-a").size(), 16u);

  // One H100 swapped for another board: one REPLACE, by serial.
  std::ifstream in(kFixtures + "/nvml/h100_8x_550.90.07.json");
  std::string json(std::istreambuf_iterator<char>(in), {});
  // A new board: its serial and UUID differ.
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{kNodeCSerials[3], "1655022009999"},
        {"GPU-083a791c-1f40-bb49-d1f3-5098f151feeb",
         "GPU-0d0d0d0d-1f40-bb49-d1f3-5098f151feeb"}}) {
    const size_t at = json.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    json.replace(at, from.size(), to);
  }
  const std::string swapped = ::testing::TempDir() + "h100-swapped-" +
                              std::to_string(::getpid()) + ".json";
  std::ofstream(swapped) << json;
  ASSERT_TRUE(node_c_->Load(swapped, "1655022009999"));
  std::this_thread::sleep_for(milliseconds(110));  // past the reads' max age
  ASSERT_TRUE(jobs_->RunOnce("device-info").ok());
  const auto after = changes("node-c");
  ASSERT_EQ(after.size(), 9u);
  EXPECT_EQ(after[0].change, DeviceChange::kReplace);
  EXPECT_EQ(after[0].old_serial, kNodeCSerials[3]);
  EXPECT_EQ(after[0].new_serial, "1655022009999");
  ASSERT_TRUE(node_c_->Load(kFixtures + "/nvml/h100_8x_550.90.07.json",
                            kNodeCSerials[3]));
}

TEST_P(JobsTest, WorkloadStatusCountsActivePodsAndClosesEndedWorkloads) {
  ASSERT_TRUE(jobs_->RunOnce("workload-status").ok());
  auto w = store_->pods().GetWorkload(kTrain);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->active_pods, 2);
  EXPECT_EQ(w->gpu_request, 6);
  EXPECT_EQ(w->status, "Running");
  EXPECT_EQ(w->name, "llama-70b");  // the controller's columns untouched
  // Its pods ended two minutes ago and nobody said so: closed.
  const Timestamp end = NowUs() - std::chrono::minutes(2);
  PodRecord a = *store_->pods().GetPod("p-a");
  PodRecord c = *store_->pods().GetPod("p-c");
  for (PodRecord* p : {&a, &c}) {
    p->phase = "Succeeded";
    p->running = false;
    p->ended_at = end;
  }
  const PodRecord ended[] = {a, c};
  ASSERT_TRUE(store_->pods().UpsertPods(ended).ok());
  ASSERT_TRUE(jobs_->RunOnce("workload-status").ok());
  w = store_->pods().GetWorkload(kTrain);
  EXPECT_EQ(w->status, "Succeeded");
  EXPECT_EQ(w->active_pods, 0);
  EXPECT_EQ(w->gpu_request, 6);  // what it held last
  ASSERT_TRUE(w->ended_at.has_value());
  EXPECT_EQ(*w->ended_at, end);
}

TEST_P(JobsTest, PodStatusClosesPodsWhoseContainersAllEnded) {
  PodRecord stale = Pod("p-stale", kTrain, "node-a", "Running", 1);
  const PodRecord pods[] = {stale,
                            Pod("p-unknown", kTrain, "node-a", "Running", 1)};
  ASSERT_TRUE(store_->pods().UpsertPods(pods).ok());
  ContainerRecord exited = Container("c-stale", "p-stale", "node-a", {});
  exited.state = ContainerState::kExited;
  exited.exit_code = 0;
  exited.finished_at = NowUs() - std::chrono::minutes(3);
  ContainerRecord deleted = Container("c-stale2", "p-stale", "node-a", {});
  deleted.state = ContainerState::kDeleted;
  deleted.finished_at = NowUs() - std::chrono::minutes(4);
  const ContainerRecord cs[] = {exited, deleted};
  ASSERT_TRUE(store_->containers().UpsertContainers(cs).ok());
  ASSERT_TRUE(jobs_->RunOnce("pod-status").ok());
  auto closed = store_->pods().GetPod("p-stale");
  EXPECT_FALSE(closed->running);
  ASSERT_TRUE(closed->ended_at.has_value());
  EXPECT_EQ(*closed->ended_at, *exited.finished_at);
  // A pod with a running container, and one no agent reported: open.
  EXPECT_TRUE(store_->pods().GetPod("p-a")->running);
  EXPECT_FALSE(store_->pods().GetPod("p-a")->ended_at.has_value());
  EXPECT_TRUE(store_->pods().GetPod("p-unknown")->running);
}

TEST_P(JobsTest, StorageScanReportsConfiguredMounts) {
  options_.storage_mounts = {{"scratch", "local", ::testing::TempDir()}};
  auto jobs = ScheduledJobs::Create(options_, store_.get(), nullptr);
  ASSERT_TRUE(jobs.ok());
  ASSERT_TRUE((*jobs)->RunOnce("storage-scan").ok());
  auto row = store_->storage().GetStorage("scratch");
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(row->kind, "local");
  EXPECT_EQ(row->status, "Healthy");
  EXPECT_NE(row->config_json.find("\"capacity_bytes\""), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Backends, JobsTest,
                         ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace lens::jobs_testing
