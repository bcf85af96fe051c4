// Checks made before loading the flow probe, so that a missing privilege or
// kernel feature is reported as what to do rather than as libbpf's errno.
// Pure functions over a configurable /sys and /proc root (tests use fixture
// trees); no libbpf here.
#ifndef LENS_FLOW_PROBE_PREFLIGHT_H_
#define LENS_FLOW_PROBE_PREFLIGHT_H_

#include <string>

#include "lens/status.h"

namespace lens::flow {

// What the kernel offers the probe.
struct ProbeKernel {
  std::string events_dir;      // <tracefs>/events
  bool send_recv_tracepoints;  // sock/sock_{send,recv}_length (Linux 6.3+)
  bool tcp_probe_tracepoint;   // tcp/tcp_probe
  bool retransmit_tracepoint;  // tcp/tcp_retransmit_skb
};

// OK when the effective capabilities in <proc_root>/self/status include
// CAP_SYS_ADMIN or both CAP_BPF and CAP_PERFMON; PermissionDenied saying so
// otherwise.
Status CheckBpfPrivileges(const std::string& proc_root = "/proc");

// Finds tracefs (<sys_root>/kernel/tracing, then <sys_root>/kernel/debug/
// tracing) and the tracepoints the probe uses. FailedPrecondition when the
// kernel has no BTF (<sys_root>/kernel/btf/vmlinux), when tracefs is not
// mounted (with the mount command), or when sock/inet_sock_set_state is
// missing (Linux < 4.16).
StatusOr<ProbeKernel> FindProbeKernel(const std::string& sys_root = "/sys");

}  // namespace lens::flow

#endif  // LENS_FLOW_PROBE_PREFLIGHT_H_
