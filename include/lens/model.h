// The rows of the Lens data model (docs/storage.md) and the query types of
// the store's read APIs. Plain values: copyable, no behaviour.
//
// Times are UTC with microsecond precision (`lens::Timestamp`). Text fields
// are UTF-8: invalid sequences and NUL bytes are replaced by U+FFFD when
// written (the same on both backends). JSON fields hold a JSON document as
// text ("{}" when empty); they are validated when written. Labels stay a map
// until the store writes them (a JSON object column). States, event types
// and device kinds are enums, decoded where they enter (containerd, the wire,
// a stored row); their text is what the store, the wire and the REST API
// carry.
#ifndef LENS_STORE_TYPES_H_
#define LENS_STORE_TYPES_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/export.h"

namespace lens {

using Timestamp = std::chrono::sys_time<std::chrono::microseconds>;

// Kubernetes or container labels (name -> value).
using Labels = std::map<std::string, std::string>;

// ---- queries -------------------------------------------------------------

// Pagination as the REST API exposes it: 1-based page numbers; page_size is
// 1..1000 (larger is kInvalidArgument).
struct PageRequest {
  int32_t page_num = 1;
  int32_t page_size = 100;
};

template <typename T>
struct Page {
  std::vector<T> items;
  int64_t total = 0;  // rows matching the filter, over all pages
  int32_t page_num = 1;
  int32_t page_size = 0;
};

// A page of the change feed (the *WrittenSince reads of lens/store.h): rows
// in the order they were written, and the latest write time among them.
template <typename T>
struct Changes {
  std::vector<T> items;
  Timestamp through{};  // the max written time of items; `since` when none
};

// Half-open [from, to); either end may be open.
struct TimeRange {
  std::optional<Timestamp> from;
  std::optional<Timestamp> to;
};

// A sort key from the query's whitelist (each List* names its keys); an
// unknown key is kInvalidArgument listing the allowed ones. Empty = default.
struct Sort {
  std::string key;
  bool descending = false;
};

// ---- nodes and devices -----------------------------------------------------

struct NodeRecord {
  std::string name;  // Kubernetes node name (the key)
  std::string address;
  std::string status;      // e.g. "Ready", "NotReady"
  std::string gpu_vendor;  // "amd", "nvidia" or ""
  std::string gpu_model;
  int32_t gpu_count = 0;
  std::string cpu_model;
  int32_t cpu_count = 0;
  int64_t memory_bytes = 0;
  std::string kernel_version;
  std::string os_image;
  std::string driver_version;
  // From the API server's Node: status.allocatable of the GPU resource,
  // nodeInfo.kubeletVersion and containerRuntimeVersion.
  int32_t gpu_allocatable = 0;
  std::string kubelet_version;    // "v1.30.4"
  std::string container_runtime;  // "containerd://1.7.20"
  // From lens-jobs: GPUs held by the node's bound, non-terminal pods (each
  // pod once), the mean utilisation of its GPUs (0..1) as its agent last
  // reported it, and the agent's state: "ok", "stale" (it stopped
  // answering; the node's data is the last it gave), "" (no agent known).
  int32_t gpu_allocated = 0;
  std::optional<double> gpu_utilization_ratio;
  std::string agent_state;
  std::optional<Timestamp> agent_seen_at;  // its last answer
  Labels labels;
  Timestamp created_at{};  // set on first write, kept afterwards
  Timestamp updated_at{};
};

struct NodeQuery {
  std::string gpu_vendor;  // exact match when set
  std::string status;      // exact match when set
  std::string name_prefix;
  Sort sort;  // keys: name (default), updated_at, gpu_count, gpu_allocated
  PageRequest page;
};

// Which columns of a nodes row a writer owns, so that the controller (from
// the API server's Node) and lens-jobs (from the node agent) never overwrite
// each other's facts:
//  - kAll: every column (tools, tests);
//  - kKubernetes: address, status, gpu_vendor, gpu_model, gpu_count,
//    gpu_allocatable, cpu_count, memory_bytes, kernel_version, os_image,
//    kubelet_version, container_runtime, labels;
//  - kAgent: cpu_model, driver_version, gpu_allocated, gpu_utilization,
//    agent_state, agent_seen_at;
//  - kAgentAndHost: kAgent and, for a node the API server does not describe
//    (no cluster), the host facts of kKubernetes but the kubelet's.
// created_at is kept from the first write; updated_at is always written.
enum class NodeColumns : uint8_t { kAll, kKubernetes, kAgent, kAgentAndHost };

// One point of the GPU allocation history (gpu_allocation_history): GPUs
// held by pods over allocatable GPUs, per node, and for the whole cluster
// with node "".
struct GpuAllocationRecord {
  std::string node;
  Timestamp at{};
  int32_t gpus_allocated = 0;
  int32_t gpus_allocatable = 0;
};

// A GPU as the node agent inventories it; identity is serial/BDF, never the
// PCI device id.
struct GpuDeviceRecord {
  std::string node;
  int32_t gpu_index = 0;  // the key with node
  std::string vendor;
  std::string model;
  std::string serial;
  std::string uuid;
  std::string bdf;  // "0000:c1:00.0"
  int64_t vram_bytes = 0;
  int32_t numa_node = -1;  // -1: unknown
  Timestamp updated_at{};
};

struct RdmaDeviceRecord {
  std::string node;
  std::string name;  // "mlx5_0", the key with node
  std::string node_guid;
  std::string fw_version;
  std::string board_id;
  std::string bdf;
  std::string netdev;
  int32_t numa_node = -1;
  Timestamp updated_at{};
};

// A device a node has or a container holds: "gpu", "rdma", or "device" (any
// other device node a container was given).
enum class DeviceKind : uint8_t { kGpu, kRdma, kOther };
LENS_EXPORT std::string_view ToString(DeviceKind kind);
// kOther for text that names no kind.
LENS_EXPORT DeviceKind ParseDeviceKind(std::string_view text);
enum class DeviceChange : uint8_t { kCreate, kDelete, kReplace };

// One row of node_device_changelog.
struct DeviceChangeRecord {
  std::string node;
  DeviceKind kind = DeviceKind::kGpu;
  std::string device_key;  // GPU index or RDMA device name
  DeviceChange change = DeviceChange::kCreate;
  std::string old_serial;  // GPU serial / RDMA node GUID before
  std::string new_serial;  // ... and after
  Timestamp at{};
};

// A node's whole device inventory, for NodeRepository::SyncNodeDevices.
struct NodeInventory {
  std::string node;
  std::vector<GpuDeviceRecord> gpus;
  std::vector<RdmaDeviceRecord> rdma;
};

// What a device sync changed.
struct DeviceSyncResult {
  int32_t created = 0;
  int32_t deleted = 0;
  int32_t replaced = 0;
  int32_t unchanged = 0;
};

// ---- pods and workloads ----------------------------------------------------

struct PodRecord {
  std::string uid;  // the key
  std::string name;
  std::string namespace_name;
  std::string node;
  std::string phase;      // Pending, Running, Succeeded, Failed, Unknown
  std::string owner_uid;  // top-level workload, "" when none
  std::string ip;
  int32_t gpu_allocated = 0;
  bool running = false;
  bool deleted = false;
  // When its containers first ran and when it ended (Succeeded, Failed, or
  // deleted), from the API's own timestamps; restarts of all containers.
  std::optional<Timestamp> started_at;
  std::optional<Timestamp> ended_at;
  int32_t restarts = 0;
  Labels labels;
  Timestamp created_at{};
  Timestamp updated_at{};
};

struct PodQuery {
  std::string namespace_name;
  std::string node;
  std::string owner_uid;
  std::optional<bool> running;
  std::optional<bool> deleted;
  TimeRange created;  // on created_at
  Sort sort;  // keys: created_at (default, descending), name, namespace, node
  PageRequest page;
};

// One row of gpu_pods_events; (pod_uid, event_type, at) is the key, so the
// same event stored twice is one row.
struct PodEventRecord {
  std::string pod_uid;
  std::string event_type;  // e.g. "Scheduled", "Running", "Restarted"
  std::string phase;
  int32_t restart_count = 0;
  Timestamp at{};  // must be set (a zero time is kInvalidArgument)
};

struct PodSnapshotRecord {
  std::string pod_uid;
  std::string resource_version;
  std::string snapshot_json;  // the watched fields, at most 1 MiB
  Timestamp at{};
};

struct PodResourcesRecord {
  std::string pod_uid;  // the key
  std::string gpu_vendor;
  std::string gpu_model;
  int32_t gpu_allocated = 0;
  int32_t rdma_allocated = 0;
  int64_t cpu_millis = 0;
  int64_t memory_bytes = 0;
  Timestamp updated_at{};
};

struct WorkloadRecord {
  std::string uid;          // the key
  std::string api_version;  // "batch/v1", "kubeflow.org/v1", ...
  std::string kind;         // "Job", "PyTorchJob", ...
  std::string name;
  std::string namespace_name;
  std::string parent_uid;  // "" for a top-level workload
  std::string status;      // Running, Succeeded, Failed, ...
  int32_t gpu_request = 0;
  int32_t active_pods = 0;  // pods not ended nor deleted
  Labels labels;
  Timestamp created_at{};
  std::optional<Timestamp> ended_at;
  Timestamp updated_at{};
};

struct WorkloadQuery {
  std::string namespace_name;
  std::string kind;
  std::string status;
  std::optional<std::string> parent_uid;  // "" selects top-level workloads
  TimeRange created;
  Sort sort;  // keys: created_at (default, descending), name, kind, gpu_request
  PageRequest page;
  std::optional<bool> ended;  // on whether ended_at is set
};

// ---- containers -----------------------------------------------------------

// A container's state, as text: "created" (no task yet, or one not started),
// "running", "paused", "exited", "deleted"; "unknown" for anything else
// containerd or a stored row says.
enum class ContainerState : uint8_t {
  kUnknown,
  kCreated,
  kRunning,
  kPaused,
  kExited,
  kDeleted
};
LENS_EXPORT std::string_view ToString(ContainerState state);
// kUnknown for text that names no state.
LENS_EXPORT ContainerState ParseContainerState(std::string_view text);

// What happened to a container, as text: "create", "update" (devices,
// labels, image, pid or exit code changed; or a state change a relist found
// without its event), "task-create", "start", "pause", "resume", "oom",
// "exit", "task-delete", "delete"; "unknown" for anything else a stored row
// or the wire says.
enum class ContainerEventType : uint8_t {
  kUnknown,
  kCreate,
  kUpdate,
  kTaskCreate,
  kStart,
  kPause,
  kResume,
  kOom,
  kExit,
  kTaskDelete,
  kDelete
};
LENS_EXPORT std::string_view ToString(ContainerEventType type);
// kUnknown for text that names no event type.
LENS_EXPORT ContainerEventType ParseContainerEventType(std::string_view text);

// A device a container holds, and which source established it.
struct ContainerDeviceRecord {
  DeviceKind kind = DeviceKind::kGpu;
  std::string device_key;  // GPU serial (or BDF when no serial), RDMA name
  std::string bdf;
  std::string source;  // "pod-resources", "oci-spec", ...
};

struct ContainerRecord {
  std::string container_id;  // the key
  std::string node;
  std::string runtime_namespace;  // containerd namespace, "k8s.io"
  std::string pod_uid;
  std::string pod_name;
  std::string pod_namespace;
  std::string container_name;
  std::string image;
  ContainerState state = ContainerState::kUnknown;
  bool privileged = false;
  int64_t pid = 0;
  std::optional<int32_t> exit_code;
  Labels labels;
  Timestamp created_at{};
  std::optional<Timestamp> started_at;
  std::optional<Timestamp> finished_at;
  Timestamp updated_at{};
  // The full current set: writing a container replaces its device rows.
  std::vector<ContainerDeviceRecord> devices;
};

struct ContainerQuery {
  std::string node;
  std::string pod_uid;
  std::optional<ContainerState> state;
  Sort sort;  // keys: created_at (default, descending), container_id, pod_name
  PageRequest page;
};

// One row of node_container_events; (container_id, event_type, at) is the key.
struct ContainerEventRecord {
  std::string container_id;
  std::string node;
  ContainerEventType event_type = ContainerEventType::kUnknown;
  int64_t sequence = 0;  // the node's sequence number, 0 if none
  std::string detail_json = "{}";
  Timestamp at{};
};

// ---- training ---------------------------------------------------------------

struct TrainingRunRecord {
  std::string workload_uid;
  int32_t run = 0;
  std::string source;  // where it was read from (file path, pod/container)
  std::optional<int64_t> first_iteration;
  std::optional<int64_t> last_iteration;
  int64_t iterations = 0;  // stored iteration rows
  Timestamp created_at{};
};

struct IterationQuery {
  std::string workload_uid;    // required
  std::optional<int32_t> run;  // all runs when unset
  std::optional<int64_t> min_iteration;
  std::optional<int64_t> max_iteration;
  TimeRange time;  // on the line's timestamp
  Sort sort;       // keys: iteration (default: run, iteration), timestamp
  PageRequest page;
};

// ---- storage backends -------------------------------------------------------

// A storage system the cluster uses (the original's `storage` table). The
// config must not hold secrets: keys naming a password, secret, token or
// credential are refused; reference a Kubernetes Secret instead.
struct StorageRecord {
  std::string name;  // the key
  std::string kind;  // "postgresql", "opensearch", "s3", ...
  std::string status;
  std::string config_json = "{}";
  Timestamp updated_at{};
};

}  // namespace lens

#endif  // LENS_STORE_TYPES_H_
