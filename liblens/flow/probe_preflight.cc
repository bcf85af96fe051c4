#include "flow/probe_preflight.h"

#include <sys/stat.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "core/kernel_file.h"

namespace lens::flow {
namespace {

constexpr int kCapSysAdmin = 21;
constexpr int kCapPerfmon = 38;
constexpr int kCapBpf = 39;

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// The CapEff mask of a /proc/<pid>/status text; nullopt-like false when the
// line is missing.
bool ParseCapEff(std::string_view status, uint64_t* mask) {
  constexpr std::string_view kKey = "CapEff:";
  size_t at = status.find(kKey);
  if (at == std::string_view::npos) return false;
  std::string_view rest = status.substr(at + kKey.size());
  rest = rest.substr(0, rest.find('\n'));
  rest = TrimKernelValue(rest);
  uint64_t value = 0;
  for (char c : rest) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return false;
    }
    value = (value << 4) | static_cast<uint64_t>(digit);
  }
  *mask = value;
  return true;
}

}  // namespace

Status CheckBpfPrivileges(const std::string& proc_root) {
  const std::string path = proc_root + "/self/status";
  auto text = ReadKernelFile(path);
  if (!text.ok()) return text.status();
  uint64_t caps = 0;
  if (!ParseCapEff(*text, &caps)) {
    return InternalError(path + ": no readable CapEff line");
  }
  auto has = [caps](int cap) { return (caps >> cap) & 1u; };
  if (has(kCapSysAdmin) || (has(kCapBpf) && has(kCapPerfmon)))
    return OkStatus();
  return PermissionDeniedError(
      "loading the TCP flow probe needs root, or CAP_BPF and CAP_PERFMON "
      "(CAP_SYS_ADMIN before Linux 5.8); run as root or grant them (in "
      "Kubernetes: securityContext.privileged or capabilities.add)");
}

Status CheckKernelBtf(const std::string& sys_root) {
  if (Exists(sys_root + "/kernel/btf/vmlinux")) return OkStatus();
  return FailedPreconditionError(
      "the kernel has no BTF (" + sys_root +
      "/kernel/btf/vmlinux is missing): the flow probe is CO-RE and needs "
      "a kernel built with CONFIG_DEBUG_INFO_BTF=y");
}

std::string TracingProgramsRefused(const std::string& sys_root) {
  std::string message =
      "this kernel refuses BPF tracing programs (program type "
      "BPF_PROG_TYPE_TRACING)";
  auto lockdown = ReadKernelFile(sys_root + "/kernel/security/lockdown");
  if (lockdown.ok()) {
    const size_t open = lockdown->find('[');
    const size_t close = lockdown->find(']', open);
    if (open != std::string::npos && close != std::string::npos) {
      const std::string mode = lockdown->substr(open + 1, close - open - 1);
      if (mode != "none") message += "; kernel lockdown is \"" + mode + "\"";
    }
  }
  return message;
}

StatusOr<ProbeKernel> ProbeKernelFrom(
    const std::function<bool(std::string_view)>& has_btf_name,
    bool tracing_programs, const std::string& sys_root) {
  // Features, each with the kernel that brought it. Distribution kernels
  // backport BPF features, so the kernel's BTF is asked, not its version
  // number.
  struct Need {
    std::string_view btf_name;
    std::string_view what;
  };
  auto missing_of = [&](std::initializer_list<Need> needs) {
    std::string missing;
    for (const Need& need : needs) {
      if (has_btf_name(need.btf_name)) continue;
      if (!missing.empty()) missing += "; ";
      missing +=
          std::string(need.what) + " [BTF: " + std::string(need.btf_name) + "]";
    }
    return missing;
  };
  // What both sets of programs need.
  const std::string missing = missing_of({
      {"btf_trace_inet_sock_set_state",
       "the tracepoint sock/inet_sock_set_state (4.16)"},
      {"BPF_FUNC_ringbuf_reserve", "the BPF ring buffer (5.8)"},
  });
  if (!missing.empty()) {
    return FailedPreconditionError(
        "the flow probe needs Linux 5.8 or later (or a kernel with these "
        "BPF features backported); this kernel lacks: " +
        missing);
  }
  auto tracepoint = [&](std::string_view name) {
    return has_btf_name("btf_trace_" + std::string(name));
  };
  ProbeKernel kernel;
  kernel.send_recv_tracepoints =
      tracepoint("sock_send_length") && tracepoint("sock_recv_length");
  kernel.tcp_probe_tracepoint = tracepoint("tcp_probe");
  kernel.retransmit_tracepoint = tracepoint("tcp_retransmit_skb");
  // What the socket-storage programs add.
  kernel.socket_storage_missing = missing_of({
      {"bpf_iter__bpf_sk_storage_map",
       "the socket-local storage iterator (5.9)"},
      {"btf_bpf_sk_storage_get_tracing",
       "socket-local storage in tracing programs (5.11)"},
      {"BPF_FUNC_check_mtu",
       "the BPF instruction set of 5.12 (atomic exchange)"},
  });
  if (!kernel.socket_storage_missing.empty()) {
    kernel.socket_storage_missing =
        "this kernel lacks " + kernel.socket_storage_missing;
  } else if (!tracing_programs) {
    kernel.socket_storage_missing = TracingProgramsRefused(sys_root);
  }
  kernel.socket_storage = kernel.socket_storage_missing.empty();
  return kernel;
}

}  // namespace lens::flow
