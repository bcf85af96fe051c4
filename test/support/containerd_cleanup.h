// Host cleanup for the containerd test harness: what a harness directory's
// containerd can leave behind (shims, container processes, mounts, cgroups),
// removed after a stop or after a test process that crashed.
#ifndef LENS_TEST_SUPPORT_CONTAINERD_CLEANUP_H_
#define LENS_TEST_SUPPORT_CONTAINERD_CLEANUP_H_

#include <string>

namespace lens::test {

// Everything of the harness in `dir` that can outlive containerd: shims
// (their command lines name the socket), container processes (`runc` kills
// them and removes their cgroups; its state is in <dir>/run/runc/<ns>/<id>),
// mounts in this namespace and the cgroup parent.
void CleanupLeftovers(const std::string& dir, const std::string& runc);

// Cleans up after harnesses in `base` (directories lens-ctrd-*, whose file
// `owner` holds the owning pid) whose owning process died, and removes their
// directories.
void SweepStale(const std::string& base, const std::string& runc);

}  // namespace lens::test

#endif  // LENS_TEST_SUPPORT_CONTAINERD_CLEANUP_H_
