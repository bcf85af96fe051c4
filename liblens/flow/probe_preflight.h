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
  // The socket-storage programs can run: BTF-typed tracepoints, socket-local
  // storage from them and its iterator, atomic exchange (5.12), and the
  // kernel loads tracing programs. Otherwise the address-hash programs run;
  // `socket_storage_missing` says why.
  bool socket_storage = false;
  std::string socket_storage_missing;
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

// Why the socket-storage programs cannot run on a kernel that refuses BPF
// tracing programs, naming the lockdown mode from
// <sys_root>/kernel/security/lockdown when it is not "none".
std::string TracingProgramsRefused(const std::string& sys_root = "/sys");

// What the kernel offers the probe, given `has_btf_name(name)`: whether the
// kernel's BTF has a type, typedef or enum value of that name (every
// tracepoint has a "btf_trace_<name>" typedef, every BPF helper a
// "btf_<helper>" typedef and a "BPF_FUNC_<helper>" value). FailedPrecondition
// naming each missing feature when the kernel can run neither set of
// programs (before Linux 5.8, unless backported); `tracing_programs`: the
// kernel loads BPF tracing programs (libbpf's probe of the program type).

StatusOr<ProbeKernel> ProbeKernelFrom(
    const std::function<bool(std::string_view)>& has_btf_name,
    bool tracing_programs = true, const std::string& sys_root = "/sys");

}  // namespace lens::flow

#endif  // LENS_FLOW_PROBE_PREFLIGHT_H_
