// The component schemas of the REST API (schemas.h): tables of properties.
#include "api/schemas.h"

#include <vector>

#include "api/schema_rows.h"

namespace lens::api {
namespace {

using namespace schema_rows;  // NOLINT: the table rows

constexpr PropertySpec kCluster[] = {
    Str("name", "The cluster's name (ApiOptions::cluster or a member's)"),
    Bool("stale",
         "A member whose Kubernetes API did not answer at the last read: its "
         "data may be old"),
    Obj("nodes", "ClusterNodes", "Node counts"),
    Obj("gpus", "ClusterGpus", "GPU counts and ratios"),
    Obj("workloads", "ClusterWorkloads", "Workload counts"),
};
constexpr PropertySpec kClusterNodes[] = {
    Int("total", "Nodes known"),
    Int("ready", "Nodes whose status is Ready"),
    Int("stale", "Nodes whose agent stopped reporting"),
};
constexpr PropertySpec kClusterGpus[] = {
    Int("total", "GPUs of all nodes"),
    Int("allocatable", "GPUs pods may be given"),
    Int("allocated", "GPUs given to pods"),
    Num("allocationRatio", "allocated / allocatable"),
    Num("utilizationRatio", "GPU-weighted mean utilisation, 0..1"),
};
constexpr PropertySpec kClusterWorkloads[] = {
    Int("running", "Workloads whose status is Running"),
};
constexpr PropertySpec kNode[] = {
    Str("name", "Node name"),
    Str("address", "Internal IP address"),
    Str("status", "Kubernetes status (\"Ready\")"),
    Str("gpuVendor", "\"amd\" or \"nvidia\""),
    Str("gpuModel", "GPU model"),
    Int("gpuCount", "GPUs on the node"),
    Int("gpuAllocatable", "GPUs pods may be given"),
    Int("gpuAllocated", "GPUs given to pods"),
    Num("gpuUtilizationRatio", "Mean GPU utilisation, 0..1"),
    Str("cpuModel", "CPU model"),
    Int("cpuCount", "Logical CPUs"),
    Int("memoryBytes", "Memory, bytes"),
    Str("kernelVersion", "Kernel release"),
    Str("osImage", "Operating system"),
    Str("driverVersion", "GPU driver version"),
    Str("kubeletVersion", "Kubelet version"),
    Str("containerRuntime", "Container runtime and version"),
    Str("agentState", "Node agent: \"ok\" or \"stale\""),
    Time("agentSeenAt", "Last report of the node agent, Unix seconds"),
    Time("createdAt", "First seen, Unix seconds"),
    Time("updatedAt", "Last written, Unix seconds"),
};
constexpr PropertySpec kNodeDetail[] = {
    Obj("node", "Node", "The node"),
    List("gpus", "GpuDevice", "Its GPUs by index"),
    List("rdmaDevices", "RdmaDevice", "Its RDMA devices"),
    List("containers", "Container", "Containers created, running or paused"),
    List("deviceChanges", "DeviceChange", "Device change log, newest first"),
};
constexpr PropertySpec kGpuDevice[] = {
    Int("index", "GPU index on the node"),
    Str("vendor", "\"amd\" or \"nvidia\""),
    Str("model", "GPU model"),
    Str("serial", "Serial number"),
    Str("uuid", "Vendor UUID"),
    Str("bdf", "PCI address"),
    Int("vramBytes", "Device memory, bytes"),
    Int("numaNode", "NUMA node (-1: none)"),
    Time("updatedAt", "Last written, Unix seconds"),
};
constexpr PropertySpec kRdmaDevice[] = {
    Str("name", "Device name (\"mlx5_0\")"),
    Str("nodeGuid", "Node GUID"),
    Str("fwVersion", "Firmware version"),
    Str("boardId", "Board id"),
    Str("bdf", "PCI address"),
    Str("netdev", "Network interface"),
    Int("numaNode", "NUMA node (-1: none)"),
    Time("updatedAt", "Last written, Unix seconds"),
};
constexpr PropertySpec kDeviceChange[] = {
    Str("kind", "\"gpu\" or \"rdma\""),
    Str("deviceKey", "GPU index or RDMA device name"),
    Str("change", "CREATE, DELETE or REPLACE"),
    Str("oldSerial", "Serial (or GUID) before"),
    Str("newSerial", "Serial (or GUID) after"),
    Time("at", "When, Unix seconds"),
};
constexpr PropertySpec kContainer[] = {
    Str("containerId", "Container id"),
    Str("node", "Node it runs on"),
    Str("podUid", "Pod uid"),
    Str("podName", "Pod name"),
    Str("podNamespace", "Pod namespace"),
    Str("name", "Container name"),
    Str("image", "Image reference"),
    Str("state", "created, running, paused, exited or deleted"),
    Bool("privileged", "Runs privileged"),
    OptInt("exitCode", "Exit code once exited"),
    Time("createdAt", "Created, Unix seconds"),
    Time("startedAt", "Started, Unix seconds"),
    Time("finishedAt", "Finished, Unix seconds"),
    List("devices", "ContainerDevice", "Devices it holds"),
};
constexpr PropertySpec kContainerDevice[] = {
    Str("kind", "\"gpu\" or \"rdma\""),
    Str("deviceKey", "GPU serial or RDMA device name"),
    Str("bdf", "PCI address"),
    Str("source", "Where the holding was seen (\"pod-resources\")"),
};
constexpr PropertySpec kGpuAllocation[] = {
    Obj("now", "AllocationNow", "Allocation now, from the nodes"),
    List("history", "AllocationPoint", "The cluster's (or node's) history"),
};
constexpr PropertySpec kAllocationNow[] = {
    Int("allocated", "GPUs given to pods"),
    Int("allocatable", "GPUs pods may be given"),
    Num("ratio", "allocated / allocatable"),
    List("nodes", "AllocationNode", "Per node"),
};
constexpr PropertySpec kAllocationNode[] = {
    Str("name", "Node name"),
    Int("allocated", "GPUs given to pods"),
    Int("allocatable", "GPUs pods may be given"),
    Num("ratio", "allocated / allocatable"),
};
constexpr PropertySpec kAllocationPoint[] = {
    Time("at", "Unix seconds"),
    Int("allocated", "GPUs given to pods"),
    Int("allocatable", "GPUs pods may be given"),
    Num("ratio", "allocated / allocatable"),
};
constexpr PropertySpec kWorkload[] = {
    Str("uid", "Workload uid"),
    Str("apiVersion", "Kubernetes apiVersion"),
    Str("kind", "Kind (\"PyTorchJob\")"),
    Str("name", "Name"),
    Str("namespace", "Namespace"),
    Str("parentUid", "Owning workload's uid, if any"),
    Str("status", "Status (\"Running\")"),
    Int("gpuRequest", "GPUs requested"),
    Int("activePods", "Pods running"),
    Time("createdAt", "Created, Unix seconds"),
    Time("endedAt", "Ended, Unix seconds"),
    Time("updatedAt", "Last written, Unix seconds"),
};
constexpr PropertySpec kWorkloadDetail[] = {
    Obj("workload", "Workload", "The workload"),
    List("pods", "Pod", "Its pods"),
    List("gpus", "WorkloadGpu", "The GPUs its pods' containers hold"),
    List("lifecycle", "PodEvent", "Its pods' lifecycle events, oldest first"),
    List("runs", "TrainingRun", "Its training runs"),
    Obj("latestIteration", "Iteration", "The newest iteration, or null", true),
    List("events", "TrainingEvent", "Training start/end and checkpoints"),
};
constexpr PropertySpec kWorkloadGpu[] = {
    Str("node", "Node"),
    OptInt("gpuIndex", "Index on the node, or null if not in its inventory"),
    Str("serial", "Serial number (or the identity the container holds)"),
    Str("bdf", "PCI address"),
    Str("model", "GPU model"),
    Str("pod", "Pod holding it"),
    Str("container", "Container holding it"),
    Str("containerState", "created, running, paused, exited, unknown"),
};
constexpr PropertySpec kPodEvent[] = {
    Time("at", "When, Unix seconds"),
    Str("pod", "Pod name"),
    Str("type", "Scheduled, Running, Restarted, ..."),
    Str("phase", "Kubernetes phase after it"),
    Int("restartCount", "Container restarts so far"),
};
constexpr PropertySpec kPod[] = {
    Str("uid", "Pod uid"),
    Str("name", "Pod name"),
    Str("namespace", "Namespace"),
    Str("node", "Node it runs on"),
    Str("phase", "Kubernetes phase"),
    Str("workloadUid", "Owning workload's uid"),
    Str("ip", "Pod IP"),
    Int("gpuAllocated", "GPUs given to it"),
    Bool("running", "Running now"),
    Bool("deleted", "Deleted from the cluster"),
    Int("restarts", "Container restarts"),
    Time("createdAt", "Created, Unix seconds"),
    Time("startedAt", "Started, Unix seconds"),
    Time("endedAt", "Ended, Unix seconds"),
};
constexpr PropertySpec kTrainingRun[] = {
    Int("run", "Run number (1, 2, ...: restarts start a new run)"),
    Str("source", "The log it was read from"),
    OptInt("firstIteration", "First iteration stored"),
    OptInt("lastIteration", "Last iteration stored"),
    Int("iterations", "Iterations stored"),
    Time("createdAt", "First stored, Unix seconds"),
};
constexpr PropertySpec kIteration[] = {
    Int("run", "Run number"),
    Int("iteration", "Iteration (step) number"),
    Num("timestamp", "The log line's time, Unix seconds"),
    OptInt("rank", "Rank that printed it"),
    {"fields", J::kMap, "Typed fields by snake_case name (lens/training.h)"},
};
constexpr PropertySpec kTrainingEvent[] = {
    Str("type",
        "training_start, checkpoint_save_start, checkpoint_save_end "
        "or training_end"),
    Int("run", "Run number"),
    OptInt("iteration", "Checkpoint iteration"),
    Num("timestamp", "Unix seconds"),
    Num("durationSeconds", "Checkpoint save duration, seconds"),
    Str("path", "Checkpoint path"),
};
constexpr PropertySpec kStorage[] = {
    Str("name", "Name"),
    Str("kind", "\"postgresql\", \"opensearch\", \"s3\", ..."),
    Str("status", "Status"),
    Obj("config", "", "Its configuration (URL passwords redacted)", true),
    Time("updatedAt", "Last written, Unix seconds"),
};
constexpr PropertySpec kGpuHeatmap[] = {
    Scalars("times", J::kInteger, "Column times, Unix seconds (step apart)",
            false),
    List("nodes", "HeatmapNode", "Nodes by name"),
};
constexpr PropertySpec kHeatmapNode[] = {
    Str("node", "Node name"),
    List("gpus", "HeatmapGpu", "GPUs by index"),
};
constexpr PropertySpec kHeatmapGpu[] = {
    Str("gpu", "GPU index"),
    Scalars("values", J::kNumber,
            "Utilisation 0..1 at each of `times`; null: no sample", true),
};
constexpr PropertySpec kGpuMetrics[] = {
    List("metrics", "GpuMetric", "One entry per metric"),
};
constexpr PropertySpec kGpuMetric[] = {
    Str("metric",
        "lens_gpu_utilization_ratio, lens_gpu_memory_used_bytes, "
        "lens_gpu_power_watts or lens_gpu_temperature_celsius"),
    List("series", "GpuSeries", "One series per GPU, by index"),
};
constexpr PropertySpec kGpuSeries[] = {
    Str("gpu", "GPU index"),
    Points("points"),
};
constexpr PropertySpec kWorkloadGpuMetrics[] = {
    List("metrics", "WorkloadGpuMetric", "One entry per metric"),
};
constexpr PropertySpec kWorkloadGpuMetric[] = {
    Str("metric",
        "lens_gpu_utilization_ratio, lens_gpu_memory_used_bytes, "
        "lens_gpu_power_watts or lens_gpu_temperature_celsius"),
    List("series", "WorkloadGpuSeries", "One series per node and GPU"),
};
constexpr PropertySpec kWorkloadGpuSeries[] = {
    Str("node", "Node name"),
    Str("gpu", "GPU index"),
    Points("points"),
};
constexpr PropertySpec kFlows[] = {
    List("items", "FlowGroup",
         "By node, workload, class and direction; "
         "busiest first"),
    List("remotes", "FlowRemote",
         "Busiest remote addresses per node; "
         "busiest first"),
};
constexpr PropertySpec kFlowGroup[] = {
    Str("node", "Node"),
    Str("workload", "The pod as namespace/name; empty: not a pod (host)"),
    Str("class",
        "Remote class: localhost, dns, k8s_svc, k8s_pod, docker, "
        "internal or external"),
    Str("direction", "egress (connected out), ingress or unknown"),
    {"bytesPerSecond", J::kNumber,
     "Bytes sent plus received per second, "
     "mean over the range"},
    {"retransmitsPerSecond", J::kNumber,
     "Segments retransmitted per second, mean over the range"},
};
constexpr PropertySpec kFlowRemote[] = {
    Str("node", "Node"),
    Str("remote", "Remote IP address (\"other\": the rest)"),
    Str("class", "Remote class"),
    Str("direction", "egress, ingress or unknown"),
    {"bytesPerSecond", J::kNumber,
     "Bytes sent plus received per second, "
     "mean over the range"},
};
constexpr PropertySpec kTrainingSeries[] = {
    List("runs", "TrainingSeriesRun", "Runs with iterations, by number"),
    List("events", "TrainingMarker",
         "Run starts, training events and "
         "checkpoints, by run"),
};
constexpr PropertySpec kTrainingSeriesRun[] = {
    Int("run", "Run number"),
    List("points", "TrainingPoint", "Sampled iterations, in order"),
};
constexpr PropertySpec kTrainingPoint[] = {
    Int("iteration",
        "Iteration: the run's first and last and, between "
        "them, the last at or before evenly spaced iterations"),
    Num("timestamp", "Its log line's time, Unix seconds"),
    Num("loss", "Training loss"),
    Num("tflopsPerGpu", "Model TFLOP/s per GPU"),
    Num("tokensPerSecondPerGpu", "Tokens per second per GPU"),
    Num("stepSeconds", "Step time, seconds"),
};
constexpr PropertySpec kTrainingMarker[] = {
    Str("type",
        "run_start (the first iteration of a run; after run 1 a "
        "restart), training_start, checkpoint_save_start, "
        "checkpoint_save_end or training_end"),
    OptInt("iteration", "Iteration"),
    Num("timestamp", "Unix seconds"),
    Int("run", "Run number"),
};

// clang-format off
constexpr SchemaSpec kSchemas[] = {
    {"Cluster", "One cluster's overview", kCluster},
    {"ClusterNodes", "Node counts", kClusterNodes},
    {"ClusterGpus", "GPU counts", kClusterGpus},
    {"ClusterWorkloads", "Workload counts", kClusterWorkloads},
    {"Node", "A node", kNode},
    {"NodeDetail", "A node with its devices and containers", kNodeDetail},
    {"GpuDevice", "A GPU", kGpuDevice},
    {"RdmaDevice", "An RDMA device", kRdmaDevice},
    {"DeviceChange", "A device change", kDeviceChange},
    {"Container", "A container (no labels or environment)", kContainer},
    {"ContainerDevice", "A device a container holds", kContainerDevice},
    {"GpuAllocation", "GPU allocation now and over time", kGpuAllocation},
    {"AllocationNow", "Allocation now", kAllocationNow},
    {"AllocationNode", "One node's allocation", kAllocationNode},
    {"AllocationPoint", "One point of the history", kAllocationPoint},
    {"Workload", "A workload (no labels)", kWorkload},
    {"WorkloadDetail", "A workload with pods and training", kWorkloadDetail},
    {"Pod", "A GPU pod (no labels)", kPod},
    {"WorkloadGpu", "A GPU a workload's container holds", kWorkloadGpu},
    {"PodEvent", "A pod lifecycle event", kPodEvent},
    {"TrainingRun", "A training run", kTrainingRun},
    {"Iteration", "A training iteration", kIteration},
    {"TrainingEvent", "A training event", kTrainingEvent},
    {"Storage", "A storage system", kStorage},
    {"GpuHeatmap", "GPU utilisation, node x GPU x time", kGpuHeatmap},
    {"HeatmapNode", "One node's rows", kHeatmapNode},
    {"HeatmapGpu", "One GPU's row", kHeatmapGpu},
    {"GpuMetrics", "A node's GPU metrics over time", kGpuMetrics},
    {"GpuMetric", "One metric's series", kGpuMetric},
    {"GpuSeries", "One GPU's points", kGpuSeries},
    {"WorkloadGpuMetrics", "A workload's GPU metrics over time",
     kWorkloadGpuMetrics},
    {"WorkloadGpuMetric", "One metric's series", kWorkloadGpuMetric},
    {"WorkloadGpuSeries", "One node's GPU's points", kWorkloadGpuSeries},
    {"Flows", "TCP traffic rates over a range", kFlows},
    {"FlowGroup", "Traffic of one node, workload, class and direction",
     kFlowGroup},
    {"FlowRemote", "Traffic with one remote address", kFlowRemote},
    {"TrainingSeries", "A workload's training progress, sampled per run",
     kTrainingSeries},
    {"TrainingSeriesRun", "One run's points", kTrainingSeriesRun},
    {"TrainingPoint", "A sampled iteration", kTrainingPoint},
    {"TrainingMarker", "An event to mark on the charts", kTrainingMarker},
};
// clang-format on

}  // namespace

std::span<const SchemaSpec> Schemas() {
  static const std::vector<SchemaSpec> all = [] {
    std::vector<SchemaSpec> v(std::begin(kSchemas), std::end(kSchemas));
    for (const SchemaSpec& s : InsightSchemas()) v.push_back(s);
    return v;
  }();
  return all;
}

const SchemaSpec* FindSchema(std::string_view name) {
  for (const SchemaSpec& s : Schemas()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace lens::api
