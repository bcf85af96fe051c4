// Running a tool as a child process with a deadline: posix_spawn (no shell),
// stdout captured up to a limit, the start of stderr kept, and the child's
// process group killed (SIGKILL) and reaped when it overruns. Used to run
// amd-smi; nothing here knows about amd-smi.
#ifndef LENS_GPU_AMD_SMI_CHILD_PROCESS_H_
#define LENS_GPU_AMD_SMI_CHILD_PROCESS_H_

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "lens/status.h"

namespace lens {

struct ChildProcessOptions {
  // Wall-clock limit from the spawn to the child's exit.
  std::chrono::milliseconds timeout{10000};
  // More stdout than this ends the run (kOutputTooLarge).
  size_t max_stdout_bytes = size_t{16} << 20;
  // stderr beyond this is read and dropped (a chatty child never blocks).
  size_t max_stderr_bytes = 4096;
};

struct ChildProcessResult {
  enum class End { kExited, kSignaled, kTimedOut, kOutputTooLarge };
  End end = End::kExited;
  int exit_code = 0;  // kExited
  int signal = 0;     // kSignaled
  std::string out;    // stdout (up to the limit)
  std::string err;    // the start of stderr
  std::chrono::steady_clock::duration elapsed{};
};

// Runs argv[0] (looked up in PATH when it has no '/') with argv[1..].
// The child gets stdin from /dev/null, stdout and stderr on pipes, no other
// descriptor of this process, an empty signal mask, default signal
// dispositions, and its own process group; the caller's environment.
// On kTimedOut / kOutputTooLarge the process group has been killed with
// SIGKILL. The child is always reaped before this returns. Thread-safe.
// Errors: from posix_spawn (NotFound when the executable does not exist,
// PermissionDenied when it is not executable), InvalidArgument for an empty
// argv, errno-derived codes for pipe/poll failures.
StatusOr<ChildProcessResult> RunChildProcess(
    const std::vector<std::string>& argv, const ChildProcessOptions& options);

}  // namespace lens

#endif  // LENS_GPU_AMD_SMI_CHILD_PROCESS_H_
