// Checks made before loading the flow probe, so that a missing privilege or
// kernel feature is reported as what to do rather than as libbpf's errno.
// Pure functions over a configurable /sys and /proc root (tests use fixture
// trees); no libbpf here. The probe attaches raw tracepoints by name, so
// tracefs is not needed.
#ifndef LENS_FLOW_PROBE_PREFLIGHT_H_
#define LENS_FLOW_PROBE_PREFLIGHT_H_

#include <functional>
#include <string>
#include <string_view>

#include "lens/status.h"

namespace lens::flow {

// What the kernel offers the probe.
struct ProbeKernel {
  bool send_recv_tracepoints = false;  // sock/sock_{send,recv}_length (6.3+)
  bool tcp_probe_tracepoint = false;   // tcp/tcp_probe
  bool retransmit_tracepoint = false;  // tcp/tcp_retransmit_skb
};

// OK when the effective capabilities in <proc_root>/self/status include
// CAP_SYS_ADMIN or both CAP_BPF and CAP_PERFMON; PermissionDenied saying so
// otherwise.
Status CheckBpfPrivileges(const std::string& proc_root = "/proc");

// FailedPrecondition when the kernel has no BTF
// (<sys_root>/kernel/btf/vmlinux): the probe is CO-RE.
Status CheckKernelBtf(const std::string& sys_root = "/sys");

// Which tracepoints the kernel has, given `has_tracepoint(name)` (the
// adapter answers from the kernel's BTF: every tracepoint has a
// "btf_trace_<name>" typedef). FailedPrecondition when inet_sock_set_state
// is missing (Linux < 4.16).
StatusOr<ProbeKernel> ProbeKernelFrom(
    const std::function<bool(std::string_view)>& has_tracepoint);

}  // namespace lens::flow

#endif  // LENS_FLOW_PROBE_PREFLIGHT_H_
