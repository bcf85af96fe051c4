// Placement audit (docs/insights.md): per pod, where its GPUs, RDMA devices
// and CPUs sit in the machine, and what is placed badly.
//
// Two halves. Readers take a node's topology from sysfs under a root
// (HostRoots: the live /sys, a host filesystem mounted into the agent's
// container, or a fixture tree): each PCI function's NUMA node, PCIe root
// complex and bridge chain, the CPUs of each NUMA node, and a container's
// cpuset. The audit is a pure function over those plain values and the
// pods' devices (ContainerDeviceRecord, as the node agent tracks them).
//
//   auto topo = lens::ReadNodeTopology(roots, bdfs);       // once per node
//   std::vector<lens::PlacementPod> pods = ...;            // devices + cpus
//   auto report = lens::AuditPlacement(*topo, pods);       // one per pod
//
// Which NIC a GPU uses for RDMA is decided the way NCCL decides it (see
// AuditPlacement): the closest of its container's RDMA devices in the PCIe
// tree. The audit flags a GPU whose NIC sits on another NUMA node or under
// another root complex, and a container whose cpuset is on NUMA nodes other
// than its GPUs'. What cannot be judged (numa_node -1, a device missing from
// sysfs, no cpuset) is reported as unknown, never as wrong.
#ifndef LENS_INSIGHTS_PLACEMENT_H_
#define LENS_INSIGHTS_PLACEMENT_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lens/export.h"
#include "lens/host.h"
#include "lens/model.h"
#include "lens/status.h"

namespace lens {

class TimeSeriesSource;  // lens/timeseries.h

// ---- topology, as sysfs shows it ----------------------------------------

// Where one PCI function sits. Plain value.
struct LENS_EXPORT PciPlacement {
  std::string bdf;  // "0000:0c:00.0", lower case
  // The function's numa_node; nullopt when the kernel says -1 (unknown: a
  // firmware without proximity information, most VMs, single-node kernels)
  // or has no numa_node file.
  std::optional<int> numa_node;
  // The PCIe root complex (host bridge) the function hangs off, as the
  // kernel names its root bus device: "pci0000:00", "pci10000:00" (VMD).
  std::string root_complex;
  // The PCI bridges between the root complex and the function, from the
  // root port down (BDFs): ["0000:00:01.1"] for a device on a root port,
  // ["0000:00:01.1", "0000:01:00.0", "0000:02:00.0"] behind a PCIe switch
  // (its upstream and downstream ports). Two functions that share a bridge
  // sit under one root port or switch.
  std::vector<std::string> bridges;

