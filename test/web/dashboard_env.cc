#include "dashboard_env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace lens::test {
namespace {

Timestamp At(int64_t seconds) {
  return Timestamp(std::chrono::seconds(seconds));
}

NodeRecord Node(std::string name, std::string status, std::string vendor,
                std::string model, int gpus, int allocated, double utilization,
                int64_t now) {
  NodeRecord n;
  n.name = std::move(name);
  n.status = std::move(status);
  n.gpu_vendor = std::move(vendor);
  n.gpu_model = std::move(model);
  n.gpu_count = n.gpu_allocatable = gpus;
  n.gpu_allocated = allocated;
  n.gpu_utilization_ratio = utilization;
  n.cpu_model = "AMD EPYC 9654 96-Core Processor";
  n.cpu_count = 192;
  n.memory_bytes = int64_t{1536} << 30;
  n.kernel_version = "6.1.0-18-amd64";
  n.os_image = "Debian GNU/Linux 12 (bookworm)";
  n.kubelet_version = "v1.29.2";
  n.container_runtime = "containerd://1.7.13";
  n.agent_state = n.status == "Ready" ? "ok" : "stale";
  n.agent_seen_at = At(now - (n.status == "Ready" ? 10 : 900));
  n.updated_at = At(now - 10);
  return n;
}

void SeedNodes(Store& store, int64_t now) {
  NodeRecord alpha = Node(kAlpha, "Ready", "amd", "MI300X", 8, 6, 0.625, now);
  alpha.address = "10.0.0.11";
  alpha.driver_version = "6.7.0";
  NodeRecord bravo =
      Node(kBravo, "NotReady", "nvidia", "H100 80GB HBM3", 4, 1, 0.25, now);
  bravo.address = "10.0.0.12";
  bravo.driver_version = "550.54.15";
  ASSERT_TRUE(store.nodes().UpsertNode(alpha).ok());
  ASSERT_TRUE(store.nodes().UpsertNode(bravo).ok());

  std::vector<GpuDeviceRecord> gpus(8);
  for (int i = 0; i < 8; ++i) {
    gpus[i].node = kAlpha;
    gpus[i].gpu_index = i;
    gpus[i].vendor = "amd";
    gpus[i].model = "MI300X";
    gpus[i].serial = "SN-ALPHA-" + std::to_string(i);
    gpus[i].bdf = "0000:" + std::to_string(11 + i) + ":00.0";
    gpus[i].vram_bytes = int64_t{192} << 30;
    gpus[i].numa_node = i / 4;
  }
  ASSERT_TRUE(store.nodes().SyncGpuDevices(kAlpha, gpus, At(now - 7200)).ok());
  gpus[1].serial = "SN-ALPHA-1B";  // a replaced board: a REPLACE in the log
  ASSERT_TRUE(store.nodes().SyncGpuDevices(kAlpha, gpus, At(now - 3600)).ok());
  std::vector<GpuDeviceRecord> h100(4);
  for (int i = 0; i < 4; ++i) {
    h100[i].node = kBravo;
    h100[i].gpu_index = i;
    h100[i].vendor = "nvidia";
    h100[i].model = "H100 80GB HBM3";
    h100[i].serial = "SN-BRAVO-" + std::to_string(i);
    h100[i].vram_bytes = int64_t{80} << 30;
  }
  ASSERT_TRUE(store.nodes().SyncGpuDevices(kBravo, h100, At(now - 7200)).ok());

  RdmaDeviceRecord rdma;
  rdma.node = kAlpha;
  rdma.name = "mlx5_0";
  rdma.node_guid = "1070:fd03:00a1:b2c3";
  rdma.fw_version = "28.39.1002";
  rdma.netdev = "ens1f0np0";
  rdma.bdf = "0000:81:00.0";
  rdma.numa_node = 1;
  ASSERT_TRUE(
      store.nodes().SyncRdmaDevices(kAlpha, {&rdma, 1}, At(now - 7200)).ok());

  GpuAllocationRecord history[] = {{"", At(now - 3000), 4, 12},
                                   {"", At(now - 1800), 6, 12},
                                   {"", At(now - 600), 7, 12}};
  ASSERT_TRUE(
      store.nodes().AddGpuAllocation(history, At(now - 7 * 86400)).ok());
}

void SeedContainers(Store& store, int64_t now) {
  std::vector<ContainerRecord> containers(2);
  ContainerRecord& trainer = containers[0];
  trainer.container_id = "c0ffee0123456789abcdef";
  trainer.node = kAlpha;
  trainer.pod_uid = "pod-llama-0";
  trainer.pod_name = "llama-pretrain-worker-0";
  trainer.pod_namespace = "ml-research";
  trainer.container_name = "trainer";
  trainer.image = "rocm/megatron-lm:v25.3";
  trainer.state = ContainerState::kRunning;
  trainer.created_at = trainer.updated_at = At(now - 7000);
  trainer.started_at = At(now - 6900);
  trainer.devices = {{DeviceKind::kGpu, "SN-ALPHA-0", "", "pod-resources"},
                     {DeviceKind::kGpu, "SN-ALPHA-1B", "", "pod-resources"},
                     {DeviceKind::kRdma, "mlx5_0", "", "oci-spec"}};
  ContainerRecord& sidecar = containers[1];
  sidecar.container_id = "bead0123456789abcdef01";
  sidecar.node = kAlpha;
  sidecar.pod_uid = "pod-llama-0";
  sidecar.pod_name = "llama-pretrain-worker-0";
  sidecar.pod_namespace = "ml-research";
  sidecar.container_name = "log-shipper";
  sidecar.image = kHostileImage;
  sidecar.state = ContainerState::kRunning;
  sidecar.created_at = sidecar.updated_at = At(now - 7000);
  ASSERT_TRUE(store.containers().UpsertContainers(containers).ok());
  const PodEventRecord events[] = {
      {"pod-llama-0", "Scheduled", "Pending", 0, At(now - 7100)},
      {"pod-llama-0", "Restarted", "Running", 1, At(now - 3000)}};
  ASSERT_TRUE(store.pods().AddPodEvents(events).ok());
}

void SeedWorkloads(Store& store, int64_t now) {
  std::vector<WorkloadRecord> workloads(2);
  workloads[0].uid = kLlamaUid;
  workloads[0].api_version = "kubeflow.org/v1";
  workloads[0].kind = "PyTorchJob";
  workloads[0].name = "llama-pretrain";
  workloads[0].namespace_name = "ml-research";
  workloads[0].status = "Running";
  workloads[0].gpu_request = 8;
  workloads[0].active_pods = 2;
  workloads[0].created_at = workloads[0].updated_at = At(now - 7200);
  workloads[1].uid = kBertUid;
  workloads[1].api_version = "batch/v1";
  workloads[1].kind = "Job";
  workloads[1].name = "bert-eval";
  workloads[1].namespace_name = "nlp";
  workloads[1].status = "Succeeded";
  workloads[1].gpu_request = 4;
  workloads[1].created_at = workloads[1].updated_at = At(now - 18000);
  workloads[1].ended_at = At(now - 14400);
  ASSERT_TRUE(store.pods().UpsertWorkloads(workloads).ok());

  std::vector<PodRecord> pods(3);
  for (int i = 0; i < 3; ++i) {
    PodRecord& p = pods[i];
    const bool llama = i < 2;
    p.uid = llama ? "pod-llama-" + std::to_string(i) : "pod-bert-0";
    p.name = llama ? "llama-pretrain-worker-" + std::to_string(i)
                   : "bert-eval-runner";
    p.namespace_name = llama ? "ml-research" : "nlp";
    p.node = llama ? kAlpha : kBravo;
    p.phase = llama ? "Running" : "Succeeded";
    p.running = llama;
    p.owner_uid = llama ? kLlamaUid : kBertUid;
    p.gpu_allocated = 4;
    p.restarts = i == 1 ? 1 : 0;
    p.created_at = p.updated_at = At(now - 7100);
    p.started_at = At(now - 7000);
  }
  ASSERT_TRUE(store.pods().UpsertPods(pods).ok());
  std::vector<std::pair<std::string, std::string>> links = {
      {kLlamaUid, "pod-llama-0"},
      {kLlamaUid, "pod-llama-1"},
      {kBertUid, "pod-bert-0"}};
  ASSERT_TRUE(store.pods().LinkPods(links).ok());
}

// One log per run: the writer numbers the second source's run 2.
void SeedTraining(Store& store, int64_t now) {
  for (int run = 1; run <= 2; ++run) {
    const int64_t first = run == 1 ? 1 : kRun1Last + 1;
    const int64_t last = run == 1 ? kRun1Last : kRun2Last;
    std::vector<IterationRecord> records;
    std::vector<TrainingEvent> events;
    TrainingEvent start;
    start.type = TrainingEventType::kTrainingStart;
    start.line = 1;
    start.timestamp_s = double(now - 3600 + 60 * (first - 1));
    events.push_back(start);
    for (int64_t i = first; i <= last; ++i) {
      IterationRecord r;
      r.iteration = i;
      r.line = static_cast<uint64_t>(i - first + 2);
      r.timestamp_s = double(now - 3600 + 60 * i);
      r.Set(IterationField::kLoss, LossAt(i));
      r.Set(IterationField::kTflopsPerGpu, TflopsAt(i));
      r.Set(IterationField::kTokensPerSPerGpu, TokensAt(i));
      r.Set(IterationField::kElapsedMs, StepMsAt(i));
      records.push_back(r);
      if (run == 1 && i % 10 == 0) {
        TrainingEvent saved;
        saved.type = TrainingEventType::kCheckpointSaveEnd;
        saved.line = r.line;
        saved.iteration = i;
        saved.timestamp_s = *r.timestamp_s + 5;
        saved.duration_s = 42.5;
        saved.path = "/ckpt/llama/iter_" + std::to_string(i);
        events.push_back(saved);
      }
    }
    auto writer = store.training().OpenWriter(
        kLlamaUid, run == 1 ? "llama-pretrain-worker-0/trainer"
                            : "llama-pretrain-worker-0/trainer#restart");
    ASSERT_TRUE(writer.ok()) << writer.status();
    Status st = writer->Write(records, events);
    ASSERT_TRUE(st.ok()) << st;
  }
}

// GPU g of alpha at time t: busy GPUs 0..5 around 40..80%, idle 6 and 7.
double AlphaUtilization(int g, int64_t t) {
  if (g >= 6) return 0.02;
  return 0.45 + 0.05 * g + 0.1 * std::sin(double(t) / 600.0 + g);
}

void Append(std::vector<MetricSample>& out, const char* metric,
            std::vector<std::pair<std::string, std::string>> labels, int64_t t,
            double value) {
  out.push_back({metric, std::move(labels), t * 1000, value});
}

}  // namespace

