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

// The FailedPrecondition for a kernel that refuses BPF tracing programs
// (the probe's socket-storage iterator is one), naming the lockdown mode
// from <sys_root>/kernel/security/lockdown when it is not "none".
Status TracingProgramsRefused(const std::string& sys_root = "/sys");

// What the kernel offers the probe, given `has_btf_name(name)`: whether the
// kernel's BTF has a type, typedef or enum value of that name (every
// tracepoint has a "btf_trace_<name>" typedef, every BPF helper a
// "btf_<helper>" typedef and a "BPF_FUNC_<helper>" value). FailedPrecondition
// naming each missing feature when the kernel cannot run the programs
// (before Linux 5.12, unless backported).
StatusOr<ProbeKernel> ProbeKernelFrom(
    const std::function<bool(std::string_view)>& has_btf_name);

}  // namespace lens::flow

#endif  // LENS_FLOW_PROBE_PREFLIGHT_H_