  bool operator==(const PciPlacement&) const = default;
};

// The CPUs of one NUMA node. Plain value.
struct LENS_EXPORT NumaNodeCpus {
  int node = 0;
  std::vector<int> cpus;  // sorted; empty for a memory-only node
  bool operator==(const NumaNodeCpus&) const = default;
};

// The parts of one node's topology the audit needs. Plain value.
struct LENS_EXPORT NodeTopology {
  std::vector<PciPlacement> devices;  // any order, one per BDF
  std::vector<NumaNodeCpus> numa_nodes;
};

// Parses a kernel CPU list ("0-15,64-79", "3", "" for none; as
// cpuset.cpus.effective, nodeN/cpulist and Cpus_allowed_list print it;
// surrounding whitespace and newline ignored) into sorted, distinct CPU
// numbers. InvalidArgument saying what is wrong: not a number, a range
// whose end is below its start, a CPU number of 65536 or more.
LENS_EXPORT StatusOr<std::vector<int>> ParseCpuList(std::string_view text);

// The inverse: "0-15,64-79" for sorted, distinct CPUs ("" for none).
LENS_EXPORT std::string FormatCpuList(std::span<const int> cpus);

// Reads where the function `bdf` ("dddd:bb:dd.f") sits:
// <sysfs>/bus/pci/devices/<bdf> is a symbolic link into
// devices/.../pci<domain>:<bus>/<root port>/.../<bdf>; the root complex is
// that pci<domain>:<bus> component (the last one, so that a host bridge
// below a VM bus, as on Hyper-V, is found too) and the bridges are the
// functions between it and the device. numa_node is read from the
// function's directory. Errors: InvalidArgument for a `bdf` that is not a
// PCI address, or a link target without a root bus (both name the value);
// NotFound when the function is not in sysfs; others name the file.
LENS_EXPORT StatusOr<PciPlacement> ReadPciPlacement(const HostRoots& roots,
                                                    std::string_view bdf);

// Reads <sysfs>/devices/system/node/node<N>/cpulist for every node, sorted
// by node. An empty vector when the directory does not exist (a kernel
// built without NUMA): not an error. Errors name the file.
LENS_EXPORT StatusOr<std::vector<NumaNodeCpus>> ReadNumaNodeCpus(
    const HostRoots& roots);

// ReadPciPlacement for each of `bdfs` (duplicates read once; a function
// not in sysfs is left out, so the audit reports it as unknown) and
// ReadNumaNodeCpus. Errors: the first other error, as those functions
// return it.
LENS_EXPORT StatusOr<NodeTopology> ReadNodeTopology(
    const HostRoots& roots, std::span<const std::string> bdfs);

// The CPUs a process may run on by its cpuset cgroup. On a cgroup v2 host
// (<sysfs>/fs/cgroup/cgroup.controllers exists) the "0::" line of
// <procfs>/<pid>/cgroup names its cgroup and the answer is that cgroup's
// cpuset.cpus.effective, or the nearest ancestor's when the cpuset
// controller is not enabled down to it (the kernel then applies the
// ancestor's). On a v1 or hybrid host the "cpuset" line names it under
// <sysfs>/fs/cgroup/cpuset, file cpuset.effective_cpus. Pass a container's
// init pid (ContainerRecord's pid). Errors: NotFound when the process is
// gone or no cpuset hierarchy is mounted; InvalidArgument for a malformed
// cgroup file or CPU list (naming the file).
LENS_EXPORT StatusOr<std::vector<int>> ReadProcessCpuset(const HostRoots& roots,
                                                         int64_t pid);

// ---- the audit ------------------------------------------------------------

// One container of a pod, as the node agent knows it. Plain value.
struct LENS_EXPORT PlacementContainer {
  std::string container_id;
  std::string container_name;
  // GPU and RDMA devices (kOther is ignored), with their BDFs.
  std::vector<ContainerDeviceRecord> devices;
  // The container's cpuset (ReadProcessCpuset); nullopt when not known.
  std::optional<std::vector<int>> cpus;
};

// One pod on the audited node. Plain value.
struct LENS_EXPORT PlacementPod {
  std::string pod_uid;
  std::string pod_namespace;
  std::string pod_name;
  std::vector<PlacementContainer> containers;
};

// How close two PCI functions are, closest first (the classes of
// `nvidia-smi topo -m`). kUnknown ranks between kSameNumaNode and
// kOtherNumaNode: a device that may be local beats one known to be remote.
enum class PcieDistance : uint8_t {
  kSameSwitch,       // PIX/PXB: they share a PCIe switch or root port
  kSameRootComplex,  // PHB: only the host bridge in common
  kSameNumaNode,     // NODE: other host bridges of one NUMA node
  kUnknown,          // a NUMA node or the device's place is not known
  kOtherNumaNode,    // SYS: across the inter-socket link
};
// "same-switch", "same-root-complex", "same-numa-node", "unknown",
// "other-numa-node".
LENS_EXPORT std::string_view ToString(PcieDistance distance);

// One GPU or RDMA device of a pod, placed. Plain value.
struct LENS_EXPORT PlacedDevice {
  DeviceKind kind = DeviceKind::kGpu;
  std::string device_key;  // GPU serial (or BDF), RDMA device name
  std::string bdf;
  std::string container_id;
  // False when the BDF is empty or not in the node's topology; the fields
  // below are then empty.
  bool topology_known = false;
  std::optional<int> numa_node;
  std::string root_complex;
  std::vector<std::string> bridges;
  // GPUs: the RDMA device it will use (key and BDF; empty when its
  // container has none) and how close it is.
  std::string nic_key;
  std::string nic_bdf;
  PcieDistance nic_distance = PcieDistance::kUnknown;
};

// One container's CPUs against its GPUs. Plain value.
struct LENS_EXPORT PlacedCpuset {
  std::string container_id;
  std::string container_name;
  bool known = false;               // the cpuset was given
  std::vector<int> cpus;            // sorted
  std::vector<int> numa_nodes;      // nodes holding some of its CPUs
  std::vector<int> gpu_numa_nodes;  // known nodes of its GPUs
};

enum class PlacementIssue : uint8_t {
  // A GPU's NIC is on another NUMA node (its root complex differs too; one
  // flag per GPU, this one).
  kNicOnOtherNumaNode,
  // A GPU's NIC is under another root complex (same or unknown NUMA node).
  kNicUnderOtherRootComplex,
  // CPUs of a container's cpuset are on NUMA nodes holding none of its
  // GPUs (all of the cpuset, or part: see PlacementFlag::partial).
  kCpusOffGpuNumaNodes,
  // GPUs on a NUMA node that holds none of the container's CPUs, while
  // other CPUs of the cpuset do sit with its other GPUs.
  kGpusWithoutLocalCpus,
};
// "nic-on-other-numa-node", "nic-under-other-root-complex",
// "cpus-off-gpu-numa-nodes", "gpus-without-local-cpus".
LENS_EXPORT std::string_view ToString(PlacementIssue issue);

// One thing placed wrong. Plain value.
struct LENS_EXPORT PlacementFlag {
  PlacementIssue issue = PlacementIssue::kNicOnOtherNumaNode;
  std::string container_id;
  std::vector<std::string> gpu_bdfs;  // the GPUs concerned
  std::vector<int> gpu_numa_nodes;    // their NUMA nodes
  // NIC issues: the NIC and where both sit.
  std::string nic_key;
  std::string nic_bdf;
  std::optional<int> nic_numa_node;
  std::string gpu_root_complex;
  std::string nic_root_complex;
  // CPU issues: the CPUs off the GPUs' nodes (kCpusOffGpuNumaNodes) or the
  // whole cpuset (kGpusWithoutLocalCpus), and the nodes they are on.
  std::vector<int> cpus;
  std::vector<int> cpu_numa_nodes;
  // kCpusOffGpuNumaNodes: some of the cpuset is on the GPUs' nodes.
  bool partial = false;
  // One sentence naming the devices, CPUs and NUMA nodes.
  std::string message;
};

// The audit of one pod. Plain value.
struct LENS_EXPORT PodPlacement {
  std::string pod_uid;
  std::string pod_namespace;
  std::string pod_name;
  std::vector<PlacedDevice> gpus;     // by container, then BDF, then key
  std::vector<PlacedDevice> nics;     // RDMA devices, in the same order
  std::vector<PlacedCpuset> cpusets;  // containers with GPUs, in order
  std::vector<PlacementFlag> flags;
  // What could not be judged, one sentence each: a NUMA node of -1, a
  // device not in sysfs, a container without a known cpuset, CPUs on no
  // listed NUMA node.
  std::vector<std::string> unknowns;
};

// Audits the pods of one node against its topology. Pure; safe to call
// from any thread.
//
// The NIC a GPU uses: among the RDMA devices of the GPU's container, those
// at the smallest PcieDistance from it; when several tie, the container's
// GPUs with the same tied set take them in turn (GPUs and NICs in BDF
// order), as NCCL spreads GPUs over equally close NICs
// (ncclTopoGetLocalNet). NCCL also weighs link bandwidth and may be
// steered by NCCL_IB_HCA or a topology file; the audit does not see those.
//
// Flags, at most one per GPU for its NIC (kNicOnOtherNumaNode when both
// NUMA nodes are known and differ, else kNicUnderOtherRootComplex when the
// root complexes differ) and per container for its cpuset against the
// known NUMA nodes of its GPUs. A NUMA node of -1 is never a mismatch; it
// is listed in `unknowns`. Pods without GPUs are left out.
LENS_EXPORT std::vector<PodPlacement> AuditPlacement(
    const NodeTopology& topology, std::span<const PlacementPod> pods);

// {"pods": [...]}: each pod's GPUs and NICs (NUMA node or null, root
// complex, bridges; a GPU's NIC with its distance), its containers'
// cpusets, flags (issue, devices, NUMA nodes, CPUs, message) and unknowns,
// camelCase keys: the node agent's GET /placement.
LENS_EXPORT std::string PlacementJson(std::span<const PodPlacement> pods);

// The audit of the containers a node runs (those with a GPU, grouped by
// pod; each cpuset read from its init pid): the topology read for their
// devices under `roots`. What the node agent serves at GET /placement.
LENS_EXPORT StatusOr<std::vector<PodPlacement>> AuditNodePlacement(
    const HostRoots& roots, std::span<const ContainerRecord> containers);

// ---- the cluster's view, from the agents' metrics ---------------------------

// One device of a pod as the agents' lens_pod_placement_device_info shows
// it.
struct PodPlacementDevice {
  std::string kind;    // "gpu" or "rdma"
  std::string device;  // GPU serial (or BDF), RDMA device name
  std::string bdf;
  std::string numa_node;     // "0", ...; "unknown"
  std::string root_complex;  // "pci0000:00"; "unknown"
  std::string nic;           // a GPU's NIC ("" when none)
  std::string nic_distance;  // ToString(PcieDistance); "" without a NIC
};

// A pod the agents audit (lens_pod_placement_issues and
// lens_pod_placement_device_info) at the end of a range.
struct PodPlacementIssues {
  std::string node;
  std::string pod_namespace;
  std::string pod_name;
  // (issue, flags) with flags > 0 at the pod's last point, by issue; empty
  // for a pod placed well.
  std::vector<std::pair<std::string, int32_t>> issues;
  std::vector<PodPlacementDevice> devices;  // GPUs, then RDMA; by BDF
  Timestamp last_seen{};
};

// The agents' placement series over [from, to] at `step` from a
// time-series source (the scrape's `node` label): every pod seen within
// two steps (at least 5 minutes) of `to`, with its devices' places and its
// issues at its last point; by node, namespace and pod. The node's
// GET /placement has the same with the CPUs and a sentence per flag.
LENS_EXPORT StatusOr<std::vector<PodPlacementIssues>> ReadPlacementIssues(
    TimeSeriesSource& source, Timestamp from, Timestamp to,
    std::chrono::milliseconds step);

}  // namespace lens

#endif  // LENS_INSIGHTS_PLACEMENT_H_
