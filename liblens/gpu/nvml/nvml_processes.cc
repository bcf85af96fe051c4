#include "gpu/nvml/nvml_processes.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "core/kernel_file.h"
#include "gpu/nvml/nvml_abi.h"
#include "lens/log.h"

namespace lens::nvml {
namespace {

template <typename Info>
Info EntryAt(std::span<const std::byte> bytes, size_t i) {
  Info info;
  std::memcpy(&info, bytes.data() + i * sizeof(Info), sizeof(Info));
  return info;
}

std::optional<uint32_t> InstanceId(unsigned id) {
  if (id == abi::kNvmlInstanceIdNone) return std::nullopt;
  return id;
}

template <typename Info>
void Decode(std::span<const std::byte> bytes, unsigned count,
            std::vector<NvmlProcess>* out) {
  const size_t n = std::min<size_t>(count, bytes.size() / sizeof(Info));
  for (size_t i = 0; i < n; ++i) {
    const Info info = EntryAt<Info>(bytes, i);
    NvmlProcess p;
    p.pid = info.pid;
    if (info.usedGpuMemory != abi::kNvmlValueNotAvailable) {
      p.used_memory_bytes = info.usedGpuMemory;
    }
    if constexpr (sizeof(Info) > sizeof(abi::nvmlProcessInfo_v1_t)) {
      p.gpu_instance_id = InstanceId(info.gpuInstanceId);
      p.compute_instance_id = InstanceId(info.computeInstanceId);
    }
    out->push_back(p);
  }
}

// The number of ids on the NSpid line of a /proc/<pid>/status; 0 when the
// line is missing (kernels before 4.1).
int NsPidDepth(std::string_view status) {
  const size_t at = status.find("\nNSpid:");
  if (at == std::string_view::npos) return 0;
  std::string_view line = status.substr(at + 7);
  line = line.substr(0, line.find('\n'));
  int depth = 0;
  bool in_number = false;
  for (char c : line) {
    const bool digit = c >= '0' && c <= '9';
    if (digit && !in_number) ++depth;
    in_number = digit;
  }
  return depth;
}

}  // namespace

size_t NvmlProcessEntryBytes(NvmlProcessLayout layout) {
  switch (layout) {
    case NvmlProcessLayout::kV1:
      return sizeof(abi::nvmlProcessInfo_v1_t);
    case NvmlProcessLayout::kV2:
      return sizeof(abi::nvmlProcessInfo_v2_t);
    case NvmlProcessLayout::kV3cc:
      return sizeof(abi::nvmlProcessInfo_v3cc_t);
  }
  return kNvmlProcessMaxEntryBytes;
}

NvmlProcessLayout NvmlV3ProcessLayout(bool has_conf_compute_mem_size_info,
                                      bool has_running_process_detail_list) {
  return has_conf_compute_mem_size_info && !has_running_process_detail_list
             ? NvmlProcessLayout::kV3cc
             : NvmlProcessLayout::kV2;
}

std::vector<NvmlProcess> DecodeNvmlProcesses(std::span<const std::byte> bytes,
                                             unsigned count,
                                             NvmlProcessLayout layout) {
  std::vector<NvmlProcess> out;
  switch (layout) {
    case NvmlProcessLayout::kV1:
      Decode<abi::nvmlProcessInfo_v1_t>(bytes, count, &out);
      break;
    case NvmlProcessLayout::kV2:
      Decode<abi::nvmlProcessInfo_v2_t>(bytes, count, &out);
      break;
    case NvmlProcessLayout::kV3cc:
      Decode<abi::nvmlProcessInfo_v3cc_t>(bytes, count, &out);
      break;
  }
  return out;
}

NvmlProcessNames::NvmlProcessNames(std::string procfs)
    : procfs_(std::move(procfs)) {}

bool NvmlProcessNames::usable() {
  if (!usable_) {
    StatusOr<std::string> status =
        ReadKernelFile(procfs_ + "/self/status", size_t{64} << 10);
    usable_ = !status.ok() || NsPidDepth(*status) <= 1;
    if (!*usable_) {
      LENS_LOG(WARN).Field("procfs", procfs_)
          << "nvml: process names left out: this procfs belongs to an "
             "ancestor PID namespace, where NVML's pids name other "
             "processes (give the agent hostPID and its own /proc)";
    }
  }
  return *usable_;
}

void NvmlProcessNames::BeginCycle() {
  previous_.swap(current_);
  current_.clear();
}

const std::string& NvmlProcessNames::Name(uint32_t pid) {
  auto it = current_.find(pid);
  if (it != current_.end()) return it->second;
  std::string name;
  if (auto old = previous_.find(pid); old != previous_.end()) {
    name = std::move(old->second);
  } else if (usable()) {
    // comm is at most 16 bytes with its newline; a vanished pid is NotFound
    // (or ESRCH on some kernels): no name.
    StatusOr<std::string> comm =
        ReadKernelValue(procfs_ + "/" + std::to_string(pid) + "/comm");
    if (comm.ok()) name = *std::move(comm);
  }
  return current_.emplace(pid, std::move(name)).first->second;
}

}  // namespace lens::nvml
