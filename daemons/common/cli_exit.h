// Exit codes every Lens program shares: 0 done, 1 failed (including output
// that could not be written), 2 usage (bad flags, unknown command), with a
// readable message naming the program and the valid choices.
#ifndef LENS_DAEMONS_COMMON_CLI_EXIT_H_
#define LENS_DAEMONS_COMMON_CLI_EXIT_H_

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "lens/status.h"

namespace lens::cli {

// The names of `app`'s subcommands, comma-separated.
inline std::string SubcommandNames(CLI::App& app) {
  std::string out;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (!out.empty()) out += ", ";
    out += sub->get_name();
  }
  return out;
}

// For a CLI11 parse error: help and --version print and exit 0; anything
// else prints "<program>: <problem>" and returns 2.
inline int UsageExit(CLI::App& app, const CLI::ParseError& e,
                     const char* program) {
  if (e.get_exit_code() == 0) return app.exit(e);
  std::string what = e.what();
  // The command the error is about: the deepest one given ("lens db").
  CLI::App* at = &app;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr &&
      !at->get_subcommands({}).empty() &&
      what.find("subcommand") != std::string::npos) {
    // "lens db bogus": the unknown word stays with the command it follows.
    std::vector<std::string> extra = at->remaining();
    if (extra.empty()) extra = app.remaining();
    what = extra.empty() ? "a command is required: " + SubcommandNames(*at)
                         : "unknown command \"" + extra.front() +
                               "\"; commands: " + SubcommandNames(*at);
  } else if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr &&
             !app.get_subcommands({}).empty() &&
             app.get_subcommands().empty()) {
    what = "unknown command (" + what + "); commands: " + SubcommandNames(app);
  }
  // Name the command: "lens db: ...".
  std::string where = program;
  for (CLI::App* c = &app; !c->get_subcommands().empty();) {
    c = c->get_subcommands().front();
    where += " " + c->get_name();
  }
  std::fprintf(stderr, "%s: %s\nRun with --help for more information.\n",
               where.c_str(), what.c_str());
  return 2;
}

// A service that did not start: "<program>: <message>" on stderr, then 2
// for what the operator must fix in the configuration (bad options, a file
// that is missing or unreadable), 1 for anything else (an unreachable
// database, a port in use).
inline int StartFailureExit(const Status& status, const char* program) {
  std::fprintf(stderr, "%s: %s\n", program, status.message().c_str());
  const StatusCode code = status.code();
  return code == StatusCode::kInvalidArgument ||
                 code == StatusCode::kNotFound ||
                 code == StatusCode::kPermissionDenied
             ? 2
             : 1;
}

// The errno of the first failed write to standard output, for writers that
// notice it themselves (FinishOutput names it; errno is long gone by then).
inline int& OutputErrno() {
  static int err = 0;
  return err;
}

// Flushes standard output: a write that failed (a full disk, /dev/full) is an
// error, exit 1; a reader that went away (EPIPE) is not.
inline int FinishOutput(int code, const char* program) {
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    const int err = OutputErrno() != 0 ? OutputErrno() : errno;
    if (err == EPIPE) return code;
    std::fprintf(stderr, "%s: cannot write output: %s\n", program,
                 err != 0 ? std::strerror(err) : "write error");
    return 1;
  }
  return code;
}

}  // namespace lens::cli

#endif  // LENS_DAEMONS_COMMON_CLI_EXIT_H_
