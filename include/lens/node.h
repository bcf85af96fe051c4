// Facts about the node itself: kernel, OS, CPU, memory, GPU driver versions
// (what the kubelet reports about it: lens/kubelet.h).
#ifndef LENS_NODE_H_
#define LENS_NODE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "lens/export.h"
#include "lens/host.h"
#include "lens/status.h"

namespace lens {

// Plain value; empty strings / nullopt mean "not reported".
struct LENS_EXPORT NodeFacts {
  std::string hostname;        // procfs sys/kernel/hostname
  std::string kernel_release;  // sys/kernel/osrelease: "6.1.0-18-amd64"
  std::string kernel_version;  // sys/kernel/version: "#1 SMP ... Debian ..."
  std::string os_name;         // os-release PRETTY_NAME
  std::string os_id;           // os-release ID: "debian", "ubuntu"
  std::string os_version_id;   // os-release VERSION_ID: "12"
  std::string cpu_model;       // cpuinfo "model name"
  int cpu_count = 0;           // logical CPUs (cpuinfo processor entries)
  std::optional<int> cpu_sockets;                  // distinct "physical id"
  std::optional<uint64_t> memory_total_bytes;      // meminfo MemTotal
  std::optional<uint64_t> memory_available_bytes;  // meminfo MemAvailable
  std::string amdgpu_driver_version;  // sysfs module/amdgpu/version
  std::string nvidia_driver_version;  // procfs driver/nvidia/version (or NVML)
  std::optional<double> uptime_seconds;  // procfs uptime
  bool operator==(const NodeFacts&) const = default;
};

// Reads the facts from procfs and sysfs. os-release is read from
// "<procfs>/1/root/etc/os-release" (the host's, also from inside a container
// with the host's /proc), falling back to /etc/os-release when procfs is
// "/proc". Errors: NotFound when procfs has neither cpuinfo nor meminfo (not
// a procfs); a single missing file leaves its fields empty.
LENS_EXPORT StatusOr<NodeFacts> ReadNodeFacts(const HostRoots& roots);

}  // namespace lens

#endif  // LENS_NODE_H_
