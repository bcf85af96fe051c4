// What eBPF tests need from the machine: root (CAP_BPF, CAP_PERFMON). The
// flow probe attaches tracepoints by name, so tracefs is not needed.
#ifndef LENS_TEST_SUPPORT_EBPF_ENV_H_
#define LENS_TEST_SUPPORT_EBPF_ENV_H_

#include <string>

namespace lens::test {

// Empty when eBPF tests can run; otherwise why not, for GTEST_SKIP.
std::string EbpfSkipReason();

}  // namespace lens::test

#endif  // LENS_TEST_SUPPORT_EBPF_ENV_H_
