#include "ebpf_env.h"

#include <unistd.h>

#if LENS_TEST_HAVE_LIBBPF
#include <bpf/libbpf.h>
#endif

#include "flow/probe_preflight.h"

namespace lens::test {

std::string EbpfSkipReason() {
  if (::geteuid() != 0) return "eBPF tests need root (CAP_BPF, CAP_PERFMON)";
#if LENS_TEST_HAVE_LIBBPF
  // The check the flow probe makes before loading: 0 when the kernel refuses
  // the program type itself (not our programs).
  if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACING, nullptr) == 0) {
    return std::string(flow::TracingProgramsRefused().message());
  }
#endif
  return "";
}

}  // namespace lens::test
