// ReadNodeFacts: procfs and sysfs files read once, parsed by proc_parse.
#include <map>
#include <string>
#include <vector>

#include "core/kernel_file.h"
#include "host/proc_parse.h"
#include "lens/node.h"

namespace lens {
namespace {

// /proc/cpuinfo grows ~1.5 KiB per logical CPU: 768 CPUs (2x EPYC 9965)
// is over the 1 MiB default of ReadKernelFile.
constexpr size_t kMaxProcFileBytes = size_t{16} << 20;

// The file's text, or "" when it does not exist; other errors name the path.
StatusOr<std::string> ReadIfPresent(const std::string& path) {
  StatusOr<std::string> text = ReadKernelFile(path, kMaxProcFileBytes);
  if (!text.ok() && text.status().code() == StatusCode::kNotFound) {
    return std::string();
  }
  return text;
}

StatusOr<std::string> ReadValueIfPresent(const std::string& path) {
  LENS_ASSIGN_OR_RETURN(std::string text, ReadIfPresent(path));
  return std::string(TrimKernelValue(text));
}

// The host's os-release: through pid 1's root (the host's, even from a
// container that mounts the host's /proc) and, on the live /proc only, the
// process's own. /usr/lib/os-release is os-release(5)'s fallback. Reading
// /proc/1/root needs privileges, so any error just moves on.
std::string ReadOsRelease(const HostRoots& roots) {
  std::vector<std::string> candidates = {
      roots.procfs + "/1/root/etc/os-release",
      roots.procfs + "/1/root/usr/lib/os-release"};
  if (roots.procfs == "/proc") {
    candidates.push_back("/etc/os-release");
    candidates.push_back("/usr/lib/os-release");
  }
  for (const std::string& path : candidates) {
    StatusOr<std::string> text = ReadKernelFile(path);
    if (text.ok()) return *std::move(text);
  }
  return "";
}

void ApplyOsRelease(const std::string& text, NodeFacts* facts) {
  std::map<std::string, std::string> fields = host::ParseOsRelease(text);
  auto get = [&](const char* key) {
    auto it = fields.find(key);
    return it == fields.end() ? std::string() : it->second;
  };
  facts->os_name = get("PRETTY_NAME");
  if (facts->os_name.empty()) facts->os_name = get("NAME");
  facts->os_id = get("ID");
  facts->os_version_id = get("VERSION_ID");
}

Status ReadCpuAndMemory(const std::string& procfs, NodeFacts* facts) {
  LENS_ASSIGN_OR_RETURN(std::string cpuinfo,
                        ReadIfPresent(procfs + "/cpuinfo"));
  LENS_ASSIGN_OR_RETURN(std::string meminfo,
                        ReadIfPresent(procfs + "/meminfo"));
  if (cpuinfo.empty() && meminfo.empty()) {
    return NotFoundError(procfs +
                         " has neither cpuinfo nor meminfo: not a procfs");
  }
  host::CpuInfo cpu = host::ParseCpuInfo(cpuinfo);
  facts->cpu_model = cpu.model;
  facts->cpu_count = cpu.logical_cpus;
  facts->cpu_sockets = cpu.sockets;
  host::MemInfo mem = host::ParseMemInfo(meminfo);
  facts->memory_total_bytes = mem.total_bytes;
  facts->memory_available_bytes = mem.available_bytes;
  return OkStatus();
}

}  // namespace

StatusOr<NodeFacts> ReadNodeFacts(const HostRoots& roots) {
  NodeFacts facts;
  const std::string& proc = roots.procfs;
  LENS_RETURN_IF_ERROR(ReadCpuAndMemory(proc, &facts));
  LENS_ASSIGN_OR_RETURN(facts.hostname,
                        ReadValueIfPresent(proc + "/sys/kernel/hostname"));
  LENS_ASSIGN_OR_RETURN(facts.kernel_release,
                        ReadValueIfPresent(proc + "/sys/kernel/osrelease"));
  LENS_ASSIGN_OR_RETURN(facts.kernel_version,
                        ReadValueIfPresent(proc + "/sys/kernel/version"));
  LENS_ASSIGN_OR_RETURN(std::string uptime, ReadIfPresent(proc + "/uptime"));
  facts.uptime_seconds = host::ParseUptime(uptime);
  ApplyOsRelease(ReadOsRelease(roots), &facts);
  // Only amdgpu built out of tree (DKMS, ROCm's packages) has a version.
  LENS_ASSIGN_OR_RETURN(
      facts.amdgpu_driver_version,
      ReadValueIfPresent(roots.sysfs + "/module/amdgpu/version"));
  LENS_ASSIGN_OR_RETURN(std::string nvidia,
                        ReadIfPresent(proc + "/driver/nvidia/version"));
  facts.nvidia_driver_version = host::ParseNvidiaDriverVersion(nvidia);
  return facts;
}

}  // namespace lens
