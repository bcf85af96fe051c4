// Small host helpers of the containerd test harness: running a command and
// capturing its output, waiting for a child, reading and writing whole files
// and filling text templates.
#ifndef LENS_TEST_SUPPORT_COMMAND_H_
#define LENS_TEST_SUPPORT_COMMAND_H_

#include <sys/types.h>

#include <chrono>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lens/status.h"

namespace lens::test {

// Searched after $PATH (a PATH may lack sbin).
inline constexpr char kStandardPath[] =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
inline constexpr auto kCommandTimeout = std::chrono::seconds(60);

// The whole file; empty when it cannot be read.
std::string ReadFile(const std::string& path);
Status WriteFile(const std::string& path, const std::string& content);

// `text` with every occurrence of each key replaced by its value.
std::string Fill(std::string text,
                 std::initializer_list<std::pair<std::string, std::string>> v);

// The non-empty lines of `text`.
std::vector<std::string> Lines(const std::string& text);

// "exit status N", "signal <name>" or "wait status N".
std::string Describe(int wait_status);

// `name` in $PATH or kStandardPath; empty when not found.
std::string FindBinary(const std::string& name);

// The wait status of child `pid`, or nullopt while it runs past `timeout`.
std::optional<int> WaitExit(pid_t pid,
                            std::chrono::steady_clock::duration timeout);

struct CommandResult {
  int wait_status = 0;
  std::string out, err;
};

// Runs `argv` (a bare name is looked up with FindBinary()) with stdin from
// /dev/null; kills it after `timeout`. Output goes to anonymous files, so a
// grandchild that keeps them open (a shim) cannot make us wait.
StatusOr<CommandResult> RunCommand(
    const std::vector<std::string>& argv,
    std::chrono::steady_clock::duration timeout = kCommandTimeout);

// Starts `argv` (a path; no lookup) in the background with its stderr (and
// stdout when `stdout_too`) in `log` (opened for `append` or truncated) and
// `env` added to this process's environment. Everything the child needs is
// built before fork(): a test's other threads may hold the allocator's lock
// at that moment, so the child only calls async-signal-safe functions.
// Returns the child's pid (-1 when fork failed).
pid_t Spawn(const std::vector<std::string>& argv, const std::string& log,
            bool stdout_too = true, bool append = false,
            const std::vector<std::string>& env = {});

// The address a daemon started by Spawn() serves on, from its log: the first
// "<key>http://..." (or https) it wrote to `log` after a space ("http=" for
// most daemons, "url=" for lens-node-agent, "dashboard at " for `lens up`). The
// daemon binds port 0 and says what it got: no port is ever picked by the test.
// Waits up to `timeout` while `pid` runs; an error with the log's end when it
// exits or never says.
StatusOr<std::string> WaitForLoggedUrl(
    const std::string& log, pid_t pid, std::string_view key,
    std::chrono::steady_clock::duration timeout = std::chrono::seconds(60));

// The port of WaitForLoggedUrl()'s address.
StatusOr<int> WaitForLoggedPort(
    const std::string& log, pid_t pid, std::string_view key,
    std::chrono::steady_clock::duration timeout = std::chrono::seconds(60));

// RunCommand(); an exit status other than 0 is an error carrying stderr.
StatusOr<std::string> RunChecked(const std::vector<std::string>& argv);

}  // namespace lens::test

#endif  // LENS_TEST_SUPPORT_COMMAND_H_
