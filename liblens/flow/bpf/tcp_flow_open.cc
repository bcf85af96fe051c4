// Opening the libbpf FlowProbe: validates the options, checks privileges
// and the kernel's BTF for the features each set of programs needs, loads
// the probe, and falls back to the address-hash programs when the
// socket-storage set fails its start-up self-test.
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <memory>
#include <string>
#include <string_view>

#include "flow/bpf/tcp_flow_probe_impl.h"
#include "flow/probe_preflight.h"
#include "lens/flow.h"
#include "lens/log.h"

namespace lens::flow {
namespace {

using probe_internal::Errno;
using probe_internal::TcpFlowProbe;

// value of enum bpf_func_id.
bool HasBtfName(const btf* vmlinux, const std::string& name) {
  if (name.rfind("BPF_FUNC_", 0) != 0) {
    return btf__find_by_name(vmlinux, name.c_str()) > 0;
  }
  const int id = btf__find_by_name_kind(vmlinux, "bpf_func_id", BTF_KIND_ENUM);
  if (id <= 0) return false;
  const btf_type* type = btf__type_by_id(vmlinux, id);
  const struct btf_enum* values = btf_enum(type);
  for (int i = 0; i < btf_vlen(type); ++i) {
    if (name == btf__name_by_offset(vmlinux, values[i].name_off)) return true;
  }
  return false;
}

}  // namespace

StatusOr<std::unique_ptr<FlowProbe>> OpenTcpFlowProbe(
    const FlowProbeOptions& options) {
  if (options.max_flows == 0) {
    return InvalidArgumentError("flow probe: max_flows must be positive");
  }
  if (options.kernel_stats &&
      (options.kernel_stats_window.count() <= 0 ||
       options.kernel_stats_period < options.kernel_stats_window)) {
    return InvalidArgumentError(
        "flow probe: kernel_stats_window must be positive and at most "
        "kernel_stats_period, got " +
        std::to_string(options.kernel_stats_window.count()) + " ms of " +
        std::to_string(options.kernel_stats_period.count()) + " ms");
  }
  const uint32_t rb = options.ring_buffer_bytes;
  if (rb < 4096 || (rb & (rb - 1)) != 0) {
    return InvalidArgumentError(
        "flow probe: ring_buffer_bytes must be a power of two >= 4096, got " +
        std::to_string(rb));
  }
  LENS_RETURN_IF_ERROR(CheckBpfPrivileges());
  LENS_RETURN_IF_ERROR(CheckKernelBtf());
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) {
    return FailedPreconditionError("read the kernel's BTF: " + Errno(errno));
  }
  // 0: the kernel refuses the program type itself (before our programs'
  // verification); a negative value (the probe could not run) decides
  // nothing.
  const bool tracing =
      libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACING, nullptr) != 0;
  StatusOr<ProbeKernel> kernel = ProbeKernelFrom(
      [vmlinux](std::string_view n) {
        return HasBtfName(vmlinux, std::string(n));
      },
      tracing);
  btf__free(vmlinux);
  if (!kernel.ok()) return kernel.status();
  auto probe = std::make_unique<TcpFlowProbe>();
  Status loaded = probe->Load(options, *kernel);
  if (!loaded.ok() && !probe->fold_self_test_failure().empty()) {
    // The socket-storage programs loaded but their iterator does not run
    // here: the address-hash programs need no iterator.
    ProbeKernel fallback = *kernel;
    fallback.socket_storage = false;
    fallback.socket_storage_missing = loaded.message();
    LENS_LOG(WARN).Field("error", loaded.message())
        << "flow probe: falling back to the address-hash programs";
    probe = std::make_unique<TcpFlowProbe>();
    loaded = probe->Load(options, fallback);
  }
  LENS_RETURN_IF_ERROR(loaded);
  return std::unique_ptr<FlowProbe>(std::move(probe));
}

}  // namespace lens::flow

namespace lens {
StatusOr<std::unique_ptr<FlowProbe>> FlowProbe::Open(
    const FlowProbeOptions& options) {
  return flow::OpenTcpFlowProbe(options);
}
}  // namespace lens
