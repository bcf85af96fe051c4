// Running amd-smi: one child process per command, each under the time limit.
#include <string.h>

#include <string>
#include <utility>

#include "gpu/amd_smi/child_process.h"
#include "lens/amd_smi.h"

namespace lens {
namespace {

std::string CommandLine(const AmdSmiRunOptions& options,
                        AmdSmiCommand command) {
  return options.executable + " " + std::string(AmdSmiCommandName(command)) +
         " --json";
}

// The start of stderr on one line, for an error message.
std::string StderrStart(std::string_view err) {
  constexpr size_t kMax = 300;
  std::string line;
  for (char c : err.substr(0, kMax)) {
    bool space = c == '\n' || c == '\r' || c == '\t';
    if (space && (line.empty() || line.back() == ' ')) continue;
    line += space ? ' ' : (static_cast<unsigned char>(c) < 0x20 ? '?' : c);
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  if (line.empty()) return "no stderr output";
  return "stderr: \"" + line + (err.size() > kMax ? "...\"" : "\"");
}

// "9 (SIGKILL)"; sigabbrev_np is thread-safe where strsignal is not.
std::string SignalName(int signal) {
  std::string name = std::to_string(signal);
#if defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  if (const char* abbrev = ::sigabbrev_np(signal)) {
    name += " (SIG" + std::string(abbrev) + ")";
  }
#endif
  return name;
}

Status Outcome(const ChildProcessResult& result, const std::string& line,
               const AmdSmiRunOptions& options) {
  using End = ChildProcessResult::End;
  switch (result.end) {
    case End::kTimedOut:
      return Status(StatusCode::kDeadlineExceeded,
                    line + ": no result within " +
                        std::to_string(options.timeout.count()) +
                        " ms; its process group was killed");
    case End::kOutputTooLarge:
      return ResourceExhaustedError(
          line + ": more than " + std::to_string(options.max_output_bytes) +
          " bytes on stdout; its process group was killed");
    case End::kSignaled:
      return Status(StatusCode::kUnknown, line + ": killed by signal " +
                                              SignalName(result.signal) + "; " +
                                              StderrStart(result.err));
    case End::kExited:
      if (result.exit_code == 0) return OkStatus();
      return Status(StatusCode::kUnknown, line + ": exited with status " +
                                              std::to_string(result.exit_code) +
                                              "; " + StderrStart(result.err));
  }
  return InternalError(line + ": unknown outcome");
}

}  // namespace

std::string_view AmdSmiCommandName(AmdSmiCommand command) {
  switch (command) {
    case AmdSmiCommand::kList:
      return "list";
    case AmdSmiCommand::kStatic:
      return "static";
    case AmdSmiCommand::kMetric:
      return "metric";
    case AmdSmiCommand::kProcess:
      return "process";
  }
  return "unknown";
}

StatusOr<std::string> RunAmdSmiCommand(const AmdSmiRunOptions& options,
                                       AmdSmiCommand command) {
  std::string line = CommandLine(options, command);
  if (options.executable.empty()) {
    return InvalidArgumentError("amd-smi executable path is empty");
  }
  if (options.timeout.count() <= 0) {
    return InvalidArgumentError(line + ": timeout must be positive");
  }
  ChildProcessOptions child;
  child.timeout = options.timeout;
  child.max_stdout_bytes = options.max_output_bytes;
  auto result = RunChildProcess(
      {options.executable, std::string(AmdSmiCommandName(command)), "--json"},
      child);
  if (!result.ok()) return result.status().WithContext(line);
  LENS_RETURN_IF_ERROR(Outcome(*result, line, options));
  return std::move(result->out);
}

StatusOr<std::vector<AmdSmiGpu>> RunAmdSmi(const AmdSmiRunOptions& options) {
  AmdSmiParseOptions parse;
  parse.max_input_bytes = options.max_output_bytes;
  std::vector<AmdSmiGpu> gpus;
  for (AmdSmiCommand command : options.commands) {
    LENS_ASSIGN_OR_RETURN(std::string out, RunAmdSmiCommand(options, command));
    std::string line = CommandLine(options, command);
    auto parsed = ParseAmdSmiJson(out, parse);
    if (!parsed.ok()) return parsed.status().WithContext(line);
    Status merged = MergeAmdSmiGpus(*std::move(parsed), &gpus);
    if (!merged.ok()) return merged.WithContext(line);
  }
  return gpus;
}

}  // namespace lens
