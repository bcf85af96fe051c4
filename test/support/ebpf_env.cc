#include "ebpf_env.h"

#include <unistd.h>

#include <fstream>

#if LENS_TEST_HAVE_LIBBPF
#include <bpf/libbpf.h>
#endif

namespace lens::test {
namespace {

// The kernel's lockdown mode ("none", "integrity", "confidentiality"), or ""
// when securityfs does not say.
std::string LockdownMode() {
  std::ifstream in("/sys/kernel/security/lockdown");
  std::string line;
  std::getline(in, line);
  const size_t open = line.find('[');
  const size_t close = line.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return "";
  return line.substr(open + 1, close - open - 1);
}

}  // namespace

std::string EbpfSkipReason() {
  if (::geteuid() != 0) return "eBPF tests need root (CAP_BPF, CAP_PERFMON)";
#if LENS_TEST_HAVE_LIBBPF
  // libbpf loads a minimal tracing program; the kernel refuses the type
  // itself (not our program) when this is 0.
  if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACING, nullptr) != 1) {
    std::string why =
        "this kernel does not load BPF tracing programs (fentry, iterators), "
        "which the flow probe needs";
    const std::string lockdown = LockdownMode();
    if (!lockdown.empty() && lockdown != "none") {
      why += " (kernel lockdown: " + lockdown + ")";
    }
    return why;
  }
#endif
  return "";
}

}  // namespace lens::test