void SeedDashboardStore(Store& store, int64_t now_s) {
  SeedNodes(store, now_s);
  SeedContainers(store, now_s);
  SeedWorkloads(store, now_s);
  SeedTraining(store, now_s);
}

void SeedSeries(Store& store, int64_t now_s) {
  std::vector<MetricSample> samples;
  const int64_t last = now_s / 30 * 30;
  for (int64_t t = last - 3900; t <= last; t += 30) {
    const int64_t age = last - t;
    for (int g = 0; g < 8; ++g) {
      const std::string gpu = std::to_string(g);
      double u = AlphaUtilization(g, t);
      double values[] = {u, (20 + 160 * u) * double(int64_t{1} << 30),
                         150 + 600 * u, 40 + 40 * u};
      if (g == 0 && age < 180) {  // the latest of GPU 0, whatever the grid
        const double latest[] = {0.62, 150.0 * double(int64_t{1} << 30), 612,
                                 71};
        std::copy(std::begin(latest), std::end(latest), values);
      }
      const char* metrics[] = {
          "lens_gpu_utilization_ratio", "lens_gpu_memory_used_bytes",
          "lens_gpu_power_watts", "lens_gpu_temperature_celsius"};
      for (int m = 0; m < 4; ++m) {
        Append(samples, metrics[m], {{"node", kAlpha}, {"gpu", gpu}}, t,
               values[m]);
      }
    }
    // Bravo's agent went stale half an hour in.
    for (int g = 0; g < 4 && age < 1800; ++g) {
      Append(samples, "lens_gpu_utilization_ratio",
             {{"node", kBravo}, {"gpu", std::to_string(g)}}, t, 0.25);
    }
    // Counters at steady rates: bytes/s and retransmits/s.
    const double s = double(t - (last - 3900));
    const std::pair<std::string, std::string> llama = {
        "workload", "ml-research/llama-pretrain"};
    Append(samples, "lens_tcp_flow_bytes_sent_total",
           {{"node", kAlpha},
            llama,
            {"class", "cluster"},
            {"direction", "egress"}},
           t, 1.25e9 * s);
    Append(samples, "lens_tcp_flow_bytes_received_total",
           {{"node", kAlpha},
            llama,
            {"class", "cluster"},
            {"direction", "ingress"}},
           t, 1.18e9 * s);
    Append(samples, "lens_tcp_flow_retransmits_total",
           {{"node", kAlpha},
            llama,
            {"class", "cluster"},
            {"direction", "egress"}},
           t, 0.5 * s);
    Append(samples, "lens_tcp_flow_retransmits_total",
           {{"node", kAlpha},
            llama,
            {"class", "cluster"},
            {"direction", "ingress"}},
           t, 0.25 * s);
    Append(samples, "lens_tcp_flow_bytes_sent_total",
           {{"node", kBravo},
            {"workload", "host"},
            {"class", "external"},
            {"direction", "egress"}},
           t, 2048 * s);
    Append(samples, "lens_tcp_flow_remote_bytes_total",
           {{"node", kAlpha},
            {"remote", "10.0.0.12"},
            {"class", "cluster"},
            {"direction", "egress"}},
           t, 1.25e9 * s);
    Append(samples, "lens_tcp_flow_remote_bytes_total",
           {{"node", kBravo},
            {"remote", "151.101.1.69"},
            {"class", "external"},
            {"direction", "egress"}},
           t, 2048 * s);
  }
  SampleHistoryOptions options;
  options.resolution = std::chrono::seconds(30);
  Status st = store.samples().AppendSamples(samples, options);
  ASSERT_TRUE(st.ok()) << st;
}

}  // namespace lens::test
