// The insight routes' component schemas (schemas.h, docs/insights.md).
#include "api/schema_rows.h"
#include "api/schemas.h"

namespace lens::api {
namespace {

using namespace schema_rows;  // NOLINT: the table rows

constexpr PropertySpec kIdleGpus[] = {
    Int("from", "Range from (Unix seconds)"),
    Int("to", "Range to (Unix seconds): `now` for ongoing episodes"),
    Num("thresholdRatio", "Utilisation under this is idle (0..1)"),
    Int("windowSeconds", "An idle stretch counts once it lasts this long"),
    List("episodes", "IdleGpuEpisode",
         "Idle stretches of held GPUs: ongoing first, then by GPU-hours"),
    List("workloads", "IdleGpuWorkload",
         "Per workload (or pod without one): GPUs idle now and GPU-hours"),
};
constexpr PropertySpec kIdleGpuEpisode[] = {
    Str("node", "Node name"),
    Str("gpu", "GPU index on the node"),
    Str("serial", "GPU serial (\"\" when unknown)"),
    Str("podUid", "The holding pod's uid"),
    Str("podName", "The holding pod's name"),
    Str("namespace", "The pod's namespace"),
    Str("workloadUid", "The pod's top-level workload (\"\" when none)"),
    Str("workloadName", "The workload's name"),
    Time("since", "The first idle sample (Unix seconds)"),
    Time("until", "The end of the idle time seen (Unix seconds)"),
    Bool("ongoing", "Still idle and still held at the range's end"),
    Num("meanUtilization", "Mean utilisation over the stretch (0..1)"),
    Num("gpuHours", "Idle time in GPU-hours"),
};
constexpr PropertySpec kIdleGpuWorkload[] = {
    Str("workloadUid", "Workload uid (\"\" for a pod without one)"),
    Str("workloadName", "Workload name (the pod's for a pod without one)"),
    Str("namespace", "Namespace"),
    Int("idleGpusNow", "GPUs idle now"),
    Num("gpuHours", "Idle GPU-hours over the range"),
    Int("episodes", "Idle stretches over the range"),
};
constexpr PropertySpec kGoodput[] = {
    Obj("total", "GoodputBreakdown", "The workload's wall time, split"),
    Num("tflopsPerGpu",
        "Time-weighted TFLOP/s per GPU over productive time (null: none "
        "logged)"),
    Num("mfu", "tflopsPerGpu over the GPU model's peak (null: unknown)"),
    Str("gpuModel", "The GPU model of the nodes its pods ran on"),
    Num("peakTflops", "The model's peak dense BF16/FP16 TFLOP/s"),
    Str("peakSource", "Where the peak figure comes from"),
    Int("restarts", "Runs after the first"),
    Int("iterationsUsed", "Logged iterations the split used (one rank)"),
    Int("iterationsWithoutTime", "Logged iterations left out: no timestamp"),
    List("runs", "GoodputRun", "Per training run, by number"),
};
constexpr PropertySpec kGoodputRun[] = {
    Int("run", "Run number"),
    Int("firstIteration", "First logged iteration"),
    Int("lastIteration", "Last logged iteration"),
    Time("firstIterationAt", "When (Unix seconds)"),
    Time("lastIterationAt", "When (Unix seconds)"),
    Num("tflopsPerGpu", "Time-weighted TFLOP/s per GPU"),
    Num("mfu", "Model FLOPs utilisation (0..1)"),
    Obj("breakdown", "GoodputBreakdown", "The run's share of the wall time"),
};
constexpr PropertySpec kGoodputBreakdown[] = {
    Num("wallSeconds", "The sum of the parts"),
    Num("schedulingSeconds", "Created to first running"),
    Num("startupSeconds", "First running to first iteration"),
    Num("productiveSeconds", "Iterations not done before"),
    Num("checkpointSeconds", "Checkpoint saves"),
    Num("restartSeconds",
        "A run's last iteration to the next run's first, plus iterations "
        "redone"),
    Num("idleSeconds", "Stalls, and after the last iteration"),
    Num("goodput", "productiveSeconds / wallSeconds"),
    Int("iterationsRedone", "Iterations an earlier run had done"),
};

constexpr PropertySpec kStragglers[] = {
    Int("from", "Range from (Unix seconds)"),
    Int("to", "Range to (Unix seconds)"),
    Int("gpus", "The workload's GPUs in the range (its containers' holdings)"),
    Obj("utilization", "StragglerStats",
        "The job's GPU utilisation: median and MAD (null: too few GPUs)", true),
    Obj("stepTime", "StragglerStats",
        "The ranks' step times (null: no per-rank step times)", true),
    List("suspects", "StragglerSuspect",
         "Outliers ranked by score, then by evidence found"),
};
constexpr PropertySpec kStragglerStats[] = {
    Str("measure", "\"utilization\" or \"step_time\""),
    Int("entities", "GPUs (or ranks) measured"),
    Num("median", "The job's median"),
    Num("mad", "Median absolute deviation"),
    Int("nodes", "Nodes measured"),
    Num("nodeMedian", "The median of the nodes' medians"),
    Num("nodeMad", "Their median absolute deviation"),
};
constexpr PropertySpec kStragglerSuspect[] = {
    Str("scope", "\"gpu\" (one GPU or rank) or \"node\" (a whole node)"),
    Str("node", "Node name"),
    Str("gpu", "GPU index (\"\" for a node, or a rank without a GPU)"),
    OptInt("rank", "The rank, when step times gave one"),
    Scalars("ranksOut", J::kInteger, "A node suspect's ranks out", false),
    Scalars("gpusOut", J::kString, "A node suspect's GPUs out", false),
    Num("score", "The largest finding's modified z-score"),
    List("findings", "StragglerFinding", "What is out, largest score first"),
    List("evidence", "StragglerEvidence",
         "What Lens holds for the same interval (empty: no evidence found)"),
};
constexpr PropertySpec kStragglerFinding[] = {
    Str("measure", "\"utilization\" or \"step_time\""),
    Num("value", "The suspect's value"),
    Num("jobMedian", "The job's median (its nodes' for a node)"),
    Num("score", "Modified z-score, slower is larger"),
    Num("deviationRatio", "|value - jobMedian| / jobMedian"),
};
constexpr PropertySpec kStragglerEvidence[] = {
    Str("kind",
        "gpu_throttle, gpu_temperature, gpu_power, gpu_ecc_errors, "
        "rdma_port_errors, rdma_congestion or tcp_retransmits"),
    Str("gpu", "GPU index (\"\" for node-wide evidence)"),
    Str("device", "RDMA device/port, or the pod for TCP"),
    Str("name", "Throttle reason, sensor, ECC type or counter"),
    Num("amount", "Increase, share of time, or degrees, by kind"),
    Num("peerMedian", "The node's other GPUs' median, where compared"),
};

constexpr PropertySpec kDeviceHealth[] = {
    Int("from", "Range from (Unix seconds)"),
    Int("to", "Range to (Unix seconds)"),
    List("devices", "DeviceHealthSeen",
         "Unhealthy first, then degraded, then healthy; by node and device"),
    List("changes", "DeviceHealthChange",
         "State changes in the range, by time"),
};
constexpr PropertySpec kDeviceHealthSeen[] = {
    Str("kind", "\"gpu\" or \"rdma_port\""),
    Str("node", "Node name"),
    Str("device", "GPU index, or the HCA (\"mlx5_0\")"),
    Int("port", "RDMA port (0 for a GPU)"),
    Str("id", "GPU serial, or node GUID/port"),
    Str("state",
        "\"healthy\", \"degraded\" or \"unhealthy\" at its last point"),
    Time("since", "The first point of its last run in that state"),
    Time("lastSeen", "Its last point"),
    Int("changes", "State changes within the range"),
};
constexpr PropertySpec kDeviceHealthChange[] = {
    Str("kind", "\"gpu\" or \"rdma_port\""),
    Str("node", "Node name"),
    Str("device", "GPU index, or the HCA"),
    Int("port", "RDMA port (0 for a GPU)"),
    Str("id", "GPU serial, or node GUID/port"),
    Time("at", "The first point in the new state"),
    Str("from", "The state before"),
    Str("to", "The state after"),
};

constexpr PropertySpec kPlacementIssues[] = {
    Int("from", "Range from (Unix seconds)"),
    Int("to", "Range to (Unix seconds)"),
    List("pods", "PlacementPodIssues",
         "Pods with GPUs at the range's end, by node, namespace and pod"),
};
constexpr PropertySpec kPlacementPodIssues[] = {
    Str("node", "Node name (its GET /placement names the devices and CPUs)"),
    Str("namespace", "Pod namespace"),
    Str("pod", "Pod name"),
    Time("lastSeen", "Its last point"),
    List("issues", "PlacementIssueCount",
         "Issues with flags, by issue (empty: placed well)"),
    List("devices", "PlacementDevice", "Its GPUs, then RDMA devices"),
};
constexpr PropertySpec kPlacementDevice[] = {
    Str("kind", "\"gpu\" or \"rdma\""),
    Str("device", "GPU serial (or bus address), RDMA device name"),
    Str("bdf", "PCI bus address"),
    Str("numaNode", "NUMA node, or \"unknown\""),
    Str("rootComplex", "PCIe root complex (\"pci0000:00\"), or \"unknown\""),
    Str("nic", "A GPU's NIC for RDMA (\"\" when none)"),
    Str("nicDistance",
        "same-switch, same-root-complex, same-numa-node, unknown or "
        "other-numa-node (\"\" without a NIC)"),
};
constexpr PropertySpec kPlacementIssueCount[] = {
    Str("issue",
        "nic-on-other-numa-node, nic-under-other-root-complex, "
        "cpus-off-gpu-numa-nodes or gpus-without-local-cpus"),
    Int("flags", "How many (GPUs, or containers)"),
};

// clang-format off
constexpr SchemaSpec kInsightSchemas[] = {
    {"IdleGpus", "Allocated GPUs that stayed idle", kIdleGpus},
    {"IdleGpuEpisode", "One holder's idle stretch of one GPU", kIdleGpuEpisode},
    {"IdleGpuWorkload", "Idle GPUs of one workload", kIdleGpuWorkload},
    {"Goodput", "A workload's goodput and MFU", kGoodput},
    {"GoodputRun", "One training run's goodput", kGoodputRun},
    {"GoodputBreakdown", "Wall time split into parts", kGoodputBreakdown},
    {"DeviceHealth", "GPU and RDMA port health over a range", kDeviceHealth},
    {"PlacementIssues", "Pods placed badly", kPlacementIssues},
    {"PlacementPodIssues", "One pod's placement flags", kPlacementPodIssues},
    {"PlacementIssueCount", "One issue's flags", kPlacementIssueCount},
    {"PlacementDevice", "Where one device sits", kPlacementDevice},
    {"DeviceHealthSeen", "One device's state", kDeviceHealthSeen},
    {"DeviceHealthChange", "One state change", kDeviceHealthChange},
    {"Stragglers", "A workload's slow GPUs and nodes with evidence",
     kStragglers},
    {"StragglerStats", "The job's robust statistics", kStragglerStats},
    {"StragglerSuspect", "One suspect", kStragglerSuspect},
    {"StragglerFinding", "One measure out", kStragglerFinding},
    {"StragglerEvidence", "One piece of evidence", kStragglerEvidence},
};
// clang-format on

}  // namespace

std::span<const SchemaSpec> InsightSchemas() { return kInsightSchemas; }

}  // namespace lens::api
