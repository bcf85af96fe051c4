#include "ebpf_env.h"

#include <unistd.h>

namespace lens::test {

std::string EbpfSkipReason() {
  if (::geteuid() != 0) return "eBPF tests need root (CAP_BPF, CAP_PERFMON)";
  // Every kernel the probe supports loads one of its two sets of programs
  // (a kernel that refuses tracing programs runs the address-hash set), so
  // nothing else is checked here: a probe that fails to load fails the test.
  return "";
}

}  // namespace lens::test
