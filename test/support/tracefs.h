// tracefs for eBPF tests: the flow probe attaches tracepoints, which needs
// tracefs. When the host has not mounted it, the test process mounts it in
// a private mount namespace of its own (nothing outside the process sees it).
#ifndef LENS_TEST_SUPPORT_TRACEFS_H_
#define LENS_TEST_SUPPORT_TRACEFS_H_

#include <string>

namespace lens::test {

// Empty when tracefs is usable now; otherwise why not (not root, mount
// failed), for GTEST_SKIP. Call before the process starts other threads.
std::string EnsureTracefs();

}  // namespace lens::test

#endif  // LENS_TEST_SUPPORT_TRACEFS_H_
